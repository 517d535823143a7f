"""Which runs can be forecast from their first epochs (the Logs page's list comes from here)."""

from __future__ import annotations

from core.logs.reader import read_log
from core.prediction import MIN_PREDICTION_EPOCHS
from core.prediction.forecast import can_forecast
from tests.core.prediction.prediction_logs import course_log


def test_a_run_needs_an_inner_fit_and_one_epoch_to_check_it():
    assert MIN_PREDICTION_EPOCHS == 4                      # 3 epochs to fit, 1 to check
    assert not can_forecast(course_log(epochs=3))
    assert can_forecast(course_log(epochs=4))


def test_a_run_without_accuracy_cannot_be_forecast():
    rows = ["epoch, step, loss"] + [f"{e}, {s}, {1 / (e + s):.5f}" for e in range(1, 9) for s in range(1, 4)]
    log = read_log(("\n".join(rows) + "\n").encode(), "resnet20_V100.csv")
    assert not log.has_acc and not can_forecast(log)
