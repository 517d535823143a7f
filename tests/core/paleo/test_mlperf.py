"""The MLPerf v3.0 ResNet-50 check of the transfer (the built-in logs in data/): A100 PCIe ↔ DGX H100 within 15 %."""

from __future__ import annotations

import pytest

from core.errors import LogFormatError
from core.paleo import check_transfer, load_net, load_workload, read_mlperf_throughput, workload_from_net
from tests.conftest import DATA

LOGS = DATA / "mlperf_v3.0_resnet50"   # MLLOG lines of the originals, byte for byte
A100 = ("Dell/R750xax4A100-PCIE-80GB", "A100_PCIE_80GB")       # 1 node x 4 A100 PCIe 80GB
H100 = ("NVIDIA/dgxh100_ngc23.04_mxnet", "H100_SXM")            # 1 DGX H100, 8 H100 SXM5


def _runs(folder: str):
    return [read_mlperf_throughput((LOGS / folder / f"result_{seed}.txt").read_bytes(), f"result_{seed}.txt")
            for seed in (0, 1)]


def test_per_accelerator_throughput_read_from_the_logs():
    a, h = _runs(A100[0]), _runs(H100[0])
    # global batch / batch per accelerator: 1632 / 408 = 4 GPUs, 3200 / 400 = 8 GPUs
    assert [(r.n_accelerators, r.local_batch, len(r.epochs_img_s)) for r in a] == [(4, 408, 35)] * 2
    assert [(r.n_accelerators, r.local_batch, len(r.epochs_img_s)) for r in h] == [(8, 400, 35)] * 2
    # steady throughput (epochs after the first): the "about 3,180" and "about 6,940" are means with the
    # slow first epoch; without it 3,239 and 7,008 images/s per GPU
    assert a[0].per_accelerator_img_s == pytest.approx(3239.3, abs=0.5)
    assert h[0].per_accelerator_img_s == pytest.approx(7007.6, abs=0.5)
    assert a[0].epochs_img_s[0] < 0.4 * a[0].steady_img_s                  # the warm-up epoch left out


@pytest.fixture(scope="module")
def workloads():
    return load_workload("torch:resnet50"), workload_from_net(load_net("torch:resnet50"), free_layers=False)


@pytest.mark.slow
@pytest.mark.parametrize("source, target", [(A100, H100), (H100, A100)], ids=["A100->H100", "H100->A100"])
def test_transfer_predicts_the_other_system_within_15_percent(workloads, source, target):
    check = check_transfer(_runs(source[0]), _runs(target[0]), *workloads, source=source[1], target=target[1])
    assert check.measured_ratio == pytest.approx(7007.6 / 3239.3 if target is H100 else 3239.3 / 7007.6, rel=1e-3)
    assert abs(check.error(check.predicted_ratio)) <= 0.15
    assert check.predicted_low <= check.target_img_s <= check.predicted_high          # the interval holds it
    # the datasheet alone: tensor peaks 3.17x (+46 % / -32 % off), bandwidths 1.73x (-20 % / +25 % off)
    assert abs(check.error(check.peak_ratio)) > 0.3 and abs(check.error(check.bandwidth_ratio)) > 0.15
    assert check.calibration.measurements[0].error_pct == pytest.approx(0, abs=1e-9)


def test_a_file_without_batches_is_refused():
    with pytest.raises(LogFormatError, match=r"x.txt: expected MLLOG events global_batch_size, d_batch_size"):
        read_mlperf_throughput(':::MLLOG {"key": "tracked_stats", "value": {"throughput": 1}}', "x.txt")
    with pytest.raises(LogFormatError, match=r"y.txt: expected tracked_stats throughput for at least 2 epochs; got 1"):
        read_mlperf_throughput('\n'.join([':::MLLOG {"key": "global_batch_size", "value": 8}',
                                          ':::MLLOG {"key": "d_batch_size", "value": 8}',
                                          ':::MLLOG {"key": "tracked_stats", "value": {"imgs_sec": 1}}']), "y.txt")
