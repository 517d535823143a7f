"""Every learning-curve family (``core.curves.FAMILIES``) and every law through a schedule (``SCHEDULE_FAMILIES``)
does what the fitter, the predictions and the pages rely on: a contract over the registries themselves, never a
hand-typed list of families (issue 34).

A family: its key is its name; it has a label and a formula; its bounds, its parameters and its example (a
realistic loss curve over ``k = 1..20000``) have one length and the example lies inside the bounds; its floor is
one of its parameters; its ``in_auto`` flag is a bool. The curve it makes from its example is fitted back by
``fit_curve`` (exactly on 300 points, within 0.01 % on the log-spaced bins of 50,000); its inverse undoes its
curve (50 seeded parameter sets around the example), is NaN at and below its floor, 0 above its start, and
broadcasts over parameter draws; the curve never rises.

A law through a schedule: its level parameters come first, its decay terms are named, every parameter has
bounds and an example; made from its example on two warmup-stable-decay schedules, it is fitted back (the
curves to 1e-5); its Jacobian matches central differences.

Each check runs on a throwaway entry too, registered for that test only: ``hyperbolic`` (``a/(1 + k/s) + b``,
written here) and a copy of the first registered law under another name; and with it registered, the product
offers it without anyone naming it: ``auto`` tries it (a prediction scores it), ``get_family`` finds it, the
message for an unknown family and the CLI's ``--family`` help list it.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from core.cli import main
from core.curves import (
    FAMILIES,
    LEVEL_PARAMS,
    SCHEDULE_FAMILIES,
    CurveFamily,
    auto_families,
    fit_curve,
    fit_schedule_law,
    get_family,
    get_schedule_family,
    schedule_features,
)
from core.errors import InputError
from core.prediction import predict_epoch_at_target
from core.schedules import build_schedule
from tests.core.prediction.prediction_logs import course_log


# --------------------------------------------------------------------------- a throwaway family
def _hyperbolic(k, a, s, b):
    return a / (1.0 + np.asarray(k, dtype=float) / s) + b


def _hyperbolic_jac(k, a, s, b):
    k = np.asarray(k, dtype=float)
    u = 1.0 / (1.0 + k / s)
    return np.column_stack([u, a * k / s**2 * u**2, np.ones_like(k)])


def _hyperbolic_initial(k, y, w):
    k, y = np.asarray(k, dtype=float), np.asarray(y, dtype=float)
    return [max(float(y[0] - y[-1]), 1e-6) * 2, float(np.median(k)), max(float(y.min()) * 0.9, 0.0)]


def _hyperbolic_at(y, a, s, b):
    y, a, s, b = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (y, a, s, b)))
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.where(y >= a + b, 0.0, np.where(y > b, s * (a / (y - b) - 1.0), np.nan))
    return float(k) if k.ndim == 0 else k


HYPERBOLIC = CurveFamily(name="hyperbolic", label="Hyperbolic a/(1+k/s)+b", formula="y(k) = a / (1 + k/s) + b",
                         param_names=("a", "s", "b"), func=_hyperbolic, jac=_hyperbolic_jac,
                         initial=_hyperbolic_initial, inverse=_hyperbolic_at, lower=(0.0, 1e-12, 0.0),
                         upper=(np.inf, np.inf, np.inf), example=(2.0, 1500.0, 0.25))
THROWAWAY_LAW = dataclasses.replace(next(iter(SCHEDULE_FAMILIES.values())), name="throwaway-law")


@pytest.fixture(params=[*FAMILIES, HYPERBOLIC.name])
def family(request, monkeypatch) -> CurveFamily:
    """Each registered family, and the throwaway one registered for this test only."""
    if request.param == HYPERBOLIC.name:
        monkeypatch.setitem(FAMILIES, HYPERBOLIC.name, HYPERBOLIC)
    return FAMILIES[request.param]


@pytest.fixture(params=[*(name for name, f in FAMILIES.items() if f.jac is not None), HYPERBOLIC.name])
def family_with_jacobian(request, monkeypatch) -> CurveFamily:
    """Each family that gives its Jacobian (the others are fitted by differences, which the fit-back test covers),
    and the throwaway one, which gives one."""
    if request.param == HYPERBOLIC.name:
        monkeypatch.setitem(FAMILIES, HYPERBOLIC.name, HYPERBOLIC)
    return FAMILIES[request.param]


@pytest.fixture(params=[*SCHEDULE_FAMILIES, THROWAWAY_LAW.name])
def law(request, monkeypatch):
    if request.param == THROWAWAY_LAW.name:
        monkeypatch.setitem(SCHEDULE_FAMILIES, THROWAWAY_LAW.name, THROWAWAY_LAW)
    return SCHEDULE_FAMILIES[request.param]


def _floor(family: CurveFamily, params) -> float:
    return float(params[family.param_names.index(family.floor)])


# --------------------------------------------------------------------------- the step-curve families
def test_the_record_is_whole(family):
    assert FAMILIES[family.name] is family and get_family(family.name) is family
    assert family.label and family.formula and family.floor_label
    n = len(family.param_names)
    assert n == len(set(family.param_names)) == len(family.lower) == len(family.upper) == len(family.example)
    assert family.floor in family.param_names and family.min_points == n + 1
    assert family.jac is None or callable(family.jac)          # None: the fitter takes differences
    assert all(lo <= v <= hi for lo, v, hi in zip(family.lower, family.example, family.upper))
    assert isinstance(family.in_auto, bool) and family.decreasing is True


@pytest.mark.parametrize("n", [300, 50_000])
def test_the_curve_it_makes_is_fitted_back(family, n):
    k = np.linspace(1, 20_000, n)
    fit = fit_curve(k, family.func(k, *family.example), family=family.name)
    np.testing.assert_allclose(fit.values, family.example, rtol=1e-4)
    assert fit.r2 == pytest.approx(1.0, abs=1e-9) and not fit.degenerate


def test_its_jacobian_is_the_derivative(family_with_jacobian):
    family = family_with_jacobian
    k = np.geomspace(1, 20_000, 40)
    p = np.array(family.example)
    jac = family.jac(k, *p)
    for i in range(p.size):
        h = 1e-6 * max(abs(p[i]), 1e-3)
        up, down = p.copy(), p.copy()
        up[i], down[i] = p[i] + h, p[i] - h
        np.testing.assert_allclose(jac[:, i], (family.func(k, *up) - family.func(k, *down)) / (2 * h),
                                   rtol=1e-5, atol=1e-9)


def test_the_inverse_undoes_the_curve(family, seed=1234):
    rng = np.random.default_rng(seed)
    for _ in range(50):
        params = np.array(family.example) * rng.uniform(0.5, 2.0, len(family.example))
        k = rng.uniform(1.0, 50_000.0)
        y = float(family.func(np.array([k]), *params)[0])
        if y - _floor(family, params) > 1e-9:  # the excess over the floor must be representable
            assert family.inverse(y, *params) == pytest.approx(k, rel=1e-6), f"seed {seed}"


def test_the_inverse_is_nan_at_the_floor_and_zero_above_the_start(family):
    params = family.example
    floor = _floor(family, params)
    assert math.isnan(family.inverse(floor, *params)) and math.isnan(family.inverse(floor - 0.05, *params))
    if not family.k_positive:                 # a curve defined at k = 0 starts there; above its start: k = 0
        start = float(family.func(np.array([0.0]), *params)[0])
        assert family.inverse(start + 1.0, *params) == 0.0


def test_the_inverse_broadcasts_over_parameter_draws(family):
    draws = np.array(family.example)[None, :] * np.linspace(0.8, 1.2, 7)[:, None]
    y = float(family.func(np.array([2000.0]), *family.example)[0])
    np.testing.assert_allclose(family.inverse(y, *draws.T), [family.inverse(y, *d) for d in draws])


def test_the_curve_never_rises(family):
    y = family.func(np.geomspace(1, 1e6, 400), *family.example)
    assert np.all(np.isfinite(y)) and np.all(np.diff(y) <= 1e-12)


# --------------------------------------------------------------------------- the product takes a new family
def test_a_registered_family_is_offered_everywhere_without_being_named(monkeypatch, capsys):
    monkeypatch.setitem(FAMILIES, HYPERBOLIC.name, HYPERBOLIC)
    assert auto_families()[-1] == HYPERBOLIC.name and get_family(HYPERBOLIC.name) is HYPERBOLIC
    with pytest.raises(InputError, match=f"expected one of {', '.join(FAMILIES)}; got 'pow5'"):
        get_family("pow5")
    for command in ("fit", "backtest"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert HYPERBOLIC.name in capsys.readouterr().out
    p = predict_epoch_at_target(course_log(epochs=12), family="auto")     # auto's backtest scores it too
    assert set(p.scores) == set(auto_families()) and HYPERBOLIC.name in p.scores
    monkeypatch.setitem(FAMILIES, HYPERBOLIC.name, dataclasses.replace(HYPERBOLIC, in_auto=False))
    assert HYPERBOLIC.name not in auto_families() and HYPERBOLIC.name in FAMILIES


# --------------------------------------------------------------------------- the laws through a schedule
def test_the_law_record_is_whole(law):
    assert SCHEDULE_FAMILIES[law.name] is law and get_schedule_family(law.name) is law
    assert law.label and law.formula and law.reference
    assert law.param_names[:len(LEVEL_PARAMS)] == LEVEL_PARAMS and law.level_params == LEVEL_PARAMS
    assert law.decay_params and set(law.decay_params) == set(law.param_names) - set(LEVEL_PARAMS)
    assert set(law.lower) == set(law.upper) == set(law.example) == set(law.param_names)
    assert set(law.log_params) <= set(law.param_names)
    assert all(law.lower[n] <= law.example[n] <= law.upper[n] for n in law.param_names)
    assert all(set(start) <= set(law.decay_params) for start in law.decay_starts(1e-3))


def _two_runs(law):
    runs = []
    for shape, start in (("linear", 14_000), ("exp", 10_000)):
        s = build_schedule("wsd", total=20_000, peak=1e-3, warmup=500, decay_start=start, final=1e-4, shape=shape)
        f = schedule_features(s, np.arange(600, 20_001, 200.0))
        runs.append((f, law.evaluate(f, law.example)))
    return runs


def test_the_law_it_makes_is_fitted_back(law):
    runs = _two_runs(law)
    fit = fit_schedule_law(runs, law, peak=1e-3)
    for f, y in runs:                            # the curves to 1e-5 (parameters may trade off)
        assert law.evaluate(f, fit.params(0)) == pytest.approx(y, rel=1e-5)
    assert fit.rms < 1e-5


def test_the_law_jacobian_is_the_derivative(law):
    f, _ = _two_runs(law)[0]
    values = [law.example[n] for n in law.param_names]
    jac = law.jac(f, values)
    for i in range(len(values)):
        h = 1e-6 * max(abs(values[i]), 1e-6)
        up, down = list(values), list(values)
        up[i], down[i] = values[i] + h, values[i] - h
        numeric = (law.loss(f, up) - law.loss(f, down)) / (2 * h)
        assert jac[:, i] == pytest.approx(numeric, rel=1e-4, abs=1e-7 * np.abs(numeric).max())


def test_a_registered_law_is_offered_without_being_named(monkeypatch, capsys):
    monkeypatch.setitem(SCHEDULE_FAMILIES, THROWAWAY_LAW.name, THROWAWAY_LAW)
    assert get_schedule_family(THROWAWAY_LAW.name) is THROWAWAY_LAW
    with pytest.raises(InputError, match=f"expected one of {', '.join(SCHEDULE_FAMILIES)}; got 'nope'"):
        get_schedule_family("nope")
    for command in ("schedule", "predict"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert THROWAWAY_LAW.name in capsys.readouterr().out
