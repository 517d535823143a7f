"""Issue 23, "intervals that mean what they say": the ``"calibrated"`` posterior (a source chosen, and its
interval scaled, by the other runs' backtest at the same observed fraction)."""

from __future__ import annotations

import math
from statistics import NormalDist

import pytest

from core.prediction import Prior, TargetPrediction
from core.prediction.combined import leave_one_run_out_cases, other_case
from core.prediction.posterior import POSTERIOR_METHODS
from core.prediction.posterior_calibrated import (
    choose,
    combine_calibrated,
    conformal_scale,
    min_cases,
    scale_of,
    whole_epoch_score,
)
from core.prediction.prior import z_of
from core.targets import accuracy_target

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
    # four other runs with both sources (σ 0.2 each): prior log errors 0.1, −0.1, 0.3, 0.0 and
    # extrapolation errors 0.4, −0.2, 0.1, 0.2; precision errs their mean, 0.25, −0.15, 0.2, 0.1, on σ √0.02
    others = [_other(a, ep, ex) for a, ep, ex in ((11, 0.1, 0.4), (21, -0.1, -0.2), (31, 0.3, 0.1), (41, 0.0, 0.2))]
    # 4 cases: too few for an order statistic below the largest, so q = z·rms of the normalised errors
    z = z_of(0.8)
    q_prior = z * math.sqrt((0.01 + 0.01 + 0.09 + 0.0) / 4) / 0.2
    q_extrap = z * math.sqrt((0.16 + 0.04 + 0.01 + 0.04) / 4) / 0.2
    q_prec = z * math.sqrt((0.0625 + 0.0225 + 0.04 + 0.01) / 4) / math.sqrt(0.02)
    assert scale_of("prior", others)[0] == pytest.approx(q_prior)
    assert scale_of("extrapolation", others)[0] == pytest.approx(q_extrap)
    assert scale_of("precision", others)[0] == pytest.approx(q_prec)
    # the run's own beliefs: prior σ 0.25, extrapolation σx from its interval; the narrowest calibrated
    # interval q·σ wins
    prior = Prior(30.0, 0.25, "given", "a prior")
    x = _x(20.5, 16.5, 26.5)
    sd_x = LN((26.5 - 0.5) / (16.5 - 0.5)) / (2 * z)
    sd_prec = (0.25 ** -2 + sd_x ** -2) ** -0.5
    widths = {"prior": q_prior * 0.25, "extrapolation": q_extrap * sd_x, "precision": q_prec * sd_prec}
    best = min(widths, key=widths.get)
    own = {"prior": (LN(30.0), 0.25), "extrapolation": (LN(20.0), sd_x),
           "precision": (0.0, sd_prec)}
    name, why = choose(own, others)
    assert name == best == "precision" and "narrowest calibrated interval" in why
    post = combine_calibrated(prior, x, n_epochs_observed=5, others=others)
    wp = 0.25 ** -2 / (0.25 ** -2 + sd_x ** -2)
    assert post.method == "calibrated" and post.weight_prior == pytest.approx(wp)
    assert post.log_mu == pytest.approx(wp * LN(30.0) + (1 - wp) * LN(20.0))
    assert post.log_sd == pytest.approx(q_prec * sd_prec / z)
    assert "z·rms of 4 normalised errors" in post.description


def test_a_source_the_others_calibrate_narrower_is_used_alone():
    # the extrapolations of the others were wild (errors ±1.0 on σ 0.2): calibrated, the extrapolation's
    # interval is 5× its own; the priors erred ±0.1 on σ 0.2: the prior's interval is half its own;
    # precision inherits the extrapolation's errors (weights equal): ±0.45 on σ 0.1414
    others = [_other(a, e, 10 * e) for a, e in ((11, 0.1), (21, -0.1), (31, 0.1), (41, -0.1), (51, 0.1))]
    prior = Prior(30.0, 0.2, "given", "a prior")
    x = _x(20.5, 20.5 / math.exp(0.2 * z_of(0.8)), 20.5 * math.exp(0.2 * z_of(0.8)))
    post = combine_calibrated(prior, x, n_epochs_observed=5, others=others)
    assert post.method == "calibrated" and post.weight_prior == 1.0 and post.log_mu == pytest.approx(LN(30.0))
    assert post.log_sd == pytest.approx(0.5 * 0.2, rel=1e-6)     # q = z·0.5: its interval μ ± 0.5·z·σ


def test_too_few_cases_fall_back_to_precision_and_say_so():
    others = [_other(a, 0.1, 0.1) for a in (11, 21, 31)]            # 3 < ⌈0.8/0.2⌉ = 4
    post = combine_calibrated(Prior(30.0, 0.2, "given", "a prior"), _x(20.5, 16.5, 26.5), n_epochs_observed=5,
                              others=others)
    assert post.method == "precision"
    assert any("too few other finished runs" in f and "4 needed" in f for f in post.flags)


def test_each_candidate_is_calibrated_on_the_cases_that_have_it():
    # five other runs with the prior, only two of them also with an extrapolation: the extrapolation
    # cannot be calibrated (2 < 4 cases); precision (for the three with the prior alone, their prior) and
    # the prior can, on all five
    others = [_other(a, 0.05, 0.01) for a in (11, 21)] + [(float(a), LN(a - 0.5), 0.2, math.nan, math.inf)
                                                          for a in (31, 41, 51)]
    assert scale_of("extrapolation", others) is None
    # the prior on all five: errors 0.05/0.2 = 0.25 on the two with both sources, 0 on the three others
    q_prior, rule = scale_of("prior", others)
    assert rule == "z·rms of 5 normalised errors" and q_prior == pytest.approx(z_of(0.8) * math.sqrt(2 * 0.25 ** 2 / 5))
    assert scale_of("precision", others)[1] == "z·rms of 5 normalised errors"
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
    # eleven runs, one prior each (σ 0.1 around 20), distinct scores: each left out in turn sees ten others
    # (split-conformal: the ⌈11·0.8⌉ = 9th of their ten scores) and is covered exactly when its score is not
    # above the 9th of all eleven: 9 of 11
    actuals = [14, 16, 18, 19, 20, 21, 22, 23, 25, 28, 31]
    priors = [Prior(20.0, 0.1, "given", "a prior")] * 11
    cases = leave_one_run_out_cases(list("abcdefghijk"), [0.5] * 11, actuals, [True] * 11, priors, [None] * 11)
    covered = []
    for a, others in zip(actuals, cases):
        post = combine_calibrated(priors[0], None, n_epochs_observed=0, others=others)
        assert post.method == "calibrated" and "split-conformal over 10" in post.description
        covered.append(post.epoch_low <= a <= post.epoch_high)
    # scores ln((a − ½)/20)/0.1 clipped for whole epochs: 3.57 (14), 2.23, 1.05, 0.51, 0, 0, 0.49, 0.95, 1.82,
    # 3.00 (28), 4.06 (31): the two largest (14 and 31) are the two left out
    assert covered == [False] + [True] * 9 + [False]


def test_four_to_eight_cases_scale_by_the_rms_of_their_errors():
    # with 4-8 cases the order statistic ⌈(m+1)·0.8⌉ is the largest score (it promises m/(m + 1) and
    # over-covers): z·rms of the normalised errors instead; six priors at 20 (σ 0.1), other runs at
    # 18, 20, 21, 23, 25, 28: errors ln((a − ½)/20)/0.1
    actuals = [18, 20, 21, 23, 25, 28]
    others = [(float(a), LN(20.0), 0.1, math.nan, math.inf) for a in actuals[1:]]
    q, rule = scale_of("prior", others)
    errs = [LN((a - 0.5) / 20.0) / 0.1 for a in actuals[1:]]
    assert rule == "z·rms of 5 normalised errors"
    assert q == pytest.approx(z_of(0.8) * math.sqrt(sum(e * e for e in errs) / 5))


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
        return backtest_logs(logs, fractions=(0.25,), target=accuracy_target(0.92), family="exp3", schedule=None,
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
    cases = cases_from_other_runs(logs[1], logs, n_epochs_seen=10, target=accuracy_target(0.92), family="exp3")
    assert [c[0] for c in cases] == [float(actual_epoch(s)) for s in (0.9, 1.1, 1.2, 1.3, 1.4)]
    assert all(math.isnan(c[1]) for c in cases)          # one model only: no calibration prior for them
    # noise-free exp3 runs: each other run's extrapolation from its first third is right to the epoch
    assert [math.ceil(math.exp(c[3]) + 0.5 - 1e-9) for c in cases] == [c[0] for c in cases]
    f = forecast_epoch_at_target(logs[1], logs, n_epochs_seen=10, target=accuracy_target(0.92), family="exp3",
                                 prior=Prior(20.0, 0.3, "given", "a prior"), posterior_method="calibrated")
    # no other run has a prior: the combination cannot be judged, and only the extrapolation is calibrated
    # (on the five other runs' cases, all exact: q = 0), so it is used alone and the prior 20 has no say
    post = f.posterior
    assert post.method == "calibrated" and post.weight_prior == 0.0
    assert "too few to judge" in post.description and "the extrapolation alone" in post.description
    assert "scaled by 0.00 (z·rms of 5 normalised errors over 5" in post.description
    assert post.epoch == post.epoch_low == post.epoch_high == actual_epoch(1.0) == 13


def test_without_other_runs_that_had_both_sources_the_combination_is_not_judged():
    # five other runs with an extrapolation only (off by ±1 σ): on them precision would be their extrapolation,
    # always narrower than it, so the run's own prior would enter unchecked as "the narrowest"; the combination
    # cannot be judged, and the one source the other runs calibrate is used alone (the prior has no case)
    x_only = [(float(a), math.nan, math.inf, LN(a - 0.5) - e * 0.2, 0.2)
              for a, e in ((11, 1), (21, -1), (31, 1), (41, -1), (51, 1))]
    own = {"precision": (LN(90.0), 0.05), "prior": (LN(100.0), 0.05), "extrapolation": (LN(20.0), 0.2)}
    name, why = choose(own, x_only)
    assert name == "extrapolation" and "only 0 other finished runs with both" in why
    assert "the extrapolation alone, the only source with enough other runs to calibrate it" in why
    # five more with a prior only, off by ±0.5 σ: both sources are calibrated, each on its own five cases
    # (q = z·1 and z·0.5), so the narrower of the two calibrated intervals wins: ±0.05·0.5z against ±0.2z
    p_only = [(float(a), LN(a - 0.5) - e * 0.025, 0.05, math.nan, math.inf)
              for a, e in ((12, 1), (22, -1), (32, 1), (42, -1), (52, 1))]
    name, why = choose(own, x_only + p_only)
    assert name == "prior" and "the narrower calibrated single source (prior ±0.032, extrapolation ±0.256" in why
    # two of each: neither source alone can be calibrated (2 < 4 cases) but precision, the one source of
    # each case, can (4): precision weighting, said to be unjudged
    name, why = choose(own, x_only[:2] + p_only[:2])
    assert name == "precision" and "too few to judge" in why and "neither source alone has enough" in why


def test_the_calibrated_interval_is_not_conditioned_on_the_epochs_seen_twice():
    # a prior of 5 epochs (σ 0.5) for a run seen for 3 epochs, calibrated on four other runs whose priors
    # erred by ±1 σ (q = z): its interval 5·exp(∓0.5z) = 2.6 to 9.5 is raised to epoch 4, its median stays 5
    # (the other runs, too, all passed after their cut: conditioning on c > 3 again would move it to 6)
    others = [(float(a), LN(a - 0.5) - e * 0.5, 0.5, math.nan, math.inf) for a, e in ((6, 1), (8, -1), (10, 1),
                                                                                      (12, -1))]
    post = combine_calibrated(Prior(5.0, 0.5, "given", "a prior"), None, n_epochs_observed=3, others=others)
    assert post.method == "calibrated"
    assert post.log_sd == pytest.approx(0.5)
    assert (post.epoch, post.epoch_low, post.epoch_high) == (5.0, 4.0, 10.0)
    assert not any("outlived" in f for f in post.flags)
    # seen for 12 epochs without passing, the run has outlived the calibrated median 5: raised to epoch 13 alone
    # the interval would be 13 to 13, so it is conditioned on c > 12 (the quantiles of the normal beyond ln 12)
    late = combine_calibrated(Prior(5.0, 0.5, "given", "a prior"), None, n_epochs_observed=12, others=others)
    a = NormalDist().cdf(LN(12 / 5) / 0.5)
    q = [5 * math.exp(0.5 * NormalDist().inv_cdf(a + p * (1 - a))) for p in (0.5, 0.1, 0.9)]
    assert (late.epoch, late.epoch_low, late.epoch_high) == tuple(float(math.ceil(v)) for v in q) == (14.0, 13.0, 19.0)
    assert any("outlived the calibrated median (5.0 epochs)" in f for f in late.flags)
