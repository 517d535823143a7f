"""Predicting the epoch at target from the first epochs: both routes, statuses, the no-peeking cut."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.curves import auto_families
from core.errors import InputError
from core.logs.reader import read_log
from core.prediction.intervals import Drift
from core.prediction.log_series import accuracy_series, first_epochs, loss_threshold_from_observed, n_epochs
from core.prediction.predict import predict_epoch_at_target, prediction_from_first_epochs, widen
from core.prediction.target_prediction import TargetPrediction, prediction_curves
from core.targets import Target, accuracy_target
from tests.core.prediction.prediction_logs import ACTUAL_EPOCH, TARGET, course_log


def test_first_epochs_cuts_the_log_and_leaves_the_original_alone():
    log = course_log(epochs=24, steps_per_epoch=10)
    cut = first_epochs(log, 7)
    assert n_epochs(cut) == 7 and len(cut.frame) == 70
    assert n_epochs(log) == 24 and len(log.frame) == 240


def test_accuracy_series_is_the_error_of_each_epoch():
    series = accuracy_series(course_log(epochs=3))
    # error 0.8·exp(−e/5) + 0.02 at e = 1, 2, 3
    np.testing.assert_allclose(series.y, 0.8 * np.exp(-np.arange(1, 4) / 5) + 0.02, atol=1e-6)
    np.testing.assert_array_equal(series.x, [1.0, 2.0, 3.0])


def test_accuracy_route_recovers_the_hand_computed_epoch_from_an_exact_curve():
    # the run's error is exactly the exp3 family: 0.08 is reached at e* = 5·ln(0.8/0.06) = 12.95
    p = prediction_from_first_epochs(course_log(), 7, target=accuracy_target(TARGET), family="exp3")
    assert p.status == "predicted" and p.epoch_raw == pytest.approx(12.9515, abs=1e-3)
    assert p.epoch == ACTUAL_EPOCH == 13
    # an exact family leaves nothing to correct: every horizon ratio is 1, and the interval is
    # the floor spread e^(±0.2) on the 5.95 remaining epochs: 7 + 5.95·(0.819, 1.221) = (11.9, 14.3)
    assert p.drift.median == pytest.approx(0.0, abs=1e-4)
    assert (p.epoch_low, p.epoch_high) == (12.0, 15.0)


def test_loss_route_inverts_the_loss_fit_at_a_threshold_from_the_observed_epochs():
    log = course_log()
    p = prediction_from_first_epochs(log, 10, target=accuracy_target(TARGET), family="optimus", route="loss")
    assert p.route == "loss" and p.status == "predicted"
    threshold = loss_threshold_from_observed(first_epochs(log, 10), accuracy_target(TARGET))
    assert p.loss_threshold == pytest.approx(threshold)
    # the loss 1/(0.002k + 0.5) + 0.05 is exactly Optimus: its fit is exact, so the predicted
    # epoch is where the epoch-mean loss falls to L; L from the observed epochs is close to
    # the loss of epoch 13, so the prediction is within one epoch of it
    assert abs(p.epoch - ACTUAL_EPOCH) <= 1


def test_given_loss_threshold_is_used_as_it_is():
    p = prediction_from_first_epochs(course_log(), 10, family="optimus", route="loss", loss_threshold=0.5)
    # 1/(0.002k + 0.5) + 0.05 = 0.5  ⇒  k = (1/0.45 − 0.5)/0.002 = 861.1; epoch = ceil(86.11 + 0.5) = 87
    assert p.loss_threshold == 0.5 and p.epoch_raw == pytest.approx(86.61, abs=0.01)


def test_reached_in_the_observed_epochs_is_not_predicted():
    p = prediction_from_first_epochs(course_log(), 15, target=accuracy_target(TARGET), family="exp3")
    assert p.status == "reached" and p.epoch is None


def test_a_curve_that_levels_off_below_the_target_is_unreachable():
    # the error floor is 0.02: a target of 0.99 (error 0.01) is never reached
    p = prediction_from_first_epochs(course_log(), 12, target=accuracy_target(0.99), family="exp3")
    assert p.status == "unreachable" and p.epoch is None
    assert (p.epoch_low, p.epoch_high) == (13.0, math.inf)
    assert "never reaches 0.01" in p.reason


def test_trace_without_loss_has_no_loss_route():
    trace = read_log(b"progress,iteration,metric\n" + b"".join(
        f"{i * 100.0},{i * 100},{1 - 0.8 * math.exp(-i / 5):.5f}\n".encode() for i in range(1, 21)),
        "cifar10/validation-128.csv")
    p = prediction_from_first_epochs(trace, 10, target=accuracy_target(0.9), family="exp3", route="loss")
    assert p.status == "not fitted" and "no loss column" in p.reason
    assert prediction_from_first_epochs(trace, 10, target=accuracy_target(0.9), family="exp3").status == "predicted"


def test_auto_scores_every_family_and_takes_the_best():
    p = prediction_from_first_epochs(course_log(), 10, family="auto")
    assert set(p.scores) == set(auto_families())
    assert p.family == min(p.scores, key=p.scores.get)
    assert p.scores["exp3"] < 1e-3  # the exact family extrapolates within the observed epochs


def test_too_few_checks_give_no_correction_and_every_later_epoch():
    # 4 epochs: inner fits on 3 epochs (one split) leave only 1 check
    p = prediction_from_first_epochs(course_log(), 4, family="exp3")
    assert p.drift.n_checks < 4 and (p.epoch_low, p.epoch_high) == (5.0, math.inf)
    assert "no correction" in p.reason


def test_uncorrected_prediction_is_the_family_extrapolation_and_lies_in_its_interval():
    p = prediction_from_first_epochs(course_log(noise=0.01, seed=3), 10, family="optimus", correct=False)
    assert p.epoch == max(math.ceil(p.epoch_raw), 11)
    assert p.epoch_low <= p.epoch <= p.epoch_high


def test_widen_hand_example():
    p = TargetPrediction("r.csv", "accuracy", "exp3", 0.9, 10, "predicted", epoch_raw=20.0,
                         drift=Drift(math.log(0.5), math.log(0.4), math.log(0.8), 9))
    # centre 10 + 10·0.5 = 15; ends 10 + 10·0.4 = 14 and 10 + 10·0.8 = 18
    q = widen(p, 1.0)
    assert (q.epoch, q.epoch_low, q.epoch_high) == (15.0, 14.0, 18.0)
    # doubled: ln g ends at ln 0.5 ∓ 2·(0.223, 0.470) → 0.32, 1.28 → 13.2 and 22.8
    q = widen(p, 2.0)
    assert (q.epoch, q.epoch_low, q.epoch_high) == (15.0, 14.0, 23.0)


def test_prediction_curves_cross_the_target_near_the_predicted_epoch():
    p = prediction_from_first_epochs(course_log(), 8, family="exp3")
    curves = prediction_curves(p, np.linspace(1, 30, 2901))
    first_above = curves.loc[curves["predicted"] > TARGET, "epoch"].iloc[0]
    assert first_above == pytest.approx(p.epoch_raw, abs=0.02)  # nothing to correct here
    band = curves[curves["epoch"] > 8]
    assert (band["low"] <= band["high"] + 1e-12).all()
    assert (curves.loc[curves["epoch"] <= 8, "predicted"] == curves.loc[curves["epoch"] <= 8, "fitted"]).all()


@pytest.mark.parametrize("kwargs,message", [
    (dict(family="pow5"), "family: expected one of auto, optimus"),
    (dict(route="steps"), "route: expected one of accuracy, loss; got 'steps'"),
    (dict(target=Target("loss", "<=", 2.0)), "the epoch prediction from the first epochs works on an accuracy"),
    (dict(inflation=0), "inflation: expected a finite number > 0; got 0"),
])
def test_bad_arguments_are_refused_with_the_value(kwargs, message):
    with pytest.raises(InputError, match=message):
        predict_epoch_at_target(course_log(epochs=6), **kwargs)


def test_n_epochs_seen_must_be_a_positive_int():
    with pytest.raises(InputError, match="n_epochs_seen: expected an int >= 1; got 0"):
        prediction_from_first_epochs(course_log(), 0)


def test_showcase_log_prefers_a_target_in_the_second_half():
    import glob

    from core.logs.reader import read_log_file
    from core.prediction.log_series import showcase_log
    from tests.conftest import ROOT

    logs = [read_log_file(p) for p in sorted(glob.glob(str(ROOT / "data" / "logs" / "*.csv")))]
    chosen = showcase_log(logs, accuracy_target(0.92))
    from core.runs.targets import find_target_crossing
    c = find_target_crossing(chosen, accuracy_target(0.92))
    assert c.reached and c.epoch > 12  # 24 epochs: the crossing is in the second half
    assert showcase_log([]) is None
