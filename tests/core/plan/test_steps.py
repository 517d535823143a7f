"""Steps to target for a plan: typed, from the Calibrate prediction, from a logged run."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from core.curves import fit_curve, optimus_loss
from core.datasets import builtin_log_files
from core.errors import InputError
from core.logs.reader import read_log_file
from core.plan.grid import plan_grid
from core.plan.speed import paper_speed_model
from core.plan.steps import loss_threshold_from_runs, steps_from_prediction, steps_from_run, typed_steps
from core.runs.analysis import analyse_run, fits_table

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


def table(**rows) -> pd.DataFrame:
    """A fits table with file, split, step_to_target, epoch_to_target, loss_at_target, steps_per_epoch."""
    records = [dict(file=name, split=split, step_to_target=step, epoch_to_target=None,
                    loss_at_target=loss, steps_per_epoch=100, flags="")
               for name, (split, step, loss) in rows.items()]
    return pd.DataFrame(records)


# ---------------------------------------------------------------- typed in
def test_typed_steps_keeps_the_number_and_the_interval():
    e = typed_steps(50_000, low=40_000, high=65_000)
    assert (e.steps, e.interval, e.source) == (50_000.0, (40_000.0, 65_000.0), "typed")
    assert "50,000 steps" in e.note and e.level is None
    assert typed_steps(1234).interval is None


@pytest.mark.parametrize("kwargs, message", [
    (dict(steps=0), r"expected steps a finite number > 0; got 0"),
    (dict(steps=NAN), r"expected steps a finite number > 0"),
    (dict(steps=True), r"expected steps a finite number > 0; got True"),
    (dict(steps=100, low=50), r"expected both steps_low and steps_high, or neither"),
    (dict(steps=100, high=150), r"expected both steps_low and steps_high, or neither"),
    (dict(steps=100, low=120, high=150), r"expected steps_low <= steps <= steps_high; got 120 <= 100 <= 150"),
    (dict(steps=100, low=-1, high=150), r"expected steps_low a finite number > 0; got -1"),
])
def test_typed_steps_refuses_bad_values(kwargs, message):
    steps = kwargs.pop("steps")
    with pytest.raises(InputError, match=message):
        typed_steps(steps, **kwargs)


# ---------------------------------------------------------------- the Calibrate page's prediction
def test_prediction_with_interval_and_note():
    e = steps_from_prediction({"label": "ResNet-50 on Tesla V100", "steps": 60_000.0, "steps_low": 45_000,
                               "steps_high": 80_000.0, "note": "KernelRidge on 15 runs"})
    assert (e.source, e.label, e.steps, e.interval) == ("calibrate", "ResNet-50 on Tesla V100", 60_000.0,
                                                         (45_000.0, 80_000.0))
    assert e.note.endswith("KernelRidge on 15 runs") and "ResNet-50 on Tesla V100" in e.note


def test_prediction_without_interval():
    e = steps_from_prediction({"label": "x", "steps": 10, "steps_low": None, "steps_high": None, "note": ""})
    assert e.interval is None and e.steps == 10.0


@pytest.mark.parametrize("prediction, message", [
    ({"steps": 1.0}, r"calibrate_prediction: expected key 'label' \(str\); got keys steps"),
    ({"label": "x"}, r"expected key 'steps' \(int\)"),
    ({"label": "x", "steps": "many"}, r"expected 'steps' of type int or float; got 'many'"),
    ({"label": 3, "steps": 5.0}, r"expected 'label' of type str; got 3"),
    ({"label": "x", "steps": -5.0}, r"expected steps a finite number > 0; got -5.0"),
    ({"label": "x", "steps": 5.0, "steps_low": 6.0, "steps_high": 9.0}, r"expected steps_low <= steps"),
    ([("label", "x")], r"calibrate_prediction: expected a dict; got list"),
])
def test_prediction_contract_is_checked(prediction, message):
    with pytest.raises(InputError, match=message):
        steps_from_prediction(prediction)


# ---------------------------------------------------------------- loss threshold from the other runs
def test_threshold_leaves_the_chosen_run_out_and_prefers_its_split():
    t = table(a=("train", 900.0, 0.3), b=("train", 800.0, 0.5), c=("train", NAN, NAN), d=("val", 200.0, 0.9))
    th = loss_threshold_from_runs(t, exclude="a", split="train")
    assert (th.value, th.runs, th.split) == (0.5, ("b",), "train")
    # every split when asked for none: (0.3 + 0.5 + 0.9) / 3
    th = loss_threshold_from_runs(t, exclude="c")
    assert th.value == pytest.approx(1.7 / 3) and th.runs == ("a", "b", "d") and th.split is None
    # no other val run reached: fall back to every split, (0.3 + 0.5) / 2
    th = loss_threshold_from_runs(t, exclude="d", split="val")
    assert th.value == pytest.approx(0.4) and th.split is None
    assert "2 other run(s)" in th.note


def test_threshold_refuses_when_no_other_run_reached():
    t = table(a=("train", 900.0, 0.3), c=("train", NAN, NAN))
    with pytest.raises(InputError, match=r"^a: expected other loaded runs that reached the target"):
        loss_threshold_from_runs(t, exclude="a")


# ---------------------------------------------------------------- a logged run
def test_measured_step_when_the_run_reached_the_target(exact_fit):
    t = table(a=("train", 800.0, 0.55), b=("train", 900.0, 0.6))
    e = steps_from_run(t, exact_fit, run="a")
    assert (e.source, e.steps, e.interval) == ("measured", 800.0, None)
    assert "step 800" in e.note


def test_fitted_curve_at_the_mean_loss_of_the_other_runs(exact_fit):
    # others: (0.5 + 0.7) / 2 = 0.6 -> k* = (1/(0.6 - 0.1) - 1)/0.001 = 1000; own loss 0.2 is ignored
    t = table(a=("train", 5000.0, 0.2), b=("train", 900.0, 0.5), c=("train", 700.0, 0.7),
              v=("val", 100.0, 5.0))
    e = steps_from_run(t, exact_fit, run="a", method="fitted")
    assert e.source == "fitted" and e.steps == pytest.approx(1000, rel=1e-6)
    assert e.loss_threshold == pytest.approx(0.6) and e.threshold_runs == ("b", "c")
    assert "L = 0.6" in e.note


def test_auto_falls_back_to_the_fit_when_never_reached(exact_fit):
    t = table(a=("train", NAN, NAN), b=("train", 900.0, 0.6))
    assert steps_from_run(t, exact_fit, run="a").steps == pytest.approx(1000, rel=1e-6)


def test_typed_threshold_overrides_the_default(exact_fit):
    # L = 0.35: (1/0.25 - 1)/0.001 = 3000
    t = table(a=("train", NAN, NAN))
    e = steps_from_run(t, exact_fit, run="a", loss_threshold=0.35)
    assert e.steps == pytest.approx(3000, rel=1e-5) and e.threshold_runs == ()
    assert "typed in" in e.note


def test_fitted_interval_brackets_the_estimate(noisy_fit):
    t = table(a=("train", NAN, NAN), b=("train", 900.0, 0.6))
    e = steps_from_run(t, noisy_fit, run="a")
    assert e.level == 0.8
    low, high = e.interval
    assert 0 < low <= e.steps <= high < math.inf
    assert e.steps == pytest.approx(1000, rel=0.1)
    # the interval feeds plan_grid as it is
    grid = plan_grid(paper_speed_model("sync"), e.steps, workers=[4], steps_interval=e.interval)
    assert (grid["time_s_low"] <= grid["time_s"]).all() and (grid["time_s"] <= grid["time_s_high"]).all()


@pytest.mark.parametrize("kwargs, message", [
    (dict(run="zzz"), r"^zzz: expected a loaded run; got no such file"),
    (dict(run="a", method="guess"), r"expected method one of auto, fitted; got 'guess'"),
    (dict(run="a", loss_threshold=0.05), r"^a: expected the fitted curve to reach the loss threshold; "
                                         r"got unreachable: the fitted floor b2 = 0.1"),
    (dict(run="a", loss_threshold=5.0), r"expected the threshold L = 5 below the curve's start"),
])
def test_run_refusals(exact_fit, kwargs, message):
    t = table(a=("train", NAN, NAN), b=("train", 900.0, 0.6))
    with pytest.raises(InputError, match=message):
        steps_from_run(t, exact_fit, **kwargs)


def test_run_without_a_fit_that_never_reached_is_refused():
    t = table(a=("train", NAN, NAN), b=("train", 900.0, 0.6))
    t.loc[0, "flags"] = "accuracy-only trace: no loss curve to fit"
    with pytest.raises(InputError, match=r"^a: expected a fitted loss curve to invert; got none "
                                         r"\(accuracy-only trace"):
        steps_from_run(t, None, run="a")


def test_builtin_run_that_never_reached_uses_the_other_train_runs():
    """ResNet-8 (MNIST-1D) never reaches 92 %: its curve is inverted at the mean of the 5 other train runs."""
    analyses = [analyse_run(read_log_file(path), target_acc=0.92) for _, path in builtin_log_files("mnist1d")]
    t = fits_table(analyses)
    run = "resnet8_Intel Xeon Processor.csv"
    fit = next(a.fit for a in analyses if a.log.source == run)
    e = steps_from_run(t, fit, run=run)
    others = t[(t["split"] == "train") & t["loss_at_target"].notna() & (t["file"] != run)]
    assert len(others) == 5 and e.threshold_runs == tuple(others["file"])
    assert e.loss_threshold == pytest.approx(others["loss_at_target"].mean())
    b0, b1, b2 = fit.values
    assert e.steps == pytest.approx((1 / (e.loss_threshold - b2) - b1) / b0)
    low, high = e.interval   # widened when the clipped draws lie beside the estimate, and flagged then
    assert low <= e.steps <= high
    assert all("widened" in f for f in e.flags)


def test_to_dict_is_plain():
    d = typed_steps(10, low=5, high=20).to_dict()
    assert d["steps"] == 10.0 and d["threshold_runs"] == [] and d["flags"] == []


def test_steps_from_a_family_prediction_are_epochs_times_steps_per_epoch():
    from core.logs.reader import read_log_file
    from core.plan.steps import steps_from_target_prediction
    from core.prediction.predict import prediction_from_first_epochs
    from tests.conftest import ROOT

    log = read_log_file(ROOT / "data" / "logs" / "resnet20_Intel Xeon Processor.csv")
    p = prediction_from_first_epochs(log, 10, target_acc=0.92, family="auto")
    est = steps_from_target_prediction(p, steps_per_epoch=63, label="resnet20")
    # the epoch is reached at its last step: epoch × 63
    assert est.steps == p.epoch * 63 and est.source == "predicted"
    assert est.steps_low == p.epoch_low * 63 and est.steps_high == p.epoch_high * 63
    reached = prediction_from_first_epochs(log, 20, target_acc=0.92)
    with pytest.raises(InputError, match="resnet20: expected a predicted epoch at target; got reached"):
        steps_from_target_prediction(reached, steps_per_epoch=63, label="resnet20")
    with pytest.raises(InputError, match="steps per epoch"):
        steps_from_target_prediction(p, steps_per_epoch=None, label="resnet20")
