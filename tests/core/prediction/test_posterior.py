"""Prior × first epochs → posterior: hand values, conditioning on the observed epochs, no peeking."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from core.errors import InputError
from core.prediction import (
    Prior,
    TargetPrediction,
    backtest_logs,
    combine,
    prior_for_run,
)
from core.prediction.posterior import backtest_variances, combine_beliefs, extrapolation_belief
from core.prediction.prior import z_of
from core.targets import accuracy_target
from tests.core.prediction.prediction_logs import pollux_logs

Z80 = z_of(0.8)   # 1.2816: a central 80 % interval is median·exp(∓1.2816·σ)


def test_two_lognormal_beliefs_give_the_precision_weighted_posterior():
    # prior ln c ~ N(ln 20, 0.3²), extrapolation N(ln 40, 0.4²); weights 1/0.09 = 11.11 and 1/0.16 = 6.25
    post = combine_beliefs((math.log(20), 0.3), (math.log(40), 0.4), n_epochs_observed=0)
    w_p, w_x = 1 / 0.09, 1 / 0.16
    assert post.log_sd == pytest.approx((w_p + w_x) ** -0.5)                 # 0.2400
    assert post.log_sd == pytest.approx(0.24, abs=1e-4)
    assert post.median == pytest.approx(20 ** (w_p / (w_p + w_x)) * 40 ** (w_x / (w_p + w_x)))   # 25.66
    assert post.median == pytest.approx(25.66, abs=0.01)
    assert post.weight_prior == pytest.approx(0.64)                          # 11.11 / 17.36
    lo, hi = 25.66 * math.exp(-Z80 * 0.24), 25.66 * math.exp(Z80 * 0.24)    # 18.87, 34.90
    assert (post.epoch, post.epoch_low, post.epoch_high) == (26.0, math.ceil(lo), math.ceil(hi)) == (26.0, 19, 35)
    assert post.method == "precision"


def test_combine_reads_the_extrapolation_interval_as_a_lognormal():
    # extrapolation epoch 41 (continuous 40.5) with interval 21..81 (continuous 20.5..80.5)
    p = TargetPrediction("r.csv", "accuracy", "exp3", 0.9, 10, "predicted", epoch=41.0, epoch_low=21.0,
                         epoch_high=81.0, level=0.8)
    mu, sd, why = extrapolation_belief(p)
    assert math.exp(mu) == pytest.approx(40.5) and why == ""
    assert sd == pytest.approx(math.log(80.5 / 20.5) / (2 * Z80))
    prior = Prior(20.0, 0.3, "given", "test prior")
    post = combine(prior, p, n_epochs_observed=10)
    expected = combine_beliefs((math.log(20.0), 0.3), (mu, sd), n_epochs_observed=10)
    assert post.median == pytest.approx(expected.median) and post.log_sd == pytest.approx(expected.log_sd)


def test_no_epochs_gives_the_prior_and_a_finished_log_the_measurement():
    prior = Prior.from_interval(30.0, 20.0, 45.0, level=0.8)
    post = combine(prior, None, n_epochs_observed=0)
    assert post.method == "prior" and post.median == pytest.approx(30.0)
    assert (post.epoch_low, post.epoch_high) == (math.ceil(prior.low), math.ceil(prior.high)) == (20, 45)
    done = combine(prior, None, n_epochs_observed=25, measured_epoch=22)
    assert (done.method, done.epoch, done.epoch_low, done.epoch_high) == ("measured", 22.0, 22.0, 22.0)


def test_the_posterior_is_conditioned_on_the_observed_epochs():
    # prior median 20 epochs, but 30 epochs passed without reaching the target: never before epoch 31
    prior = Prior(20.0, 0.3, "given", "test prior")
    post = combine(prior, None, n_epochs_observed=30)
    assert post.method == "prior" and post.epoch >= 31 and post.epoch_low >= 31
    # the truncated normal: P(c <= 30) = Φ(ln 1.5 / 0.3) = Φ(1.3516) = 0.9117; the median is its 0.9558 quantile
    from statistics import NormalDist

    a = NormalDist().cdf(math.log(30 / 20) / 0.3)
    assert post.median == pytest.approx(20 * math.exp(0.3 * NormalDist().inv_cdf(a + 0.5 * (1 - a))))


def test_an_unusable_extrapolation_leaves_the_prior_and_says_why():
    prior = Prior(20.0, 0.3, "given", "test prior")
    refused = TargetPrediction("r.csv", "accuracy", "exp3", 0.9, 10, "refused",
                               reason="the learning-rate drop after epoch 12 lies ahead")
    post = combine(prior, refused, n_epochs_observed=10)
    assert post.method == "prior"
    assert any("extrapolation not used: refused" in f for f in post.flags)
    open_above = TargetPrediction("r.csv", "accuracy", "exp3", 0.9, 10, "predicted", epoch=30.0, epoch_low=12.0,
                                  epoch_high=math.inf)
    assert combine(prior, open_above, n_epochs_observed=10).method == "prior"


def test_backtest_variances_replace_the_interval_ones():
    assert math.isnan(backtest_variances([0.1, -0.1, 0.2], [0.3, 0.3])[1])     # 2 cases: fewer than 3
    sp, sx = backtest_variances([0.1, -0.1, 0.2], [0.3, -0.3, 0.3])
    assert sp == pytest.approx(math.sqrt((0.01 + 0.01 + 0.04) / 3)) and sx == pytest.approx(0.3)
    p = TargetPrediction("r.csv", "accuracy", "exp3", 0.9, 10, "predicted", epoch=41.0, epoch_low=21.0,
                         epoch_high=81.0, level=0.8)
    prior = Prior(20.0, 0.3, "given", "test prior")
    post = combine(prior, p, n_epochs_observed=10, method="backtest", variances=(sp, sx))
    expected = combine_beliefs((math.log(20.0), sp), (math.log(40.5), sx), n_epochs_observed=10, method="backtest")
    assert post.method == "backtest" and post.median == pytest.approx(expected.median)
    with pytest.raises(InputError, match="method: expected one of precision, backtest"):
        combine(prior, p, n_epochs_observed=10, method="magic")


def test_backtest_with_priors_scores_prior_extrapolation_and_posterior():
    logs = pollux_logs("imagenet")[:4]
    priors = {lg.source: prior_for_run(lg, logs, target=accuracy_target(0.75)) for lg in logs}
    t = backtest_logs(logs, fractions=(0.5,), target=accuracy_target(0.75), priors=priors, schedule="step:30,60")
    scored = t[t["status"] == "scored"]
    assert len(scored) == 4
    # the declared drop after epoch 60 lies between epoch 45 and the target: every extrapolation is refused
    assert scored["note"].str.startswith("refused").all() and scored["error_pct"].isna().all()
    assert (scored["posterior_method"] == "prior").all()
    row = scored.iloc[0]
    error = 100 * (row["prior_epoch"] - row["epoch_actual"]) / row["epoch_actual"]
    assert row["prior_error_pct"] == pytest.approx(error)
    assert "step: the rate drops after epochs 30 and 60 (declared)" == row["schedule"]
    assert isinstance(t, pd.DataFrame) and {"posterior_epoch", "posterior_covered"} <= set(t.columns)
