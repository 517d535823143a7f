"""AppTest helpers: run the app from its entry point, go to a page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import streamlit as st
import streamlit.testing.v1.app_test as app_test_module
from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest


class _NavigationPagesManager(PagesManager):
    """AppTest resets ``PagesManager.uses_pages_directory`` before every run, so with a
    ``pages/`` folder beside ``app.py`` each rerun would execute the page file alone
    (Streamlit's legacy pages-folder mode) instead of ``app.py``.  A real server sets the
    flag to False for good at the first ``st.navigation`` call; do the same here."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        PagesManager.uses_pages_directory = False


app_test_module.PagesManager = _NavigationPagesManager


@pytest.fixture(autouse=True)
def _clear_streamlit_cache():
    """st.cache_data and the pages' byte-bounded caches are global to the process; every page test starts from
    empty caches.  (Only here: the core tests import no streamlit.)"""
    from pages.shared.bounded import clear_bounded_caches

    st.cache_data.clear()
    clear_bounded_caches()
    yield

APP = Path(__file__).resolve().parents[2] / "app.py"


def open_page(page: str | None = None, *, timeout: float = 600, via_app: bool = False) -> AppTest:
    """Run ``page`` (e.g. ``"pages/plan.py"``; None: the app's default page).

    Pages set up their own state and sidebar (``page_setup``), so a page runs on its own; the
    repository root is on ``sys.path`` through pytest's ``pythonpath``.  ``via_app=True`` goes
    through ``app.py`` and its navigation instead (the default page first, then
    ``switch_page``), as a user does.
    """
    if page is None or via_app:
        at = AppTest.from_file(str(APP), default_timeout=timeout).run()
        if page is not None:
            at.switch_page(page).run()
    else:
        at = AppTest.from_file(str(APP.parent / page), default_timeout=timeout).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def shown(markdown: str) -> str:
    """The text a browser shows for a message the app escaped (``core.untrusted.escape_markdown``):
    user-supplied text is Markdown-escaped on the page, so AppTest sees the backslashes."""
    return re.sub(r"\\(.)", r"\1", markdown)


def chart_specs(at: AppTest) -> list[dict]:
    """The plotly figures on the page, as dicts (data, layout)."""
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
