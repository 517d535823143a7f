"""Issue 35 (refit at 100,000 runs): the target crossing read on the frame's arrays gives, field for field, what
the crossing read on pandas rows gave (the implementation before this change, copied here as the reference:
a row ``Series`` from ``rows.iloc``, the epoch's loss from ``frame.loc``), on every built-in log and on logs made
here with samples, tokens, gaps, an epoch still running and no epochs; and ``holds_value`` is ``notna().any()``."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from core.datasets import BUILTIN_LOG_SETS, builtin_log_files
from core.logs import read_log, read_log_file
from core.logs.runlog import holds_value
from core.runs.evaluations import compared_rows, metric_column, rows_holding
from core.runs.targets import TargetCrossing, find_target_crossing
from core.targets import Target, accuracy_target


def _mean_or_none(values: pd.Series) -> float | None:
    v = values.to_numpy(dtype=float)
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else None


def _reference(log, target, criterion: str) -> TargetCrossing:
    """The crossing as the pandas implementation found it (commit 8d701f8, core/runs/targets.py)."""
    column = metric_column(log, target.metric)
    if column is None:
        what = "no accuracy column" if target.metric.lower() in ("acc", "accuracy") else \
            f"no {target.metric!r} metric in the log"
        return TargetCrossing(target, criterion, False, note=what)
    frame = log.frame
    rows = rows_holding(frame, column)
    note = ""
    if criterion == "epoch" and log.granularity == "step" and len(rows) > 1 and rows["epoch"].isna().all():
        criterion, note = "first-row", "epochs unknown (set steps per epoch): first-row criterion used"

    def at(row: pd.Series, value, epoch=None, loss=None, note=""):
        def cell(name):
            return float(row[name]) if name in row.index and pd.notna(row[name]) else None
        samples = cell("samples")
        if samples is None and log.meta.global_batch and not log.counts_validation_batches:
            samples = float(row["global_step"]) * log.meta.global_batch
        tokens = cell("tokens")
        seq_len = getattr(log.meta, "seq_len", None)
        if tokens is None and samples is not None and seq_len:
            tokens = samples * seq_len
        ep = row["epoch"] if epoch is None else epoch
        if loss is None and pd.notna(row["loss"]):
            loss = float(row["loss"])
        return TargetCrossing(target, criterion, True, step=float(row["global_step"]),
                              epoch=None if pd.isna(ep) else int(ep), loss=loss,
                              acc=float(row["acc"]) if pd.notna(row["acc"]) else None, note=note,
                              value=float(value), samples=samples, tokens=tokens, time_s=cell("time_s"))

    positions, values = compared_rows(log, column, criterion)
    hit = target.first_met(values)
    if positions is not None:
        if hit is None:
            return TargetCrossing(target, criterion, False)
        last = rows.iloc[int(positions[hit])]
        epoch = int(last["epoch"])
        return at(last, values[hit], epoch=epoch, loss=_mean_or_none(frame.loc[frame["epoch"] == epoch, "loss"]))
    if hit is None:
        return TargetCrossing(target, criterion, False, note=note)
    return at(rows.iloc[hit], values[hit], note=note)


def _same(a: TargetCrossing, b: TargetCrossing) -> bool:
    da, db = a.to_dict(), b.to_dict()
    if da.keys() != db.keys():
        return False
    for key in da:
        x, y = da[key], db[key]
        if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
            continue
        if x != y or type(x) is not type(y):
            return False
    return True


def _builtin_logs() -> list:
    return [read_log_file(path, source=name) for kind in BUILTIN_LOG_SETS for name, path in builtin_log_files(kind)]


def _made_logs() -> list:
    """Per-step logs with samples and tokens, accuracy on some rows, an extra metric, no epochs, a running epoch."""
    rng = np.random.default_rng(35)
    lines = ["epoch,step,loss,acc,samples,tokens,time_s,eval_loss"]
    for e in range(1, 8):
        for s in range(1, 13):
            acc = "" if s % 4 == 0 else f"{min(0.99, 0.4 + 0.08 * e + 0.002 * s + 0.01 * rng.random()):.4f}"
            tokens = "" if e == 3 else f"{(e * 12 + s) * 4096}"
            ev = f"{3.0 / e:.4f}" if s == 12 else ""
            lines.append(f"{e},{(e - 1) * 12 + s},{2.0 / (e * 10 + s):.5f},{acc},{(e * 12 + s) * 32},{tokens},"
                         f"{e * 1.5 + s * 0.1:.2f},{ev}")
    dense = ("\n".join(lines) + "\n").encode()
    running = ("\n".join(lines[:-5]) + "\n").encode()          # the last epoch cut mid-way
    no_epochs = ("step,loss,acc\n" + "".join(f"{s},{2.0 / s:.4f},{min(0.99, s / 40):.3f}\n" for s in range(1, 41))
                 ).encode()
    logs = [read_log(dense, "resnet20_V100-512.csv"), read_log(running, "resnet20_V100.csv"),
            read_log(no_epochs, "plain.csv")]
    # the frame's own progress columns (the reader keeps a log's samples and tokens) and an evaluation metric
    frame = logs[1].frame
    step = frame["global_step"].to_numpy()
    with_columns = frame.assign(samples=step * 32.0, tokens=np.where(step % 5 == 0, np.nan, step * 4096.0),
                                eval_loss=np.where(step % 12 == 0, 3.0 / step * 12, np.nan))
    return logs + [replace(logs[1], frame=with_columns, source="columns.csv", metrics={"eval_loss": "eval_loss"})]


TARGETS = [*map(accuracy_target, (0.5, 0.9, 0.92, 0.999)), Target("loss", "<=", 0.05), Target("loss", "<=", 1e-6),
           Target("eval_loss", "<=", 0.6), Target("val_loss", "<=", 3.28), Target("eval_accuracy", ">=", 0.7)]


@pytest.mark.parametrize("criterion", ["epoch", "first-row"])
def test_the_crossing_on_arrays_is_the_crossing_on_rows(criterion):
    logs = _builtin_logs() + _made_logs()
    compared = reached = 0
    for log in logs:
        for target in TARGETS + ([log.target] if log.target is not None else []):
            got, want = find_target_crossing(log, target, criterion=criterion), _reference(log, target, criterion)
            assert _same(got, want), (log.source, target, got, want)
            compared += 1
            reached += got.reached
    assert len(logs) == 83 and compared > 700 and reached > 150           # the comparison covered crossings


def test_a_made_log_crosses_where_its_rows_say():
    dense = _made_logs()[0]
    # accuracy 0.4 + 0.08 e + 0.002 s + noise < 0.01 at each epoch's last accuracy row (s = 11): epoch 6 is
    # the first above 0.9 (0.902 + noise); its loss is that epoch's mean of 2 / (60 + s), s = 1..12
    c = find_target_crossing(dense, accuracy_target(0.9))
    # samples from the file name's global batch 512 (the reader leaves the file's own samples column aside)
    assert (c.reached, c.epoch, c.step, c.samples, c.tokens) == (True, 6, 71.0, 71 * 512.0, None)
    columns = find_target_crossing(_made_logs()[3], accuracy_target(0.9))
    assert (columns.reached, columns.step, columns.samples, columns.tokens) == (True, 71.0, 71 * 32.0, 71 * 4096.0)
    assert c.loss == pytest.approx(np.mean([round(2.0 / (60 + s), 5) for s in range(1, 13)]), rel=1e-12)


@pytest.mark.parametrize("values, want", [([np.nan, 1.0], True), ([np.nan, np.nan], False), ([], False),
                                          ([np.inf], True)])
def test_holds_value_is_notna_any_on_floats(values, want):
    series = pd.Series(values, dtype=float)
    assert holds_value(series) is want is bool(series.notna().any())


def test_holds_value_reads_other_dtypes_as_pandas_does():
    assert holds_value(pd.Series(pd.array([None, 3], dtype="Int64"))) is True
    assert holds_value(pd.Series([None, None], dtype=object)) is False
