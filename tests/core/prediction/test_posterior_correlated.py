"""Issue 23 part 7 and 9: the posterior that counts the correlation of its sources' errors, and the
smaller messages (an accuracy-only prior refusal, a posterior that is one source alone, labels once)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.cli.backtest_cmd import add_arguments as backtest_arguments
from core.cli.predict_cmd import add_arguments as predict_arguments
from core.logs import read_log
from core.prediction import Prior, TargetPrediction, combine
from core.prediction.conformal import conformal_quantiles, correlated_weight
from core.prediction.posterior import combine_beliefs, combine_correlated, log_errors
from core.prediction.prior import prior_from_other_runs
from core.prediction.run_prior import prior_for_run
from core.prediction.tables import convergence_of_prediction
from core.targets import accuracy_target
from tests.core.prediction.prediction_logs import course_log


def _extrapolation(epoch: float, low: float, high: float) -> TargetPrediction:
    return TargetPrediction("r.csv", "accuracy", "exp3", 0.9, 10, "predicted", epoch=epoch, epoch_low=low,
                            epoch_high=high, level=0.8)


def test_the_weight_is_the_variance_minimising_one_with_the_correlation():
    # σp² = 0.04, σx² = 0.01, cross 0.01 (ρ = 0.5): w = (0.01 − 0.01)/(0.04 + 0.01 − 0.02) = 0
    ep, ex = np.array([0.2, -0.2]), np.array([0.1, 0.1 * -1])
    w, vp, vx, cov = correlated_weight(ep, ex)
    assert (vp, vx, cov) == pytest.approx((0.04, 0.01, 0.02))
    assert w == 0.0                      # (0.01 − 0.02)/(0.04 + 0.01 − 0.04) < 0, clipped
    # independent errors of equal size: half each, as precision weighting would say
    w, *_ = correlated_weight([0.1, -0.1, 0.1, -0.1], [0.1, 0.1, -0.1, -0.1])
    assert w == pytest.approx(0.5)
    # σp² = 0.09, σx² = 0.01, cross 0 : w = 0.01 / 0.10 = 0.1
    w, *_ = correlated_weight([0.3, -0.3, 0.3, -0.3], [0.1, 0.1, -0.1, -0.1])
    assert w == pytest.approx(0.1)


def test_conformal_quantiles_take_the_finite_sample_order_statistic():
    e = np.arange(1.0, 20.0)                           # 19 cases: ⌈20·0.9⌉ = 18th, ⌊20·0.1⌋ = 2nd
    assert conformal_quantiles(e, 0.8) == (2.0, 18.0)
    e = np.arange(1.0, 10.0)                           # 9 cases: ⌈10·0.9⌉ = 9th, ⌊10·0.1⌋ = 1st
    assert conformal_quantiles(e, 0.8) == (1.0, 9.0)
    # 8 cases: the 9th does not exist: the extremes widened by half the range (1..8: 3.5)
    assert conformal_quantiles(np.arange(1.0, 9.0), 0.8) == (-2.5, 11.5)


def test_two_sources_that_err_the_same_way_give_a_posterior_as_wide_as_their_errors():
    # issue 23's case: prior 23 (17–30), extrapolation 21 (21–23), truth 23.  Precision weighting
    # gives a posterior narrower than both, which misses; on other runs both sources erred the
    # same way (errors of the prior 2× the extrapolation's, same sign): the correlated posterior
    # follows the extrapolation and its interval is the spread of those errors.
    prior = Prior.from_interval(23.0, 17.0, 30.0, level=0.8)
    x = _extrapolation(21.0, 21.0, 23.0)
    precision = combine(prior, x, n_epochs_observed=10)
    assert precision.epoch_high < 23
    rng = np.random.default_rng(0)
    ex = rng.normal(0.05, 0.1, 30)
    errors = list(zip(2 * ex, ex))
    post = combine_correlated(prior, x, n_epochs_observed=10, errors=errors)
    assert post.method == "correlated" and post.weight_prior == 0.0
    lo_q, hi_q = conformal_quantiles(ex, 0.8)
    shift = float(np.median(ex))                       # 30 cases ≥ 12: the shared bias is taken out
    assert post.median == pytest.approx(20.5 * math.exp(shift))
    assert (post.epoch_low, post.epoch_high) == (math.ceil(20.5 * math.exp(lo_q) - 1e-9),
                                                 math.ceil(20.5 * math.exp(hi_q) - 1e-9))
    assert post.epoch_low <= 23 <= post.epoch_high


def test_one_source_alone_gets_its_own_backtest_interval_and_too_few_cases_fall_back():
    prior = Prior(30.0, 0.2, "given", "a prior")
    refused = TargetPrediction("r.csv", "accuracy", "exp3", 0.9, 10, "refused", reason="a drop lies ahead")
    errors = [(e, math.nan) for e in np.linspace(-0.2, 0.2, 9)]       # 9 cases: the 1st and 9th
    post = combine_correlated(prior, refused, n_epochs_observed=10, errors=errors)
    assert post.method == "correlated" and post.weight_prior == 1.0 and "prior alone" in post.description
    assert (post.epoch_low, post.epoch_high) == (math.ceil(30 * math.exp(-0.2)), math.ceil(30 * math.exp(0.2)))
    few = combine_correlated(prior, _extrapolation(20.0, 15.0, 27.0), n_epochs_observed=10, errors=errors[:2])
    assert few.method == "precision" and any("too few other finished runs" in f for f in few.flags)


def test_the_errors_are_those_of_the_continuous_epoch():
    ep, ex = log_errors(25, Prior(20.0, 0.2, "given", "a prior"), _extrapolation(22.0, 18.0, 26.0))
    assert ep == pytest.approx(math.log(24.5 / 20.0)) and ex == pytest.approx(math.log(24.5 / 21.5))


def test_a_source_alone_says_why_its_number_moved():
    # extrapolation 21 (20.5 continuous, σ from 16.5–30.5) with 20 epochs seen: the truncation at 20 moves it
    x = _extrapolation(21.0, 17.0, 31.0)
    post = combine(None, x, n_epochs_observed=20)
    assert post.method == "extrapolation" and post.epoch > 21
    assert f"median moves from epoch 21 to {post.epoch:.0f}" in post.description
    same = combine_beliefs((math.nan, math.inf), (math.log(40.5), 0.1), n_epochs_observed=5)
    assert same.epoch == 41 and "moves" not in same.description


def test_an_accuracy_only_prior_refusal_names_the_missing_loss_column():
    def acc_only(name):
        rows = "".join(f"{e},{0.5 + 0.02 * e:.3f}\n" for e in range(1, 25))
        return read_log(f"epoch,acc\n{rows}".encode(), name, roles={"loss": None, "acc": "acc"})

    others = [acc_only(f"{m}_V100.csv") for m in ("resnet32", "resnet44", "resnet56", "vgg11", "densenet")]
    prior = prior_for_run(acc_only("resnet20_V100.csv"), others, target=accuracy_target(0.92))
    assert not prior.available
    assert "needs a loss column" in prior.description and "5 logs of the 5 other architectures" in prior.description
    assert "no other architecture" not in prior.description


def test_the_runs_of_a_prior_are_named_once_each():
    p = prior_from_other_runs([60, 62, 80, 81, 79], labels=["batch 16", "batch 16", "batch 32", "batch 32",
                                                            "batch 32"])
    assert "(batch 16 (×2), batch 32 (×3))" in p.description


def test_once_the_target_is_passed_every_later_point_is_the_measured_epoch():
    log = course_log(epochs=24)                     # passes 0.92 at epoch 13
    prior = Prior(16.0, 0.3, "given", "a prior")
    frame = convergence_of_prediction(log, target=accuracy_target(0.92), family="exp3", prior=prior)
    after = frame[frame["epochs_seen"] >= 13]
    assert len(after) == 24 - 13
    for col in ("epoch_pred", "epoch_low", "epoch_high", "posterior_epoch", "posterior_low", "posterior_high"):
        assert (after[col] == 13).all(), col
    assert (after["posterior_method"] == "measured").all() and (after["status"] == "reached").all()
    before = frame[frame["epochs_seen"] < 13]
    assert (before["posterior_epoch"] > before["epochs_seen"]).all()


def test_backtest_and_predict_default_to_the_same_schedule():
    import argparse

    defaults = []
    for add in (backtest_arguments, predict_arguments):
        parser = argparse.ArgumentParser()
        add(parser)
        defaults.append(parser.get_default("schedule"))
    assert defaults == ["auto", "auto"]


def test_forecast_learns_the_correlated_posterior_from_the_other_loaded_runs():
    from core.prediction.forecast import errors_from_other_runs, forecast_epoch_at_target
    from tests.core.prediction.prediction_logs import actual_epoch

    scales = (0.8, 0.9, 1.0, 1.1, 1.2)
    logs = [course_log(f"resnet20_gpu{i}.csv", scale=s, epochs=30) for i, s in enumerate(scales)]
    errors = errors_from_other_runs(logs[2], logs, n_epochs_seen=6, target=accuracy_target(0.92), family="exp3")
    assert len(errors) == 4                         # the four other runs, all finished past epoch 6
    for (ep, ex), s in zip(errors, (0.8, 0.9, 1.1, 1.2)):
        assert math.isnan(ep)                       # one model only: no calibration prior for them
        assert abs(ex) < 0.1                        # exp3 runs: the extrapolation is close to each truth
        assert ex == pytest.approx(math.log(actual_epoch(s) - 0.5) - math.log(actual_epoch(s) - 0.5 - ex))
    f = forecast_epoch_at_target(logs[2], logs, n_epochs_seen=6, target=accuracy_target(0.92), family="exp3",
                                 prior=Prior(20.0, 0.3, "given", "a prior"), posterior_method="correlated")
    # the others' priors were unavailable, so the extrapolation's errors alone make the interval
    assert f.posterior.method == "correlated" and f.posterior.weight_prior == 0.0
    assert f.posterior.epoch_low <= actual_epoch(1.0) <= f.posterior.epoch_high
