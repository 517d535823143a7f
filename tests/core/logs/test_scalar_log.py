"""``log_from_scalars`` builds the RunLog the CSV round trip built (issue 35: the MLflow import's client cost).

The reference is the path MLflow runs took before: ``wide_scalars`` → ``table_for_reader`` → the table
written as CSV text (``%.17g``) → ``read_log``.  Each run below goes both ways; the logs must be the
same (frame with its dtypes, format, roles, flags, metadata, columns, fingerprint), and a run refused
one way is refused the other way with the same message.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from core.errors import LogFormatError
from core.library.mlflow_source import log_of_scalars
from core.logs import log_from_scalars, parse_run_name, read_log, table_for_reader, wide_scalars
from core.logs.scalar_log import wide_of_scalars


def through_csv(scalars: pd.DataFrame, source: str, *, split=None, steps_per_epoch=None):
    """The old path: the table as CSV text, read back by read_log."""
    if scalars.empty:
        raise LogFormatError(source, "expected logged metrics (loss, accuracy, ...); the run has none.")
    table, found = table_for_reader(wide_scalars(scalars), source, None, split or parse_run_name(source).split)
    data = table.to_csv(index=False, float_format="%.17g", na_rep="").encode()
    return replace(read_log(data, source, roles=found, steps_per_epoch=steps_per_epoch, split=split), fmt="mlflow")


def rows(**metrics) -> pd.DataFrame:
    """``name=(steps, values)`` → a scalars frame, wall time 0.5 s a step from 1,700,000,000."""
    out = []
    for tag, (steps, values) in metrics.items():
        for s, v in zip(steps, values):
            out.append((tag, int(s), 1.7e9 + 0.5 * s, float(v)))
    return pd.DataFrame(out, columns=["tag", "step", "wall_time", "value"])


RNG = np.random.default_rng([2026, 35])
STEPS = np.arange(1, 301)
LOSS = 2.5 * STEPS ** -0.3 + 0.01 * RNG.standard_normal(300)
ACC = np.clip(1 - LOSS / 3, 0, 1)
with_nan = LOSS.copy()
with_nan[[5, 77, 200]] = np.nan

CASES = {
    "loss, acc and epoch at every step": (rows(loss=(STEPS, LOSS), acc=(STEPS, ACC), epoch=(STEPS, STEPS // 40 + 1)),
                                          "resnet20_Tesla V100-128-r1"),
    "metrics at different steps": (rows(loss=(STEPS, LOSS), val_acc=(STEPS[::25], ACC[::25]),
                                        lr=(STEPS[::10], 0.1 * 0.99 ** STEPS[::10])), "vit_tiny_A100"),
    "NaN values in the loss": (rows(loss=(STEPS, with_nan), acc=(STEPS, ACC)), "mlp_V100-64"),
    "one metric": (rows(train_loss=(STEPS, LOSS)), "gpt2_H100"),
    "accuracy only, in percent": (rows(accuracy=(STEPS, 100 * ACC)), "resnet56_V100"),
    "epochs as a metric, logged per epoch": (rows(loss=(STEPS, LOSS), epoch=(STEPS[::30], np.arange(10))),
                                             "resnet20_V100"),
    "steps from 0, a repeated step (the latest write wins)": (
        pd.concat([rows(loss=(STEPS - 1, LOSS)), rows(loss=([10], [9.0]))], ignore_index=True), "mlp_T4"),
    "extra metrics carried along": (rows(loss=(STEPS, LOSS), grad_norm=(STEPS, LOSS * 3), **{"sys/gpu util": (
        STEPS[::7], np.full(43, 80.0))}), "resnet20_V100_val"),
    "integral losses (a column of whole numbers)": (rows(loss=(STEPS[:20], np.arange(20, 0, -1))), "m_V100"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_frame_path_builds_the_log_the_csv_round_trip_built(case):
    scalars, source = CASES[case]
    old, new = through_csv(scalars, source), log_of_scalars(scalars, source)
    pd.testing.assert_frame_equal(new.frame, old.frame, check_exact=True)
    assert list(new.frame.dtypes) == list(old.frame.dtypes)
    assert (new.fmt, new.roles, new.meta, new.flags, new.columns) == (old.fmt, old.roles, old.meta, old.flags,
                                                                     old.columns)
    assert (new.steps_per_epoch, new.granularity, new.metrics) == (old.steps_per_epoch, old.granularity, old.metrics)
    assert new.fingerprint() == old.fingerprint()


def test_split_and_steps_per_epoch_are_honoured_alike():
    scalars = rows(loss=(STEPS, LOSS), val_loss=(STEPS[::50], LOSS[::50] + 0.1), epoch=(STEPS, STEPS // 50))
    for kwargs in ({"split": "val"}, {"steps_per_epoch": 50}, {"split": "train", "steps_per_epoch": 25}):
        old, new = through_csv(scalars, "resnet20_V100", **kwargs), log_of_scalars(scalars, "resnet20_V100", **kwargs)
        pd.testing.assert_frame_equal(new.frame, old.frame, check_exact=True)
        assert (new.flags, new.steps_per_epoch, new.fingerprint()) == (old.flags, old.steps_per_epoch,
                                                                      old.fingerprint())


def test_the_values_are_kept_exactly():
    scalars, source = CASES["loss, acc and epoch at every step"]
    log = log_of_scalars(scalars, source)
    assert log.frame["loss"].to_numpy().tolist() == LOSS.tolist()
    assert log.frame["global_step"].tolist() == STEPS.astype(float).tolist()
    assert log.frame["time_s"].iloc[-1] == 0.5 * 299


REFUSED = {
    "no metrics": rows(),
    "no loss or accuracy": rows(lr=(STEPS, 0.1 * np.ones(300)), grad_norm=(STEPS, LOSS)),
    "a negative loss": rows(loss=(STEPS, -LOSS)),
    "a loss that is NaN everywhere": rows(loss=(STEPS, np.full(300, np.nan)), lr=(STEPS, np.ones(300))),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_run_refused_one_way_is_refused_the_other_way_with_the_same_message(case):
    with pytest.raises(LogFormatError) as old:
        through_csv(REFUSED[case], "bad_run")
    with pytest.raises(LogFormatError) as new:
        log_of_scalars(REFUSED[case], "bad_run")
    assert str(new.value) == str(old.value)
    assert str(new.value).startswith("bad_run")


def test_the_format_is_the_callers():
    scalars, source = CASES["one metric"]
    assert log_from_scalars(scalars, source).fmt == "scalars"
    assert log_from_scalars(scalars, source, fmt="tfevents").fmt == "tfevents"


@pytest.mark.parametrize("case", list(CASES))
def test_the_numpy_wide_table_is_pandas_wide_table(case):
    scalars, _ = CASES[case]
    pd.testing.assert_frame_equal(wide_of_scalars(scalars), wide_scalars(scalars), check_exact=True)


def test_the_wide_table_of_unsorted_writes_renamed_tags_and_missing_times():
    scalars = pd.DataFrame({"tag": ["step", "loss", "loss", "time_s", "loss", "b"], "step": [3, 3, 1, 1, 3, 2],
                            "wall_time": [5.0, np.nan, 2.0, 1.5, 7.0, np.nan], "value": [3.0, 0.9, 2.0, 1.0, 0.8,
                                                                                       np.nan]})
    wide = wide_of_scalars(scalars)
    pd.testing.assert_frame_equal(wide, wide_scalars(scalars), check_exact=True)
    assert list(wide.columns) == ["step", "time_s", "b", "loss", "tag:step", "tag:time_s"]
    assert np.allclose(wide["loss"], [2.0, np.nan, 0.8], equal_nan=True)          # the latest write of step 3
    assert np.allclose(wide["time_s"], [0.5, np.nan, 5.5], equal_nan=True)
