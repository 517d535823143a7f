"""The first visit to a freshly started server (issue 21, part 2).

``pages/`` is the dashboard's package of page modules, and Streamlit also treats a ``pages/``
folder beside the entry script as a legacy multipage app: until ``app.py``'s first run reached
``st.navigation``, a new session listed the file names (``logs``, ``plan``, ...) in the sidebar,
and a click there kept the session in that mode.  ``.streamlit/config.toml`` turns that list off
(``client.showSidebarNavigation = false``) and ``app.py`` shows its own navigation at the top.
This test starts a server of its own, so that the visit is the very first one of that server.
"""

from __future__ import annotations

import json
import re

from playwright.sync_api import Page, expect

from app import PAGES
from tests.e2e.conftest import ROOT, WAIT_MS, nav_link, no_exception, streamlit_server, wait_idle

#: what the legacy navigation would show: one link per file of pages/, named after the file
FILE_NAMES = sorted(p.stem for p in (ROOT / "pages").glob("*.py") if not p.name.startswith("_"))

#: runs in the page before any of its scripts: records every legacy navigation or file-name link
#: that is ever attached to the document, however briefly
WATCH = """
window.__legacyNav = [];
const names = new Set(%s);
new MutationObserver(() => {
  if (document.querySelector('[data-testid="stSidebarNav"]')) window.__legacyNav.push('stSidebarNav');
  for (const a of document.querySelectorAll('a')) {
    const text = (a.textContent || '').trim();
    if (names.has(text)) window.__legacyNav.push(text);
  }
}).observe(document, {childList: true, subtree: true, characterData: true});
"""


def first_visit(page: Page, url: str) -> list[str]:
    """Open ``url`` in a new page and wait for the default page's first chart; what the watcher saw."""
    page.add_init_script(WATCH % json.dumps(FILE_NAMES))
    page.goto(url)
    expect(page.get_by_test_id("stPlotlyChart").first).to_be_visible(timeout=WAIT_MS)
    wait_idle(page, timeout=WAIT_MS)
    return page.evaluate("window.__legacyNav")


def test_file_names_list_what_the_legacy_navigation_would_show():
    assert {"logs", "plan", "calibrate"} <= set(FILE_NAMES)
    assert not {title for _, title, _ in PAGES} & set(FILE_NAMES)    # titles are capitalised: no clash


def test_the_first_visit_to_a_fresh_server_never_shows_file_names_and_draws_the_first_chart(page: Page, tmp_path):
    with streamlit_server(tmp_path / "library.duckdb", tmp_path / "streamlit.log") as url:
        assert first_visit(page, url) == []
        expect(page.get_by_role("heading", name=PAGES[0][1], exact=True).first).to_be_visible()
        no_exception(page)
        # the app's own navigation is there, one link per page, and it navigates
        for _, title, _ in PAGES:
            expect(nav_link(page, title)).to_have_count(1)
        nav_link(page, "Plan").click()
        expect(page.get_by_role("heading", name="Plan", exact=True).first).to_be_visible(timeout=WAIT_MS)
        wait_idle(page, timeout=WAIT_MS)
        assert page.evaluate("window.__legacyNav") == []


def test_a_server_started_with_serve_py_warms_up_and_serves_the_same_first_visit(page: Page, tmp_path):
    # issue 35: `streamlit run serve.py` serves app.py through st.App and warms up as it starts
    log = tmp_path / "streamlit.log"
    with streamlit_server(tmp_path / "library.duckdb", log, entry="serve.py") as url:
        assert first_visit(page, url) == []
        expect(page.get_by_role("heading", name=PAGES[0][1], exact=True).first).to_be_visible()
        expect(page.get_by_test_id("stMetric").first).to_contain_text("Runs that reached the target")
        no_exception(page)
        for _, title, _ in PAGES:
            expect(nav_link(page, title)).to_have_count(1)
        assert re.search(r"warm-up: 12 built-in runs of mnist1d analysed in \d+\.\d s", log.read_text())


def test_the_watcher_sees_the_legacy_navigation_when_it_is_on(page: Page, tmp_path):
    """The check above can fail: with the option back on, the same visit shows the file names."""
    env = {"STREAMLIT_CLIENT_SHOW_SIDEBAR_NAVIGATION": "true"}
    with streamlit_server(tmp_path / "library.duckdb", tmp_path / "streamlit.log", env=env) as url:
        seen = first_visit(page, url)
    assert "stSidebarNav" in seen and set(seen) - {"stSidebarNav"} <= set(FILE_NAMES)


def test_a_deep_link_as_the_first_visit_gets_the_apps_navigation_and_layout(page: Page, tmp_path):
    """``/plan`` opened before any session has run ``app.py`` on the server: Streamlit runs
    ``pages/plan.py`` on its own (its legacy mode), which showed the page without the top navigation
    and in the narrow layout, and every deep link after it too until someone opened ``/``.  The page
    hands over to ``app.py`` (``pages.shared.navigation.hand_over_to_app``): the navigation, one title."""
    with streamlit_server(tmp_path / "library.duckdb", tmp_path / "streamlit.log") as url:
        for visit in range(2):                       # the very first session, and the one after it
            page.goto(f"{url}/plan")
            expect(page.get_by_test_id("stPlotlyChart").first).to_be_visible(timeout=WAIT_MS)
            wait_idle(page, timeout=WAIT_MS)
            no_exception(page)
            for _, title, _ in PAGES:
                expect(nav_link(page, title)).to_have_count(1)
            expect(page.get_by_role("heading", name="Plan", exact=True)).to_have_count(1)   # rendered once
            # the wide layout: the page's content spans most of the 1280-pixel viewport beside the sidebar
            width = page.get_by_test_id("stMainBlockContainer").bounding_box()["width"]
            assert width > 800, (visit, width)
