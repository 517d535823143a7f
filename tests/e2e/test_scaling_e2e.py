"""The Scaling page in a real browser: switch tabs, change the worker count, download a PNG."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from core.scaling.ps_rounds import PSJob, ps_rounds
from tests.e2e.conftest import PNG_MAGIC, WAIT_MS, download, goto_page, no_exception, wait_idle


def _metric(page: Page, label: str):
    return page.get_by_test_id("stMetric").filter(has_text=label).get_by_test_id("stMetricValue")


def test_tabs_machines_and_png_download(page: Page, app_url, tmp_path):
    goto_page(page, app_url, "Scaling")
    # parameter-server tab (the first): docs/scaling.md's example, 8 workers
    expect(_metric(page, "Total time")).to_have_text("8.815 s", timeout=WAIT_MS)
    expect(_metric(page, "Crossover m*")).to_have_text("13")

    machines = page.get_by_test_id("stNumberInput").filter(has_text="Worker machines m").locator("input")
    machines.fill("20")
    machines.press("Enter")
    wait_idle(page)
    job = PSJob(50_000, batch=128, epochs=1, machines=20, broadcast_s=0.02, compute_s=0.1, gather_s=0.02,
                aggregate_s=0.005)
    r = ps_rounds(job)
    expect(_metric(page, "Rounds")).to_have_text(f"{r.total_rounds:,}")          # ceil(391/20) = 20
    expect(_metric(page, "Total time")).to_have_text(f"{r.total_time_s:,.6g} s")

    page.get_by_role("tab", name="Sync vs async").click()
    expect(_metric(page, "Stale gradients")).to_have_text("5 of 6")
    expect(page.get_by_text("If every gradient has norm at most Δ", exact=False)).to_be_visible()

    page.get_by_role("tab", name="Measured scaling").click()
    wait_idle(page)
    expect(_metric(page, "Strong-scaling comparisons")).to_have_text("12", timeout=WAIT_MS)
    expect(_metric(page, "Nominal link")).to_have_text("3.125 GB/s")
    tab = page.get_by_role("tabpanel", name="Measured scaling")
    png = tmp_path / "speedup.png"
    assert download(page, tab, "Chart (PNG)", png).suggested_filename == "speedup.png"
    assert png.read_bytes()[:8] == PNG_MAGIC

    page.get_by_role("tab", name="Batch size").click()
    expect(_metric(page, "Warm-up steps")).to_have_text("245")
    no_exception(page)
