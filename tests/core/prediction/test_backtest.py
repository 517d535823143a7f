"""Backtests: row statuses, error and coverage, the no-peeking rule, calibration on other runs."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from core.errors import InputError
from core.logs.reader import read_log
from core.prediction.backtest import (
    backtest_logs,
    backtest_run,
    needed_inflation,
    observed_epochs,
    relative_target,
    run_key,
)
from core.prediction.backtest_table import BACKTEST_COLUMNS, EXTRA_COLUMNS
from core.prediction.intervals import Drift
from core.prediction.predict import prediction_from_first_epochs
from core.prediction.target_prediction import TargetPrediction
from core.targets import accuracy_target
from tests.core.prediction.prediction_logs import ACTUAL_EPOCH, actual_epoch, course_csv, course_log

#: every column a prediction is made of (what must not move when the unseen part changes)
PREDICTION_COLUMNS = ["family", "epoch_pred", "epoch_low", "epoch_high", "epoch_raw", "inflation",
                      "family_via_loss", "epoch_pred_via_loss", "epoch_low_via_loss",
                      "epoch_high_via_loss", "loss_threshold", "inflation_via_loss"]


def test_observed_epochs_is_the_floor_of_the_fraction():
    assert [observed_epochs(24, f) for f in (0.3, 0.5, 0.7)] == [7, 12, 16]  # 7.2, 12, 16.8
    assert observed_epochs(90, 0.5) == 45 and observed_epochs(3, 0.1) == 1


def test_rows_have_the_contract_columns_then_the_extras():
    table = backtest_run(course_log(), fractions=[0.5], family="exp3")
    assert list(table.columns) == list(BACKTEST_COLUMNS + EXTRA_COLUMNS)
    assert len(table) == 1 and table["file"].iloc[0] == "resnet20_Tesla V100.csv"


def test_statuses_scored_observed_and_never():
    # the target is passed in epoch 13 of 24: observing 30 % (7) and 50 % (12) leaves it unseen,
    # observing 70 % (16) has already seen it
    table = backtest_run(course_log(), fractions=[0.3, 0.5, 0.7], family="exp3")
    assert table["status"].tolist() == ["scored", "scored", "observed"]
    assert table["epoch_actual"].tolist() == [ACTUAL_EPOCH] * 3
    observed = table.iloc[2]
    assert pd.isna(observed["epoch_pred"]) and pd.isna(observed["error_pct"]) and pd.isna(observed["covered"])
    # a target of 0.99 is never passed (error floor 0.02): reported apart, with beyond_log
    never = backtest_run(course_log(), fractions=[0.5], family="exp3", target=accuracy_target(0.99)).iloc[0]
    assert never["status"] == "never" and pd.isna(never["epoch_actual"]) and pd.isna(never["error_pct"])
    assert bool(never["beyond_log"]) is True  # the fit says "never" too


def test_error_and_coverage_of_an_exact_curve():
    row = backtest_run(course_log(), fractions=[0.5], family="exp3").iloc[0]
    # predicted 13 (e* = 12.95), actual 13: no error, covered
    assert row["epoch_pred"] == 13 and row["error_pct"] == 0.0 and bool(row["covered"])


def test_error_pct_is_signed_and_relative_to_the_actual_epoch():
    slow = course_log(scale=1.5)  # actual epoch for the slower run: floor(1.5·12.95) + 1 = 20
    row = backtest_run(slow, fractions=[0.5], family="optimus").iloc[0]
    assert row["epoch_actual"] == actual_epoch(1.5) == 20
    assert row["error_pct"] == pytest.approx(100 * (row["epoch_pred"] - 20) / 20)
    assert bool(row["covered"]) == (row["epoch_low"] <= 20 <= row["epoch_high"])


def test_unseen_part_does_not_change_the_prediction():
    # poison every epoch after the observed 12 with absurd values (loss 50, accuracy 0.999):
    # the target is then "reached" at epoch 13 by the poison, but the prediction, its interval,
    # the family chosen and the loss threshold must stay exactly what the clean log gave
    clean = read_log(course_csv(noise=0.01, seed=5), "run.csv")
    poisoned = read_log(course_csv(noise=0.01, seed=5, poison_after=12), "run.csv")
    a = backtest_run(clean, fractions=[0.5], family="auto")
    b = backtest_run(poisoned, fractions=[0.5], family="auto")
    pd.testing.assert_frame_equal(a[PREDICTION_COLUMNS], b[PREDICTION_COLUMNS])
    assert a["epoch_pred"].notna().all()


def test_unseen_part_of_one_run_does_not_change_its_own_calibrated_prediction():
    # with calibration on other runs, run 0's interval width comes from runs 1..3 only, and the
    # loss threshold of the "runs" option from their losses: poisoning run 0's future moves nothing
    def group(poison):
        logs = [read_log(course_csv(scale=s, noise=0.01, seed=i, poison_after=12 if (poison and i == 0) else None),
                         f"resnet{8 + 6 * i}_Tesla V100.csv") for i, s in enumerate((1.0, 1.2, 0.9, 1.4))]
        return backtest_logs(logs, fractions=[0.5], family="exp3", calibration="runs", loss_threshold="runs")
    a, b = group(False), group(True)
    pd.testing.assert_frame_equal(a.loc[[0], PREDICTION_COLUMNS], b.loc[[0], PREDICTION_COLUMNS])


def test_needed_inflation_is_the_smallest_factor_that_covers():
    p = TargetPrediction("r.csv", "accuracy", "exp3", 0.9, 10, "predicted", epoch_raw=20.0,
                         drift=Drift(math.log(0.5), math.log(0.4), math.log(0.8), 9))
    # at 1: [14, 18]; the actual 15 is inside already; 0.5 shrinks to the floor spread 0.2:
    # 10 + 10·0.5·e^(±0.1) = [14.5, 15.5] → [15, 16], still covering 15
    assert needed_inflation(p, 15) == 0.5
    # 22 needs ceil(10 + 10·g_hi) >= 22, g_hi > 1.1: s > (ln 1.1 − ln 0.5)/(ln 0.8 − ln 0.5) = 1.68,
    # and the next factor of the grid 0.5·2^(i/6) is 0.5·2^(11/6) = 1.78
    assert needed_inflation(p, 22) == pytest.approx(1.7818, abs=1e-4)
    assert math.isnan(needed_inflation(TargetPrediction("r.csv", "accuracy", "exp3", 0.9, 10, "reached"), 15))


def test_relative_target_reads_the_final_accuracy_only_to_define_the_target():
    log = course_log()
    target, how = relative_target(log, 0.95)
    final = 1 - (0.8 * math.exp(-24 / 5) + 0.02)
    assert target.metric == "acc" and target.climbs and target.value == pytest.approx(0.95 * final, rel=1e-5)
    assert how.startswith("0.95 × final accuracy")
    table = backtest_run(log, fractions=[0.3], target_rel=0.95, family="exp3")
    assert table["target_definition"].iloc[0] == how


def test_run_key_pairs_train_and_val_logs_of_one_model():
    train = read_log(course_csv(), "logs/resnet20_Tesla V100.csv")
    val = read_log(course_csv(), "logs/resnet20_Tesla V100_val.csv")
    other = read_log(course_csv(), "logs/resnet32_Tesla V100.csv")
    assert run_key(train) == run_key(val) != run_key(other)


def test_bad_fractions_and_options_are_refused():
    with pytest.raises(InputError, match=r"fractions: expected observed fractions in \(0, 1\); got \[0.5, 1.5\]"):
        backtest_run(course_log(), fractions=[0.5, 1.5])
    with pytest.raises(InputError, match="calibration: expected one of runs, self; got 'peek'"):
        backtest_logs([course_log()], calibration="peek")


def test_prediction_from_first_epochs_equals_the_backtest_row():
    log = course_log(noise=0.01, seed=2)
    row = backtest_run(log, fractions=[0.5], family="weibull").iloc[0]
    p = prediction_from_first_epochs(log, 12, family="weibull")
    assert (p.epoch, p.epoch_low, p.epoch_high) == (row["epoch_pred"], row["epoch_low"], row["epoch_high"])


def test_logs_without_epochs_or_accuracy_get_a_status_not_an_error():
    acc_steps = read_log(b"Wall time,Step,Value\n" + b"".join(f"{i}.0,{i},{0.5 + i / 100:.3f}\n".encode()
                                                            for i in range(1, 40)), "run-tag-train_acc.csv")
    loss_only = read_log(b"Wall time,Step,Value\n" + b"".join(f"{i}.0,{i},{1 / i:.4f}\n".encode()
                                                             for i in range(1, 40)), "run-tag-train_loss.csv")
    table = backtest_logs([acc_steps, loss_only], fractions=[0.5], family="exp3")
    assert table["status"].tolist() == ["no epochs", "no accuracy"]
    assert table["epoch_pred"].isna().all()


def test_inflation_from_other_runs_never_uses_the_run_itself():
    import glob

    from core.logs.reader import read_log_file
    from core.prediction.backtest import inflation_from_other_runs
    from tests.conftest import ROOT

    logs = [read_log_file(p) for p in sorted(glob.glob(str(ROOT / "data" / "logs" / "*.csv")))]
    log = next(lg for lg in logs if lg.source.startswith("resnet20_") and lg.meta.split == "train")
    s, n = inflation_from_other_runs(logs, log, n_epochs_seen=12)
    # the same with the run (and its val log) poisoned away entirely: nothing of it is used
    others = [lg for lg in logs if not lg.source.startswith("resnet20_")]
    assert inflation_from_other_runs(others + [log], log, n_epochs_seen=12) == (s, n)
    assert n >= 3 and s >= 0.5


def test_extrapolate_unreached_only_takes_runs_short_of_the_target():
    import glob

    from core.logs.reader import read_log_file
    from core.prediction.tables import extrapolate_unreached
    from tests.conftest import ROOT

    logs = [read_log_file(p) for p in sorted(glob.glob(str(ROOT / "data" / "logs" / "*.csv")))]
    frame = extrapolate_unreached(logs, model="resnet8", split="train", target=accuracy_target(0.92))
    assert frame["source"].tolist() == ["resnet8_Intel Xeon Processor.csv"]
    row = frame.iloc[0]
    assert row["epoch"] > 24 and row["low"] <= row["epoch"] <= row["high"]  # beyond the 24 logged epochs
    assert extrapolate_unreached(logs, model="resnet20", split="train").empty  # reached at epoch 15
