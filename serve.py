"""Serve the dashboard warm: ``streamlit run serve.py`` (same options as ``streamlit run app.py``).

It serves ``app.py`` through Streamlit's ``st.App`` (Streamlit's Starlette server), whose lifespan starts a
warm-up thread when the server starts (``pages.shared.warm``): the Logs page's modules are imported and the
default built-in runs read and analysed into the caches every session shares, so the first person to visit
a server started a few seconds earlier finds it warm.  The server answers at once; a visit during the
warm-up waits only for what is still being imported.  ``streamlit run app.py`` still serves the same
dashboard (Streamlit's Tornado server), cold.  See docs/cold_start.md.
"""

from __future__ import annotations

import sys
import threading
from contextlib import asynccontextmanager

import streamlit as st


def _warm_up() -> None:
    from pages.shared.warm import warm_up  # imported in the thread: that import is most of the warm-up

    print(warm_up(), file=sys.stderr, flush=True)   # beside Streamlit's own start-up lines


@asynccontextmanager
async def _lifespan(_app):
    threading.Thread(target=_warm_up, name="tta-warm-up", daemon=True).start()
    yield


app = st.App("app.py", lifespan=_lifespan)
