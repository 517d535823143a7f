"""Measured per-layer profiles beside Paleo's and the roofline's estimates (core.paleo.profile)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import LogFormatError
from core.paleo import compare_profile, load_net, load_workload, measure_profile, profile_report, read_profile
from core.paleo.profile import UNATTRIBUTED
from core.paleo.workload import UPDATE_LAYER

SHIPPED = Path(__file__).resolve().parents[3] / "data" / "paleo" / "profiles" / "resnet20_cpu_b32.csv"


@pytest.fixture(scope="module")
def shipped():
    profile = read_profile(SHIPPED.read_bytes(), SHIPPED.name)
    return profile, compare_profile(profile, load_workload(profile.net), load_net(profile.net))


def test_the_shipped_profile_reads_back(shipped):
    profile, _ = shipped
    assert (profile.net, profile.batch_size, profile.device, profile.threads) == ("torch:resnet20", 32, "cpu", 1)
    layers = {t.layer: t for t in profile.layers}
    # every convolution of ResNet-20 (19) was timed forward and backward; the optimizer step comes last
    convs = [t for name, t in layers.items() if name.endswith("conv1") or name.endswith("conv2") or name == "conv1"]
    assert len(convs) == 19 and all(t.forward_s > 0 and t.backward_s > 0 for t in convs)
    assert profile.layers[-1].layer == UPDATE_LAYER and profile.layers[-1].forward_s > 0
    assert profile.attributed_s <= profile.profiled_step_s


def test_both_estimates_are_calibrated_on_the_measured_layers(shipped):
    profile, cmp = shipped
    frame = cmp.to_frame()
    layers = frame[frame.layer != UNATTRIBUTED]
    measured_ms = profile.attributed_s * 1e3
    assert layers.measured_ms.sum() == pytest.approx(measured_ms)
    assert layers.roofline_ms.sum() == pytest.approx(measured_ms, rel=1e-9)
    assert layers.paleo_ms.sum() == pytest.approx(measured_ms, rel=1e-6)
    # Paleo prices batch norm (and the blocks' ReLU and residual add) at zero; the roofline does not
    bn = layers[layers.layer.str.endswith(("bn1", "bn2"))]
    assert len(bn) == 19 and (bn.paleo_ms == 0).all() and (bn.roofline_ms > 0).all() and (bn.measured_ms > 0).all()
    assert 0 <= cmp.misplaced_share["roofline"] <= 1 and 0 <= cmp.misplaced_share["paleo"] <= 1
    # Paleo misplaces at least the time measured in the layers it prices at zero
    free = layers[layers.paleo_ms == 0].measured_ms.sum()
    assert cmp.misplaced_share["paleo"] >= free / (2 * measured_ms)
    assert frame.layer.iloc[-1] == UNATTRIBUTED and frame.roofline_ms.isna().iloc[-1]
    kinds = cmp.by_kind().set_index("kind")
    assert kinds.loc["norm", "paleo_ms"] == 0 and kinds.loc["conv", "measured_ms"] > kinds.loc["norm", "measured_ms"]


def test_report_round_trip(shipped):
    profile, cmp = shipped
    again = read_profile(profile_report(profile, cmp).to_csv(index=False), "again.csv")
    assert again.layers == tuple(t for t in profile.layers) and again.roof == profile.roof


def test_a_live_measurement_of_a_small_model():
    profile = measure_profile("torch:resnet8_1d", batch_size=8, steps=1, warmup=1)
    names = [t.layer for t in profile.layers]
    assert names[-1] == UPDATE_LAYER and "stem.0" in names and "blocks.0.conv1" in names   # stem.0: the first conv
    timed = {t.layer: t for t in profile.layers}
    assert timed["blocks.0.conv1"].forward_s > 0 and timed["blocks.0.conv1"].backward_s > 0
    assert profile.roof.matrix_tflops > 0 and profile.roof.mem_bandwidth_gbs > 0 and profile.threads == 1


@pytest.mark.parametrize("text, pattern", [
    ("a,b\n1,2\n", r"bad.csv: expected the columns of python -m core profile; got none of net, batch_size"),
    ("", r"bad.csv: expected a CSV profile"),
])
def test_unreadable_profiles_are_refused(text, pattern):
    with pytest.raises(LogFormatError, match=pattern):
        read_profile(text, "bad.csv")
