"""The dashboard's navigation: its pages in order, and how a run is set up and routed.

``app.py`` calls :func:`run_app`; a page that Streamlit ran on its own (its legacy pages-folder
mode, :func:`hand_over_to_app`) calls it too.  Part of ``pages/shared``.
"""

from __future__ import annotations

import streamlit as st

from pages.shared.boundary import guarded
from pages.shared.state import admit_session

#: (page file, title, icon), in navigation order; the first is the default page
PAGES = [
    ("pages/logs.py", "Logs", ":material/show_chart:"),
    ("pages/calibrate.py", "Calibrate", ":material/tune:"),
    ("pages/plan.py", "Plan", ":material/timer:"),
    ("pages/throughput.py", "Throughput", ":material/speed:"),
    ("pages/scaling.py", "Scaling", ":material/lan:"),
    ("pages/library.py", "Library", ":material/database:"),
]


def run_app() -> None:
    """Page config, the session bound, and the requested page run through ``st.navigation``."""
    st.set_page_config(page_title="Time-to-Accuracy Planner", page_icon=":material/timer:", layout="wide")
    admit_session()                   # a server over its bound of sessions loads nothing more (core.serving)
    # At the top: .streamlit/config.toml turns Streamlit's sidebar navigation off (showSidebarNavigation = false)
    # so that the pages/ folder is never listed by file name, and that option also hides a sidebar menu.
    nav = st.navigation([st.Page(path, title=title, icon=icon, default=(i == 0))
                         for i, (path, title, icon) in enumerate(PAGES)], position="top")
    guarded("This page")(nav.run)()   # a page that fails to load shows one line, never a traceback


def hand_over_to_app() -> None:
    """Run the page through ``app.py``'s navigation when Streamlit ran the page file on its own.

    ``pages/`` is also Streamlit's legacy pages folder: until one session on a server has run
    ``app.py`` (whose ``st.navigation`` turns that mode off for the process), a deep link such as
    ``/plan`` runs ``pages/plan.py`` alone, without the top navigation or the wide layout, and
    every such session stays so.  Here the page hands over instead: :func:`run_app` sets the page
    up and runs the requested page through ``st.navigation`` (which turns the legacy mode off for
    every later session), and this run stops.  A no-op once ``app.py`` has run on the server.
    """
    from streamlit.runtime.pages_manager import PagesManager

    if not PagesManager.uses_pages_directory:
        return
    run_app()
    st.stop()
