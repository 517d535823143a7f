"""The Logs page in a real browser: upload two logs, move the target slider, download CSV and PNG."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from playwright.sync_api import Page, expect

from tests.e2e.conftest import (
    PNG_MAGIC,
    WAIT_MS,
    course_log,
    download,
    goto_page,
    leave_and_come_back,
    no_exception,
    open_tab,
    wait_idle,
)

ROOT = Path(__file__).resolve().parents[2]


def test_upload_two_logs_move_target_and_download(page: Page, app_url, tmp_path):
    goto_page(page, app_url, "Logs")
    files = [course_log(tmp_path, "resnet98_Tesla V100-PCIE-32GB.csv", 0.01),
             course_log(tmp_path, "resnet99_NVIDIA A100-PCIE-40GB.csv", 0.02)]
    page.get_by_test_id("stFileUploader").locator("input[type=file]").set_input_files([str(f) for f in files])
    wait_idle(page)
    sidebar = page.get_by_test_id("stSidebar")
    expect(sidebar.get_by_text("2 uploaded file(s)", exact=False)).to_be_visible(timeout=WAIT_MS)
    charts = page.get_by_test_id("stPlotlyChart")
    expect(charts).to_have_count(2, timeout=WAIT_MS)       # loss and accuracy (the prediction is in its tab)

    # target 0.92 -> 0.90 with the keyboard (step 0.01)
    slider = page.get_by_test_id("stSlider").filter(has_text="Target: acc ≥").get_by_role("slider")
    slider.focus()
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    expect(page.get_by_test_id("stSlider").filter(has_text="Target: acc ≥")
           .get_by_test_id("stSliderThumbValue")).to_have_text("0.90")
    wait_idle(page)
    # the accuracy chart's title (SVG text) follows the slider once the rerun is done
    expect(page.get_by_text("Accuracy against global step (target 90%)")).to_be_visible(timeout=WAIT_MS)
    expect(charts).to_have_count(2)

    csv_path = tmp_path / "fits.csv"
    download(page, page, "Table (CSV)", csv_path)
    table = pd.read_csv(csv_path).set_index("file")
    # accuracy at epoch e's end = 0.5 + 0.045 e > 0.90 first at e = 9 -> step 9*30
    assert table.loc["resnet99_NVIDIA A100-PCIE-40GB.csv", "epoch_to_target"] == 9
    assert table.loc["resnet99_NVIDIA A100-PCIE-40GB.csv", "target_acc"] == 0.9
    assert table.loc["resnet98_Tesla V100-PCIE-32GB.csv", "b0"] == __import__("pytest").approx(0.01, rel=1e-3)

    png = tmp_path / "chart.png"
    download(page, page, "Chart (PNG)", png)
    assert png.read_bytes()[:8] == PNG_MAGIC
    page.screenshot(path=str(tmp_path / "logs.png"), full_page=True)
    no_exception(page)


def test_the_prediction_tab_is_computed_when_opened_and_stays_chosen_across_pages(page: Page, app_url):
    goto_page(page, app_url, "Logs")
    wait_idle(page, timeout=WAIT_MS)
    # a first visit draws the fits table below the answer, not the prediction
    expect(page.get_by_role("heading", name="Fitted runs (12)")).to_be_visible(timeout=WAIT_MS)
    prediction = page.get_by_role("heading", name="Predict the epoch at target from the first epochs")
    expect(prediction).to_have_count(0)
    open_tab(page, "Prediction")
    expect(prediction).to_be_visible(timeout=WAIT_MS)
    expect(page.get_by_test_id("stMetric").filter(has_text="Posterior (both)")).to_be_visible(timeout=WAIT_MS)
    no_exception(page)
    leave_and_come_back(page, "Logs")
    expect(page.get_by_role("tab", name="Prediction")).to_have_attribute("aria-selected", "true", timeout=WAIT_MS)
    expect(prediction).to_be_visible(timeout=WAIT_MS)
    no_exception(page)
