"""Optimus speed model: hand-computed f(p, w), NNLS recovery, refusals, calibration, Pollux fits."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import FitWarning, InputError
from core.speed import default_speed_mode, scale_to_step_time
from core.speed.optimus import MIN_POINTS, PAPER_THETA, SpeedModel, optimus_speed, paper_speed_model
from core.speed.optimus_fit import fit_speed_model
from core.speed.table import read_speed_table

POLLUX = Path(__file__).resolve().parents[3] / "data" / "pollux_traces"


# --- f(p, w) by hand ---------------------------------------------------------------------

@pytest.mark.parametrize("p, w, step_time", [
    # 1.02·128/4 + 2.78 + 4.92·4/2 + 0.00·4 + 0.02·2 = 32.64 + 2.78 + 9.84 + 0 + 0.04 = 45.30
    (2, 4, 45.30),
    # 1.02·128/1 + 2.78 + 4.92·1/1 + 0 + 0.02·1 = 130.56 + 2.78 + 4.92 + 0.02 = 138.28
    (1, 1, 138.28),
    # 1.02·128/16 + 2.78 + 4.92·16/4 + 0 + 0.02·4 = 8.16 + 2.78 + 19.68 + 0.08 = 30.70
    (4, 16, 30.70),
])
def test_sync_speed_matches_eq4_by_hand(p, w, step_time):
    f = optimus_speed("sync", p, w, theta=PAPER_THETA["sync"], global_batch=128)
    assert f == pytest.approx(1 / step_time, rel=1e-12)


@pytest.mark.parametrize("p, w, denominator", [
    # 2.83 + 3.92·4/2 + 0.00·4 + 0.11·2 = 2.83 + 7.84 + 0.22 = 10.89 → f = 4/10.89
    (2, 4, 10.89),
    # 2.83 + 3.92·8/4 + 0 + 0.11·4 = 2.83 + 7.84 + 0.44 = 11.11 → f = 8/11.11
    (4, 8, 11.11),
])
def test_async_speed_matches_eq3_by_hand(p, w, denominator):
    f = optimus_speed("async", p, w, theta=PAPER_THETA["async"])
    assert f == pytest.approx(w / denominator, rel=1e-12)


def test_allreduce_speed_by_hand_and_ignores_p():
    # 0.001·256/8 + 0.05 + 0.002·8 = 0.032 + 0.05 + 0.016 = 0.098 s per step
    m = SpeedModel("allreduce", (0.001, 0.05, 0.002), global_batch=256)
    assert optimus_speed("allreduce", 0, 8, theta=m.theta, global_batch=256) == pytest.approx(1 / 0.098)
    assert m.steps_per_s(0, 8) == m.steps_per_s(7, 8) == pytest.approx(1 / 0.098)
    assert m.samples_per_s(0, 8) == pytest.approx(256 / 0.098)


def test_speed_is_vectorised_over_p_and_w():
    m = paper_speed_model("sync")
    out = m.steps_per_s(np.array([2, 4]), np.array([4, 4]))
    assert out.shape == (2,)
    assert out[0] == pytest.approx(m.steps_per_s(2, 4))


# --- the model object and presets ----------------------------------------------------------

def test_paper_presets_are_labelled_paper_units():
    sync, asyn = paper_speed_model("sync"), paper_speed_model("async")
    assert sync.theta == (1.02, 2.78, 4.92, 0.00, 0.02) and sync.global_batch == 128
    assert asyn.theta == (2.83, 3.92, 0.00, 0.11)
    assert sync.time_unit == asyn.time_unit == "paper units"
    assert any("time unit unknown" in f for f in sync.flags)


def test_paper_preset_refuses_allreduce():
    with pytest.raises(InputError, match="no all-reduce θ"):
        paper_speed_model("allreduce")


@pytest.mark.parametrize("kwargs, message", [
    (dict(mode="sync", theta=(1, 2)), r"expected 5 theta values .* got 2"),
    (dict(mode="async", theta=(1, 2, 3, 4, 5)), r"expected 4 theta values .* got 5"),
    (dict(mode="sync", theta=(1, -2, 0, 0, 0)), r"expected finite theta >= 0"),
    (dict(mode="sync", theta=(0, 0, 0, 0, 0)), r"not all zero"),
    (dict(mode="ring", theta=(1,)), r"mode: expected one of sync, async, allreduce; got 'ring'"),
    (dict(mode="sync", theta=(1, 1, 1, 1, 1), global_batch=0), r"global_batch M > 0"),
    (dict(mode="sync", theta=(1, 1, 1, 1, 1), time_unit="ms"), r"time_unit"),
])
def test_speed_model_refuses_bad_parameters(kwargs, message):
    with pytest.raises(InputError, match=message):
        SpeedModel(**kwargs)


@pytest.mark.parametrize("mode, p, w, message", [
    ("sync", 0, 4, r"expected p >= 1 parameter servers for mode 'sync'; got 0"),
    ("sync", 2, 0, r"expected w >= 1 workers; got 0"),
    ("async", 0, 4, r"p >= 1"),
])
def test_steps_per_s_refuses_impossible_configurations(mode, p, w, message):
    with pytest.raises(InputError, match=message):
        paper_speed_model(mode).steps_per_s(p, w)


def test_model_without_batch_asks_for_one():
    m = SpeedModel("allreduce", (0.001, 0.05, 0.002))
    with pytest.raises(InputError, match=r"with_global_batch\(M\)"):
        m.steps_per_s(0, 4)
    assert m.with_global_batch(256).steps_per_s(0, 8) == pytest.approx(1 / 0.098)


def test_to_dict_has_plain_types_and_named_theta():
    d = paper_speed_model("sync").to_dict()
    assert d["theta2"] == 4.92 and d["mode"] == "sync" and d["time_unit"] == "paper units"
    assert all(isinstance(v, (str, float, int, list, type(None))) for v in d.values())


# --- calibration ---------------------------------------------------------------------------

def test_calibration_hits_the_measured_step_time():
    # paper sync at (2, 4): 45.30 paper units per step; measured 0.906 s → 1 unit = 0.02 s
    cal = scale_to_step_time(paper_speed_model("sync"), 0.906, 2, 4)
    assert cal.time_unit == "s"
    assert cal.step_time_s(2, 4) == pytest.approx(0.906, rel=1e-12)
    np.testing.assert_allclose(cal.theta, [0.0204, 0.0556, 0.0984, 0.0, 0.0004], rtol=1e-12)
    assert "calibrated to 0.906 s" in cal.source
    assert not any("time unit unknown" in f for f in cal.flags)


@settings(max_examples=40, deadline=None)
@given(st.floats(1e-3, 100), st.integers(1, 8), st.integers(1, 64), st.sampled_from(["sync", "async"]),
       st.integers(1, 8), st.integers(1, 64))
def test_calibration_only_rescales_time(step_time, p, w, mode, p2, w2):
    base = paper_speed_model(mode)
    cal = scale_to_step_time(base, step_time, p, w)
    assert cal.step_time_s(p, w) == pytest.approx(step_time, rel=1e-9)
    # the ratio between any two configurations is kept
    assert cal.step_time_s(p2, w2) / cal.step_time_s(p, w) == pytest.approx(
        base.step_time_s(p2, w2) / base.step_time_s(p, w), rel=1e-9)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), "1s"])
def test_calibration_refuses_bad_step_time(bad):
    with pytest.raises(InputError, match="scale_to_step_time: step_time_s: expected a finite number > 0"):
        scale_to_step_time(paper_speed_model("sync"), bad, 2, 4)


# --- NNLS fit --------------------------------------------------------------------------------

def _table(mode, theta, *, ps=(1, 2, 4), ws=(1, 2, 4, 8, 16), batch=128.0):
    P, W = (a.ravel() for a in np.meshgrid(ps, ws))
    model = SpeedModel(mode, theta, global_batch=batch)
    return pd.DataFrame({"p": P, "w": W, "global_batch": batch, "steps_per_s": model.steps_per_s(P, W)})


@pytest.mark.parametrize("mode, theta, ps", [
    ("sync", (0.01, 0.2, 0.05, 0.003, 0.02), (1, 2, 4)),
    ("sync", PAPER_THETA["sync"], (1, 2, 4)),
    ("async", (0.5, 0.2, 0.05, 0.03), (1, 2, 4)),
    ("async", PAPER_THETA["async"], (1, 2, 4)),
    ("allreduce", (0.001, 0.05, 0.002), (0,)),
])
def test_nnls_recovers_theta_from_noiseless_points(mode, theta, ps):
    model = fit_speed_model(_table(mode, theta, ps=ps), mode=mode)
    np.testing.assert_allclose(model.theta, theta, rtol=1e-8, atol=1e-10)
    assert model.mape_pct == pytest.approx(0, abs=1e-8)
    assert model.time_unit == "s" and model.n_points == len(ps) * 5 and model.global_batch == 128


def test_nnls_recovers_allreduce_theta_with_a_batch_per_row():
    # Pollux-style: M = w · local batch differs on every row
    theta = (0.0006, 0.09, 0.002)
    w = np.array([6, 6, 8, 8, 16, 16, 32])
    local = np.array([32, 64, 32, 128, 64, 256, 32])
    t = theta[0] * local + theta[1] + theta[2] * w          # θ0·M/w = θ0·local
    tab = pd.DataFrame({"num_replicas": w, "local_bsz": local, "step_time": t})
    model = fit_speed_model(tab, mode="allreduce")
    np.testing.assert_allclose(model.theta, theta, rtol=1e-9)
    assert model.global_batch is None
    assert any("global batches" in f for f in model.flags)


@pytest.mark.parametrize("seed", range(5))
def test_nnls_with_seeded_noise_stays_close(seed):
    rng = np.random.default_rng(seed)
    theta = (0.01, 0.2, 0.05, 0.003, 0.02)
    tab = _table("sync", theta)
    tab["steps_per_s"] *= 1 + rng.normal(0, 0.01, len(tab))     # 1 % noise
    model = fit_speed_model(tab, mode="sync")
    assert model.mape_pct < 2.0, f"seed={seed}"
    assert model.theta[0] == pytest.approx(theta[0], rel=0.1), f"seed={seed}"


def test_fit_accepts_samples_per_s_with_a_batch():
    tab = _table("sync", (0.01, 0.2, 0.05, 0.003, 0.02))
    samples = pd.DataFrame({"p": tab.p, "w": tab.w, "samples_per_s": tab.steps_per_s * 128})
    model = fit_speed_model(samples, mode="sync", global_batch=128)
    np.testing.assert_allclose(model.theta, (0.01, 0.2, 0.05, 0.003, 0.02), rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("mode", ["sync", "async", "allreduce"])
def test_fit_refuses_too_few_points(mode):
    need = MIN_POINTS[mode]
    tab = _table(mode, paper_speed_model("sync").theta if mode == "sync" else
                 (PAPER_THETA["async"] if mode == "async" else (0.001, 0.05, 0.002)),
                 ps=(0,) if mode == "allreduce" else (1, 2, 4)).head(need - 1)
    with pytest.raises(InputError, match=rf"speeds\.csv: expected at least {need} measured points "
                                         rf"for mode '{mode}' \(one per θ\); got {need - 1}\."):
        fit_speed_model(tab, mode=mode, source="speeds.csv")


def test_minimum_points_are_5_sync_4_async_3_allreduce():
    assert MIN_POINTS == {"sync": 5, "async": 4, "allreduce": 3}


def test_fit_refuses_ps_mode_on_a_trace_without_ps():
    tab = pd.DataFrame({"w": [1, 2, 4, 8, 16], "step_time_s": [1, 0.6, 0.4, 0.3, 0.3],
                        "global_batch": 128})
    with pytest.raises(InputError, match=r"p >= 1 .* Use mode 'allreduce'"):
        fit_speed_model(tab, mode="sync")


def test_fit_asks_for_batch_when_mode_needs_it():
    tab = pd.DataFrame({"w": [1, 2, 4], "step_time_s": [1, 0.6, 0.4]})
    with pytest.raises(InputError, match=r"expected the global batch M .*--batch M"):
        fit_speed_model(tab, mode="allreduce")


def test_fit_flags_and_warns_when_theta_is_not_identifiable():
    # every point at p = 2: w/p is proportional to w and p to the constant (rank 3 of 5)
    tab = _table("sync", (0.01, 0.2, 0.05, 0.003, 0.02), ps=(2,), ws=(1, 2, 4, 8, 16, 32))
    with pytest.warns(FitWarning, match="not identifiable"):
        model = fit_speed_model(tab, mode="sync")
    assert any("rank 3 of 5" in f for f in model.flags)


def test_fit_flags_theta_at_the_bound():
    model = fit_speed_model(_table("sync", PAPER_THETA["sync"]), mode="sync")
    assert "theta3 = 0 (at the non-negativity bound)" in model.flags


def test_fit_ignores_row_order_and_is_repeatable():
    tab = _table("async", (0.5, 0.2, 0.05, 0.03))
    tab["steps_per_s"] *= 1 + 0.02 * np.sin(np.arange(len(tab)))
    a = fit_speed_model(tab, mode="async")
    b = fit_speed_model(tab.sample(frac=1, random_state=3), mode="async")
    np.testing.assert_allclose(a.theta, b.theta, rtol=1e-9)
    assert fit_speed_model(tab, mode="async") == a


def test_fit_does_not_modify_its_input():
    tab = _table("sync", PAPER_THETA["sync"])
    before = tab.copy()
    fit_speed_model(tab, mode="sync")
    pd.testing.assert_frame_equal(tab, before)


def test_default_speed_mode():
    assert default_speed_mode(read_speed_table(POLLUX / "cifar10" / "scalability.csv")) == "allreduce"
    assert default_speed_mode(_table("sync", PAPER_THETA["sync"])) == "sync"


# --- the six Pollux traces ---------------------------------------------------------------------

# MAPE of the fitted speeds, measured here (plain NNLS on 1/f, M per row; docs/plan.md):
# bert 3.96 %, cifar10 12.53 %, deepspeech2 8.51 %, imagenet 8.66 %, ncf 11.63 %, yolov3 7.37 %
POLLUX_MAPE_BOUND = {"bert": 5.0, "cifar10": 14.0, "deepspeech2": 10.0, "imagenet": 10.0,
                     "ncf": 13.0, "yolov3": 9.0}
POLLUX_ROWS = {"bert": 180, "cifar10": 329, "deepspeech2": 198, "imagenet": 288, "ncf": 458,
               "yolov3": 108}


@pytest.mark.parametrize("job", sorted(POLLUX_MAPE_BOUND))
def test_pollux_trace_fits_within_measured_mape(job):
    table = read_speed_table(POLLUX / job / "scalability.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("error", FitWarning)      # θ must be identifiable on real data
        model = fit_speed_model(table, mode="allreduce", source=job)
    assert model.n_points == POLLUX_ROWS[job]
    assert 0 < model.mape_pct < POLLUX_MAPE_BOUND[job]
    assert model.theta[1] > 0                       # a constant per-step overhead is always there
    assert model.theta[2] > 0                       # communication grows with the replicas


def test_pollux_cifar10_theta_is_plausible():
    # per-sample compute θ0 ≈ 0.6 ms, per-step overhead θ1 ≈ 92 ms, per-replica θ3 ≈ 2 ms
    model = fit_speed_model(read_speed_table(POLLUX / "cifar10" / "scalability.csv"), mode="allreduce")
    assert model.theta == pytest.approx((5.94e-4, 9.20e-2, 2.07e-3), rel=0.01)
