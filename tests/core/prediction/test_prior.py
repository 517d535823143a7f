"""core.prediction.prior: what other runs say before the run's own epochs (other batch sizes of the job, a
calibration over other architectures, the batch-scaling fit), and the log-normal Prior itself."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from core.calibrate import read_fits_table
from core.datasets import course_fits_path
from core.logs import read_log
from core.prediction import Prior, prior_for_run, prior_from_other_runs, prior_source
from core.prediction.prior import z_of
from core.prediction.run_prior import job_prior, same_job_runs
from core.runs import find_target_crossing
from core.targets import accuracy_target
from tests.core.prediction.prediction_logs import course_log, pollux_logs

Z80 = z_of(0.8)   # 1.2816


def job_run(model: str, batch: int, epoch: int):
    """A run of ``model`` at global ``batch`` (named ``<model>_x-<batch>.csv``): accuracy 0.50 until it jumps to
    0.95 at ``epoch``, 1,000 samples an epoch."""
    rows = "".join(f"{k},{k * 1000 // batch},{1 / k:.4f},0.{50 + 45 * (k >= epoch)}\n" for k in range(1, epoch + 3))
    return read_log(f"epoch,step,loss,acc\n{rows}".encode(), f"{model}_x-{batch}.csv")


def test_a_prior_from_an_interval_keeps_its_width_centred_on_the_median_in_log():
    p = Prior.from_interval(20.0, 10.0, 40.0, level=0.8)
    assert p.log_sd == pytest.approx(math.log(4) / (2 * Z80))             # 0.5409
    assert p.interval() == pytest.approx((10.0, 40.0))                     # already centred: sqrt(10·40) = 20
    q = Prior.from_interval(20.0, 10.0, 90.0, level=0.8)                   # width ln 9, centred on 20: ×/÷ 3
    assert q.interval() == pytest.approx((20 / 3, 60.0))
    assert q.interval(0.95)[1] == pytest.approx(20 * math.exp(1.959964 * math.log(9) / (2 * Z80)), rel=1e-6)
    assert q.available and q.informative


def test_no_prior_and_a_prior_without_spread_say_so():
    none = Prior.none("no other run")
    assert not none.available and not none.informative and none.flags == ("no other run",)
    assert all(math.isnan(v) for v in none.interval())
    open_ = Prior.from_interval(20.0, None, None)
    assert open_.available and not open_.informative and open_.interval() == (0.0, math.inf)
    with pytest.raises(Exception, match="prior epoch"):
        Prior.from_interval(0.0, 1.0, 2.0)


def test_same_job_runs_are_the_other_batches_of_the_same_model_and_split():
    log = job_run("resnet20", 100, 12)
    others = [log, job_run("resnet20", 200, 14), job_run("resnet32", 200, 14), job_run("resnet20", 400, 18)]
    assert [o.source for o in same_job_runs(log, others)] == ["resnet20_x-200.csv", "resnet20_x-400.csv"]
    no_batch = read_log(b"epoch,step,loss,acc\n1,1,1.0,0.5\n2,2,0.5,0.6\n", "resnet20.csv")
    assert same_job_runs(no_batch, others) == []                         # no batch known: no job to belong to


def test_the_prior_source_is_the_job_then_a_calibration_then_none():
    log = job_run("resnet20", 100, 12)
    job = [job_run("resnet20", 200, 14), job_run("resnet20", 400, 18)]
    assert prior_source(log, job, target=accuracy_target(0.9)) == "other runs"         # two other batches reached 0.9
    assert prior_source(log, job[:1], target=accuracy_target(0.9)) is None      # one is not enough, no other model
    archs = [job_run(m, 100, 12) for m in ("resnet32", "resnet44", "resnet56")]
    assert prior_source(log, job[:1] + archs, target=accuracy_target(0.9)) == "calibration"  # three other architectures
    assert prior_source(log, job[:1] + archs[:2], target=accuracy_target(0.9)) is None  # two architectures are too few


def test_the_job_prior_is_the_log_mean_of_two_other_batches():
    # the others passed 0.9 during epochs 14 and 18: continuous 13.5 and 17.5, median sqrt(13.5·17.5) = 15.37;
    # two runs are too few for the batch-scaling fit (it needs two besides the one left out)
    log = job_run("resnet20", 100, 12)
    job = [job_run("resnet20", 200, 14), job_run("resnet20", 400, 18)]
    assert [find_target_crossing(o, accuracy_target(0.9)).epoch for o in job] == [14, 18]
    p = job_prior(log, job, target=accuracy_target(0.9))
    assert p.source == "other runs" and p.n_runs == 2
    assert p.epoch == pytest.approx(math.sqrt(13.5 * 17.5))
    assert p == prior_for_run(log, job, target=accuracy_target(0.9))


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


def test_a_pollux_run_gets_its_prior_from_the_other_batch_sizes():
    logs = pollux_logs("imagenet")
    prior = prior_for_run(logs[0], logs, target=accuracy_target(0.75))
    assert prior.source == "other runs" and prior.n_runs == len(logs) - 1
    assert logs[0].meta.global_batch and f"batch {logs[0].meta.global_batch}" not in prior.description


def test_the_prior_never_reads_the_held_out_architecture():
    fits = read_fits_table(course_fits_path())
    log = course_log("resnet50_Tesla V100-PCIE-32GB.csv", steps_per_epoch=391)
    clean = prior_for_run(log, [], target=accuracy_target(0.92), fits=fits, datasets_by_file={log.source: "cifar10"})
    poisoned = fits.copy()
    m = poisoned["model"] == "resnet50"
    poisoned.loc[m, ["step_to_target", "epoch_to_target", "b0", "b1", "b2"]] = [1.0, 1.0, 0.5, 0.01, 3.0]
    dirty = prior_for_run(log, [], target=accuracy_target(0.92), fits=poisoned,
                          datasets_by_file={log.source: "cifar10"})
    assert clean.source == "calibration" and "outside the calibration set" in clean.flags[0]
    assert (clean.epoch, clean.log_sd) == (dirty.epoch, dirty.log_sd)


def test_an_mlperf_run_gets_the_batch_scaling_fit_of_the_other_systems_at_its_batch(mlperf_logs):
    from core.batch import fit_batch_scaling, measure_batch_runs

    log = next(lg for lg in mlperf_logs if lg.source.startswith("dgxh100_n64_") and lg.source.endswith("_0.txt"))
    others = [lg for lg in mlperf_logs if not lg.source.startswith("dgxh100_n64_")]
    prior = prior_for_run(log, others, target=accuracy_target(0.759))
    # by hand: the fit of the other systems' samples to target, at B = 20,480, in epochs of
    # 1,281,167 images, less half an epoch (the runs' samples count to the end of the passing epoch)
    model = fit_batch_scaling(measure_batch_runs(others, target=accuracy_target(0.759)), level=0.8)
    n = 1_281_167
    assert log.meta.global_batch == 20_480 and log.meta.samples_per_epoch == n
    assert prior.source == "batch scaling"
    assert prior.epoch == pytest.approx(model.samples(20_480) / n - 0.5, rel=1e-12)
    low, high = model.samples_interval(20_480)
    # the fit's 80 % band kept as the log-normal's width (centred on the median in log space)
    assert math.log(prior.high / prior.low) == pytest.approx(math.log((high / n - 0.5) / (low / n - 0.5)), rel=1e-9)
    # chosen over the log-mean by leave-one-run-out, and the description says both errors
    assert "leave-one-run-out median error over 24 runs: batch-scaling fit" in prior.description
    # the run passed 75.9 % between its evaluations at epochs 46 (75.5 %) and 50 (76.0 %); the fit's scatter is
    # floored at one evaluation (4 epochs, uniform: 3.1 % of the samples, above the residuals' 2.3 %), so the
    # prior's interval spans about that whole range
    assert find_target_crossing(log, accuracy_target(0.759)).epoch == 50
    assert 46 < prior.low < prior.epoch < 50 < prior.high < 51


def test_the_batch_scaling_prior_reads_only_the_runs_batch(mlperf_logs):
    log = mlperf_logs[0]
    others = mlperf_logs[2:]
    frame = log.frame.copy()
    frame["acc"] = 0.01                                  # the run's own curve poisoned: never reaches anything
    poisoned = dataclasses.replace(log, frame=frame)
    target = accuracy_target(0.759)
    assert prior_for_run(log, others, target=target) == prior_for_run(poisoned, others, target=target)



def test_the_calibration_pool_is_fitted_once_per_process_and_keeps_no_log(monkeypatch):
    """``fit_rows``: a second prior refits none of the pool (the rows are kept by content), the rows equal
    the fits table of fresh analyses, and the cache holds rows, not the logs (a removed upload is freed)."""
    import gc
    import weakref

    from pandas.testing import assert_frame_equal

    from core.prediction import run_prior
    from core.runs import analyse_run, fits_table

    log = job_run("resnet8", 64, 12)
    fresh = fits_table([analyse_run(log, target=accuracy_target(0.9))])
    calls = []
    real = run_prior.analyse_run
    monkeypatch.setattr(run_prior, "analyse_run", lambda *a, **k: calls.append(a[0].source) or real(*a, **k))
    first = run_prior.fit_rows([log], target=accuracy_target(0.9))
    second = run_prior.fit_rows([log], target=accuracy_target(0.9))
    assert calls == ["resnet8_x-64.csv"]                          # fitted once, then read from the cache
    assert_frame_equal(first, fresh)
    assert_frame_equal(second, fresh)
    run_prior.fit_rows([log], target=accuracy_target(0.8))                      # another target is another row
    assert calls == ["resnet8_x-64.csv", "resnet8_x-64.csv"]
    ref = weakref.ref(log)
    del log
    gc.collect()
    assert ref() is None                                           # nothing in the cache keeps the log alive
