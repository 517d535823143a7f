"""The Optimus loss model, its fit (binned for speed), standard errors and flags."""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import curve_fit

from core.curves import FitResult, bin_log_spaced, degenerate_reason, fit_curve, optimus_loss, optimus_step_at_loss
from core.errors import FitWarning, InputError


def test_optimus_loss_hand_value():
    # 1/(0.001*1000 + 1) + 0.1 = 0.5 + 0.1
    assert optimus_loss(1000.0, 0.001, 1.0, 0.1) == pytest.approx(0.6)


def test_step_at_loss_inverts_the_curve_and_refuses_below_the_floor():
    # (1/(0.6 - 0.1) - 1)/0.001 = (2 - 1)/0.001 = 1000
    assert optimus_step_at_loss(0.6, 0.001, 1.0, 0.1) == pytest.approx(1000.0)
    assert np.isnan(optimus_step_at_loss(0.1, 0.001, 1.0, 0.1))  # L == b2: never
    assert np.isnan(optimus_step_at_loss(0.05, 0.001, 1.0, 0.1))  # L < b2: never
    assert optimus_step_at_loss(5.0, 0.001, 1.0, 0.1) == 0.0  # the curve starts below L


@settings(max_examples=100, deadline=None)
@given(b0=st.floats(1e-6, 1e-1), b1=st.floats(1e-2, 10), b2=st.floats(0, 2), k=st.floats(0, 1e6))
def test_predict_then_invert_is_identity(b0, b1, b2, k):
    loss = float(optimus_loss(k, b0, b1, b2))
    if loss - b2 > 1e-9 * max(1.0, b2):  # the excess must be representable next to b2
        assert optimus_step_at_loss(loss, b0, b1, b2) == pytest.approx(k, rel=1e-4, abs=1e-3)


@settings(max_examples=50, deadline=None)
@given(b0=st.floats(1e-6, 1e-1), b1=st.floats(1e-2, 10), b2=st.floats(0, 2))
def test_loss_is_non_increasing_in_k(b0, b1, b2):
    y = optimus_loss(np.linspace(0, 1e5, 50), b0, b1, b2)
    assert np.all(np.diff(y) <= 1e-12)


@pytest.mark.parametrize("n", [500, 200_000])
def test_fit_recovers_known_parameters_noiseless(n):
    k = np.arange(1, n + 1.0)
    fit = fit_curve(k, optimus_loss(k, 2e-4, 0.8, 0.3))
    # exact below max_points; within 0.01 % with log-spaced bins
    for name, true in {"b0": 2e-4, "b1": 0.8, "b2": 0.3}.items():
        assert fit.params[name] == pytest.approx(true, rel=1e-4)
    assert fit.r2 == pytest.approx(1.0, abs=1e-9)
    assert fit.n_points == n


def test_binned_fit_matches_the_full_curve_fit_within_one_percent_and_is_much_faster():
    rng = np.random.default_rng(7)
    k = np.arange(1, 200_001.0)
    y = optimus_loss(k, 2e-4, 0.8, 0.3) + rng.normal(0, 0.05, k.size)
    t0 = time.perf_counter()
    full, pcov = curve_fit(optimus_loss, k, y, p0=(1e-3, 1.0, 0.9 * y.min()), bounds=(0, np.inf))
    t_full = time.perf_counter() - t0
    t0 = time.perf_counter()
    fit = fit_curve(k, y)
    t_ours = time.perf_counter() - t0
    for i, name in enumerate(("b0", "b1", "b2")):
        assert fit.params[name] == pytest.approx(full[i], rel=0.01)
        # standard errors from the residuals of every point agree with the full fit's
        assert fit.stderr[name] == pytest.approx(np.sqrt(pcov[i, i]), rel=0.05)
    assert fit.n_fitted <= 2000 < fit.n_points
    print(f"full curve_fit {t_full * 1e3:.0f} ms, binned {t_ours * 1e3:.0f} ms")  # timing shown, not asserted


def test_noisy_fit_is_within_three_standard_errors():
    rng = np.random.default_rng(3)
    k = np.arange(1, 5001.0)
    y = optimus_loss(k, 1e-3, 0.5, 0.2) + rng.normal(0, 0.02, k.size)
    fit = fit_curve(k, y)
    for name, true in {"b0": 1e-3, "b1": 0.5, "b2": 0.2}.items():
        assert abs(fit.params[name] - true) < 3 * fit.stderr[name]
    assert fit.errorbars and fit.converged and not fit.degenerate


def test_shuffling_rows_leaves_the_fit_unchanged():
    rng = np.random.default_rng(1)
    k = np.arange(1, 3001.0)
    y = optimus_loss(k, 1e-3, 0.5, 0.2) + rng.normal(0, 0.02, k.size)
    perm = rng.permutation(k.size)
    a, b = fit_curve(k, y), fit_curve(k[perm], y[perm])
    for name in ("b0", "b1", "b2"):
        assert a.params[name] == pytest.approx(b.params[name], rel=1e-6)


def test_bin_log_spaced_keeps_counts_and_means():
    k = np.arange(1, 10_001.0)
    bk, by, n = bin_log_spaced(k, 3 * k + 1, max_points=100)
    assert n.sum() == 10_000 and len(bk) <= 100
    np.testing.assert_allclose(by, 3 * bk + 1)  # means of a straight line lie on it
    assert n[0] == 1  # the first bins hold single early steps


def test_degenerate_course_val_fit_is_flagged():
    # the course's ResNet-18 val fit on V100: b0 = 15074, b1 = 4.8e-15 -> flat at b2
    assert degenerate_reason(15074.454974, 4.842781e-15, 1.489328) is not None
    assert degenerate_reason(0.006194, 0.6156885, 0.5165396) is None  # ResNet-44 val is sound
    assert "b0 = 0" in degenerate_reason(0.0, 1.0, 0.1)


def test_fit_of_a_flat_log_is_flagged_degenerate_with_a_warning():
    rng = np.random.default_rng(0)
    k = np.arange(1, 1001.0)
    y = 1.5 + rng.normal(0, 0.01, k.size)
    with pytest.warns(FitWarning, match="degenerate"):
        fit = fit_curve(k, y, name="flat.csv")
    assert fit.degenerate
    assert any(f.startswith("degenerate fit") for f in fit.flags)


def test_b2_at_bound_is_flagged():
    k = np.arange(1, 2001.0)
    fit = fit_curve(k, optimus_loss(k, 1e-3, 0.5, 0.0))
    assert "b2 at its lower bound 0 (no loss floor)" in fit.flags


@pytest.mark.parametrize("k,y,msg", [
    ([1, 2, 3], [1, 0.5, 0.3], "at least 4 finite points"),
    ([1, 2, 3, 4], [1, 0.5, 0.3], "same length"),
    ([5, 5, 5, 5], [1, 0.5, 0.3, 0.2], "every point is at step 5"),
    ([1, 2, np.nan, 4], [1, 0.5, 0.3, np.inf], "at least 4 finite points"),
])
def test_fit_refuses_unfittable_input(k, y, msg):
    with pytest.raises(InputError, match=msg):
        fit_curve(k, y, name="x.csv")


def test_fit_result_to_dict_and_report_are_plain():
    k = np.arange(1, 2001.0)
    fit = fit_curve(k, optimus_loss(k, 1e-3, 0.5, 0.2))
    d = fit.to_dict()
    assert set(["b0", "b1", "b2", "b0_se", "r2", "flags"]) <= set(d)
    assert all(isinstance(v, (str, int, float, bool)) for v in d.values())
    report = fit.report()
    assert "[[Variables]]" in report and "b0" in report
    assert fit.step_at(float(fit.predict(500.0))) == pytest.approx(500.0, rel=1e-6)
    assert isinstance(fit, FitResult)


def test_fitting_twice_gives_the_same_result():
    rng = np.random.default_rng(5)
    k = np.arange(1, 3001.0)
    y = optimus_loss(k, 1e-3, 0.5, 0.2) + rng.normal(0, 0.02, k.size)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fit_curve(k, y).params == fit_curve(k, y).params
