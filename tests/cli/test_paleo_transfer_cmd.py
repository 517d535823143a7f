"""``python -m core paleo --measured-step ... --to-device ...`` and ``python -m core profile``."""

from __future__ import annotations

import io
import re

import pandas as pd
import pytest

from core.cli import main
from core.paleo import calibrate_at_workers, load_net, load_workload, simulate, transfer_scaling


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


ARGS = ("paleo", "--net", "torch:resnet20", "--device", "A100_PCIE_80GB", "--precision", "fp16", "--batch", "128",
        "--workers", "2,4", "--network", "pcie4", "--measured-step", "0.05")


def test_transfer_prints_the_table_for_each_device_with_its_interval(capsys):
    code, out, err = _run(capsys, *ARGS, "--to-device", "H100_SXM,L4")
    assert code == 0 and err == ""
    frame = pd.read_csv(io.StringIO(out))
    # the columns of the plain table first, then the interval and the precision
    plain = simulate(load_net("torch:resnet20"), device="A100", workers=(2,)).to_frame()
    assert list(frame.columns) == [*plain.columns, "time_low", "time_high", "precision"]
    assert frame.device.tolist() == ["A100_PCIE_80GB"] * 2 + ["H100_SXM"] * 2 + ["L4"] * 2
    assert frame.workers.tolist() == [2, 4] * 3 and (frame.precision == "fp16").all()
    # the calibration device gives the measurement back at the first worker count (ring all-reduce included)
    assert frame.total_RingAllReduce_ms[0] == pytest.approx(50.0)
    assert (frame.time_low <= frame.time_comp_ms + 1e-9).all() and (frame.time_comp_ms <= frame.time_high + 1e-9).all()
    # the same numbers as the Python API
    workload = load_workload("torch:resnet20")
    cal = calibrate_at_workers(workload, 0.05, device="A100_PCIE_80GB", precision="fp16", batch_size=128, workers=2,
                               network="pcie4")
    h100 = transfer_scaling(workload, cal, "H100_SXM", precision="fp16", network="pcie4", batch_size=128,
                            workers=(2, 4)).to_frame()
    assert frame[frame.device == "H100_SXM"].time_comp_ms.tolist() == pytest.approx(h100.time_comp_ms.tolist())


def test_plain_tables_keep_their_columns(capsys):
    code, out, _ = _run(capsys, "paleo", "--net", "alex_v2", "--workers", "1")
    frame = pd.read_csv(io.StringIO(out))
    assert code == 0 and not {"time_low", "time_high", "precision"} & set(frame.columns)


def test_list_has_the_training_gpus_with_flops_labelled(capsys):
    code, out, _ = _run(capsys, "paleo", "--list")
    frame = pd.read_csv(io.StringIO(out))
    gpus = frame[frame.kind == "gpu"].set_index("name")
    assert code == 0 and {"A100_PCIE_80GB", "H100_SXM", "B200"} <= set(gpus.index)
    assert "bf16 989.4" in gpus.loc["H100_SXM", "description"]
    assert "2 per multiply-add" in gpus.loc["H100_SXM", "description"]


@pytest.mark.parametrize("argv, pattern", [
    (("paleo", "--net", "alex_v2", "--to-device", "H100_SXM"), r"^--to-device/--precision: expected --measured-step"),
    ((*ARGS[:-1], "fast"), r"^--measured-step: expected a number; got 'fast'"),
    ((*ARGS, "--to-device", "H300"), r"^device: expected one of P100, V100_SXM2"),
    ((*ARGS, "--to-device", "A100_TF32"), r"^device: expected tf32 for A100_TF32 \(one peak, TF32\); got 'fp16'"),
    ((*ARGS, "--to-device", "MI300X"), r"^precision: expected one of bf16, fp8 for MI300X; got 'fp16'"),
    ((*ARGS, "--paleo-compatible"), r"^--measured-step: expected the modern model"),
    (("paleo", "--net", "torch:resnet20", "--device", "V100_SXM2", "--precision", "bf16", "--measured-step", "0.1"),
     r"^precision: expected one of fp32, fp16 for V100_SXM2; got 'bf16'"),
    (("profile", "--net", "alex_v2"), r"^--net: expected torch:<model> with a model of core.models"),
    (("profile", "--net", "torch:resnet20", "--device", "tpu"), r"^device: expected one of cpu, cuda; got 'tpu'"),
    (("profile", "--net", "torch:resnet20", "--batch", "0"), r"^batch_size: expected an int >= 1; got 0"),
])
def test_bad_input_prints_one_line_and_exits_2(capsys, argv, pattern):
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and re.search(pattern, err)


def test_profile_prints_measured_beside_estimated(capsys):
    code, out, _ = _run(capsys, "profile", "--net", "torch:resnet8_1d", "--batch", "8", "--steps", "1",
                        "--warmup", "1")
    frame = pd.read_csv(io.StringIO(out))
    assert code == 0 and frame.layer.iloc[-1] == "(not attributed)"
    assert {"measured_fwd_ms", "measured_bwd_ms", "roofline_ms", "paleo_ms", "gemm_gflops", "copy_gbs"} <= set(
        frame.columns)
    layers = frame.iloc[:-1]
    assert layers.roofline_ms.sum() == pytest.approx(layers.measured_ms.sum(), rel=1e-4)   # CSV: 6 digits
    assert (frame.net == "torch:resnet8_1d").all() and (frame.threads == 1).all()
