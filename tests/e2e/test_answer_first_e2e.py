"""The answer comes first (issue 21, part 4): on a 1280×800 window the Plan page shows its headline
(the time-to-target chart and the best w with its time and cost) without scrolling."""

from __future__ import annotations

import os

from playwright.sync_api import Page, expect

from tests.e2e.conftest import goto_page, no_exception

WIDTH, HEIGHT = 1280, 800


def test_plan_headline_is_visible_without_scrolling(page: Page, app_url, tmp_path):
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    goto_page(page, app_url, "Plan")
    chart = page.get_by_test_id("stPlotlyChart").first
    expect(chart.locator(".main-svg").first).to_be_visible(timeout=60_000)
    best = page.get_by_test_id("stMetric").filter(has_text="Best w for p = 2")
    expect(best).to_be_visible(timeout=30_000)
    expect(page.get_by_test_id("stCaptionContainer").filter(has_text="hours").first).to_be_visible()
    for element in (chart, best):
        box = element.bounding_box()
        assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= HEIGHT, box
    # the chart's title is whole: its text ends inside the chart
    title = chart.locator(".gtitle").first
    title_box, chart_box = title.bounding_box(), chart.bounding_box()
    assert title_box["x"] + title_box["width"] <= chart_box["x"] + chart_box["width"]
    shot = os.environ.get("ANSWER_FIRST_PNG")       # set it to look at the page: the PNG is written there
    page.screenshot(path=shot or str(tmp_path / "plan_1280x800.png"))
    no_exception(page)


def test_logs_headline_and_chart_come_before_the_uploader(page: Page, app_url):
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    goto_page(page, app_url, "Logs")
    reached = page.get_by_test_id("stMetric").filter(has_text="Runs that reached the target")
    expect(reached).to_be_visible(timeout=60_000)
    box = reached.bounding_box()
    assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= HEIGHT, box
    chart = page.get_by_test_id("stPlotlyChart").first
    expect(chart.locator(".main-svg").first).to_be_visible(timeout=60_000)
    uploader = page.get_by_test_id("stFileUploader").bounding_box()
    assert chart.bounding_box()["y"] < uploader["y"]
    no_exception(page)
