"""The laws through a learning-rate schedule: hand values, their contract, recovery of known parameters, and the
paper's own check on the shared curves (fit three schedules, predict the other six)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.curves import MULTI_POWER, SCHEDULE_FAMILIES, fit_schedule_law, get_schedule_family, schedule_features
from core.curves.lr_annealing import ANNEALING_MOMENTUM, LR_ANNEALING
from core.errors import InputError
from core.logs import read_log_file
from core.schedules import PlannedSchedule, build_schedule, log_schedule
from tests.conftest import DATA

CURVES = DATA / "llm" / "lr_schedule_loss_curves"
NINE = ("constant_24000", "constant_72000", "cosine_24000", "cosine_72000", "wsd_20000_24000",
        "wsdld_20000_24000", "wsdcon_3", "wsdcon_9", "wsdcon_18")
#: the three curves the paper's repository fits on (its README; the shared NOTICE repeats its figures)
FITTED_ON = ("cosine_24000", "constant_24000", "wsdcon_9")


def test_multi_power_law_by_hand_on_one_drop():
    # rate 1 for 100 steps, then 0.5: one fall of 0.5 at step 100.5 with rate 0.75 there (the piece's middle)
    s = PlannedSchedule((0.0, 100.0, 101.0, 200.0), (1.0, 1.0, 0.5, 0.5))
    f = schedule_features(s, [100.0, 200.0])
    p = {"L0": 1.0, "A": 2.0, "alpha": 0.5, "B": 0.4, "C": 1.0, "beta": 1.0, "gamma": 1.0}
    before, after = MULTI_POWER.evaluate(f, p)
    assert before == pytest.approx(1.0 + 2.0 * 100 ** -0.5)                    # no fall yet: 1.2
    area = 100 + 0.75 + 99 * 0.5                                               # 150.25
    at_fall = 100 + 0.5 * (1 + 0.75) / 2                                       # the area up to step 100.5
    x = 0.75 ** -1 * (area - at_fall)                                          # η^-γ · S_k(t), S_k from the fall
    drop = 0.4 * 0.5 * (1 - (1.0 * x + 1) ** -1.0)
    assert after == pytest.approx(1.0 + 2.0 * area ** -0.5 - drop)


def test_lr_annealing_law_by_hand_on_one_drop():
    s = PlannedSchedule((0.0, 100.0, 101.0, 200.0), (1.0, 1.0, 0.5, 0.5))
    f = schedule_features(s, [200.0])
    lam = ANNEALING_MOMENTUM
    s2 = 0.5 * (1 - lam ** (200 - 100.5 + 1)) / (1 - lam)                    # one fall, 99.5 steps before t
    area = 100 + 0.75 + 99 * 0.5
    got = LR_ANNEALING.evaluate(f, {"L0": 1.0, "A": 2.0, "alpha": 0.5, "C": 0.01})[0]
    assert got == pytest.approx(1.0 + 2.0 * area ** -0.5 - 0.01 * s2)


@pytest.mark.parametrize("family", SCHEDULE_FAMILIES.values(), ids=lambda f: f.name)
def test_every_schedule_family_keeps_its_contract(family):
    assert family.param_names[:3] == ("L0", "A", "alpha") and set(family.decay_params) < set(family.param_names)
    assert get_schedule_family(family.name) is family
    s = build_schedule("wsd", total=20_000, peak=3e-4, warmup=500, decay_start=15_000, final=3e-5, shape="1-sqrt")
    f = schedule_features(s, np.arange(600, 20_001, 400.0))
    p = {"L0": 2.5, "A": 0.6, "alpha": 0.45, "B": 400.0, "C": 0.4, "beta": 1.5, "gamma": 0.5}
    values = [p[n] for n in family.param_names]
    J = family.jac(f, values)
    for i in range(len(values)):                      # the analytic Jacobian against central differences
        h = 1e-6 * max(abs(values[i]), 1e-6)
        up, down = list(values), list(values)
        up[i] += h
        down[i] -= h
        numeric = (family.loss(f, up) - family.loss(f, down)) / (2 * h)
        assert J[:, i] == pytest.approx(numeric, rel=1e-4, abs=1e-7 * np.abs(numeric).max())


@given(L0=st.floats(1.0, 4.0), A=st.floats(0.1, 5.0), alpha=st.floats(0.1, 1.0), rate=st.floats(1e-4, 1.0))
def test_under_a_constant_rate_both_laws_are_a_power_law_in_the_steps(L0, A, alpha, rate):
    # no fall of the rate: L0 + A·(rate·t)^-α = L0 + A' · t^-α, today's power law with a floor (pow3)
    s = PlannedSchedule((0.0, 10_000.0), (rate, rate))
    t = np.array([100.0, 1_000.0, 5_000.0])
    f = schedule_features(s, t)
    expected = L0 + A * rate ** -alpha * t ** -alpha
    mp = MULTI_POWER.evaluate(f, {"L0": L0, "A": A, "alpha": alpha, "B": 5.0, "C": 2.0, "beta": 0.5, "gamma": 0.5})
    la = LR_ANNEALING.evaluate(f, {"L0": L0, "A": A, "alpha": alpha, "C": 3.0})
    assert mp == pytest.approx(expected, rel=1e-12) and la == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("family", SCHEDULE_FAMILIES.values(), ids=lambda f: f.name)
def test_known_parameters_are_recovered_from_two_runs_sharing_their_decay_terms(family):
    truth = family.example
    runs = []
    for shape, start in (("linear", 14_000), ("exp", 10_000)):
        s = build_schedule("wsd", total=20_000, peak=1e-3, warmup=500, decay_start=start, final=1e-4, shape=shape)
        f = schedule_features(s, np.arange(600, 20_001, 200.0))
        runs.append((f, family.evaluate(f, truth)))
    fit = fit_schedule_law(runs, family, peak=1e-3)
    for f, y in runs:                            # the curves are reproduced to 1e-5 (parameters may trade off)
        assert family.evaluate(f, fit.params(0)) == pytest.approx(y, rel=1e-5)
    assert fit.params(0)["L0"] == pytest.approx(2.0, rel=1e-3) and fit.rms < 1e-5


def test_a_fit_refuses_a_non_positive_loss_and_too_few_points():
    s = build_schedule("constant", total=1_000, peak=1.0)
    f = schedule_features(s, [100.0, 200.0])
    with pytest.raises(InputError, match="finite losses > 0"):
        fit_schedule_law([(f, np.array([1.0, -1.0]))], LR_ANNEALING)
    with pytest.raises(InputError, match="more evaluated points than the 4 parameters"):
        fit_schedule_law([(f, np.array([2.0, 1.9]))], LR_ANNEALING)


def _shared(size: str):
    out = {}
    for name in NINE:
        log = read_log_file(CURVES / f"csv_{size}" / f"{name}.csv")
        steps = log.frame["global_step"].to_numpy(float)
        out[name] = (schedule_features(log_schedule(log), steps), log.frame["loss"].to_numpy(float))
    return out


@pytest.mark.parametrize("size, published", [("25", 0.11), ("100", 0.14)])
@pytest.mark.parametrize("family", SCHEDULE_FAMILIES.values(), ids=lambda f: f.name)
def test_fitted_on_three_shared_curves_each_law_predicts_the_other_six_as_the_paper_reports(size, published, family):
    # the repository's README (quoted in the shared NOTICE): its multi-power law fitted on cosine_24000,
    # constant_24000 and wsdcon_9 predicts the other six curves with a mean relative error of 0.11 % (25M) and
    # 0.14 % (100M). Here: the same fit on the same curves (the rates from their logged lr column, linear between
    # rows every 128 steps) lands within 0.1 point of it, for both laws.
    curves = _shared(size)
    fit = fit_schedule_law([curves[n] for n in FITTED_ON], family, peak=3e-4)
    errors = np.concatenate([np.abs(family.evaluate(f, fit.params(0)) / y - 1)
                             for n, (f, y) in curves.items() if n not in FITTED_ON])
    assert errors.mean() * 100 < published + 0.1
    assert errors.max() < 0.015
