"""The Throughput page in a real browser: choose another device, read the metric, download a chart PNG."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from core.paleo import load_net, simulate, worker_counts
from tests.e2e.conftest import PNG_MAGIC, WAIT_MS, download, goto_page, no_exception, wait_idle


def _iteration_ms(device: str) -> str:
    res = simulate(load_net("resnet50"), device=device, network="ethernet", batch_size=128,
                   workers=worker_counts(32))
    return f"{res.rows[0].time_comp_ms:,.2f} ms"


def test_choose_another_device_and_download_the_throughput_chart(page: Page, app_url, tmp_path):
    goto_page(page, app_url, "Throughput")
    metric = page.get_by_test_id("stMetric").filter(has_text="Iteration time, 1 worker")
    expect(metric).to_contain_text(_iteration_ms("V100"), timeout=WAIT_MS)

    page.get_by_role("combobox", name="Device", exact=True).click()
    page.keyboard.type("A100: ")                   # long lists are virtualised: filter to the option
    page.get_by_role("option", name="A100: 19,500 GFLOP/s, 1,555 GB/s", exact=True).click()
    wait_idle(page)
    expect(metric).to_contain_text(_iteration_ms("A100"), timeout=WAIT_MS)
    # the chart title (SVG text) follows the device once the rerun is done
    expect(page.get_by_text("Throughput: resnet50 on A100", exact=False)).to_be_visible(timeout=WAIT_MS)

    png = tmp_path / "throughput.png"
    got = download(page, page, "Chart (PNG)", png)
    assert got.suggested_filename == "throughput_resnet50_A100_ethernet_weak_b128.png"
    assert png.read_bytes()[:8] == PNG_MAGIC
    no_exception(page)


def test_transfer_a_typed_step_and_download_its_table(page: Page, app_url, tmp_path):
    import pandas as pd

    from core.paleo import Measurement, calibrate_transfer, compare_devices, load_workload

    goto_page(page, app_url, "Throughput")
    expect(page.get_by_text("The GPU you don't have yet", exact=False)).to_be_visible(timeout=WAIT_MS)
    step = page.get_by_role("spinbutton", name="Measured time per step (s)")
    step.fill("0.252")                                   # twice MLPerf's A100 PCIe step
    step.press("Enter")
    wait_idle(page)
    csv = tmp_path / "transfer.csv"
    got = download(page, page.locator(".st-key-tp_tr_csv"), "Table (CSV)", csv)
    assert got.suggested_filename == "transfer_resnet50_A100_PCIE_80GB_fp16_b408.csv"
    shown = pd.read_csv(csv)
    workload = load_workload("resnet50")
    cal = calibrate_transfer([Measurement(workload, "A100_PCIE_80GB", "fp16", 408, 0.252)])
    want = compare_devices(workload, cal, ["A100_PCIE_80GB", "H100_SXM", "A100_SXM4_80GB", "L40S"],
                           precision="fp16", batch_size=408).to_frame()
    assert shown.device.tolist() == want.device.tolist()
    assert shown.step_time_s.tolist() == pytest.approx(want.step_time_s.tolist(), rel=1e-9)
    assert shown.step_time_s[0] == pytest.approx(0.252)
    no_exception(page)
