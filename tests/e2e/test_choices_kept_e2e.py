"""A choice stays chosen (issue 15, F2): on every page, pick options, move every slider, touch
another widget, and check in a real browser that every choice is still the one picked.

The defect: option labels carried text that changed with the target ("reached at step 945",
backtest scores); Streamlit 1.67 then matched the browser's old label on the next rerun and fell
back to the first option, silently switching the run the page showed.
"""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.e2e.conftest import WAIT_MS, goto_page, no_exception, open_tab, wait_idle

RESNET20 = "resnet20_Intel Xeon Processor.csv"


def choose(page: Page, label: str, option: str) -> None:
    """Pick ``option`` in the selectbox labelled ``label``."""
    page.get_by_role("combobox", name=label, exact=True).click()
    page.keyboard.type(option)                     # long lists are virtualised: filter to the option
    page.get_by_role("option", name=option, exact=True).click()
    wait_idle(page, timeout=WAIT_MS)


def selected(page: Page, label: str, option: str) -> None:
    """The selectbox labelled ``label`` shows ``option``."""
    expect(page.get_by_role("combobox", name=label, exact=True)).to_have_value(option, timeout=WAIT_MS)


def press(page: Page, label: str, key: str, times: int = 1) -> None:
    """Move the slider labelled ``label`` with the keyboard."""
    page.get_by_test_id("stSlider").filter(has_text=label).first.get_by_role("slider").focus()
    for _ in range(times):
        page.keyboard.press(key)
    wait_idle(page, timeout=WAIT_MS)


def toggle(page: Page, label: str) -> None:
    page.get_by_test_id("stCheckbox").filter(has_text=label).first.click()
    wait_idle(page, timeout=WAIT_MS)


def test_logs_keeps_the_run_family_and_view(page: Page, app_url):
    goto_page(page, app_url, "Logs")
    choose(page, "Show", RESNET20)
    open_tab(page, "Prediction")                                 # the prediction's tab
    choose(page, "Run", RESNET20)
    choose(page, "Curve family", "weibull")
    press(page, "Target: acc ≥", "ArrowRight")                 # 0.92 -> 0.93
    press(page, "Predict from the first N epochs", "ArrowLeft")  # then the other slider
    toggle(page, "log step axis")                                # then another widget
    selected(page, "Curve family", "weibull")
    selected(page, "Show", RESNET20)
    selected(page, "Run", RESNET20)
    expect(page.get_by_role("tab", name="Prediction")).to_have_attribute("aria-selected", "true")
    no_exception(page)


def test_plan_keeps_the_run_through_a_target_change(page: Page, app_url):
    goto_page(page, app_url, "Plan")
    choose(page, "Run", RESNET20)
    expect(page.get_by_test_id("stMetric").filter(has_text="Steps to target")).to_contain_text("945")
    press(page, "Target: acc ≥", "ArrowRight")                 # 0.92 -> 0.93
    press(page, "Largest number of workers", "ArrowRight")
    page.get_by_test_id("stNumberInput").filter(has_text="Price per worker-hour").locator("input").fill("3")
    page.keyboard.press("Enter")
    wait_idle(page, timeout=WAIT_MS)
    selected(page, "Run", RESNET20)
    expect(page.get_by_text(f"{RESNET20}: reached acc>=0.93", exact=False)).to_be_visible(timeout=WAIT_MS)
    no_exception(page)


def test_calibrate_keeps_the_held_out_model_and_method(page: Page, app_url):
    goto_page(page, app_url, "Calibrate")
    choose(page, "Held-out architecture (predicted from the others)", "resnet32")
    choose(page, "Regression method", "Course baseline: KernelRidge on [layers, GPU index]")
    press(page, "Target: acc ≥", "ArrowLeft")
    page.get_by_test_id("stRadio").filter(has_text="Loss threshold L").get_by_text("measured (course)").click()
    wait_idle(page, timeout=WAIT_MS)
    selected(page, "Held-out architecture (predicted from the others)", "resnet32")
    selected(page, "Regression method", "Course baseline: KernelRidge on [layers, GPU index]")
    no_exception(page)


def test_throughput_keeps_model_device_and_network(page: Page, app_url):
    goto_page(page, app_url, "Throughput")
    choose(page, "Model", "inception_v3 (Paleo spec)")
    page.get_by_role("combobox", name="Device", exact=True).click()
    page.get_by_role("option").filter(has_text="A100").first.click()
    wait_idle(page, timeout=WAIT_MS)
    device = page.get_by_role("combobox", name="Device", exact=True).input_value()
    press(page, "Workers: 1, 2, 4", "ArrowLeft")
    press(page, "Layers shown", "ArrowRight")
    toggle(page, "Logarithmic worker axis")
    selected(page, "Model", "inception_v3 (Paleo spec)")
    selected(page, "Device", device)
    no_exception(page)


def test_scaling_keeps_its_choices(page: Page, app_url):
    goto_page(page, app_url, "Scaling")
    page.get_by_test_id("stRadio").filter(has_text="At an epoch boundary").get_by_text(
        "rounds run across epochs").click()
    wait_idle(page, timeout=WAIT_MS)
    press(page, "First rounds drawn", "ArrowRight")
    page.get_by_test_id("stNumberInput").filter(has_text="Worker machines m").locator("input").fill("6")
    page.keyboard.press("Enter")
    wait_idle(page, timeout=WAIT_MS)
    expect(page.get_by_test_id("stRadio").filter(has_text="At an epoch boundary").get_by_role(
        "radio", name="rounds run across epochs")).to_be_checked()
    expect(page.get_by_test_id("stSlider").filter(has_text="First rounds drawn").get_by_test_id(
        "stSliderThumbValue")).to_have_text("3")
    no_exception(page)
