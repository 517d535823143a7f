"""Which values of a run's metric are compared with a target: the column holding a metric, each epoch's
end in a per-step log, and the evaluations a metric logged on some rows only stands for.
(:mod:`core.runs.targets` finds crossings on them; :mod:`core.prediction` extrapolates them.)
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from core.logs import RunLog

__all__ = ["compared_at", "compared_rows", "epoch_ends", "held_positions", "is_evaluation_metric", "metric_column",
           "rows_holding"]


def rows_holding(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """The rows of ``frame`` where ``column`` holds a value: ``frame`` itself when every row does (a dense log:
    no copy of the whole table), else the selection. Read it, never write to it.

    >>> frame = pd.DataFrame({"loss": [1.0, 0.5], "acc": [None, 0.7]})
    >>> rows_holding(frame, "loss") is frame, rows_holding(frame, "acc").index.tolist()
    (True, [1])
    """
    held = frame[column].notna().to_numpy()
    return frame if held.all() else frame[held]


def epoch_ends(rows: pd.DataFrame) -> np.ndarray:
    """Positions (in ``rows``) of the last row of each epoch, ordered by epoch (rows without an epoch skipped)."""
    return _epoch_ends(rows["epoch"].to_numpy(dtype=float, na_value=np.nan))


def _epoch_ends(epoch: np.ndarray) -> np.ndarray:
    """:func:`epoch_ends` on the rows' epochs as floats (NaN: unknown)."""
    known = np.flatnonzero(~np.isnan(epoch))
    steps = np.diff(epoch[known])
    if known.size and (steps >= 0).all():      # epochs in order (a log, nearly always): each one's last row, no sort
        return known[np.flatnonzero(np.append(steps > 0, True))]
    backwards = epoch[known][::-1]
    _, first_from_end = np.unique(backwards, return_index=True)   # unique epochs ascending
    return known[len(known) - 1 - first_from_end]


def held_positions(frame: pd.DataFrame, column: str) -> np.ndarray:
    """Positions of the rows of ``frame`` where ``column`` holds a value (the rows :func:`rows_holding` keeps),
    read from the column's array (a float column: not NaN) without a frame made.

    >>> held_positions(pd.DataFrame({"acc": [None, 0.7, float("nan"), 0.8]}), "acc").tolist()
    [1, 3]
    """
    series = frame[column]
    values = series.to_numpy()
    held = ~np.isnan(values) if values.dtype.kind == "f" else series.notna().to_numpy()
    return np.flatnonzero(held)


def metric_column(log: RunLog, metric: str) -> str | None:
    """The frame column holding ``metric`` in ``log`` (None when the log does not have it).

    ``acc``/``accuracy`` name the accuracy role and ``loss`` the loss role; any other name is looked
    up in the log's own metric names (``RunLog.metrics``, e.g. MLLOG's ``eval_accuracy``) and then
    among the frame's columns.

    >>> from core.logs import read_log
    >>> log = read_log(b"step,loss,acc\\n1,2.0,0.5\\n2,1.0,0.7\\n", "a.csv")
    >>> metric_column(log, "accuracy"), metric_column(log, "loss"), metric_column(log, "bleu")
    ('acc', 'loss', None)
    """
    low = metric.strip().lower()
    if low in ("acc", "accuracy"):
        return "acc" if log.has_acc else None
    named = getattr(log, "metrics", None) or {}
    if metric in named and named[metric] in log.frame.columns:
        return named[metric]
    if low == "loss":
        return "loss" if log.has_loss else None
    if metric in log.frame.columns and metric not in ("global_step", "epoch", "time_s", "lr", "samples", "tokens"):
        return metric
    return None


#: a source column named as an evaluation (``eval_accuracy``, ``val_acc``, ``validation/loss``, ``test_loss``)
_EVALUATION_NAME = re.compile(r"^(eval|val|valid|validation|test)[_/.\-]", re.IGNORECASE)


#: what a course ``_val`` log calls its per-batch running metrics (``eval_*``, ``test_*`` are evaluations)
_COURSE_VAL_NAMES = frozenset({"loss", "acc", "accuracy", "val_loss", "val_acc", "val_accuracy"})


def is_evaluation_metric(log: RunLog, column: str) -> bool:
    """Whether each row of ``column`` is an evaluation of its own, never averaged with the others of its
    epoch: a column named as an evaluation (``eval_loss``, ``val_acc``, ``test_loss``; for the loss and
    accuracy roles, their source column: a Trainer's ``eval_accuracy`` in ``acc``), however many rows it
    fills, or another metric logged on some rows only. The loss and accuracy roles are otherwise the log's
    running metrics (a course log's per-batch running accuracy, named ``acc`` or, in a ``_val`` log, ``val_acc``;
    an ``eval_``/``test_`` column of a ``_val`` file is still an evaluation).

    >>> from core.logs import read_log
    >>> import json
    >>> history = [{"epoch": s / 40, "step": s, "loss": 2 - s / 100} for s in range(10, 81, 10)]
    >>> history += [{"epoch": s / 40, "step": s, "eval_accuracy": 50 + s / 4} for s in (20, 40, 60, 80)]
    >>> log = read_log(json.dumps({"log_history": history}).encode(), "trainer_state.json")
    >>> log.roles.acc, is_evaluation_metric(log, "acc"), is_evaluation_metric(log, "loss")
    ('eval_accuracy', True, False)
    """
    source = str(getattr(log.roles, column, None) or "") if column in ("acc", "loss") else column
    if (log.counts_validation_batches and column in ("acc", "loss")
            and source.lower().strip() in _COURSE_VAL_NAMES):
        return False        # a course _val log's per-batch running metrics, named loss/acc or val_loss/val_acc
    if _EVALUATION_NAME.match(source):          # named as an evaluation: one, however many rows it fills
        return True
    return column not in ("acc", "loss") and int(log.frame[column].notna().sum()) < len(log.frame)


def compared_rows(log: RunLog, column: str, criterion: str = "epoch") -> tuple[np.ndarray | None, np.ndarray]:
    """The values of ``column`` the ``"epoch"`` criterion compares with a target, one per epoch, and the
    positions (among the rows holding the metric) of the rows that stand for them: each epoch's last row.

    A running accuracy counts at its epoch's last row (the accuracy over that epoch), another metric as its
    epoch's mean; the last epoch of a run still in it (the reader's "partial last epoch" flag) is not compared
    yet. Positions are None where every row is compared as it is: the ``"first-row"`` criterion, a
    per-epoch log, a log without epochs and an evaluation metric (:func:`is_evaluation_metric`).

    >>> from core.logs import read_log
    >>> log = read_log(b"epoch,step,loss,acc\\n1,1,2,0.5\\n1,2,1,0.7\\n2,1,1,0.8\\n2,2,0.5,0.9\\n", "a.csv")
    >>> positions, values = compared_rows(log, "acc")
    >>> positions.tolist(), values.tolist(), compared_rows(log, "loss")[1].tolist()
    ([1, 3], [0.7, 0.9], [1.5, 0.75])
    """
    frame = log.frame
    where = held_positions(frame, column)
    return compared_at(log, column, criterion, where, frame["epoch"].to_numpy(dtype=float, na_value=np.nan))


def compared_at(log: RunLog, column: str, criterion: str, where: np.ndarray, epoch: np.ndarray
                ) -> tuple[np.ndarray | None, np.ndarray]:
    """:func:`compared_rows` from the positions of the rows holding ``column`` (:func:`held_positions`) and the
    frame's epochs as floats (NaN: unknown), on arrays: no frame is made unless a metric's epoch means are asked."""
    frame = log.frame
    values = frame[column].to_numpy(dtype=float)[where]
    held_epoch = epoch[where]
    known = held_epoch[~np.isnan(held_epoch)]
    if (criterion != "epoch" or log.granularity != "step" or where.size < 2 or known.size == 0
            or np.unique(known).size >= where.size or is_evaluation_metric(log, column)):
        return None, values
    ends = _epoch_ends(held_epoch)              # the last logged row of each epoch, by epoch
    if len(ends) > 1 and any(f.startswith("partial last epoch") for f in log.flags):
        ends = ends[:-1]                         # an epoch still running has no end-of-epoch value yet
    if column == "acc":                          # a running accuracy: its epoch's last row is the epoch's
        return ends, values[ends]
    rows = frame if where.size == len(frame) else frame.iloc[where]
    means = rows.groupby("epoch", sort=True)[column].mean()
    return ends, means.loc[held_epoch[ends]].to_numpy(dtype=float)
