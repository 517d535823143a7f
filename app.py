"""Time-to-Accuracy Planner: the dashboard's entry point (page setup and navigation only).

Run with ``streamlit run app.py``.  The pages and how a run is routed are in
``pages.shared.navigation``; each page sets up the shared session state and the sidebar itself
(``pages.shared.common.page_setup``).
"""

from __future__ import annotations

from pages.shared.navigation import PAGES, run_app

__all__ = ["PAGES", "run_app"]

if __name__ == "__main__":  # streamlit run and AppTest execute the script as __main__
    run_app()
