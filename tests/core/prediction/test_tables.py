"""Tables from backtests: the per-fraction summary, family scores, the convergence of a prediction."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.curves import auto_families
from core.logs.reader import read_log_file
from core.prediction.backtest import backtest_logs
from core.prediction.tables import backtest_summary, convergence_of_prediction, family_scores, summary_line
from tests.core.prediction.prediction_logs import ACTUAL_EPOCH, course_log

ROOT = Path(__file__).resolve().parents[3]


def test_summary_counts_and_coverage_hand_example():
    table = pd.DataFrame({
        "observed_fraction": [0.3, 0.3, 0.3, 0.5, 0.5, 0.5],
        "status": ["scored", "scored", "scored", "scored", "observed", "never"],
        "error_pct": [10.0, -20.0, 40.0, 5.0, None, None],
        "covered": [True, True, False, True, None, None],
        "beyond_log": [None, None, None, None, None, False],
        "error_pct_via_loss": [None, 8.0, -2.0, None, None, None],
        "covered_via_loss": [None, False, True, None, None, None],
    })
    s = backtest_summary(table).set_index("observed_fraction")
    # f = 0.3: |10|, |−20|, |40| → median 20; 2 of 3 covered; loss route: 2 predicted, median 5, 1/2
    assert s.loc[0.3, "median_abs_error_pct"] == 20.0 and s.loc[0.3, "coverage"] == pytest.approx(2 / 3)
    assert s.loc[0.3, "n_predicted_via_loss"] == 2 and s.loc[0.3, "median_abs_error_pct_via_loss"] == 5.0
    assert s.loc[0.3, "coverage_via_loss"] == 0.5
    # f = 0.5: one scored row, the observed and never rows are counted but not scored
    assert (s.loc[0.5, "n_scored"], s.loc[0.5, "n_observed"], s.loc[0.5, "n_never"]) == (1, 1, 1)
    assert s.loc[0.5, "coverage"] == 1.0 and s.loc[0.5, "never_beyond_log"] == 0
    line = summary_line(backtest_summary(table), family="auto")
    assert line.startswith("summary [family auto]: f=0.3: median |error| 20.0 %, 80% coverage 67 %")


def test_convergence_of_prediction_one_row_per_epochs_seen():
    frame = convergence_of_prediction(course_log(epochs=16), family="exp3", min_epochs=3)
    assert frame["epochs_seen"].tolist() == list(range(3, 16))
    assert (frame["epoch_actual"] == ACTUAL_EPOCH).all()
    predicted = frame[frame["status"] == "predicted"]
    assert (predicted["epoch_pred"] > predicted["epochs_seen"]).all()
    assert (frame.loc[frame["epochs_seen"] >= 13, "status"] == "reached").all()
    # from 6 epochs on, the exact family predicts the right epoch
    assert (frame.loc[frame["epochs_seen"].between(6, 12), "epoch_pred"] == ACTUAL_EPOCH).all()


def test_family_scores_one_row_per_family_and_auto():
    scores = family_scores([course_log(), course_log("resnet32_Tesla V100.csv", scale=1.3)], fractions=[0.5])
    assert scores["family"].tolist() == [*auto_families(), "auto"]
    assert list(scores.columns) == ["family", "route", "n_scored", "median_abs_error_pct", "coverage"]
    assert scores.set_index("family").loc["exp3", "median_abs_error_pct"] == 0.0


@pytest.mark.slow
def test_builtin_logs_at_half_the_epochs_meet_the_documented_numbers():
    """The headline measurement of docs/prediction.md (built-in logs, auto, 50 %)."""
    logs = [read_log_file(p) for p in sorted((ROOT / "data" / "logs").glob("*.csv"))]
    table = backtest_logs(logs, fractions=[0.5], family="auto")
    s = backtest_summary(table).iloc[0]
    assert s["n_scored"] == 7 and s["n_observed"] == 3 and s["n_never"] == 2
    assert s["median_abs_error_pct"] <= 10.0 and 0.75 <= s["coverage"] <= 0.9
    assert np.isfinite(s["median_abs_error_pct_via_loss"])

