"""The run library in a real browser (issue 14): save an uploaded run from the Logs page, reload the browser
(a new session: the upload is gone), and find the run again on the Library page, load it back, and see the Logs
page fit it."""

from __future__ import annotations

import pandas as pd
from playwright.sync_api import Page, expect

from tests.e2e.conftest import WAIT_MS, course_log, download, goto_page, nav_link, no_exception, wait_idle


def test_save_an_upload_reload_the_browser_and_find_it_in_the_library(page: Page, app_url, tmp_path):
    name = "resnet97_Tesla V100-PCIE-32GB.csv"
    goto_page(page, app_url, "Logs")
    log = course_log(tmp_path, name, 0.013)
    page.get_by_test_id("stFileUploader").locator("input[type=file]").set_input_files(str(log))
    wait_idle(page)
    expect(page.get_by_test_id("stSidebar").get_by_text("1 uploaded file(s)", exact=False)).to_be_visible(
        timeout=WAIT_MS)

    save = page.get_by_test_id("stExpander").filter(has_text="Save to the library")
    save.get_by_text("Save to the library").first.click()
    save.get_by_label("Tags (comma-separated)").fill("e2e, mine")
    save.get_by_label("Tags (comma-separated)").press("Enter")
    wait_idle(page)
    save.get_by_role("button", name="Save to the library").click()
    wait_idle(page)
    expect(save.get_by_text("1 run(s) added, 0 already in the library.")).to_be_visible(timeout=WAIT_MS)
    no_exception(page)

    page.reload()                                         # a new session: uploads are gone, the library is not
    goto_page(page, app_url, "Library")
    expect(page.get_by_test_id("stSidebar").get_by_text("uploaded file(s)", exact=False)).to_have_count(0)
    expect(page.get_by_role("heading", name="Runs (1)")).to_be_visible(timeout=WAIT_MS)
    csv_path = tmp_path / "library_runs.csv"
    download(page, page, "Table (CSV)", csv_path)
    runs = pd.read_csv(csv_path)
    assert runs["source"].tolist() == [name]
    assert runs["model"].tolist() == ["resnet97"]
    assert runs["tags"].tolist() == ["e2e,mine"]
    assert runs["best_acc"].tolist() == [0.95]          # 0.5 + 0.045 * 10

    page.get_by_test_id("stMultiSelect").filter(has_text="Choose runs").click()
    page.keyboard.type("resnet97")
    page.get_by_role("option").filter(has_text=f"#{runs['run_id'][0]} {name}").click()
    page.keyboard.press("Escape")
    wait_idle(page)
    page.get_by_role("button", name="Load 1 run(s) into this session").click()
    wait_idle(page)
    loaded = f"{name} (library #{runs['run_id'][0]})"
    expect(page.get_by_test_id("stSidebar").get_by_text(loaded, exact=False)).to_be_visible(timeout=WAIT_MS)

    nav_link(page, "Logs").click()   # same session
    expect(page.get_by_role("heading", name="Logs", exact=True).first).to_be_visible(timeout=WAIT_MS)
    wait_idle(page)
    download(page, page, "Table (CSV)", tmp_path / "fits.csv")
    fits = pd.read_csv(tmp_path / "fits.csv").set_index("file")
    assert fits.loc[loaded, "epoch_to_target"] == 10        # 0.5 + 0.045 e > 0.92 first at e = 10
    no_exception(page)
