"""Prior × first epochs → posterior: hand values, conditioning on the observed epochs, no peeking."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from core.calibrate import read_fits_table
from core.datasets import builtin_datasets_by_file, builtin_log_files, course_fits_path
from core.errors import InputError
from core.logs import read_log, read_log_file
from core.prediction import (
    Prior,
    TargetPrediction,
    backtest_logs,
    combine,
    forecast_epoch_at_target,
    prior_for_run,
    prior_from_other_runs,
)
from core.prediction.posterior import backtest_variances, combine_beliefs, extrapolation_belief
from core.prediction.prior import z_of
from core.runs import find_target_crossing
from tests.core.prediction.prediction_logs import course_csv, course_log

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


def test_prior_from_other_runs_is_the_student_t_prediction_interval():
    # ln 60, ln 70, ln 80: mean ln 69.52, s = 0.1440; t_2(0.9) = 1.8856, √(1 + 1/3) = 1.1547
    p = prior_from_other_runs([60, 70, 80], labels=["a", "b", "c"])
    x = np.log([60, 70, 80])
    half = 1.8856 * x.std(ddof=1) * math.sqrt(4 / 3)
    assert p.epoch == pytest.approx(math.exp(x.mean()))
    assert p.interval() == pytest.approx((p.epoch * math.exp(-half), p.epoch * math.exp(half)), rel=1e-4)
    assert p.n_runs == 3 and p.informative
    lone = prior_from_other_runs([60])
    assert lone.available and not lone.informative and "only 1 other run" in lone.flags[0]
    # samples per epoch: 50 epochs of 2,000 samples are 100 epochs of 1,000
    assert prior_from_other_runs([50, 50], samples_per_epoch=[2000, 2000],
                                 target_samples_per_epoch=1000).epoch == pytest.approx(100)


def _pollux(job: str):
    files = sorted((course_fits_path().parent / "pollux_traces" / job).glob("validation-*.csv"))
    return [read_log_file(p, source=f"{job}/{p.name}") for p in files]


def test_a_pollux_run_gets_its_prior_from_the_other_batch_sizes():
    logs = _pollux("imagenet")
    prior = prior_for_run(logs[0], logs, target_acc=0.75)
    assert prior.source == "other runs" and prior.n_runs == len(logs) - 1
    assert logs[0].meta.global_batch and f"batch {logs[0].meta.global_batch}" not in prior.description


def test_the_prior_never_reads_the_held_out_architecture():
    fits = read_fits_table(course_fits_path())
    log = course_log("resnet50_Tesla V100-PCIE-32GB.csv", steps_per_epoch=391)
    clean = prior_for_run(log, [], target_acc=0.92, fits=fits, datasets_by_file={log.source: "cifar10"})
    poisoned = fits.copy()
    m = poisoned["model"] == "resnet50"
    poisoned.loc[m, ["step_to_target", "epoch_to_target", "b0", "b1", "b2"]] = [1.0, 1.0, 0.5, 0.01, 3.0]
    dirty = prior_for_run(log, [], target_acc=0.92, fits=poisoned, datasets_by_file={log.source: "cifar10"})
    assert clean.source == "calibration" and "outside the calibration set" in clean.flags[0]
    assert (clean.epoch, clean.log_sd) == (dirty.epoch, dirty.log_sd)


@pytest.fixture(scope="module")
def builtin_logs():
    return [read_log_file(p, source=n) for n, p in builtin_log_files("mnist1d")]


def test_unseen_epochs_change_neither_prior_nor_extrapolation_nor_posterior(builtin_logs):
    others = [lg for lg in builtin_logs if "resnet20" not in lg.source]
    clean = read_log(course_csv(), "resnet20_Intel Xeon Processor.csv")
    dirty = read_log(course_csv(poison_after=8), "resnet20_Intel Xeon Processor.csv")
    kw = dict(n_epochs_seen=8, target_acc=0.92, prior="auto", schedule="auto",
              datasets_by_file=builtin_datasets_by_file())
    a, b = (forecast_epoch_at_target(lg, others, **kw) for lg in (clean, dirty))
    assert a.prior.source == "calibration" and a.posterior is not None
    assert (a.prior.epoch, a.prior.log_sd) == (b.prior.epoch, b.prior.log_sd)
    for attr in ("status", "epoch", "epoch_low", "epoch_high", "family", "inflation"):
        assert getattr(a.prediction, attr) == getattr(b.prediction, attr)
    assert a.posterior.to_dict() == b.posterior.to_dict()


def test_backtest_with_priors_scores_prior_extrapolation_and_posterior():
    logs = _pollux("imagenet")[:4]
    priors = {lg.source: prior_for_run(lg, logs, target_acc=0.75) for lg in logs}
    t = backtest_logs(logs, fractions=(0.5,), target_acc=0.75, priors=priors, schedule="step:30,60")
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


# ---------------------------------------------------------------- the batch-scaling prior (issue 11 × issue 12)
@pytest.fixture(scope="module")
def mlperf_logs():
    from core.datasets import batch_run_files

    return [read_log_file(p, source=n) for n, p in batch_run_files("mlperf")]


def test_an_mlperf_run_gets_the_batch_scaling_fit_of_the_other_systems_at_its_batch(mlperf_logs):
    from core.batch import fit_batch_scaling, measure_batch_runs

    log = next(lg for lg in mlperf_logs if lg.source.startswith("dgxh100_n64_") and lg.source.endswith("_0.txt"))
    others = [lg for lg in mlperf_logs if not lg.source.startswith("dgxh100_n64_")]
    prior = prior_for_run(log, others, target_acc=0.759)
    # by hand: the fit of the other systems' samples to target, at B = 20,480, in epochs of
    # 1,281,167 images, less half an epoch (the runs' samples count to the end of the passing epoch)
    model = fit_batch_scaling(measure_batch_runs(others, target_acc=0.759), level=0.8)
    n = 1_281_167
    assert log.meta.global_batch == 20_480 and log.meta.samples_per_epoch == n
    assert prior.source == "batch scaling"
    assert prior.epoch == pytest.approx(model.samples(20_480) / n - 0.5, rel=1e-12)
    low, high = model.samples_interval(20_480)
    # the fit's 80 % band kept as the log-normal's width (centred on the median in log space)
    assert math.log(prior.high / prior.low) == pytest.approx(math.log((high / n - 0.5) / (low / n - 0.5)), rel=1e-9)
    # chosen over the log-mean by leave-one-run-out, and the description says both errors
    assert "leave-one-run-out median error over 24 runs: batch-scaling fit" in prior.description
    # the run passed 75.9 % during epoch 50: the prior says between 47 and 50
    assert find_target_crossing(log, 0.759).epoch == 50 and 46 < prior.low < prior.epoch < prior.high < 50


def test_the_batch_scaling_prior_reads_only_the_runs_batch(mlperf_logs):
    log = mlperf_logs[0]
    others = mlperf_logs[2:]
    frame = log.frame.copy()
    frame["acc"] = 0.01                                  # the run's own curve poisoned: never reaches anything
    poisoned = dataclasses.replace(log, frame=frame)
    assert prior_for_run(log, others, target_acc=0.759) == prior_for_run(poisoned, others, target_acc=0.759)


def test_the_mlperf_logs_declare_their_learning_rate_schedule(mlperf_logs):
    from core.prediction import known_schedule, resolve_schedule

    log = next(lg for lg in mlperf_logs if lg.source.startswith("dgxh100_n96_"))
    # :::MLLOG lars_opt_learning_rate_decay_steps 58 and ..._decay_poly_power 2 in the log
    assert log.meta.schedule == "poly:58:2"
    assert known_schedule(log).spec() == "poly:58:2" and resolve_schedule(log).spec() == "poly:58:2"
