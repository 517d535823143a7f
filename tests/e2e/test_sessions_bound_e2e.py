"""A server bounds the browser sessions it serves (``$TTA_MAX_SESSIONS``, issue 21: memory per session): with a
bound of one, a second browser is told the server is full and loads nothing; once the first closes, the second
gets the app on a reload."""

from __future__ import annotations

from playwright.sync_api import Browser, expect

from tests.e2e.conftest import WAIT_MS, start_streamlit, stop_streamlit, wait_idle


def _open(browser: Browser, url: str):
    context = browser.new_context()
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    page.goto(url)
    expect(page.get_by_test_id("stApp")).to_have_attribute("data-test-connection-state", "CONNECTED",
                                                           timeout=WAIT_MS)
    wait_idle(page)
    return page


def test_a_session_over_the_bound_waits_until_another_closes(browser: Browser, tmp_path):
    proc, url = start_streamlit(tmp_path / "library.duckdb", tmp_path / "server.log", env={"TTA_MAX_SESSIONS": "1"})
    try:
        first = _open(browser, url)
        expect(first.get_by_role("heading", name="Logs", exact=True).first).to_be_visible(timeout=WAIT_MS)
        full = "This server already serves its 1 sessions (TTA_MAX_SESSIONS)"

        second = _open(browser, url)
        expect(second.get_by_text(full, exact=False)).to_be_visible(timeout=WAIT_MS)
        expect(second.get_by_role("heading", name="Logs", exact=True)).to_have_count(0)
        expect(second.get_by_test_id("stException")).to_have_count(0)

        first.context.close()                       # the first browser leaves: its session closes
        second.reload()
        expect(second.get_by_test_id("stApp")).to_have_attribute("data-test-connection-state", "CONNECTED",
                                                                 timeout=WAIT_MS)
        expect(second.get_by_role("heading", name="Logs", exact=True).first).to_be_visible(timeout=WAIT_MS)
        expect(second.get_by_text(full, exact=False)).to_have_count(0)
    finally:
        stop_streamlit(proc)
