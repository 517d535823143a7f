"""A run's progress: its unit (samples, tokens, steps or epochs), its progress at each row and evaluation,
its first evaluations, where it reached a target, and the seconds one unit takes.

A run's evaluations of a metric are what the ``"epoch"`` criterion of :func:`core.runs.find_target_crossing`
compares with a target: each epoch's final running accuracy (or mean loss) in a per-step log with several
rows an epoch, every row otherwise (an evaluation log, a per-epoch trace, a log without epochs). So the
progress a run took to its target here is the crossing the Logs page and ``fit`` report, in the run's unit.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from core.errors import InputError
from core.logs import RunLog
from core.runs import compared_rows, find_target_crossing, metric_column
from core.targets import Target

#: the progress units a run can count, most informative first
UNITS: tuple[str, ...] = ("samples", "tokens", "steps", "epochs")


# --------------------------------------------------------------------------- progress axis
def _column_known(log: RunLog, name: str) -> bool:
    return name in log.frame.columns and bool(log.frame[name].notna().any())


def _steps_are_not_training_steps(log: RunLog) -> bool:
    # a course _val log numbers its validation batches: its steps are not optimiser steps
    return log.fmt == "course" and log.meta.split == "val"


def progress_unit(log: RunLog) -> str:
    """``samples`` when the log knows them (a ``samples`` column or a global batch), else ``tokens`` when it
    counts them (a speedrun log), else ``steps``; ``epochs`` for a course ``_val`` log, whose steps count
    validation batches (never training steps, so never samples either).

    >>> from core.logs import read_log
    >>> val = read_log(b"epoch,step,loss,acc\\n1,1,2,0.5\\n1,2,1,0.7\\n", "resnet20_V100-512_val.csv")
    >>> progress_unit(val), progress_unit(read_log(b"epoch,step,loss,acc\\n1,1,2,0.5\\n", "resnet20_V100-512.csv"))
    ('epochs', 'samples')
    """
    if _steps_are_not_training_steps(log) and not _column_known(log, "samples"):
        return "epochs"
    if _column_known(log, "samples") or log.meta.global_batch:
        return "samples"
    return "tokens" if _column_known(log, "tokens") else "steps"


def progress(log: RunLog) -> np.ndarray:
    """The progress of every row of ``log`` in :func:`progress_unit` (samples, tokens, else optimiser steps)."""
    frame = log.frame
    if _column_known(log, "samples"):
        return frame["samples"].to_numpy(dtype=float)
    if _steps_are_not_training_steps(log):
        return frame["epoch"].to_numpy(dtype=float, na_value=np.nan)
    step = frame["global_step"].to_numpy(dtype=float)
    if log.meta.global_batch:
        return step * log.meta.global_batch
    if _column_known(log, "tokens"):
        return frame["tokens"].to_numpy(dtype=float)
    return step


def evaluation_points(log: RunLog, target: Target) -> tuple[np.ndarray, np.ndarray]:
    """Progress and metric value at each evaluation of the target's metric (module docstring), in order (x > 0)."""
    column = metric_column(log, target.metric)
    if column is None:
        raise InputError(f"{log.source}: expected the metric {target.metric!r} of the target {target.spec}; "
                         f"the log has {', '.join(sorted(getattr(log, 'metrics', {}) or {'loss': 1})) or 'none'}.")
    x = progress(log)[log.frame[column].notna().to_numpy()]
    positions, y = compared_rows(log, column, "epoch")
    if positions is not None:
        x = x[positions]
    keep = np.isfinite(x) & np.isfinite(y) & (x > 0)
    return x[keep], y[keep]


def first_points(log: RunLog, target: Target, n: int) -> RunLog:
    """``log`` cut after its ``n``-th evaluation of the target's metric (what a run in progress shows)."""
    x, _ = evaluation_points(log, target)
    if n >= len(x):
        return log
    cut = x[max(n, 1) - 1]
    keep = progress(log) <= cut
    return replace(log, frame=log.frame[keep].reset_index(drop=True))


def observed_count(total: int, fraction: float | None) -> int:
    """Evaluations seen at ``fraction`` of ``total`` (at least 1; all with None).

    >>> observed_count(14, 0.25), observed_count(14, None), observed_count(3, 0.1)
    (4, 14, 1)
    """
    if fraction is None:
        return total
    return max(1, min(total, int(round(total * fraction))))


def progress_to_target(log: RunLog, target: Target) -> float | None:
    """The progress at which ``log`` met ``target`` (its first evaluation at target), None when it never did."""
    c = find_target_crossing(log, target, criterion="epoch")
    if not c.reached:
        return None
    unit = progress_unit(log)
    if unit == "epochs":
        return float(c.epoch) if c.epoch is not None else None
    if unit == "samples":
        return c.samples if c.samples is not None else c.step * (log.meta.global_batch or 1)
    if unit == "tokens":
        return c.tokens
    return c.step


def seconds_per_unit(log: RunLog) -> float | None:
    """Wall seconds per unit of progress over the log (``time_s`` against progress), None without times."""
    if "time_s" not in log.frame.columns:
        return None
    t = log.frame["time_s"].to_numpy(dtype=float)
    x = progress(log)
    ok = np.isfinite(t) & np.isfinite(x) & (x > 0)
    if ok.sum() < 2 or np.ptp(x[ok]) <= 0:
        return None
    slope = np.polyfit(x[ok], t[ok], 1)[0]
    return float(slope) if slope > 0 else None
