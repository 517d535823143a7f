"""The Calibrate page in a real browser: choose another held-out model, read the prediction."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from core.calibrate import calibrate, read_fits_table
from core.datasets import course_fits_path
from tests.e2e.conftest import WAIT_MS, goto_page, no_exception, wait_idle


def test_choose_another_held_out_model(page: Page, app_url):
    goto_page(page, app_url, "Calibrate")
    expect(page.get_by_test_id("stMetric").first).to_be_visible(timeout=WAIT_MS)
    wait_idle(page, timeout=WAIT_MS)        # the answer is drawn first; the page goes on below it: wait for the end
    select = page.get_by_test_id("stSelectbox").filter(has_text="Held-out architecture")
    select.get_by_role("combobox").click()
    page.keyboard.type("resnet44")                  # filter the list to the option, as a user types
    page.get_by_role("option", name="resnet44", exact=True).click()
    wait_idle(page, timeout=WAIT_MS)
    method = page.get_by_test_id("stSelectbox").filter(has_text="Regression method")
    method.get_by_role("combobox").click()
    page.keyboard.type("Course baseline")
    page.get_by_role("option", name="Course baseline: KernelRidge on [layers, GPU index]").click()
    wait_idle(page, timeout=WAIT_MS)
    cal = calibrate(read_fits_table(course_fits_path()), holdout="resnet44", method="course")
    row = cal.predictions.iloc[0]
    metric = page.get_by_test_id("stMetric").filter(has_text=row["gpu"])
    expect(metric).to_contain_text(f"{row['epoch_pred']:.0f} epochs", timeout=WAIT_MS)
    expect(page.get_by_role("heading", name="resnet44: epochs to target")).to_be_visible()
    no_exception(page)
