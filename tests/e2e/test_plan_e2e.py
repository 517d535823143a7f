"""The Plan page in a real browser: move the worker slider with the keyboard, download the headline PNG."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.e2e.conftest import PNG_MAGIC, WAIT_MS, download, goto_page, no_exception, wait_idle


def test_move_workers_slider_and_download_the_headline_png(page: Page, app_url, tmp_path):
    goto_page(page, app_url, "Plan")
    charts = page.get_by_test_id("stPlotlyChart")
    expect(charts).to_have_count(2, timeout=WAIT_MS)
    headline = charts.first
    # paper θ: the best w is 7 for p = 2 and 10 for p = 4 (sqrt(130.56·p/4.92))
    expect(headline.get_by_text("w = 10", exact=True)).to_be_visible(timeout=WAIT_MS)

    # largest number of workers 32 -> 2 (Home) -> 8 (six steps right): p = 4 is then best at the edge, w = 8
    slider = page.get_by_test_id("stSlider").filter(has_text="Largest number of workers")
    slider.get_by_role("slider").focus()
    page.keyboard.press("Home")
    for _ in range(6):
        page.keyboard.press("ArrowRight")
    expect(slider.get_by_test_id("stSliderThumbValue")).to_have_text("8")
    wait_idle(page)
    expect(headline.get_by_text("w = 8", exact=True)).to_be_visible(timeout=WAIT_MS)
    expect(headline.get_by_text("w = 7", exact=True)).to_be_visible()
    expect(headline.get_by_text("w = 10", exact=True)).to_have_count(0)

    png = tmp_path / "time_to_target.png"
    assert download(page, page, "Chart (PNG)", png).suggested_filename == "time_to_target.png"
    assert png.read_bytes()[:8] == PNG_MAGIC
    no_exception(page)


def test_the_schedule_section_plans_the_built_in_cool_down_when_asked(page: Page, app_url):
    goto_page(page, app_url, "Plan")
    charts = page.get_by_test_id("stPlotlyChart")
    expect(charts).to_have_count(2, timeout=WAIT_MS)                 # the plan; the schedule waits to be asked
    toggle = page.get_by_test_id("stCheckbox").filter(has_text="Show it on the built-in example")
    toggle.scroll_into_view_if_needed()
    toggle.locator("label").click()
    wait_idle(page)
    expect(charts).to_have_count(3, timeout=WAIT_MS)
    expect(page.get_by_test_id("stMetric").filter(has_text="Shortest plan reaching loss")).to_be_visible(
        timeout=WAIT_MS)
    expect(charts.last.get_by_text("Cool-downs to loss<=", exact=False)).to_be_visible(timeout=WAIT_MS)
    no_exception(page)
