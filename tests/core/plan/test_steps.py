"""Steps to target for a plan: typed, from the Calibrate prediction, from a logged run."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from core.curves import fit_curve, optimus_loss
from core.datasets import builtin_log_files
from core.errors import InputError
from core.logs import read_log, read_log_file
from core.plan.grid import plan_grid
from core.plan.run_steps import loss_threshold_from_runs, run_methods, steps_from_run
from core.plan.steps import steps_from_calibration, typed_steps
from core.runs import RunAnalysis, TargetCrossing, analyse_run
from core.speed.optimus import paper_speed_model
from core.targets import accuracy_target

NAN = float("nan")


@pytest.fixture(scope="module")
def exact_fit():
    """b0 = 0.001, b1 = 1, b2 = 0.1, noise-free: the loss is 0.6 at k = (1/0.5 - 1)/0.001 = 1000."""
    k = np.arange(1, 3001.0)
    return fit_curve(k, optimus_loss(k, 0.001, 1.0, 0.1))


@pytest.fixture(scope="module")
def noisy_fit():
    rng = np.random.default_rng(7)
    k = np.arange(1, 3001.0)
    return fit_curve(k, optimus_loss(k, 0.001, 1.0, 0.1) + rng.normal(0, 0.02, k.size))


# ---------------------------------------------------------------- typed in
def test_typed_steps_keeps_the_number_and_the_interval():
    e = typed_steps(50_000, low=40_000, high=65_000)
    assert (e.steps, e.interval, e.source) == (50_000.0, (40_000.0, 65_000.0), "typed")
    assert "50,000 steps" in e.note and e.level is None
    assert typed_steps(1234).interval is None


@pytest.mark.parametrize("kwargs, message", [
    (dict(steps=0), r"typed steps: steps: expected a finite number > 0; got 0"),
    (dict(steps=NAN), r"steps: expected a finite number > 0"),
    (dict(steps=True), r"steps: expected a finite number > 0; got True"),
    (dict(steps=100, low=50), r"expected both steps_low and steps_high, or neither"),
    (dict(steps=100, high=150), r"expected both steps_low and steps_high, or neither"),
    (dict(steps=100, low=120, high=150), r"expected steps_low <= steps <= steps_high; got 120 <= 100 <= 150"),
    (dict(steps=100, low=-1, high=150), r"steps_low: expected a finite number > 0; got -1"),
])
def test_typed_steps_refuses_bad_values(kwargs, message):
    steps = kwargs.pop("steps")
    with pytest.raises(InputError, match=message):
        typed_steps(steps, **kwargs)


# ---------------------------------------------------------------- a calibration
@pytest.fixture(scope="module")
def resnet50_calibration():
    from core.calibrate import calibrate, read_fits_table
    from core.datasets import course_fits_path

    return calibrate(read_fits_table(course_fits_path()), holdout="resnet50", method="course")


def test_calibration_steps_per_gpu_with_interval(resnet50_calibration):
    cal = resnet50_calibration
    row = cal.predictions.iloc[1]
    e = steps_from_calibration(cal, row["gpu"])
    assert (e.source, e.steps) == ("calibrate", float(row["step_pred"]))
    assert e.interval == (float(row["step_pred_low"]), float(row["step_pred_high"])) and e.level == cal.level
    assert e.label == f"resnet50 on {row['gpu']} (course)" and "from the other architectures" in e.note


def test_calibration_of_an_unknown_gpu_is_named(resnet50_calibration):
    with pytest.raises(InputError, match=r"resnet50 on K80: expected one of the calibrated GPUs"):
        steps_from_calibration(resnet50_calibration, "K80")


# ---------------------------------------------------------------- loss threshold from the other runs
def _run(name: str, step: float | None, loss: float | None, fit=None, *, flags=""):
    """A RunAnalysis of file ``name`` that passed the target at ``step`` with loss ``loss`` (None: never)."""
    log = read_log(b"epoch,step,loss,acc\n1,1,2.0,0.5\n1,2,1.9,0.5\n2,1,1.5,0.6\n2,2,1.4,0.6\n", name,
                   steps_per_epoch=100)
    if flags:
        log = replace(log, flags=(flags,))
    reached = step is not None
    crossing = TargetCrossing(accuracy_target(0.92), "epoch", reached, step=step,
                              epoch=int(step // 100) if reached else None, loss=loss)
    return RunAnalysis(log, fit, crossing)


def test_threshold_leaves_the_chosen_run_out_and_prefers_its_split():
    runs = [_run("a.csv", 900.0, 0.3), _run("b.csv", 800.0, 0.5), _run("c.csv", None, None),
            _run("d_val.csv", 200.0, 0.9)]
    th = loss_threshold_from_runs(runs, exclude="a.csv", split="train")
    assert (th.value, th.runs, th.split) == (0.5, ("b.csv",), "train")
    # every split when asked for none: (0.3 + 0.5 + 0.9) / 3
    th = loss_threshold_from_runs(runs, exclude="c.csv")
    assert th.value == pytest.approx(1.7 / 3) and th.runs == ("a.csv", "b.csv", "d_val.csv") and th.split is None
    # no other val run reached: fall back to every split, (0.3 + 0.5) / 2
    th = loss_threshold_from_runs(runs, exclude="d_val.csv", split="val")
    assert th.value == pytest.approx(0.4) and th.split is None
    assert "2 other run(s)" in th.note


def test_threshold_refuses_when_no_other_run_reached():
    runs = [_run("a.csv", 900.0, 0.3), _run("c.csv", None, None)]
    with pytest.raises(InputError, match=r"^a.csv: expected other loaded runs that reached the target"):
        loss_threshold_from_runs(runs, exclude="a.csv")


# ---------------------------------------------------------------- a logged run
def test_measured_step_when_the_run_reached_the_target(exact_fit):
    a, b = _run("a.csv", 800.0, 0.55, exact_fit), _run("b.csv", 900.0, 0.6)
    e = steps_from_run(a, [a, b])
    assert (e.source, e.steps, e.interval) == ("measured", 800.0, None)
    assert "step 800" in e.note


def test_fitted_curve_at_the_mean_loss_of_the_other_runs(exact_fit):
    # others: (0.5 + 0.7) / 2 = 0.6 -> k* = (1/(0.6 - 0.1) - 1)/0.001 = 1000; own loss 0.2 is ignored
    runs = [_run("a.csv", 5000.0, 0.2, exact_fit), _run("b.csv", 900.0, 0.5), _run("c.csv", 700.0, 0.7),
            _run("v_val.csv", 100.0, 5.0)]
    e = steps_from_run(runs[0], runs, method="fitted")
    assert e.source == "fitted" and e.steps == pytest.approx(1000, rel=1e-6)
    assert e.loss_threshold == pytest.approx(0.6) and e.threshold_runs == ("b.csv", "c.csv")
    assert "L = 0.6" in e.note


def test_auto_falls_back_to_the_fit_when_never_reached(exact_fit):
    a, b = _run("a.csv", None, None, exact_fit), _run("b.csv", 900.0, 0.6)
    assert steps_from_run(a, [a, b]).steps == pytest.approx(1000, rel=1e-6)


def test_typed_threshold_overrides_the_default(exact_fit):
    # L = 0.35: (1/0.25 - 1)/0.001 = 3000
    a = _run("a.csv", None, None, exact_fit)
    e = steps_from_run(a, [a], loss_threshold=0.35)
    assert e.steps == pytest.approx(3000, rel=1e-5) and e.threshold_runs == ()
    assert "typed in" in e.note


def test_fitted_interval_brackets_the_estimate(noisy_fit):
    a, b = _run("a.csv", None, None, noisy_fit), _run("b.csv", 900.0, 0.6)
    e = steps_from_run(a, [a, b])
    assert e.level == 0.8
    low, high = e.interval
    assert 0 < low <= e.steps <= high < math.inf
    assert e.steps == pytest.approx(1000, rel=0.1)
    # the interval feeds plan_grid as it is
    grid = plan_grid(paper_speed_model("sync"), e.steps, workers=[4], steps_interval=e.interval)
    assert (grid["time_s_low"] <= grid["time_s"]).all() and (grid["time_s"] <= grid["time_s_high"]).all()


@pytest.mark.parametrize("kwargs, message", [
    (dict(method="guess"), r"method: expected one of auto, fitted, family, posterior; got 'guess'"),
    (dict(loss_threshold=0.05), r"^a.csv: expected the fitted curve to reach the loss threshold; "
                                r"got unreachable: the fitted floor b2 = 0.1"),
    (dict(loss_threshold=5.0), r"expected the threshold L = 5 below the curve's start"),
])
def test_run_refusals(exact_fit, kwargs, message):
    a, b = _run("a.csv", None, None, exact_fit), _run("b.csv", 900.0, 0.6)
    with pytest.raises(InputError, match=message):
        steps_from_run(a, [a, b], **kwargs)


def test_run_without_a_fit_that_never_reached_is_refused():
    a = _run("a.csv", None, None, flags="accuracy-only trace: no loss curve to fit")
    with pytest.raises(InputError, match=r"^a.csv: expected a fitted loss curve to invert; got none "
                                         r"\(accuracy-only trace"):
        steps_from_run(a, [a, _run("b.csv", 900.0, 0.6)])


def test_builtin_run_that_never_reached_uses_the_other_train_runs():
    """ResNet-8 (MNIST-1D) never reaches 92 %: its curve is inverted at the mean of the 5 other train runs."""
    analyses = [analyse_run(read_log_file(path), target=accuracy_target(0.92))
                for _, path in builtin_log_files("mnist1d")]
    run = next(a for a in analyses if a.log.source == "resnet8_Intel Xeon Processor.csv")
    e = steps_from_run(run, analyses)
    others = [a for a in analyses if a.log.meta.split == "train" and a.crossing.reached and a is not run]
    assert len(others) == 5 and e.threshold_runs == tuple(a.log.source for a in others)
    assert e.loss_threshold == pytest.approx(np.mean([a.crossing.loss for a in others]))
    b0, b1, b2 = run.fit.values
    assert e.steps == pytest.approx((1 / (e.loss_threshold - b2) - b1) / b0)
    low, high = e.interval   # widened when the clipped draws lie beside the estimate, and flagged then
    assert low <= e.steps <= high
    assert all("widened" in f for f in e.flags)


def test_family_method_is_the_widened_forecast():
    """"family" steps are the forecast's epoch (widened as the other runs teach) × steps per epoch."""
    from core.prediction import forecast_epoch_at_target

    analyses = [analyse_run(read_log_file(path), target=accuracy_target(0.92))
                for _, path in builtin_log_files("mnist1d")]
    run = next(a for a in analyses if a.log.source == "resnet8_Intel Xeon Processor.csv")
    assert "family" in run_methods(run) and "family" not in run_methods(analyses[2])
    e = steps_from_run(run, analyses, method="family", family="auto")
    f = forecast_epoch_at_target(run.log, [a.log for a in analyses], target=accuracy_target(0.92), family="auto")
    assert e.source == "predicted" and e.steps == f.prediction.epoch * run.log.steps_per_epoch


def test_to_dict_is_plain():
    d = typed_steps(10, low=5, high=20).to_dict()
    assert d["steps"] == 10.0 and d["threshold_runs"] == [] and d["flags"] == []


def test_steps_from_a_family_prediction_are_epochs_times_steps_per_epoch():
    from core.logs.reader import read_log_file
    from core.plan.run_steps import steps_from_target_prediction
    from core.prediction.predict import prediction_from_first_epochs
    from tests.conftest import ROOT

    log = read_log_file(ROOT / "data" / "logs" / "resnet20_Intel Xeon Processor.csv")
    p = prediction_from_first_epochs(log, 10, target=accuracy_target(0.92), family="auto")
    est = steps_from_target_prediction(p, steps_per_epoch=63, label="resnet20")
    # the epoch is reached at its last step: epoch × 63
    assert est.steps == p.epoch * 63 and est.source == "predicted"
    assert est.steps_low == p.epoch_low * 63 and est.steps_high == p.epoch_high * 63
    reached = prediction_from_first_epochs(log, 20, target=accuracy_target(0.92))
    with pytest.raises(InputError, match="resnet20: expected a predicted epoch at target; got reached"):
        steps_from_target_prediction(reached, steps_per_epoch=63, label="resnet20")
    with pytest.raises(InputError, match="steps per epoch"):
        steps_from_target_prediction(p, steps_per_epoch=None, label="resnet20")


def test_posterior_method_is_offered_first_for_a_partial_run_with_a_prior_and_uses_the_forecast():
    """A run short of the target with five other architectures loaded: the posterior, × steps per epoch."""
    from core.datasets import builtin_log_files
    from core.logs import read_log_file
    from core.plan.run_steps import steps_from_posterior
    from core.prediction import forecast_epoch_at_target
    from core.runs import analyse_run

    analyses = [analyse_run(read_log_file(p), target=accuracy_target(0.92)) for _, p in builtin_log_files("mnist1d")]
    run = analyses[0]                                           # resnet8 never reaches 92 % in its log
    assert list(run_methods(run, analyses))[0] == "posterior"
    assert "posterior" not in run_methods(run)                  # no other run, no prior
    assert "posterior" not in run_methods(analyses[2], analyses)   # resnet14 reached the target
    e = steps_from_run(run, analyses, method="posterior")
    f = forecast_epoch_at_target(run.log, [a.log for a in analyses], target=accuracy_target(0.92), prior="auto",
                                 schedule="auto")
    spe = run.log.steps_per_epoch
    assert e.source == "posterior" and e.steps == f.posterior.epoch * spe
    assert e.interval == (f.posterior.epoch_low * spe, f.posterior.epoch_high * spe)
    assert steps_from_posterior(f, steps_per_epoch=spe, label="x").steps == e.steps


def test_the_extrapolating_methods_are_offered_and_taken_for_an_accuracy_target_only():
    """A run short of a loss target gets the fitted curve; "family" (an accuracy's extrapolation) is neither
    offered nor taken, and says why."""
    from core.targets import Target

    loss = Target("loss", "<=", 0.01)            # far below every MNIST-1D run's loss: none reached it
    analyses = [analyse_run(read_log_file(path), target=loss) for _, path in builtin_log_files("mnist1d")]
    run = next(a for a in analyses if a.log.source == "resnet8_Intel Xeon Processor.csv")
    assert not run.crossing.reached and run.log.has_acc
    assert list(run_methods(run, analyses)) == ["auto", "fitted"]
    with pytest.raises(InputError, match=r"the plan's 'family' method \(steps from a run\) works on an accuracy"):
        steps_from_run(run, analyses, method="family")
