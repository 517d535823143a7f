"""Scaling simulation: the original program's outputs, hand-checked totals, modern options,
the per-layer table and PPP calibration."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.errors import InputError
from core.paleo import PALEO_SCHEMES, calibrate_ppp, layer_breakdown, load_net, simulate, step_time_ms
from core.paleo.results import CSV_LEAD_COLUMNS
from tests.conftest import TEST_DATA

HERE = Path(__file__).resolve().parent
ORIGINAL_GRID = HERE / "data" / "paleo_original_grid.csv"


def _validation_sample() -> Path:
    return TEST_DATA / "paleo" / "validation_sample.csv"


def _simulate_case(net, row, workers, **extra):
    return simulate(load_net(net), device=row["device"], network=row["network"],
                    batch_size=int(row["batch_size_arg"]), workers=tuple(int(w) for w in workers),
                    scaling=row["scaling"], ppp_comp=float(row["ppp_comp"]),
                    ppp_comm=float(row["ppp_comm"]), paleo_compatible=True, **extra)


def test_validation_sample_is_reproduced():
    ref = pd.read_csv(_validation_sample())
    frames = []
    for net, group in ref.groupby("net", sort=False):
        res = _simulate_case(net, group.iloc[0], group["workers"])
        frames.append(res.to_frame())
    got = pd.concat(frames, ignore_index=True)
    assert list(got.columns[:len(ref.columns)]) == list(ref.columns)
    for col in ref.columns:
        if pd.api.types.is_bool_dtype(ref[col]) or not pd.api.types.is_numeric_dtype(ref[col]):
            assert got[col].astype(str).tolist() == ref[col].astype(str).tolist(), col
        else:
            np.testing.assert_allclose(got[col].to_numpy(float), ref[col].to_numpy(float),
                                       rtol=1e-12, atol=0, err_msg=col)


def test_original_program_grid_is_reproduced():
    # 8 nets x 6 settings (devices, networks, PPPs, weak/strong, pipelining) x 7 worker counts
    ref = pd.read_csv(ORIGINAL_GRID)
    keys = ["net", "device", "network", "scaling", "batch_size_arg", "ppp_comp", "ppp_comm",
            "use_pipeline"]
    n_rows = 0
    for key, group in ref.groupby(keys, sort=False):
        row = dict(zip(keys, key))
        res = _simulate_case(row["net"], row, group["workers"], pipeline=bool(row["use_pipeline"]))
        got = res.to_frame()
        for col in ("effective_batch_size", "iter", "time_fwd_ms", "time_bwd_ms",
                    "time_apply_ms", "time_comp_ms", *(f"comm_{s}_ms" for s in PALEO_SCHEMES)):
            np.testing.assert_allclose(got[col].to_numpy(float), group[col].to_numpy(float),
                                       rtol=1e-12, atol=0, err_msg=f"{key} {col}")
        n_rows += len(group)
    assert n_rows == 336


def test_alexnet_weak_scaling_by_hand():
    res = simulate(load_net("alex_v2"), device="K80", network="ethernet", batch_size=128,
                   workers=(1, 2, 4), paleo_compatible=True)
    t = 201_215_648 / 1.25e9 * 1e3                      # 160.97 ms per link
    one, two, four = res.rows
    assert one.time_comp_ms == pytest.approx(one.time_fwd_ms + one.time_bwd_ms + one.time_apply_ms,
                                             rel=1e-15)
    assert four.total_ms["TreeAllReduce"] == pytest.approx(one.time_comp_ms + 4 * t, rel=1e-12)
    assert four.total_ms["OneToAll"] == pytest.approx(one.time_comp_ms + 6 * t, rel=1e-12)
    # weak: 4 workers x 128 images per iteration
    assert four.effective_batch_size == 512 and four.batch_per_worker == 128
    assert four.throughput_img_s["TreeAllReduce"] == pytest.approx(
        512 / four.total_ms["TreeAllReduce"] * 1000, rel=1e-12)
    # speed-up = throughput(n) / throughput(1) = n·T(1)/T(n) for weak scaling
    assert four.speedup["ButterflyMixing"] == pytest.approx(
        4 * one.total_ms["ButterflyMixing"] / four.total_ms["ButterflyMixing"], rel=1e-12)
    assert one.speedup == {s: 1.0 for s in PALEO_SCHEMES}


def test_strong_scaling_splits_the_batch_with_ceil():
    res = simulate(load_net("nin"), device="K40", batch_size=100, workers=(1, 3, 8),
                   scaling="strong", paleo_compatible=True)
    # ceil(100/3) = 34, ceil(100/8) = 13; the iteration still processes 100 images
    assert [r.batch_per_worker for r in res.rows] == [100, 34, 13]
    assert {r.effective_batch_size for r in res.rows} == {100}
    assert res.rows[1].time_fwd_ms < res.rows[0].time_fwd_ms
    # strong: speed-up = T(1)/T(n)
    r = res.rows[2]
    assert r.speedup["TreeAllReduce"] == pytest.approx(
        res.rows[0].total_ms["TreeAllReduce"] / r.total_ms["TreeAllReduce"], rel=1e-12)


def test_speedup_needs_no_one_worker_row():
    res = simulate(load_net("alex_v2"), device="K80", workers=(2, 8), paleo_compatible=True)
    ref = simulate(load_net("alex_v2"), device="K80", workers=(1, 2, 8), paleo_compatible=True)
    assert res.speedup("TreeAllReduce") == ref.speedup("TreeAllReduce")[1:]


def test_naive_bound_is_peak_over_flops_per_image():
    res = simulate(load_net("alex_v2"), device="K80", workers=(1, 2, 4), paleo_compatible=True)
    # PALEO_MODEL.md section 7: AlexNet (1.475 + 4.070) GFLOP per image; K80 5600 GFLOP/s
    assert round(res.flops_per_image / 1e9, 3) == round(1.475 + 4.070, 3)
    assert res.naive_peak() == pytest.approx([n * 5600e9 / res.flops_per_image for n in (1, 2, 4)])
    assert round(res.naive_peak()[0], -1) == round(5600 / 5.545, -1)      # about 1010 img/s
    assert all(b > t for b, t in zip(res.naive_peak(), res.throughput("ButterflyMixing")))


def test_modern_mode_adds_ring_and_parameter_server_schemes():
    res = simulate(load_net("torch:resnet20"), device="V100", network="ethernet100",
                   workers=(1, 2, 4, 8), n_ps=(2, 4))
    assert res.schemes == (*PALEO_SCHEMES, "RingAllReduce", "ParameterServer_p2",
                           "ParameterServer_p4")
    frame = res.to_frame()
    assert {"comm_RingAllReduce_ms", "total_ParameterServer_p4_ms",
            "throughput_ParameterServer_p2_img_s", "speedup_RingAllReduce"} <= set(frame.columns)
    assert list(frame.columns[:len(CSV_LEAD_COLUMNS)]) == list(CSV_LEAD_COLUMNS)
    faithful = simulate(load_net("alex_v2"), device="K80", paleo_compatible=True)
    assert faithful.schemes == PALEO_SCHEMES


def test_overlap_hides_communication_behind_backward():
    net = load_net("alex_v2")
    plain = simulate(net, device="V100", workers=(4,))
    over = simulate(net, device="V100", workers=(4,), overlap=True)
    r, o = plain.rows[0], over.rows[0]
    for s in plain.schemes:
        assert o.total_ms[s] == pytest.approx(
            r.time_fwd_ms + max(r.time_bwd_ms, r.comm_ms[s]) + r.time_apply_ms, rel=1e-12)
        assert o.total_ms[s] <= r.total_ms[s]
    with pytest.raises(InputError, match="overlap: expected False with paleo_compatible=True"):
        simulate(net, overlap=True, paleo_compatible=True)


def test_pipelining_lowers_compute_time():
    net = load_net("vgg16")
    plain = simulate(net, device="K80", workers=(1,), paleo_compatible=True).rows[0]
    piped = simulate(net, device="K80", workers=(1,), paleo_compatible=True, pipeline=True).rows[0]
    assert piped.time_comp_ms < plain.time_comp_ms


def test_modern_mode_differs_from_faithful_only_as_documented():
    net = load_net("alex_v2")
    faithful = simulate(net, device="K80", workers=(1,), paleo_compatible=True).rows[0]
    modern = simulate(net, device="K80", workers=(1,)).rows[0]
    # no 25x fc6 data gradient: backward cheaper
    assert modern.time_bwd_ms < faithful.time_bwd_ms
    # decimal GB/s: device memory time x 2**30 / 1e9 (= 1.0737), arithmetic unchanged
    f, m = (layer_breakdown(net, device="K80", paleo_compatible=pc).set_index("layer")
            for pc in (True, False))
    assert m.loc["conv1", "fwd_mem_ms"] == pytest.approx(f.loc["conv1", "fwd_mem_ms"] * 2 ** 30 / 1e9)
    assert m.loc["conv1", "fwd_comp_ms"] == f.loc["conv1", "fwd_comp_ms"]
    # same network formulas for Paleo's schemes
    assert {s: modern.comm_ms[s] for s in PALEO_SCHEMES} == pytest.approx(faithful.comm_ms)


@pytest.mark.parametrize("kwargs, pattern", [
    (dict(batch_size=0), r"batch_size: expected an int >= 1; got 0"),
    (dict(workers=()), r"workers: expected at least one worker count; got none"),
    (dict(workers=(1, 0)), r"workers: expected an int >= 1; got 0"),
    (dict(ppp_comp=0.0), r"ppp_comp: expected a finite number > 0; got 0.0"),
    (dict(ppp_comm=float("nan")), r"ppp_comm: expected a finite number > 0; got nan"),
    (dict(scaling="linear"), r"scaling: expected one of weak, strong; got 'linear'"),
    (dict(device="K81"), r"device: expected one of"),
    (dict(network="wifi"), r"network: expected one of"),
    (dict(n_ps=(0,)), r"n_ps: expected an int >= 1; got 0"),
])
def test_bad_arguments_are_refused(kwargs, pattern):
    with pytest.raises(InputError, match=pattern):
        simulate(load_net("alex_v2"), **kwargs)


def test_wrong_types_are_input_errors():
    with pytest.raises(InputError, match=r"batch_size: expected an int >= 1; got 12.5 \(float\)"):
        simulate(load_net("alex_v2"), batch_size=12.5)


def test_layer_breakdown_adds_up_to_the_pass_times():
    net = load_net("inception_v3")
    df = layer_breakdown(net, device="K40", batch_size=64, ppp_comp=0.62, paleo_compatible=True)
    row = simulate(net, device="K40", batch_size=64, ppp_comp=0.62, ppp_comm=0.72,
                   workers=(1,), paleo_compatible=True).rows[0]
    assert len(df) == len(net.layers)
    assert (df.fwd_comp_ms + df.fwd_mem_ms).sum() == pytest.approx(row.time_fwd_ms, rel=1e-12)
    assert (df.bwd_comp_ms + df.bwd_mem_ms).sum() == pytest.approx(row.time_bwd_ms, rel=1e-12)
    assert df.params.sum() == net.n_params
    assert df[df.kind == "free"].total_ms.eq(0).all()


def test_step_time_is_the_one_worker_compute_time():
    net = load_net("alex_v2")
    row = simulate(net, device="K80", workers=(1,), paleo_compatible=True).rows[0]
    assert step_time_ms(net, device="K80", batch_size=128, paleo_compatible=True) == row.time_comp_ms


def test_calibration_by_hand_in_faithful_mode():
    # 132.646 ms at PPP 1 of which the update (1.189 ms) stays at PPP 1: measured 200 ms gives
    # PPP = (132.64620401292055 - 1.1891949037839045) / (200 - 1.1891949037839045)
    cal = calibrate_ppp(load_net("alex_v2"), 200.0, device="K80", batch_size=128,
                        paleo_compatible=True)
    expected = (132.64620401292055 - 1.1891949037839045) / (200 - 1.1891949037839045)
    assert cal.ppp_comp == pytest.approx(expected, rel=1e-9)
    assert cal.model_step_ms_at_peak == pytest.approx(132.64620401292055, rel=1e-12)
    assert cal.flags == ()
    assert cal.to_dict()["device"] == "K80"


@pytest.mark.parametrize("net_name, device, batch, ppp", [
    ("alex_v2", "V100", 128, 0.37), ("inception_v3", "A100", 32, 0.62),
    ("torch:resnet20", "RTX_8000", 128, 0.05), ("nin", "H100_TF32", 256, 0.9),
])
def test_calibration_recovers_the_ppp_that_made_the_step(net_name, device, batch, ppp):
    net = load_net(net_name)
    measured = step_time_ms(net, device=device, batch_size=batch, ppp_comp=ppp)
    cal = calibrate_ppp(net, measured, device=device, batch_size=batch)
    assert cal.ppp_comp == pytest.approx(ppp, rel=1e-9)
    assert step_time_ms(net, device=device, batch_size=batch, ppp_comp=cal.ppp_comp) == \
        pytest.approx(measured, rel=1e-9)


def test_calibration_flags_faster_than_peak():
    net = load_net("alex_v2")
    at_peak = step_time_ms(net, device="V100", batch_size=128)
    cal = calibrate_ppp(net, at_peak / 2, device="V100", batch_size=128)
    assert cal.ppp_comp == pytest.approx(2.0, rel=1e-9)
    assert len(cal.flags) == 1 and "above 1" in cal.flags[0]


def test_calibration_refuses_a_step_below_the_fixed_part():
    # faithful mode: the 1.189 ms update does not shrink with PPP, so 1 ms cannot be reached
    with pytest.raises(InputError, match=r"measured_step_ms: expected more than the model's fixed part"):
        calibrate_ppp(load_net("alex_v2"), 1.0, device="K80", batch_size=128, paleo_compatible=True)
    with pytest.raises(InputError, match=r"measured_step_ms: expected a finite number > 0; got -5"):
        calibrate_ppp(load_net("alex_v2"), -5, device="K80", batch_size=128)


def test_result_accessors_agree_with_rows():
    res = simulate(load_net("alex_v2"), device="K80", workers=(1, 2))
    assert res.workers == (1, 2)
    assert res.total_ms("RingAllReduce") == tuple(r.total_ms["RingAllReduce"] for r in res.rows)
    assert math.isclose(res.throughput("RingAllReduce")[1],
                        256 / res.total_ms("RingAllReduce")[1] * 1000)
