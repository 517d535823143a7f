"""Issue 23, "intervals that mean what they say": the ``"calibrated"`` posterior (a source chosen, and its
interval scaled, by the other runs' backtest at the same observed fraction)."""

from __future__ import annotations

import math

import pytest

from core.prediction import Prior, TargetPrediction
from core.prediction.combined import leave_one_run_out_cases, other_case
from core.prediction.posterior import POSTERIOR_METHODS
from core.prediction.posterior_calibrated import (
    choose,
    combine_calibrated,
    conformal_scale,
    min_cases,
    whole_epoch_score,
)
from core.prediction.prior import z_of

LN = math.log


def _x(epoch: float, low: float, high: float) -> TargetPrediction:
    return TargetPrediction("r.csv", "accuracy", "exp3", 0.9, 10, "predicted", epoch=epoch, epoch_low=low,
                            epoch_high=high, level=0.8)


def _other(actual: int, prior_err: float, extrap_err: float, sd_p: float = 0.2, sd_x: float = 0.2):
    """An other run that passed in whole epoch ``actual`` whose sources erred by the given log errors."""
    c = LN(actual - 0.5)
    return (float(actual), c - prior_err, sd_p, c - extrap_err, sd_x)


def test_the_method_is_registered():
    assert "calibrated" in POSTERIOR_METHODS


def test_scores_and_the_order_statistic_by_hand():
    # prior said 10 (σ 0.1); whole epoch 12 is held once ceil(10·e^{0.1q}) ≥ 12, i.e. 10·e^{0.1q} > 11
    assert whole_epoch_score(12, LN(10), 0.1) == pytest.approx(LN(1.1) / 0.1)
    # whole epoch 8 is held once ceil(10·e^{−0.1q}) ≤ 8, i.e. 10·e^{−0.1q} ≤ 8
    assert whole_epoch_score(8, LN(10), 0.1) == pytest.approx(LN(10 / 8) / 0.1)
    assert whole_epoch_score(10, LN(10), 0.1) == 0.0
    # m = 4: ⌈5·0.8⌉ = 4th smallest; m = 3: the 4th does not exist
    assert min_cases(0.8) == 4
    assert conformal_scale([0.3, 0.1, 0.4, 0.2], 0.8) == 0.4
    assert conformal_scale([0.3, 0.1, 0.2], 0.8) is None


def test_four_other_runs_choose_the_source_and_scale_its_interval():
    # four other runs with both sources: prior log errors 0.1, −0.1, 0.3, 0.0 (median |e| 0.1);
    # extrapolation 0.4, −0.2, 0.1, 0.2 (0.2); equal σ 0.2, so precision errs their mean:
    # 0.25, −0.15, 0.2, 0.1 (median |e| 0.175) → the prior is chosen
    others = [_other(a, ep, ex) for a, ep, ex in ((11, 0.1, 0.4), (21, -0.1, -0.2), (31, 0.3, 0.1), (41, 0.0, 0.2))]
    name, why = choose(["precision", "prior", "extrapolation"], others)
    assert name == "prior"
    assert "prior 0.100" in why and "precision 0.175" in why and "extrapolation 0.200" in why
    # the prior's scores on them: max((μ − ln a)/σ, (ln(a − 1) − μ)/σ, 0) with μ = ln(a − ½) − e
    scores = sorted(whole_epoch_score(a, mp, sp) for a, mp, sp, _, _ in others)
    expected = sorted(max((LN(a - 0.5) - e - LN(a)) / 0.2, (LN(a - 1) - LN(a - 0.5) + e) / 0.2, 0.0)
                      for a, e in ((11, 0.1), (21, -0.1), (31, 0.3), (41, 0.0)))
    assert scores == pytest.approx(expected)
    q = expected[3]                                   # ⌈5·0.8⌉ = 4th of 4
    prior = Prior(30.0, 0.25, "given", "a prior")
    post = combine_calibrated(prior, _x(20.5, 16.5, 26.5), n_epochs_observed=5, others=others)
    assert post.method == "calibrated" and post.weight_prior == 1.0
    assert post.log_mu == pytest.approx(LN(30.0)) and post.log_sd == pytest.approx(q * 0.25 / z_of(0.8))
    # n = 5 lies far below: the interval is 30·exp(∓q·0.25) in whole epochs
    assert (post.epoch_low, post.epoch_high) == (math.ceil(30 * math.exp(-q * 0.25)),
                                                 math.ceil(30 * math.exp(q * 0.25)))
    assert post.epoch == 30


def test_a_better_combination_on_the_others_is_used_with_its_precision_weight():
    # the two sources err in opposite directions by the same amount: their equal-σ mean is exact
    others = [_other(a, e, -e) for a, e in ((11, 0.2), (21, -0.3), (31, 0.25), (41, -0.15), (51, 0.1))]
    name, _ = choose(["precision", "prior", "extrapolation"], others)
    assert name == "precision"
    prior = Prior(30.0, 0.2, "given", "a prior")
    x = _x(20.5, 20.5 / math.exp(0.3 * z_of(0.8)), 20.5 * math.exp(0.1 * z_of(0.8)))  # μx = ln 20, σx from the ends
    post = combine_calibrated(prior, x, n_epochs_observed=5, others=others)
    sd_x = LN((x.epoch_high - 0.5) / (x.epoch_low - 0.5)) / (2 * z_of(0.8))
    wp = 0.2 ** -2 / (0.2 ** -2 + sd_x ** -2)
    assert post.method == "calibrated" and post.weight_prior == pytest.approx(wp)
    assert post.log_mu == pytest.approx(wp * LN(30.0) + (1 - wp) * LN(20.0))


def test_too_few_cases_fall_back_to_precision_and_say_so():
    others = [_other(a, 0.1, 0.1) for a in (11, 21, 31)]            # 3 < ⌈0.8/0.2⌉ = 4
    post = combine_calibrated(Prior(30.0, 0.2, "given", "a prior"), _x(20.5, 16.5, 26.5), n_epochs_observed=5,
                              others=others)
    assert post.method == "precision"
    assert any("too few other finished runs" in f and "4 needed" in f for f in post.flags)


def test_the_combination_is_not_judged_on_too_few_cases_with_both_sources():
    # five other runs with the prior, only two of them also with an extrapolation: the combination
    # cannot be judged (2 < 4 cases): precision weighting, its interval calibrated on all five
    # (for the three with the prior alone, precision is their prior)
    others = [_other(a, 0.05, 0.01) for a in (11, 21)] + [(float(a), LN(a - 0.5), 0.2, math.nan, math.inf)
                                                          for a in (31, 41, 51)]
    name, why = choose(["precision", "prior", "extrapolation"], others)
    assert name == "precision" and "too few to judge" in why
    post = combine_calibrated(Prior(30.0, 0.2, "given", "a prior"), _x(20.5, 16.5, 26.5), n_epochs_observed=5,
                              others=others)
    assert post.method == "calibrated" and "over 5 other finished runs" in post.description


def test_leave_one_run_out_never_reads_the_runs_own_epoch():
    prior = Prior(20.0, 0.2, "given", "a prior")
    keys, fractions = ["a", "a", "b", "c", "d", "e"], [0.25] * 6
    preds = [None] * 6
    base = leave_one_run_out_cases(keys, fractions, [30, 30, 21, 22, 19, 23], [True] * 6, [prior] * 6, preds)
    poisoned = leave_one_run_out_cases(keys, fractions, [999, 5, 21, 22, 19, 23], [True] * 6, [prior] * 6, preds)
    assert base[0] == poisoned[0] and base[1] == poisoned[1]
    assert sorted(c[0] for c in base[0]) == [19.0, 21.0, 22.0, 23.0]   # its train/val twin ("a") is left out too
    post = combine_calibrated(prior, None, n_epochs_observed=0, others=base[0])
    assert post == combine_calibrated(prior, None, n_epochs_observed=0, others=poisoned[0])
    # another fraction is another backtest: not mixed in
    other_fraction = leave_one_run_out_cases(["a", "b"], [0.25, 0.5], [30, 21], [True, True], [prior] * 2,
                                             [None, None])
    assert other_fraction == [[], []]
    assert other_case(21, prior, None)[:3] == (21.0, LN(20.0), 0.2)


def test_left_out_in_turn_it_covers_ceil_level_n_of_n_exchangeable_runs():
    # six runs, one prior each (σ 0.1 around 20), distinct scores: each left out in turn is covered
    # exactly when its score is not above the 5th (⌈6·0.8⌉) of all six: 5 of 6
    actuals = [18, 20, 21, 23, 25, 28]
    priors = [Prior(20.0, 0.1, "given", "a prior")] * 6
    cases = leave_one_run_out_cases(list("abcdef"), [0.5] * 6, actuals, [True] * 6, priors, [None] * 6)
    covered = []
    for a, others in zip(actuals, cases):
        post = combine_calibrated(priors[0], None, n_epochs_observed=0, others=others)
        assert post.method == "calibrated"
        covered.append(post.epoch_low <= a <= post.epoch_high)
    assert covered == [True, True, True, True, True, False]


def test_the_measured_epoch_wins():
    post = combine_calibrated(Prior(30.0, 0.2, "given", "a prior"), None, n_epochs_observed=12, others=[],
                              measured_epoch=9)
    assert post.method == "measured" and post.epoch == 9


def test_a_backtest_row_never_reads_its_own_unseen_epochs():
    from core.prediction import backtest_logs
    from tests.core.prediction.prediction_logs import course_log

    scales = (0.8, 0.9, 1.0, 1.1, 1.2, 1.3)
    prior = Prior(16.0, 0.2, "given", "a prior")

    def table(poison: bool):
        logs = [course_log(f"resnet{8 + 6 * i}_gpu.csv", scale=s, epochs=30,
                           poison_after=7 if poison and i == 0 else None) for i, s in enumerate(scales)]
        return backtest_logs(logs, fractions=(0.25,), target_acc=0.92, family="exp3", schedule=None,
                             priors={lg.source: prior for lg in logs}, posterior_method="calibrated")

    clean, poisoned = table(False), table(True)
    cols = ["posterior_epoch", "posterior_low", "posterior_high", "posterior_method"]
    assert clean.loc[0, "status"] == "scored" and poisoned.loc[0, "status"] == "scored"
    assert poisoned.loc[0, "epoch_actual"] == 8 != clean.loc[0, "epoch_actual"]   # its rest was poisoned
    assert clean.loc[0, cols].tolist() == poisoned.loc[0, cols].tolist()          # its posterior is not moved
    assert (clean["posterior_method"] == "calibrated").all()


def test_predict_learns_the_calibrated_posterior_from_the_other_loaded_runs():
    from core.prediction.forecast import cases_from_other_runs, forecast_epoch_at_target
    from tests.core.prediction.prediction_logs import actual_epoch, course_log

    scales = (0.9, 1.0, 1.1, 1.2, 1.3, 1.4)
    logs = [course_log(f"resnet20_gpu{i}.csv", scale=s, epochs=30) for i, s in enumerate(scales)]
    cases = cases_from_other_runs(logs[1], logs, n_epochs_seen=10, target_acc=0.92, family="exp3")
    assert [c[0] for c in cases] == [float(actual_epoch(s)) for s in (0.9, 1.1, 1.2, 1.3, 1.4)]
    assert all(math.isnan(c[1]) for c in cases)          # one model only: no calibration prior for them
    # noise-free exp3 runs: each other run's extrapolation from its first third is right to the epoch
    assert [math.ceil(math.exp(c[3]) + 0.5 - 1e-9) for c in cases] == [c[0] for c in cases]
    f = forecast_epoch_at_target(logs[1], logs, n_epochs_seen=10, target_acc=0.92, family="exp3",
                                 prior=Prior(20.0, 0.3, "given", "a prior"), posterior_method="calibrated")
    # no other run has both sources: the combination is not judged, precision weighting is used,
    # its interval scaled on the five other runs' (extrapolation) cases, which were all exact: q = 0
    post = f.posterior
    assert post.method == "calibrated"
    assert "too few to judge" in post.description and "scaled by 0.00 (split-conformal over 5" in post.description
    assert post.epoch == post.epoch_low == post.epoch_high == actual_epoch(1.0) == 13
