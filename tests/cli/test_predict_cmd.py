"""``python -m core predict`` and ``backtest --prior-from``: columns, values, refusals, exit codes."""

from __future__ import annotations

import io
import math
import shutil

import pandas as pd
import pytest

from core.cli import main
from core.logs import read_log_file
from core.prediction import PRIOR_COLUMNS, forecast_epoch_at_target, prior_for_run
from core.targets import accuracy_target
from tests.conftest import ROOT

COLUMNS = ["file", "observed_epochs", "prior_epoch", "prior_low", "prior_high", "extrapolated_epoch", "extrap_low",
           "extrap_high", "posterior_epoch", "posterior_low", "posterior_high", "method", "flags", "metric",
           "direction", "target", "unit", "prior_samples", "extrapolation_samples", "posterior_samples",
           "posterior_samples_low", "posterior_samples_high", "time_to_target_s", "posterior_progress",
           "posterior_progress_low", "posterior_progress_high", "metric_at_end", "metric_at_end_low",
           "metric_at_end_high", "schedule", "route"]
IMAGENET = sorted(str(p) for p in (ROOT / "data" / "pollux_traces" / "imagenet").glob("validation-*.csv"))
BUILTIN = sorted(str(p) for p in (ROOT / "data" / "logs").glob("*.csv"))


def _table(out: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(out))


def test_prints_prior_extrapolation_and_posterior_of_a_partial_run(capsys):
    log = next(p for p in BUILTIN if p.endswith("resnet20_Intel Xeon Processor.csv"))
    assert main(["predict", log, "--prior-from", *BUILTIN, "--observe", "0.5", "--dataset", "mnist1d"]) == 0
    out = capsys.readouterr()
    t = _table(out.out)
    assert list(t.columns) == COLUMNS and len(t) == 1
    row = t.iloc[0]
    # the same numbers as the core calls (prior from the other depths, 12 of 24 epochs observed)
    run = read_log_file(log, source=log)
    others = [read_log_file(p, source=p) for p in BUILTIN]
    datasets = {p: "mnist1d" for p in BUILTIN}
    prior = prior_for_run(run, others, target=accuracy_target(0.92), datasets_by_file=datasets)
    f = forecast_epoch_at_target(run, others, n_epochs_seen=12, target=accuracy_target(0.92), prior=prior,
                                 schedule="auto")
    assert row["observed_epochs"] == 12 and row["method"] == f.posterior.method == "precision"
    assert row["prior_epoch"] == math.ceil(prior.epoch)
    assert (row["extrapolated_epoch"], row["extrap_low"], row["extrap_high"]) == (
        f.prediction.epoch, f.prediction.epoch_low, f.prediction.epoch_high)
    assert (row["posterior_epoch"], row["posterior_low"], row["posterior_high"]) == (
        f.posterior.epoch, f.posterior.epoch_low, f.posterior.epoch_high)
    assert "prior: arch-" in out.err and "other architectures" in out.err


def test_a_declared_drop_ahead_refuses_the_extrapolation_in_words(capsys):
    argv = ["predict", IMAGENET[0], "--prior-from", *IMAGENET, "--observe", "45", "--target-acc", "0.75",
            "--schedule", "step:30,60"]
    assert main(argv) == 0
    row = _table(capsys.readouterr().out).iloc[0]
    assert pd.isna(row["extrapolated_epoch"]) and row["method"] == "prior"
    assert "learning-rate drop after epoch 60" in row["flags"]
    assert row["prior_low"] <= row["posterior_epoch"] <= row["prior_high"]


def test_a_finished_log_gives_the_measurement(capsys):
    assert main(["predict", IMAGENET[0], "--prior-from", *IMAGENET, "--target-acc", "0.75"]) == 0
    row = _table(capsys.readouterr().out).iloc[0]
    # IMAGENET[0] is validation-12800.csv, whose accuracy first passes 0.75 at epoch 62 (0.7504)
    assert IMAGENET[0].endswith("validation-12800.csv")
    assert row["method"] == "measured" and row["posterior_epoch"] == row["posterior_low"] == row["posterior_high"] == 62


def test_unreadable_files_exit_2_and_the_others_are_predicted(capsys, tmp_path):
    bad = tmp_path / "broken.csv"
    bad.write_text("")
    assert main(["predict", str(bad), IMAGENET[1], "--prior-from", *IMAGENET, "--target-acc", "0.75",
                 "--observe", "0.5"]) == 2
    out = capsys.readouterr()
    assert "broken.csv: the file is empty" in out.err
    assert _table(out.out)["file"].tolist() == [IMAGENET[1]]
    with pytest.raises(SystemExit) as exc:
        main(["predict", IMAGENET[1], "--schedule", "linear:5"])
    assert exc.value.code == 2


def test_backtest_with_prior_from_adds_the_three_predictions(capsys):
    argv = ["backtest", *IMAGENET[:4], "--observe", "0.5", "--target-acc", "0.75", "--prior-from", *IMAGENET,
            "--schedule", "step:30,60"]
    assert main(argv) == 0
    out = capsys.readouterr()
    t = _table(out.out)
    assert list(t.columns[-len(PRIOR_COLUMNS):]) == list(PRIOR_COLUMNS)
    assert (t["posterior_method"] == "prior").all()
    assert "summary [prior, extrapolation, posterior]: f=0.5 (4 scored)" in out.err
    assert "extrapolation n/a, 4 without an answer" in out.err


def test_a_loss_target_is_predicted_in_samples_from_the_part_observed(capsys, tmp_path):
    # L = 2 + 30·(100·step)^-0.5 with a global batch of 100 (the file name says batch 100): loss <= 2.5 at step 36
    paths = []
    for name, a in (("new", 30.0), ("o1", 28.0), ("o2", 32.0), ("o3", 30.5)):
        path = tmp_path / f"{name}.csv"
        path.write_text("step,loss\n" + "".join(f"{s},{2 + a * (100 * s) ** -0.5:.6f}\n" for s in range(1, 61)))
        paths.append(str(path))
    assert main(["predict", paths[0], "--prior-from", *paths[1:], "--target", "loss<=2.5", "--observe", "0.25"]) == 0
    row = _table(capsys.readouterr().out).iloc[0]
    # no global batch: progress in optimiser steps, and the samples columns stay empty rather than lie
    assert (row["metric"], row["direction"], row["target"], row["unit"]) == ("loss", "<=", 2.5, "steps")
    assert pd.isna(row["extrapolation_samples"]) and pd.isna(row["prior_samples"])
    assert row["posterior_progress_low"] <= row["posterior_progress"] <= row["posterior_progress_high"]
    # with the batch in the name (batch 100 a step) the same run is in samples: 36 steps = 3,600 samples
    named = [p.replace(".csv", "-100.csv") for p in paths]
    for old, new in zip(paths, named):
        shutil.copy(old, new)
    assert main(["predict", named[0], "--prior-from", *named[1:], "--target", "loss<=2.5", "--observe", "0.25"]) == 0
    row = _table(capsys.readouterr().out).iloc[0]
    assert row["unit"] == "samples"
    assert row["extrapolation_samples"] == pytest.approx(3600.0, rel=1e-3)
    # the three others reached at steps 32, 41 and 38: the prior is their median
    assert row["prior_samples"] == pytest.approx(3800.0)
    assert row["posterior_samples_low"] <= row["posterior_samples"] <= row["posterior_samples_high"]
    assert pd.isna(row["observed_epochs"])
    # a posterior method asked for is not dropped in silence: it combines epochs to an accuracy target
    argv = ["predict", named[0], "--prior-from", *named[1:], "--target", "loss<=2.5", "--observe", "0.25"]
    assert main([*argv, "--posterior-method", "calibrated"]) == 0
    out = capsys.readouterr()
    assert "--posterior-method calibrated not applied" in out.err and "a target in samples" in out.err
    assert _table(out.out).iloc[0]["posterior_samples"] == pytest.approx(row["posterior_samples"])


def test_the_calibrated_posterior_learns_from_the_other_traces(capsys):
    # CIFAR-10 batch 256 from its first 10 % (10 of 100 epochs): its prior is the other five
    # batches' log-mean; each of them, cut at 10 %, with its prior from the four others, teaches
    # the choice and the interval (the run passes 0.94 at epoch 72)
    cifar = sorted(str(p) for p in (ROOT / "data" / "pollux_traces" / "cifar10").glob("validation-*.csv"))
    run = next(p for p in cifar if p.endswith("validation-256.csv"))
    argv = ["predict", run, "--prior-from", *cifar, "--observe", "0.1", "--target-acc", "0.94"]
    assert main([*argv, "--posterior-method", "calibrated"]) == 0
    out = capsys.readouterr()
    row = _table(out.out).iloc[0]
    assert row["method"] == "calibrated"
    # 5 other runs: too few for an order statistic below the largest, so z x the rms of their errors; only 3 of
    # them had both sources: the combination cannot be judged, and the extrapolation (3 cases) cannot be
    # calibrated, so the prior is used alone, its interval scaled by q
    assert "z·rms of 5 normalised errors over 5 other finished runs" in out.err
    assert "only 3 other finished runs with both sources: too few to judge the combination" in out.err
    assert "the prior alone, the only source with enough other runs to calibrate it" in out.err
    q = float(out.err.split("its interval scaled by ")[1].split(" ")[0])
    assert main([*argv, "--posterior-method", "precision"]) == 0
    plain = _table(capsys.readouterr().out).iloc[0]
    assert plain["method"] == "precision"
    same = ["prior_epoch", "prior_low", "prior_high", "extrapolated_epoch", "extrap_low", "extrap_high"]
    assert row[same].tolist() == plain[same].tolist()       # the method changes the posterior only
    # the prior alone: its median (73, the run passes at 72), not pulled to precision's 64 by the extrapolation
    assert row["posterior_epoch"] == row["prior_epoch"] == 73 and plain["posterior_epoch"] < 73
    # its interval is the prior's ±z·σ scaled to ±q·σ, to whole epochs: σ from the prior's interval,
    # (ln((H − 1)/L), ln(H/(L − 1)))/(2z), and the calibrated one's ends within the same rounding
    z = 1.2815515655446004
    lo_p, hi_p, lo, hi = row["prior_low"], row["prior_high"], row["posterior_low"], row["posterior_high"]
    sd_min, sd_max = math.log((hi_p - 1) / lo_p) / (2 * z), math.log(hi_p / (lo_p - 1)) / (2 * z)
    assert math.log((hi - 1) / lo) < 2 * (q + 0.005) * sd_max and 2 * (q - 0.005) * sd_min < math.log(hi / (lo - 1))
    assert q < z and hi - lo < hi_p - lo_p                  # the other runs' priors erred less than their σ said
    assert lo <= 72 <= hi
    # "backtest": the same cases give each source a variance (its log errors on the other runs): the
    # extrapolation from 10 % erred far more than the other batches' median, so the prior carries most weight
    assert main([*argv, "--posterior-method", "backtest"]) == 0
    out = capsys.readouterr()
    learned = _table(out.out).iloc[0]
    assert learned["method"] == "backtest"
    assert "variances from the log errors of each source on other finished runs" in out.err
    share = int(out.err.split("the prior carries ")[1].split(" %")[0])
    assert share >= 90
    assert learned[same].tolist() == plain[same].tolist()
    assert learned["posterior_low"] <= 72 <= learned["posterior_high"]


def test_the_readmes_example_knows_a_built_in_logs_data_set_without_dataset(capsys):
    # `predict data/logs/resnet20_... --prior-from data/logs/*.csv` (the README's example): the files are the
    # built-in MNIST-1D logs, so the calibration prior counts their 1-D parameters as the Logs page does
    # (without it: CIFAR counts, a wrong "outside the calibration set" flag and another interval)
    logs = sorted(str(p) for p in (ROOT / "data" / "logs").glob("*.csv"))
    run = next(p for p in logs if p.endswith("resnet20_Intel Xeon Processor.csv"))
    argv = ["predict", run, "--prior-from", *logs, "--observe", "0.5"]
    assert main(argv) == 0
    plain = _table(capsys.readouterr().out).iloc[0]
    assert main([*argv, "--dataset", "mnist1d"]) == 0
    told = _table(capsys.readouterr().out).iloc[0]
    answer = ["prior_epoch", "prior_low", "prior_high", "posterior_epoch", "posterior_low", "posterior_high"]
    assert plain[answer].tolist() == told[answer].tolist()
    assert "outside the calibration set" not in str(plain["flags"])


def test_predict_reads_tensorboard_event_files_for_the_run_and_its_prior(capsys):
    # issue 36: predict reads event files through the same registry as fit, the uploader and library add
    runs = ROOT / "tests" / "data" / "sweep" / "tensorboard"
    event_file = runs / "resnet8_CPU-16" / "events.out.tfevents.0.sweep.0"
    others = [str(runs / f"resnet8_CPU-{b}") for b in (32, 64, 128, 256)]
    argv = ["predict", str(event_file), str(runs / "resnet8_CPU-16"), "--prior-from", *others,
            "--target", "loss<=0.5", "--observe", "0.25"]
    assert main(argv) == 0
    out = capsys.readouterr()
    assert "binary data" not in out.err and "cannot" not in out.err
    table = _table(out.out)
    assert table["file"].tolist() == [str(event_file), str(runs / "resnet8_CPU-16")]
    assert table["metric"].tolist() == ["loss"] * 2 and table["unit"].tolist() == ["samples"] * 2
    assert table["schedule"].tolist() == [f"the lr column of {f}" for f in table["file"]]   # the lr tag was read
    # the file and its folder are one run: this run's own extrapolation is the same number read either way
    assert table.loc[0, "extrapolation_samples"] == table.loc[1, "extrapolation_samples"]
    assert math.isfinite(table.loc[0, "extrapolation_samples"]) and table.loc[0, "extrapolation_samples"] > 0
    assert (table["prior_samples"] > 0).all()
