"""A run's progress: its unit (samples, tokens, steps or epochs), its progress at each row and evaluation,
its first evaluations, where it reached a target, and the seconds one unit takes.

A run's evaluations of a metric are what the ``"epoch"`` criterion of :func:`core.runs.find_target_crossing`
compares with a target: each epoch's final running accuracy (or mean loss) in a per-step log with at least
``MIN_EPOCH_EVALUATIONS`` epochs of several rows each, every row otherwise (an evaluation log, a per-epoch
trace, a log without epochs, a fine-tune of a few epochs). So the progress a run took to its target here is
the crossing the Logs page and ``fit`` report (epoch-level), in the run's unit.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from core.errors import InputError
from core.logs import RunLog
from core.runs import compared_rows, metric_column
from core.targets import Target, target_for

#: fewest epochs whose ends stand for a per-step log's evaluations: a run of fewer (a fine-tune of 1-3
#: epochs) is evaluated at every logged row, as a curve needs points to be fitted to
MIN_EPOCH_EVALUATIONS = 8


# --------------------------------------------------------------------------- progress axis
def _column_known(log: RunLog, name: str) -> bool:
    return name in log.frame.columns and bool(log.frame[name].notna().any())


def progress_unit(log: RunLog) -> str:
    """``samples`` when the log knows them (a ``samples`` column or a global batch), else ``tokens`` when it
    counts them (a speedrun log), else ``steps``; ``epochs`` for a course ``_val`` log, whose steps count
    validation batches (never training steps, so never samples either).

    >>> from core.logs import read_log
    >>> val = read_log(b"epoch,step,loss,acc\\n1,1,2,0.5\\n1,2,1,0.7\\n", "resnet20_V100-512_val.csv")
    >>> progress_unit(val), progress_unit(read_log(b"epoch,step,loss,acc\\n1,1,2,0.5\\n", "resnet20_V100-512.csv"))
    ('epochs', 'samples')
    """
    if log.counts_validation_batches and not _column_known(log, "samples"):
        return "epochs"
    if _column_known(log, "samples") or log.meta.global_batch:
        return "samples"
    return "tokens" if _column_known(log, "tokens") else "steps"


def _counted(frame, column: str) -> np.ndarray:
    """``column`` (samples or tokens counted by the log) at every row; a row between two counted rows without
    its own count (a Trainer evaluation on a step with no training record) gets the count interpolated on
    the global step, so an evaluation never loses its place."""
    values = frame[column].to_numpy(dtype=float)
    step = frame["global_step"].to_numpy(dtype=float)
    known = np.isfinite(values) & np.isfinite(step)
    missing = ~np.isfinite(values) & np.isfinite(step)
    if missing.any() and known.sum() >= 2:
        order = np.argsort(step[known], kind="stable")
        ks, vs = step[known][order], values[known][order]
        inside = missing & (step >= ks[0]) & (step <= ks[-1])
        values = values.copy()
        values[inside] = np.interp(step[inside], ks, vs)
    return values


def progress(log: RunLog) -> np.ndarray:
    """The progress of every row of ``log`` in :func:`progress_unit` (samples, tokens, optimiser steps or, for a
    course ``_val`` log, epochs)."""
    frame = log.frame
    if _column_known(log, "samples"):
        return _counted(frame, "samples")
    if log.counts_validation_batches:
        return frame["epoch"].to_numpy(dtype=float, na_value=np.nan)
    step = frame["global_step"].to_numpy(dtype=float)
    if log.meta.global_batch:
        return step * log.meta.global_batch
    if _column_known(log, "tokens"):
        return _counted(frame, "tokens")
    return step


def evaluation_points(log: RunLog, target: Target) -> tuple[np.ndarray, np.ndarray]:
    """Progress and metric value at each evaluation of the target's metric (module docstring), in order (x > 0)."""
    x, _, y = evaluation_table(log, target)
    return x, y


def evaluation_table(log: RunLog, target: Target) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Progress, optimiser step and metric value at each evaluation of the target's metric (the evaluations of
    :func:`evaluation_points`, with the ``global_step`` of each: the step a schedule-aware law is evaluated at)."""
    column = metric_column(log, target.metric)
    if column is None:
        raise InputError(f"{log.source}: expected the metric {target.metric!r} of the target {target.spec}; "
                         f"the log has {', '.join(sorted(getattr(log, 'metrics', {}) or {'loss': 1})) or 'none'}.")
    rows = log.frame[column].notna().to_numpy()
    x = progress(log)[rows]
    steps = log.frame["global_step"].to_numpy(dtype=float)[rows]
    positions, y = compared_rows(log, column, "epoch")
    if positions is not None and len(positions) < MIN_EPOCH_EVALUATIONS:
        positions, y = compared_rows(log, column, "first-row")   # too few epochs to fit: every row counts
    if positions is not None:
        x, steps = x[positions], steps[positions]
    keep = np.isfinite(x) & np.isfinite(y) & (x > 0)
    return x[keep], steps[keep], y[keep]


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
    """The progress at which ``log`` met ``target`` (its first evaluation at target, :func:`evaluation_points`),
    None when it never did or does not log the target's metric."""
    x, hit = _first_evaluation_at(log, target)
    return None if hit is None else float(x[hit])


def _first_evaluation_at(log: RunLog, target: Target) -> tuple[np.ndarray, int | None]:
    """The run's evaluation progress and the index of its first evaluation at ``target`` (None: never, or
    the log has not the metric)."""
    if metric_column(log, target.metric) is None:
        return np.empty(0), None
    x, y = evaluation_points(log, target)
    return x, target.first_met(y)


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


def time_at_progress(log: RunLog, value: float) -> float | None:
    """Training seconds at progress ``value`` of ``log`` from its own logged times: the logged time there
    (interpolated) within the logged part; past it, the time at its last timed row plus the rest at the run's
    pace over the log (:func:`seconds_per_unit`); None when the log has no wall times or ``value`` is not finite.

    >>> from core.logs import read_log
    >>> log = read_log(b"step,loss,time_s\\n1,3.0,10\\n2,2.5,12\\n3,2.2,14\\n", "a.csv")   # 2 s a step after 10 s
    >>> time_at_progress(log, 2.5), round(time_at_progress(log, 10), 6)
    (13.0, 28.0)
    """
    if "time_s" not in log.frame.columns or value is None or not np.isfinite(value):
        return None
    t = log.frame["time_s"].to_numpy(dtype=float)
    x = progress(log)
    ok = np.isfinite(t) & np.isfinite(x)
    if ok.sum() < 2:
        return None
    order = np.argsort(x[ok], kind="stable")
    xs, ts = x[ok][order], t[ok][order]
    if value <= xs[-1]:
        return float(np.interp(value, xs, ts))
    pace = seconds_per_unit(log)
    return None if pace is None else float(ts[-1] + (value - xs[-1]) * pace)


def progress_showcase(logs, target: Target | None = None, metric: str | None = None) -> RunLog | None:
    """The run a progress prediction opens on: among the runs whose target (``target``, else each run's own)
    is on ``metric`` (the page's, e.g. the ``val_loss`` an uploaded speedrun declares; all runs when none is),
    the first that met
    its target after its first quarter of evaluations (so a prediction from that quarter can be compared with
    what happened), else the first that met it, else the first run; None without runs.

    >>> from core.logs import read_log
    >>> rows = "".join(f"{s},{2.0 + 30 * (100 * s) ** -0.5:.6f}\\n" for s in range(1, 41))
    >>> never = read_log(("step,loss\\n" + rows).encode(), "a.csv")            # loss <= 2.5 at step 36
    >>> progress_showcase([never], metric="loss").source
    'a.csv'
    """
    logs = list(logs)
    mine = [lg for lg in logs if metric is None or target_for(lg, target).metric == metric] or logs
    met = []
    for log in mine:
        x, hit = _first_evaluation_at(log, target_for(log, target))
        if hit is not None:
            met.append((log, hit >= len(x) / 4))
    return next((lg for lg, late in met if late), met[0][0] if met else (mine[0] if mine else None))

