"""The page boundary: an unexpected error in a page or a section becomes one line on the page.

Part of ``pages/shared`` (re-exported by ``pages.shared.common``); its own module so that the
navigation (``pages.shared.navigation``) and the rendering helpers both use it.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable

import streamlit as st

from core.untrusted import escape_markdown as plain

_LOG = logging.getLogger("planner.pages")


def guarded(where: str) -> Callable:
    """Decorator: an unexpected error in a page (or a fragment) becomes one line on the page.

    Every expected problem is a ``core`` error the page already shows; anything else is a bug,
    and a user should see what failed in one sentence, never a traceback (the traceback goes
    to the server's log). Streamlit's own control flow (``st.stop``, ``st.rerun``) is a
    ``BaseException`` and passes through.
    """
    def wrap(func: Callable) -> Callable:
        @functools.wraps(func)
        def run(*args, **kwargs):
            try:
                return func(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - the boundary: nothing below may show a traceback
                _LOG.exception("%s failed", where)
                detail = " ".join(str(exc).split()) or type(exc).__name__
                st.error(plain(f"{where} could not finish: {detail[:300]}. The details are in the server log."),
                         icon=":material/error:")
                return None
        return run
    return wrap
