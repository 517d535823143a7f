"""Parameter-server schedules: who does what when, round by round, as a table to draw.

:func:`ps_schedule` lays out the first rounds and the last round of a :class:`~core.scaling.ps_job.PSJob`
(broadcast, compute, gather, then the server's serial aggregation); :func:`local_schedule` the
train-locally-then-send alternative. Rounds are counted as :mod:`core.scaling.ps_rounds` explains.
"""

from __future__ import annotations

import pandas as pd

from core.scaling.ps_job import PSJob
from core.validation import check_scalar

#: activities of the schedule, in drawing order
ACTIVITIES: tuple[str, ...] = ("broadcast", "compute", "gather", "aggregate")
SERVER = "server"
#: columns of :func:`ps_schedule` and :func:`local_schedule`
SCHEDULE_COLUMNS: tuple[str, ...] = (
    "part", "run_round", "epoch", "round", "machine", "activity", "worker", "start_s", "end_s",
)


def ps_schedule(job: PSJob, *, first_rounds: int = 2) -> pd.DataFrame:
    """Who does what when, for the first rounds of the run and its last round.

    Parameters
    ----------
    job : PSJob
    first_rounds : int, default=2
        How many rounds from the start of the run to include (the last round of the run is
        always included, once).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`SCHEDULE_COLUMNS`: ``part`` ("first" or "last"), ``run_round``
        (1-based over the run), ``epoch`` and ``round`` (1-based within the epoch; with
        ``rounds="continuous"`` the epoch of the round's first minibatch and the round's
        rank among the rounds that start in it),
        ``machine`` ("server", "worker 1", …), ``activity`` (:data:`ACTIVITIES`),
        ``worker`` (the worker a bar concerns; <NA> for the server's broadcast),
        ``start_s`` and ``end_s`` (seconds from the start of the run). Zero-length
        activities are left out.

    Notes
    -----
    In a round starting at ``t`` the server broadcasts during ``[t, t + broadcast_s]`` while
    each worker receives; each worker computes, then sends its update (gather); the server
    aggregates the updates one after the other, worker 1 first.

    Examples
    --------
    >>> job = PSJob(4, batch=1, epochs=1, machines=3, broadcast_s=1, compute_s=2,
    ...             gather_s=1, aggregate_s=0.5)
    >>> s = ps_schedule(job, first_rounds=1)       # 4 minibatches: rounds of 3 and 1 workers
    >>> server = s[s.machine == "server"]
    >>> bars = list(zip(server["round"], server["activity"], server["start_s"], server["end_s"]))
    >>> bars[:4]
    [(1, 'broadcast', 0.0, 1.0), (1, 'aggregate', 4.0, 4.5), (1, 'aggregate', 4.5, 5.0), (1, 'aggregate', 5.0, 5.5)]
    >>> bars[4:]
    [(2, 'broadcast', 5.5, 6.5), (2, 'aggregate', 9.5, 10.0)]
    """
    first_rounds = check_scalar(first_rounds, "first_rounds", int, min_val=0)
    total = job.total_rounds
    wanted = sorted(set(range(min(first_rounds, total))) | {total - 1})
    rows: list[dict] = []
    for g in wanted:
        start, epoch, round_, workers = _round_place(job, g)
        part = "first" if g < first_rounds else "last"
        rows.extend(_round_rows(job, start, workers, part=part, run_round=g + 1, epoch=epoch,
                                round_=round_))
    return _schedule_frame(rows)


def local_schedule(job: PSJob) -> pd.DataFrame:
    """The schedule of :func:`local_then_send`, in the columns of :func:`ps_schedule`.

    One "round" covers the whole run (``part="first"``, ``run_round=1``, ``epoch=1``): each
    worker's ``compute`` bar spans all its local minibatches (a worker with fewer
    minibatches finishes earlier and sends earlier; the server aggregates after the last
    model arrives, worker 1 first).
    """
    n_mb, m = job.minibatches_per_epoch, job.machines
    tb, tc, tg, ta = job.broadcast_s, job.compute_s, job.gather_s, job.aggregate_s
    workers = min(m, n_mb)
    base = dict(part="first", run_round=1, epoch=1, round=1)
    rows = [dict(base, machine=SERVER, activity="broadcast", worker=pd.NA, start_s=0.0,
                 end_s=tb)]
    arrivals = []
    for w in range(1, workers + 1):
        local = job.epochs * (n_mb // m + (1 if w <= n_mb % m else 0))
        done = tb + local * tc
        arrivals.append(done + tg)
        rows += [dict(base, machine=f"worker {w}", activity=a, worker=w, start_s=s, end_s=e)
                 for a, s, e in (("broadcast", 0.0, tb), ("compute", tb, done),
                                 ("gather", done, done + tg))]
    t = max(arrivals)
    for w in range(1, workers + 1):
        rows.append(dict(base, machine=SERVER, activity="aggregate", worker=w, start_s=t,
                         end_s=t + ta))
        t += ta
    return _schedule_frame(rows)


def _round_place(job: PSJob, g: int) -> tuple[float, int, int, int]:
    """Start time, epoch, round within the epoch (1-based) and workers of run round ``g`` (0-based)."""
    full = job.round_time_s(job.machines)
    workers = job.last_round_workers
    if job.rounds == "continuous":
        n_mb, m = job.minibatches_per_epoch, job.machines
        epoch = g * m // n_mb                        # the epoch of the round's first minibatch
        first_in_epoch = -(-epoch * n_mb // m)       # the first round that starts in it
        return g * full, epoch + 1, g - first_in_epoch + 1, (
            workers if g == job.total_rounds - 1 else m)
    rounds = job.rounds_per_epoch
    epoch, r = divmod(g, rounds)
    epoch_time = (rounds - 1) * full + job.round_time_s(workers)
    return (epoch * epoch_time + r * full, epoch + 1, r + 1,
            workers if r == rounds - 1 else job.machines)


def _round_rows(job: PSJob, t: float, workers: int, *, part: str, run_round: int,
                epoch: int, round_: int) -> list[dict]:
    tb, tc, tg, ta = job.broadcast_s, job.compute_s, job.gather_s, job.aggregate_s
    base = dict(part=part, run_round=run_round, epoch=epoch, round=round_)
    rows = [dict(base, machine=SERVER, activity="broadcast", worker=pd.NA, start_s=t,
                 end_s=t + tb)]
    for w in range(1, workers + 1):
        rows += [dict(base, machine=f"worker {w}", activity=a, worker=w, start_s=s, end_s=e)
                 for a, s, e in (("broadcast", t, t + tb), ("compute", t + tb, t + tb + tc),
                                 ("gather", t + tb + tc, t + tb + tc + tg))]
    t0 = t + tb + tc + tg
    rows += [dict(base, machine=SERVER, activity="aggregate", worker=w,
                  start_s=t0 + (w - 1) * ta, end_s=t0 + w * ta) for w in range(1, workers + 1)]
    return rows


def _schedule_frame(rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=list(SCHEDULE_COLUMNS))
    frame = frame[frame["end_s"] > frame["start_s"]].reset_index(drop=True)
    frame["worker"] = frame["worker"].astype("Int64")
    return frame
