"""The Throughput page in a real browser: choose another device, read the metric, download a chart PNG."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from core.paleo import load_net, simulate, worker_counts
from tests.e2e.conftest import PNG_MAGIC, download, goto_page, no_exception, wait_idle


def _iteration_ms(device: str) -> str:
    res = simulate(load_net("resnet50"), device=device, network="ethernet", batch_size=128,
                   workers=worker_counts(32))
    return f"{res.rows[0].time_comp_ms:,.2f} ms"


def test_choose_another_device_and_download_the_throughput_chart(page: Page, app_url, tmp_path):
    goto_page(page, app_url, "Throughput")
    metric = page.get_by_test_id("stMetric").filter(has_text="Iteration time, 1 worker")
    expect(metric).to_contain_text(_iteration_ms("V100"), timeout=90_000)

    page.get_by_test_id("stSelectbox").filter(has_text="Device").click()
    page.get_by_role("option", name="A100: 19,500 GFLOP/s, 1,555 GB/s", exact=True).click()
    wait_idle(page)
    expect(metric).to_contain_text(_iteration_ms("A100"), timeout=60_000)
    # the chart title (SVG text) follows the device once the rerun is done
    expect(page.get_by_text("Throughput: resnet50 on A100", exact=False)).to_be_visible(timeout=30_000)

    png = tmp_path / "throughput.png"
    got = download(page, page, "Chart (PNG)", png)
    assert got.suggested_filename == "throughput_resnet50_A100_ethernet_weak_b128.png"
    assert png.read_bytes()[:8] == PNG_MAGIC
    no_exception(page)
