"""The Calibrate page in a real browser: choose another held-out model, read the prediction."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from core.calibrate import calibrate, read_fits_table
from core.datasets import course_fits_path
from tests.e2e.conftest import WAIT_MS, goto_page, leave_and_come_back, no_exception, open_tab, wait_idle


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


def test_details_tabs_compute_the_open_one_and_stay_chosen_across_pages(page: Page, app_url):
    goto_page(page, app_url, "Calibrate")
    wait_idle(page, timeout=WAIT_MS)
    # a first visit draws the prediction table, not the curves nor the method scores
    expect(page.get_by_role("heading", name="Prediction table")).to_be_visible(timeout=WAIT_MS)
    expect(page.get_by_role("heading", name="Curve parameters against depth")).to_have_count(0)
    open_tab(page, "Curves")
    expect(page.get_by_role("heading", name="Curve parameters against depth")).to_be_visible(timeout=WAIT_MS)
    no_exception(page)
    leave_and_come_back(page, "Calibrate")
    expect(page.get_by_role("tab", name="Curves")).to_have_attribute("aria-selected", "true", timeout=WAIT_MS)
    expect(page.get_by_role("heading", name="Curve parameters against depth")).to_be_visible(timeout=WAIT_MS)
    open_tab(page, "Leave-one-architecture-out")
    expect(page.get_by_role("heading", name="Leave-one-architecture-out")).to_be_visible(timeout=WAIT_MS)
    no_exception(page)
