"""The learning-curve families: formulas and inverses on hand values, Jacobians, recovery by fit_curve from a few
epochs and from noise. What every registered family must do (its curve fitted back, its inverse undoing it) is
tests/contracts/test_curve_families_contract.py, over the registry."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.curves import FAMILIES, fit_curve, get_family, optimus_loss
from core.curves.domhan import (
    exp3_curve,
    exp3_step_at,
    mmf_curve,
    mmf_step_at,
    pow3_curve,
    pow3_step_at,
    pow4_curve,
    pow4_step_at,
    weibull_curve,
    weibull_step_at,
)
from core.errors import FitWarning, InputError


# --------------------------------------------------------------------------- formulas
@pytest.mark.parametrize("func,args,expected", [
    (pow3_curve, (4.0, 2.0, 0.5, 0.1), 1.1),                       # 2·4^(−1/2) + 0.1 = 1 + 0.1
    (exp3_curve, (100.0, 2.0, 100.0, 0.1), 2 / math.e + 0.1),       # 2·e^(−100/100) + 0.1
    (pow4_curve, (300.0, 2.0, 100.0, 0.5, 0.1), 1.1),               # 2·(1 + 3)^(−1/2) + 0.1
    (mmf_curve, (200.0, 2.0, 100.0, 2.0, 0.1), 0.5),                # 2/(1 + 2²) + 0.1 = 0.4 + 0.1
    (weibull_curve, (200.0, 2.0, 100.0, 2.0, 0.1), 2 * math.exp(-4) + 0.1),  # 2·e^(−(2)²) + 0.1
])
def test_each_formula_on_a_hand_value(func, args, expected):
    assert float(func(*args)) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("inverse,args,expected", [
    (pow3_step_at, (1.1, 2.0, 0.5, 0.1), 4.0),            # (2/(1.1 − 0.1))^(1/0.5) = 4
    (exp3_step_at, (0.1 + 2 / math.e, 2.0, 100.0, 0.1), 100.0),  # 100·ln(2/(2/e)) = 100
    (pow4_step_at, (1.1, 2.0, 100.0, 0.5, 0.1), 300.0),   # 100·((2/1)^2 − 1) = 300
    (mmf_step_at, (0.5, 2.0, 100.0, 2.0, 0.1), 200.0),    # 100·(2/0.4 − 1)^(1/2) = 200
    (weibull_step_at, (0.1 + 2 * math.exp(-4), 2.0, 100.0, 2.0, 0.1), 200.0),  # 100·(ln(e^4))^(1/2)
])
def test_each_inverse_on_a_hand_value(inverse, args, expected):
    assert inverse(*args) == pytest.approx(expected, rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(a=st.floats(0.01, 10), s=st.floats(1, 1e4), c=st.floats(0.1, 5), b=st.floats(0, 2))
def test_four_parameter_families_never_increase(a, s, c, b):
    k = np.linspace(1, 1e5, 200)
    for func in (pow4_curve, mmf_curve, weibull_curve):
        assert np.all(np.diff(func(k, a, s, c, b)) <= 1e-12)


def test_pow4_with_exponent_one_is_the_optimus_curve():
    # 1/(b0·k + b1) + b2 = (1/b1)·(1 + k/(b1/b0))^(−1) + b2
    b0, b1, b2 = 2e-4, 0.8, 0.3
    k = np.linspace(1, 20_000, 50)
    np.testing.assert_allclose(pow4_curve(k, 1 / b1, b1 / b0, 1.0, b2), optimus_loss(k, b0, b1, b2), rtol=1e-12)


def test_an_unknown_family_is_refused_naming_every_registered_one():
    # what every family must do (shapes, fit, inverse, Jacobian) is tests/contracts/test_curve_families_contract.py
    with pytest.raises(InputError, match=f"family: expected one of {', '.join(FAMILIES)}; got 'pow5'"):
        get_family("pow5")


# --------------------------------------------------------------------------- fitting
@pytest.mark.parametrize("name", ["pow3", "exp3", "pow4", "mmf", "weibull"])
def test_fit_recovers_an_error_curve_from_a_few_epochs(name):
    # an accuracy curve seen as error 1 − acc at epochs 1..12 (the accuracy route's data)
    truth = {"pow3": (0.7, 0.8, 0.05), "exp3": (0.8, 4.0, 0.05), "pow4": (0.8, 3.0, 1.5, 0.04),
             "mmf": (0.8, 5.0, 1.8, 0.04), "weibull": (0.8, 5.0, 1.3, 0.04)}[name]
    e = np.arange(1, 13.0)
    fit = fit_curve(e, get_family(name).func(e, *truth), family=name)
    np.testing.assert_allclose(fit.values, truth, rtol=1e-4)


def test_fit_with_seeded_noise_is_within_three_standard_errors(seed=7):
    rng = np.random.default_rng(seed)
    k = np.arange(1, 5001.0)
    truth = get_family("weibull").example
    y = weibull_curve(k, *truth) + rng.normal(0, 0.02, k.size)
    fit = fit_curve(k, y, family="weibull")
    for name, true in zip(fit.curve.param_names, truth):
        assert abs(fit.params[name] - true) < 3 * fit.stderr[name], f"{name}, seed {seed}"


def test_pow3_refuses_a_step_zero():
    k = np.arange(0, 100.0)
    with pytest.raises(InputError, match="needs steps k > 0; got k = 0"):
        fit_curve(k, 1.0 / (k + 1), family="pow3")


def test_four_parameter_fit_needs_five_points():
    with pytest.raises(InputError, match="expected at least 5 finite points to fit 4 parameters; got 4"):
        fit_curve([1, 2, 3, 4], [1.0, 0.8, 0.7, 0.65], family="mmf")


def test_flat_data_is_flagged_degenerate_with_a_warning():
    k = np.arange(1, 200.0)
    y = 0.5 + 1e-6 * np.sin(k)
    with pytest.warns(FitWarning, match="degenerate"):
        fit = fit_curve(k, y, family="weibull")
    assert fit.degenerate


def test_fit_is_unchanged_by_shuffling_rows():
    rng = np.random.default_rng(3)
    k = np.arange(1, 3001.0)
    y = mmf_curve(k, *get_family("mmf").example) + rng.normal(0, 0.01, k.size)
    order = rng.permutation(k.size)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitWarning)
        a = fit_curve(k, y, family="mmf")
        b = fit_curve(k[order], y[order], family="mmf")
    np.testing.assert_allclose(a.values, b.values, rtol=1e-6)
