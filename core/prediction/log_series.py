"""What a prediction reads from a log: its epochs, the log cut after its first epochs, the accuracy and
loss series of the two routes, the loss at which the accuracy should pass the target, whether an
observed epoch already passed it, and a log to show a prediction on.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from core.defaults import DEFAULT_TARGET_ACC
from core.errors import InputError
from core.logs import RunLog
from core.prediction.intervals import (
    EpochSeries,
)
from core.runs import epoch_summary, find_target_crossing


def n_epochs(log: RunLog) -> int:
    """Number of epochs in the log (its largest epoch number); 0 when epochs are unknown."""
    ep = log.frame["epoch"].dropna()
    return int(ep.max()) if len(ep) else 0


def first_epochs(log: RunLog, n: int) -> RunLog:
    """The log cut after its ``n``-th epoch (a new ``RunLog``; ``log`` is not changed).

    Everything a prediction sees comes through this cut, so the rest of the log cannot leak.
    """
    if log.frame["epoch"].isna().all():
        raise InputError(f"{log.source}: expected epoch numbers to cut the log by epochs; the log has "
                         "none. Give steps per epoch when reading it.")
    keep = (log.frame["epoch"] <= n).fillna(False).to_numpy(dtype=bool)
    cut = replace(log, frame=log.frame.loc[keep].reset_index(drop=True))
    # whole epochs are kept, so each one's summary is the same as in the whole log
    summary = epoch_summary(log)
    cut.__dict__["_memo"] = {"epoch_summary": summary[summary["epoch"] <= n].reset_index(drop=True)}
    return cut


def accuracy_series(log: RunLog) -> EpochSeries:
    """Per-epoch error ``1 − acc`` against the epoch number (the accuracy route's data)."""
    table = epoch_summary(log).dropna(subset=["acc"])
    e = table["epoch"].to_numpy(dtype=float)
    err = 1.0 - table["acc"].to_numpy(dtype=float)
    return EpochSeries(x=e, y=err, epoch=e, epochs=e, levels=err, x_per_epoch=1.0, mid_epoch=False)


def loss_series(log: RunLog) -> EpochSeries:
    """Per-step loss against the global step, and the per-epoch mean losses (loss route)."""
    frame = log.frame[log.frame["loss"].notna() & log.frame["epoch"].notna()]
    table = epoch_summary(log).dropna(subset=["loss"])
    spe = log.steps_per_epoch
    step_level = log.granularity == "step"
    x_per_epoch = float(spe) if spe else 1.0
    return EpochSeries(x=frame["global_step"].to_numpy(dtype=float), y=frame["loss"].to_numpy(dtype=float),
                  epoch=frame["epoch"].to_numpy(dtype=float),
                  epochs=table["epoch"].to_numpy(dtype=float), levels=table["loss"].to_numpy(dtype=float),
                  x_per_epoch=x_per_epoch, mid_epoch=step_level)


def loss_threshold_from_observed(log: RunLog, target_acc: float) -> float:
    """The loss ``L`` at which the accuracy should pass ``target_acc``, from ``log`` alone.

    Fits ``ln(1 − acc) = α + β·ln(loss)`` by least squares on the per-epoch mean loss and
    final accuracy of the later half of the log's epochs (the part nearest the target),
    and solves for the loss where ``1 − acc = 1 − target_acc``.  NaN when the fit has no
    positive slope (accuracy not improving with loss).

    >>> from core.logs.reader import read_log
    >>> rows = "".join(f"{e},{e},{l},{1 - 0.25 * l}\\n" for e, l in enumerate([2.0, 1.6, 1.2, 0.8], 1))
    >>> round(loss_threshold_from_observed(read_log(("epoch,step,loss,acc\\n" + rows).encode(), "r.csv"), 0.9), 6)
    0.4
    """
    table = epoch_summary(log).dropna(subset=["loss", "acc"])
    table = table[(table["loss"] > 0) & (table["acc"] < 1)]
    if len(table) < 2:
        return math.nan
    half = table.iloc[len(table) // 2:] if len(table) >= 4 else table
    x = np.log(half["loss"].to_numpy(dtype=float))
    y = np.log(1.0 - half["acc"].to_numpy(dtype=float))
    if np.ptp(x) == 0:
        return math.nan
    beta, alpha = np.polyfit(x, y, 1)
    if not beta > 0:
        return math.nan
    return float(np.exp((math.log(1.0 - target_acc) - alpha) / beta))


def reached_target(log: RunLog, target_acc: float) -> bool:
    """Whether an observed epoch already passed ``target_acc`` (the epoch-level criterion)."""
    table = epoch_summary(log)
    return bool((table["acc"] >= target_acc).any())


def showcase_log(logs, target_acc: float = DEFAULT_TARGET_ACC) -> RunLog | None:
    """The first log whose target epoch lies in the second half of its epochs (so predicting from
    its first half can be compared with what happened); else the first log; None if empty.
    """

    logs = list(logs)
    for log in logs:
        c = find_target_crossing(log, target_acc)
        if c.reached and c.epoch is not None and c.epoch > n_epochs(log) / 2:
            return log
    return logs[0] if logs else None
