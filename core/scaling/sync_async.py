"""Synchronous vs asynchronous parameter updates: timelines, stale gradients, step completion.

Inputs are per-worker start times and compute durations: ``compute_s[i]`` is either one
duration (one gradient) or a sequence of durations (successive gradients of worker ``i``).

**Asynchronous** (:func:`async_schedule`): worker ``i`` reads the current parameters at its
start time, computes, and the server applies the gradient the moment it arrives; the worker
then reads the parameters again and starts its next gradient at once. Updates are applied
in order of arrival (ties: lower worker number first) and take no time; communication is
taken as instantaneous (fold it into the durations). A read at time ``t`` sees every update
applied at a time ``<= t``. The gradient applied as update number ``k`` (0-based, so it
turns version ``k`` of the parameters into version ``k + 1``) was computed on version
``v`` = the number of updates applied by its read; its **staleness** is ``k - v``, the
updates it missed. Staleness 0 means it was computed on the parameters it is applied to.

**Synchronous** (:func:`sync_schedule`): in step 1 worker ``i`` starts at ``start_s[i]``;
the server aggregates each gradient as it arrives, one at a time (``aggregate_s`` each,
starting at ``max(arrival, end of the previous aggregation)``), then applies the summed
update (``update_s``). The step completes when the update is applied; every worker starts
the next step then, on the same fresh parameters, so no gradient is ever stale.
"""

from __future__ import annotations

import bisect
import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from core.errors import InputError
from core.validation import check_scalar

#: columns of both timelines
TIMELINE_COLUMNS: tuple[str, ...] = (
    "schedule", "machine", "activity", "worker", "iteration", "start_s", "end_s", "staleness",
)
#: columns of :attr:`AsyncSchedule.updates`
UPDATE_COLUMNS: tuple[str, ...] = (
    "update", "worker", "iteration", "read_s", "applied_s", "read_version",
    "applied_to_version", "staleness",
)
SERVER = "server"

#: The two-sentence statement shown beside the timelines (see STALENESS_BOUND_SOURCES).
STALENESS_BOUND_TEXT = (
    "If every gradient has norm at most Δ and is applied at most τ updates after the "
    "parameters it was computed on were read, those parameters differ from the current "
    "sequential iterate by at most τ updates of length at most η·Δ each (η the step size), "
    "so by the triangle inequality ‖x_read − x_k‖ ≤ η·τ·Δ. Asynchronous SGD is therefore "
    "sequential SGD whose gradients are evaluated at a point perturbed by at most η·τ·Δ "
    "(the bounded-delay, bounded-gradient setting of Hogwild! and the perturbed-iterate "
    "view of Mania et al.): a per-step bound that shrinks with η and τ, not a bound on how "
    "far two whole training runs drift apart."
)
STALENESS_BOUND_SOURCES: tuple[str, ...] = (
    "F. Niu, B. Recht, C. Ré, S. J. Wright. Hogwild!: A Lock-Free Approach to Parallelizing "
    "Stochastic Gradient Descent. NeurIPS 2011 (arXiv:1106.5730).",
    "H. Mania, X. Pan, D. Papailiopoulos, B. Recht, K. Ramchandran, M. I. Jordan. Perturbed "
    "Iterate Analysis for Asynchronous Stochastic Optimization. SIAM J. Optim. 27(4), 2017 "
    "(arXiv:1507.06970).",
    "Q. Ho et al. More Effective Distributed ML via a Stale Synchronous Parallel Parameter "
    "Server. NeurIPS 2013.",
)


@dataclass(frozen=True, eq=False)   # holds DataFrames: compare fields, not objects
class AsyncSchedule:
    """Result of :func:`async_schedule`.

    Attributes
    ----------
    timeline : pandas.DataFrame
        :data:`TIMELINE_COLUMNS`, one ``compute`` bar per gradient (``schedule="async"``).
    updates : pandas.DataFrame
        :data:`UPDATE_COLUMNS`, one row per gradient in the order applied.
    finish_s : float
        When the last update is applied.
    max_staleness : int
    n_stale : int
        Gradients with staleness > 0.
    """

    timeline: pd.DataFrame
    updates: pd.DataFrame
    finish_s: float
    max_staleness: int
    n_stale: int

    def to_dict(self) -> dict:
        return dict(finish_s=self.finish_s, max_staleness=self.max_staleness,
                    n_stale=self.n_stale, updates=_records(self.updates),
                    timeline=_records(self.timeline))


@dataclass(frozen=True, eq=False)   # holds DataFrames: compare fields, not objects
class SyncSchedule:
    """Result of :func:`sync_schedule`.

    Attributes
    ----------
    timeline : pandas.DataFrame
        :data:`TIMELINE_COLUMNS` (``schedule="sync"``): workers' ``compute`` and ``wait``
        bars, the server's ``aggregate`` and ``update`` bars.
    step_end_s : tuple of float
        When each synchronous step completes (its update is applied).
    finish_s : float
        ``step_end_s[-1]``.
    wait_s : tuple of float
        Total time each worker waited for the others, summed over steps.
    """

    timeline: pd.DataFrame
    step_end_s: tuple[float, ...]
    finish_s: float
    wait_s: tuple[float, ...]

    def to_dict(self) -> dict:
        return dict(step_end_s=list(self.step_end_s), finish_s=self.finish_s,
                    wait_s=list(self.wait_s), timeline=_records(self.timeline))


def async_schedule(start_s: Sequence[float], compute_s: Sequence) -> AsyncSchedule:
    """Timeline and staleness of asynchronous updates.

    Parameters
    ----------
    start_s : sequence of float, shape (n_workers,)
        When each worker reads the parameters for its first gradient (>= 0).
    compute_s : sequence, shape (n_workers,)
        Per worker one duration (> 0) or a sequence of durations of successive gradients.

    Returns
    -------
    AsyncSchedule

    Raises
    ------
    InputError
        A value is not a number, lengths differ, a time is negative, a duration is not > 0.

    Examples
    --------
    Worker 1 starts at 0 and computes 3 s; worker 2 starts at 1 and computes 1 s. Worker 2's
    gradient arrives first (t = 2) and is applied to version 0, which it read: staleness 0.
    Worker 1's arrives at t = 3 and is applied to version 1, but it read version 0: one
    update stale.

    >>> a = async_schedule([0.0, 1.0], [3.0, 1.0])
    >>> u = a.updates
    >>> list(zip(u.worker, u.applied_s, u.read_version, u.applied_to_version, u.staleness))
    [(2, 2.0, 0, 0, 0), (1, 3.0, 0, 1, 1)]
    >>> a.max_staleness, a.n_stale
    (1, 1)
    """
    starts, durations = _check_inputs(start_s, compute_s)
    grads = []                                   # (arrival, worker, iteration, read)
    for w, (t, ds) in enumerate(zip(starts, durations), start=1):
        for it, d in enumerate(ds, start=1):
            grads.append((t + d, w, it, t))
            t += d
    grads.sort()
    applied = [g[0] for g in grads]
    rows = []
    for k, (arrival, w, it, read) in enumerate(grads):
        version = bisect.bisect_right(applied, read)   # updates applied at <= read
        rows.append(dict(update=k + 1, worker=w, iteration=it, read_s=read, applied_s=arrival,
                         read_version=version, applied_to_version=k, staleness=k - version))
    updates = pd.DataFrame(rows, columns=list(UPDATE_COLUMNS))
    timeline = _frame([dict(schedule="async", machine=f"worker {r['worker']}",
                            activity="compute", worker=r["worker"], iteration=r["iteration"],
                            start_s=r["read_s"], end_s=r["applied_s"], staleness=r["staleness"])
                       for r in sorted(rows, key=lambda r: (r["worker"], r["iteration"]))])
    stale = updates["staleness"]
    return AsyncSchedule(timeline=timeline, updates=updates, finish_s=float(max(applied)),
                         max_staleness=int(stale.max()), n_stale=int((stale > 0).sum()))


def sync_schedule(start_s: Sequence[float], compute_s: Sequence, *, aggregate_s: float,
                  update_s: float) -> SyncSchedule:
    """Timeline of synchronous steps and when each completes.

    Parameters
    ----------
    start_s : sequence of float, shape (n_workers,)
        When each worker starts step 1 (>= 0).
    compute_s : sequence, shape (n_workers,)
        Per worker one duration (> 0) or a sequence of durations, one per step; every
        worker needs the same number of steps.
    aggregate_s : float
        Server time to add one worker's gradient into the sum (>= 0).
    update_s : float
        Server time to apply the summed update (>= 0).

    Returns
    -------
    SyncSchedule

    Notes
    -----
    Aggregation ``j`` (in order of arrival, ties by worker) runs over
    ``[max(a_j, e_{j-1}), max(a_j, e_{j-1}) + aggregate_s]``; the step completes at
    ``e_last + update_s``. When the gradients arrive far enough apart this is simply
    ``max_i(start_i + compute_i) + aggregate_s + update_s``.

    Examples
    --------
    Arrivals at 0 + 3 = 3 and 1 + 1 = 2. Aggregations [2, 2.5] then [3, 3.5]; update
    [3.5, 4.5]: the step completes at 4.5 s, worker 2 having waited 4.5 - 2 = 2.5 s.

    >>> s = sync_schedule([0.0, 1.0], [3.0, 1.0], aggregate_s=0.5, update_s=1.0)
    >>> s.step_end_s, s.wait_s
    ((4.5,), (1.5, 2.5))
    """
    starts, durations = _check_inputs(start_s, compute_s)
    aggregate_s = check_scalar(aggregate_s, "aggregate_s", float, min_val=0)
    update_s = check_scalar(update_s, "update_s", float, min_val=0)
    n_steps = {len(ds) for ds in durations}
    if len(n_steps) != 1:
        raise InputError("compute_s: expected the same number of steps for every worker in "
                         f"a synchronous schedule; got {sorted(len(ds) for ds in durations)}. "
                         "Give each worker one duration per step.")
    rows, ends, waits = [], [], [0.0] * len(starts)
    begin = list(starts)
    for step in range(n_steps.pop()):
        arrivals = sorted((b + ds[step], w) for w, (b, ds) in enumerate(zip(begin, durations), 1))
        t = 0.0
        for arrival, w in arrivals:
            t = max(arrival, t)
            rows.append(_sync_row(SERVER, "aggregate", w, step, t, t + aggregate_s))
            t += aggregate_s
        rows.append(_sync_row(SERVER, "update", None, step, t, t + update_s))
        end = t + update_s
        for arrival, w in arrivals:
            rows.append(_sync_row(f"worker {w}", "compute", w, step, begin[w - 1], arrival))
            rows.append(_sync_row(f"worker {w}", "wait", w, step, arrival, end))
            waits[w - 1] += end - arrival
        ends.append(end)
        begin = [end] * len(starts)
    timeline = _frame([r for r in rows if r["end_s"] > r["start_s"]])
    return SyncSchedule(timeline=timeline, step_end_s=tuple(ends), finish_s=ends[-1],
                        wait_s=tuple(waits))


def staleness_bound(step_size: float, staleness: int, grad_bound: float) -> float:
    """``η · τ · Δ``: how far a stale read can be from the current iterate.

    Parameters
    ----------
    step_size : float
        η (> 0).
    staleness : int
        τ, the most updates a gradient can miss (>= 0).
    grad_bound : float
        Δ, a bound on every gradient's norm (> 0).

    Notes
    -----
    ``‖x_{k-τ} − x_k‖ ≤ Σ_{j=k-τ}^{k-1} η‖g_j‖ ≤ η τ Δ``; see :data:`STALENESS_BOUND_TEXT`
    and :data:`STALENESS_BOUND_SOURCES`.

    Examples
    --------
    >>> staleness_bound(0.1, 3, 2.0)   # 0.1 * 3 * 2
    0.6000000000000001
    """
    eta = check_scalar(step_size, "step_size", float, min_val=0, include_boundaries="neither")
    tau = check_scalar(staleness, "staleness", int, min_val=0)
    delta = check_scalar(grad_bound, "grad_bound", float, min_val=0, include_boundaries="neither")
    return eta * tau * delta


# --------------------------------------------------------------------------- private steps


def _check_inputs(start_s: Sequence[float], compute_s: Sequence
                  ) -> tuple[list[float], list[list[float]]]:
    if isinstance(start_s, (str, bytes)) or not hasattr(start_s, "__iter__"):
        raise InputError(f"start_s: expected a sequence of start times; got {start_s!r}.")
    if isinstance(compute_s, (str, bytes)) or not hasattr(compute_s, "__iter__"):
        raise InputError(f"compute_s: expected a sequence of durations; got {compute_s!r}.")
    start_s = list(start_s)
    compute_s = list(compute_s)
    if len(start_s) == 0 or len(start_s) != len(compute_s):
        raise InputError(f"start_s, compute_s: expected one start time and one duration (or "
                         f"list of durations) per worker; got {len(start_s)} start times and "
                         f"{len(compute_s)} durations. Give both for every worker.")
    starts = [check_scalar(s, f"start_s[{i}]", float, min_val=0) for i, s in enumerate(start_s)]
    durations = []
    for i, ds in enumerate(compute_s):
        seq = [ds] if isinstance(ds, numbers.Real) else list(ds)
        if not seq:
            raise InputError(f"compute_s[{i}]: expected at least one duration; got none. "
                             "Give each worker one duration or more.")
        durations.append([check_scalar(d, f"compute_s[{i}]", float, min_val=0, include_boundaries="neither",
                                       fix="A gradient always takes some time")
                          for d in seq])
    return starts, durations


def _sync_row(machine: str, activity: str, worker: int | None, step: int, start: float,
              end: float) -> dict:
    return dict(schedule="sync", machine=machine, activity=activity, worker=worker,
                iteration=step + 1, start_s=start, end_s=end,
                staleness=0 if activity == "compute" else None)


def _frame(rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=list(TIMELINE_COLUMNS))
    for col in ("worker", "iteration", "staleness"):
        frame[col] = frame[col].astype("Int64")
    return frame


def _records(frame: pd.DataFrame) -> list[dict]:
    return [{k: (None if pd.isna(v) else v.item() if hasattr(v, "item") else v)
             for k, v in row.items()} for row in frame.to_dict("records")]
