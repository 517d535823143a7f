"""Deleting and restoring on a shared library in a real browser (issue 36): the server's library is a path set
by ``TTA_LIBRARY_DB`` (shared), so without ``TTA_LIBRARY_WEB_DELETE`` the page offers no Delete and says why;
with ``TTA_LIBRARY_WEB_DELETE=1`` a run is deleted, shows under *Recently deleted*, is restored from the page
and is back in the runs table."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from core.library import Library
from core.logs import read_log_file
from tests.e2e.conftest import WAIT_MS, course_log, goto_page, no_exception, start_streamlit, stop_streamlit, wait_idle

NAMES = ["resnet20_Tesla V100-64.csv", "resnet32_Tesla V100-128.csv", "resnet44_Tesla V100-256.csv"]


def _shared_library(folder) -> Library:
    lib = Library(folder / "team" / "library.duckdb", actor="setup")
    for i, name in enumerate(NAMES):
        path = course_log(folder, name, 0.01 + 0.002 * i)
        lib.add(read_log_file(path), data=path.read_bytes())
    return lib


def _choose(page: Page, label: str, option: str) -> None:
    page.get_by_test_id("stMultiSelect").filter(has_text=label).click()
    page.keyboard.type(option.split(" ", 1)[1][:8])          # the menu opens as one types (as a user searches)
    page.get_by_role("option").filter(has_text=option).click()
    page.keyboard.press("Escape")
    wait_idle(page)


def test_a_shared_library_deletes_only_with_the_server_setting_and_restores_from_the_page(page: Page, tmp_path,
                                                                                         monkeypatch):
    lib = _shared_library(tmp_path)
    victim = f"#2 {NAMES[1]}"
    monkeypatch.delenv("TTA_LIBRARY_WEB_DELETE", raising=False)
    proc, url = start_streamlit(lib.path, tmp_path / "server_off.log")
    try:
        goto_page(page, url, "Library")
        expect(page.get_by_role("heading", name="Runs (3)")).to_be_visible(timeout=WAIT_MS)
        _choose(page, "Choose runs", victim)
        expect(page.get_by_text("Deleting runs from the web is off: this library is a file the server names",
                                exact=False)).to_be_visible(timeout=WAIT_MS)
        expect(page.get_by_role("button", name="Load 1 run(s) into this session")).to_be_enabled()
        expect(page.get_by_role("button", name="Delete 1 run(s)")).to_have_count(0)
        no_exception(page)
    finally:
        stop_streamlit(proc)
    assert len(lib.runs()) == 3

    proc, url = start_streamlit(lib.path, tmp_path / "server_on.log", env={"TTA_LIBRARY_WEB_DELETE": "1"})
    try:
        goto_page(page, url, "Library")
        expect(page.get_by_text("Deleting runs from the web is off", exact=False)).to_have_count(0)
        _choose(page, "Choose runs", victim)
        page.get_by_role("button", name="Delete 1 run(s)").click()
        wait_idle(page)
        page.get_by_role("button", name="Yes, delete").click()
        wait_idle(page)
        expect(page.get_by_text("Deleted 1 run(s) from the library; they can be restored for 30 days",
                                exact=False)).to_be_visible(timeout=WAIT_MS)
        expect(page.get_by_role("heading", name="Runs (2)")).to_be_visible(timeout=WAIT_MS)
        expect(page.get_by_role("heading", name="Recently deleted (1)")).to_be_visible(timeout=WAIT_MS)
        assert lib.runs()["source"].tolist() == [NAMES[0], NAMES[2]]

        _choose(page, "Runs to restore", victim)
        page.get_by_role("button", name="Restore 1 run(s)").click()
        wait_idle(page)
        expect(page.get_by_text("Restored 1 run(s): #2.")).to_be_visible(timeout=WAIT_MS)
        expect(page.get_by_role("heading", name="Runs (3)")).to_be_visible(timeout=WAIT_MS)
        expect(page.get_by_role("heading", name="Recently deleted", exact=False)).to_have_count(0)
        page.get_by_test_id("stMultiSelect").filter(has_text="Choose runs").click()
        page.keyboard.type("resnet")
        expect(page.get_by_role("option").filter(has_text=victim)).to_have_count(1)   # choosable again
        page.keyboard.press("Escape")
        wait_idle(page)
        expect(page.get_by_text("Audit log: who did what (latest 5)")).to_be_visible(timeout=WAIT_MS)
        no_exception(page)
    finally:
        stop_streamlit(proc)
    assert lib.runs()["source"].tolist() == NAMES
    history = lib.history()
    assert history["action"].tolist() == ["restore", "remove", "add", "add", "add"]
    assert history["run_ids"].tolist()[:2] == ["2", "2"] and history["actor"][2:].tolist() == ["setup"] * 3
    assert all(", web session " in actor for actor in history["actor"][:2])     # the browser session did it
