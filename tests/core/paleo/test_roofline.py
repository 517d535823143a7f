"""The per-op roofline (core.paleo.roofline) on hand values."""

from __future__ import annotations

import pytest

from core.errors import InputError
from core.paleo import DEFAULT_EFFICIENCIES, Efficiencies, Op, Roof, Workload, roof_for
from core.paleo.roofline import roofline_layers, roofline_step

# a toy GPU: 100 TFLOP/s tensor, 10 TFLOP/s CUDA cores, 1000 GB/s
ROOF = Roof("toy", "fp16", 100, 10, 1000, "hand")


def _workload(*ops: Op) -> Workload:
    return Workload("toy", "hand", ops, 1000, "hand")


def test_a_compute_bound_conv():
    # 1e12 FLOPs at 0.6 x 100 TFLOP/s = 16.667 ms; 2e9 FP16 elements = 4e9 B at 0.8 x 1000 GB/s = 5 ms
    w = _workload(Op("c", "convolution", "conv", "forward", 1e12, 0, 2e9, 0))
    step = roofline_step(w, ROOF, precision="fp16", batch_size=1)
    assert step.total_s == pytest.approx(1e12 / 60e12) and step.compute_bound_share == 1.0
    assert roofline_step(w, ROOF, precision="fp16", batch_size=1, form="sum").total_s == pytest.approx(
        1e12 / 60e12 + 4e9 / 800e9)


def test_a_memory_bound_norm_uses_the_vector_peak_and_the_precision_s_bytes():
    # batch norm: 1e9 FLOPs at 0.5 x 10 TFLOP/s = 0.2 ms; 1e9 elements x 2 B / 800 GB/s = 2.5 ms
    w = _workload(Op("bn", "native_batch_norm", "norm", "forward", 0, 1e9, 0, 1e9))
    fp16 = roofline_step(w, ROOF, precision="fp16", batch_size=1)
    assert fp16.total_s == pytest.approx(2.5e-3) and fp16.compute_bound_share == 0.0
    # the same op in FP32 moves twice the bytes: 5 ms (the roof's precision is the device's, so use a GPU)
    a100 = {p: roofline_step(w, "A100_PCIE_80GB", precision=p, batch_size=1).total_s for p in ("fp16", "fp32")}
    assert a100["fp32"] == pytest.approx(2 * a100["fp16"])
    assert a100["fp16"] == pytest.approx(2e9 / (0.8 * 1935e9))


def test_fixed_and_per_sample_work_scale_with_the_batch():
    # 10 MB of weights read once, 1 MB of activations per sample: at batch 90, 100 MB → 0.125 ms
    w = _workload(Op("fc", "addmm", "matmul", "forward", 0, 1e3, 5e6, 0.5e6))
    step = roofline_step(w, ROOF, precision="fp16", batch_size=90)
    assert step.bytes == pytest.approx(100e6) and step.total_s == pytest.approx(100e6 / 800e9)


def test_phases_kinds_and_layers_add_up():
    w = _workload(Op("c", "convolution", "conv", "forward", 1e12, 0, 2e9, 0),
                  Op("c", "convolution_backward", "conv", "backward", 2e12, 0, 4e9, 0),
                  Op("r", "relu", "elementwise", "forward", 0, 1e6, 0, 2e9),
                  Op("optimizer step", "sgd_momentum", "elementwise", "update", 4e3, 0, 0, 0, 5e3))
    step = roofline_step(w, ROOF, precision="fp16", batch_size=1)
    assert step.forward_s == pytest.approx(1e12 / 60e12 + 4e9 / 800e9)
    assert step.backward_s == pytest.approx(2e12 / 60e12)
    assert step.update_s == pytest.approx(5e3 * 4 / 800e9)        # optimizer state is FP32: 4 B per element
    assert sum(t for _, t in step.kind_s) == pytest.approx(step.total_s)
    layers = roofline_layers(w, ROOF, precision="fp16", batch_size=1)
    assert list(layers.layer) == ["c", "r", "optimizer step"]
    assert layers.total_ms.sum() == pytest.approx(step.total_s * 1e3)
    assert list(layers.bound) == ["compute", "memory", "memory"]


def test_efficiencies_per_kind_change_only_their_kind():
    w = _workload(Op("c", "convolution", "conv", "forward", 1e12, 0, 0, 0),
                  Op("m", "mm", "matmul", "forward", 1e12, 0, 0, 0))
    slower_conv = Efficiencies((0.3, 0.7, 0.5, 0.5, 0.5), DEFAULT_EFFICIENCIES.memory)
    kinds = dict(roofline_step(w, ROOF, precision="fp16", batch_size=1, efficiencies=slower_conv).kind_s)
    assert kinds["conv"] == pytest.approx(1e12 / 30e12) and kinds["matmul"] == pytest.approx(1e12 / 70e12)


def test_roofs_of_gpus_and_of_single_precision_devices():
    h = roof_for("H100_SXM", "fp16")
    assert (h.matrix_tflops, h.vector_tflops, h.mem_bandwidth_gbs) == (989.4, 67.0, 3350.0)
    v = roof_for("V100", "fp32")                                    # the alias of V100_SXM2, at FP32
    assert v.matrix_tflops == v.vector_tflops == 15.7 and v.name == "V100_SXM2"
    assert roof_for("V100", "fp16").matrix_tflops == 125           # one record: its tensor peak too
    assert roof_for("A100_TF32", "tf32").matrix_tflops == 156       # Paleo's TF32 view: one peak
    with pytest.raises(InputError, match=r"device: expected tf32 for A100_TF32 .*got 'fp16'"):
        roof_for("A100_TF32", "fp16")
    with pytest.raises(InputError, match=r"device: expected an FP32 peak for MI300X"):
        roof_for("MI300X", "bf16")
    with pytest.raises(InputError, match=r"expected one of fp32, fp16 for V100_SXM2; got 'bf16'"):
        roof_for("V100_SXM2", "bf16")


@pytest.mark.parametrize("bad, pattern", [
    (dict(compute=(0.6,) * 4, memory=(0.8,) * 5), r"efficiencies compute: expected 5 values"),
    (dict(compute=(0.6, 0, 0.5, 0.5, 0.5), memory=(0.8,) * 5), r"compute efficiency of matmul: expected a finite"),
])
def test_efficiencies_are_validated(bad, pattern):
    with pytest.raises(InputError, match=pattern):
        Efficiencies(**bad)


def test_bad_form_and_batch():
    w = _workload(Op("c", "convolution", "conv", "forward", 1e12, 0, 0, 0))
    with pytest.raises(InputError, match=r"form: expected 'max'"):
        roofline_step(w, ROOF, precision="fp16", batch_size=1, form="mean")
    with pytest.raises(InputError, match=r"batch_size: expected an int >= 1; got 0"):
        roofline_step(w, ROOF, precision="fp16", batch_size=0)
