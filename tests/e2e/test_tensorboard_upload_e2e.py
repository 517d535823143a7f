"""Issue 36: in Chromium, the Logs page's uploader takes a TensorBoard event file (a name ending in ``.0``, which
the old ``type=`` list refused in the browser) and fits it as one more run, with no error."""

from __future__ import annotations

import re
import shutil

from playwright.sync_api import Page, expect

from tests.conftest import ROOT
from tests.e2e.conftest import WAIT_MS, goto_page, no_exception, wait_idle

EVENTS = ROOT / "tests" / "data" / "sweep" / "tensorboard" / "resnet8_CPU-16" / "events.out.tfevents.0.sweep.0"


def test_an_event_file_uploaded_in_the_browser_is_fitted(page: Page, app_url, tmp_path):
    upload = tmp_path / "events.out.tfevents.1700000000.host.123.0"
    shutil.copyfile(EVENTS, upload)
    goto_page(page, app_url, "Logs")
    wait_idle(page, timeout=WAIT_MS)
    header = page.get_by_text(re.compile(r"^Fitted runs \(\d+\)")).first
    expect(header).to_be_visible(timeout=WAIT_MS)
    before = int(re.search(r"\((\d+)\)", header.inner_text()).group(1))
    uploader = page.get_by_test_id("stFileUploader").locator("input[type=file]")
    assert uploader.get_attribute("accept") in (None, "")                 # no extension filter in the browser
    uploader.set_input_files(str(upload))
    wait_idle(page, timeout=WAIT_MS)
    expect(page.get_by_text(f"Fitted runs ({before + 1})")).to_be_visible(timeout=WAIT_MS)
    expect(page.get_by_test_id("stAlertContentError")).to_have_count(0)
    no_exception(page)
    assert "binary data" not in page.get_by_test_id("stApp").inner_text()
