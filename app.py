"""Time-to-Accuracy Planner: the dashboard's entry point (page setup and navigation only).

Run with ``streamlit run app.py``.  Each page sets up the shared session state and the
sidebar itself (``pages.shared.common.page_setup``).
"""

from __future__ import annotations

import streamlit as st

from pages.shared.common import guarded
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


def run() -> None:
    st.set_page_config(page_title="Time-to-Accuracy Planner", page_icon=":material/timer:", layout="wide")
    admit_session()                   # a server over its bound of sessions loads nothing more (core.serving)
    # At the top: .streamlit/config.toml turns Streamlit's sidebar navigation off (showSidebarNavigation = false)
    # so that the pages/ folder is never listed by file name, and that option also hides a sidebar menu.
    nav = st.navigation([st.Page(path, title=title, icon=icon, default=(i == 0))
                         for i, (path, title, icon) in enumerate(PAGES)], position="top")
    guarded("This page")(nav.run)()   # a page that fails to load shows one line, never a traceback


if __name__ == "__main__":  # streamlit run and AppTest execute the script as __main__
    run()
