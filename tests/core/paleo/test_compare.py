"""Devices side by side and Paleo's table from a calibrated transfer (core.paleo.compare)."""

from __future__ import annotations

import pytest

from core.errors import InputError
from core.paleo import (
    Measurement,
    Op,
    Roof,
    Workload,
    calibrate_at_workers,
    calibrate_transfer,
    compare_devices,
    get_network,
    transfer_scaling,
)
from core.paleo.comm import comm_time_ms

# one convolution per sample: 1e11 FLOPs and 1e7 elements (compute-bound), 1 M parameters
W = Workload("toy", "hand", (Op("c", "convolution", "conv", "forward", 0, 1e11, 0, 1e7),), 1_000_000, "hand")
SLOW = Roof("slow", "fp16", 100, 10, 1000, "hand")
FAST = Roof("fast", "fp16", 200, 20, 1000, "hand")


def test_cost_per_epoch_follows_the_price_and_the_step():
    cal = calibrate_transfer([Measurement(W, SLOW, "fp16", 10, 0.030)])
    cmp = compare_devices(W, cal, [SLOW, FAST], precision="fp16", batch_size=10, samples_per_epoch=36_000,
                          prices={"slow": 1.0, "fast": 3.0})
    slow, fast = cmp.rows
    # 3,600 steps: 108 s on the measured device (its measured step), 54 s on twice the tensor peak
    assert slow.measured_step_s == 0.030 and slow.prediction.time_s == pytest.approx(0.030)
    assert fast.prediction.time_s == pytest.approx(0.015) and fast.epoch_hours == pytest.approx(54 / 3600)
    assert slow.cost_per_epoch == pytest.approx(108 / 3600 * 1.0) and fast.cost_per_epoch == pytest.approx(0.045)
    assert fast.cost_low <= fast.cost_per_epoch <= fast.cost_high
    doubled = compare_devices(W, cal, [FAST], precision="fp16", batch_size=10, samples_per_epoch=36_000,
                              prices={"fast": 6.0})
    assert doubled.rows[0].cost_per_epoch == pytest.approx(2 * fast.cost_per_epoch)
    frame = cmp.to_frame()
    assert list(frame.device) == ["slow", "fast"] and frame.images_per_s.tolist() == pytest.approx([1000 / 3, 2000 / 3])
    assert cmp.step_time_s("fast") == pytest.approx(0.015)
    with pytest.raises(InputError, match=r"device: expected one of slow, fast; got 'H100_SXM'"):
        cmp.step_time_s("H100_SXM")


def test_devices_without_the_precision_are_skipped_with_the_reason():
    cal = calibrate_transfer([Measurement(W, "A100_PCIE_80GB", "bf16", 10, 0.05)])
    cmp = compare_devices(W, cal, ["A100_PCIE_80GB", "V100_SXM2", "H100_SXM"], precision="bf16", batch_size=10)
    assert [r.prediction.device for r in cmp.rows] == ["A100_PCIE_80GB", "H100_SXM"]
    assert cmp.skipped[0][0] == "V100_SXM2" and "no BF16 unit" in cmp.skipped[0][1]


def test_the_command_line_calibration_subtracts_the_all_reduce_at_the_first_worker_count():
    link = get_network("pcie4")
    ring_ms = comm_time_ms("RingAllReduce", 4, 2_000_000, link, 1.0)      # 1 M fp16 gradients
    # 2·3/4 · 2 MB / 32 GB/s = 0.09375 ms
    assert ring_ms == pytest.approx(2 * 3 / 4 * 2e6 / 32e9 * 1e3)
    cal = calibrate_at_workers(W, 0.100 + ring_ms / 1e3, device="A100_PCIE_80GB", precision="fp16", batch_size=10,
                               workers=4, network="pcie4")
    assert cal.measurements[0].measured_s == pytest.approx(0.100)
    table = transfer_scaling(W, cal, "A100_PCIE_80GB", precision="fp16", network="pcie4", batch_size=10,
                             workers=(4, 8))
    frame = table.to_frame()
    assert frame.total_RingAllReduce_ms[0] == pytest.approx(100 + ring_ms)        # the measurement, given back
    assert frame.params_bytes[0] == 2_000_000 and (frame.precision == "fp16").all()
    assert (frame.time_low <= frame.time_comp_ms).all() and (frame.time_comp_ms <= frame.time_high).all()
    # weak scaling: twice the workers, twice the images per iteration at the same compute time
    assert frame.effective_batch_size.tolist() == [40, 80] and frame.time_comp_ms[0] == frame.time_comp_ms[1]
    h100 = transfer_scaling(W, cal, "H100_SXM", precision="fp16", network="nvlink4", batch_size=10, workers=(1,))
    assert h100.scaling.rows[0].time_comp_ms == pytest.approx(100 * 312 / 989.4)   # compute-bound: peak ratio
