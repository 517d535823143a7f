"""Parameter-server round model: rounds, total time, a schedule and the crossover worker count.

One server holds the model; ``m`` worker machines train it in **rounds**. In one round the
server broadcasts the model, every worker that has data left computes the gradient of one
minibatch, sends it back (gather), and the server aggregates the updates one after the
other::

    round time (k workers) = broadcast_s + compute_s + gather_s + k * aggregate_s

Counting rules (the ones every function here uses):

* An epoch is one pass over ``n_samples``. It has ``n_mb = ceil(n_samples / b)`` minibatches
  of ``b`` samples per worker; the last one may hold fewer samples but costs a full
  ``compute_s`` (a data loader with ``drop_last=False``).
* ``rounds="per-epoch"`` (the default): **rounds are counted per epoch**:
  ``R = ceil(n_mb / m)``; the first ``R - 1`` rounds use all ``m`` workers and the last round
  uses ``k_last = n_mb - (R - 1) * m`` workers (so it has ``k_last`` aggregations). Epochs do
  not share rounds: the next epoch starts with a full round. The run has ``epochs * R``
  rounds.
* ``rounds="continuous"``: the ``N = epochs * n_mb`` minibatches of the whole run flow across
  epoch boundaries, ``m`` to a round: ``ceil(N / m)`` rounds, all full but the last one of the
  run, which has ``N - (ceil(N / m) - 1) * m`` workers. Both readings are in use (the course's
  worked answer reads the run this way); they differ only when ``m`` does not divide ``n_mb``.
* ``batch_kind="global"`` fixes the samples per round at ``batch`` = B, so each worker takes
  ``b = B / m`` samples (possibly fractional: the average share); ``compute_s`` is the time
  for that share at the job's ``m``. When ``m`` changes (:func:`at_machines`), compute time
  scales with the share, ``compute_s * m / m'`` (strong scaling). With
  ``batch_kind="per_worker"`` the minibatch and ``compute_s`` stay fixed (weak scaling).

The **crossover** worker count is the smallest ``m`` at which, in a full round, the time
spent communicating and aggregating exceeds the time spent computing::

    broadcast_s + gather_s + m * aggregate_s  >  compute_s(m)

(workers compute in parallel, so a round's compute time is one minibatch). It is solved in
closed form in exact rational arithmetic on the decimal values given (``0.1`` means 1/10).
Past it the server's serial aggregation dominates the round. Note that with
``batch_kind="per_worker"`` the total time still never rises with ``m``: the total
aggregation work, one ``aggregate_s`` per minibatch, does not depend on ``m``; only the
saving from each extra worker shrinks.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import KW_ONLY, asdict, dataclass, replace
from fractions import Fraction

import pandas as pd

from core.errors import InputError
from core.validation import check_scalar

BATCH_KINDS: tuple[str, ...] = ("per_worker", "global")
#: how rounds are counted: a new round at each epoch start (default), or across epochs
ROUND_MODES: tuple[str, ...] = ("per-epoch", "continuous")
#: what each of :data:`ROUND_MODES` means, in a few words (for the page and the CLI)
ROUND_MODE_TEXT: dict[str, str] = {
    "per-epoch": "each epoch starts a new round",
    "continuous": "the minibatches of the whole run flow across epochs",
}
#: activities of the schedule, in drawing order
ACTIVITIES: tuple[str, ...] = ("broadcast", "compute", "gather", "aggregate")
SERVER = "server"
#: columns of :func:`ps_schedule` and :func:`local_schedule`
SCHEDULE_COLUMNS: tuple[str, ...] = (
    "part", "run_round", "epoch", "round", "machine", "activity", "worker", "start_s", "end_s",
)
#: largest default sweep of :func:`ps_time_vs_machines`
MAX_DEFAULT_MACHINES = 1024


@dataclass(frozen=True)
class PSJob:
    """A data-parallel job on one parameter server and ``machines`` workers.

    Parameters
    ----------
    n_samples : int
        Training samples in one epoch (>= 1).
    batch : int
        Samples per worker minibatch (``batch_kind="per_worker"``) or per round over all
        workers (``batch_kind="global"``), >= 1.
    epochs : int
        Passes over the data (>= 1).
    machines : int
        Worker machines m (>= 1); the server is not counted.
    broadcast_s, gather_s, aggregate_s : float
        Seconds to broadcast the model to the workers, for a worker to send its update back,
        and for the server to aggregate one worker's update (each >= 0).
    compute_s : float
        Seconds for a worker to compute one minibatch's update (> 0).
    batch_kind : {"per_worker", "global"}, default="per_worker"
    rounds : {"per-epoch", "continuous"}, default="per-epoch"
        Whether each epoch starts a new round (its last round may be partial) or the
        minibatches of the whole run flow across epochs (only the run's last round may be
        partial). See the module docstring.

    Raises
    ------
    InputError
        A count is not an int, a time is not a number, a value is out of range, or
        ``batch_kind`` or ``rounds`` is unknown.

    Examples
    --------
    >>> job = PSJob(1000, batch=32, epochs=2, machines=3, broadcast_s=1.0, compute_s=5.0,
    ...             gather_s=1.0, aggregate_s=0.5)
    >>> job.minibatches_per_epoch, job.rounds_per_epoch, job.last_round_workers, job.total_rounds
    (32, 11, 2, 22)
    >>> flowing = PSJob(1000, batch=32, epochs=2, machines=3, broadcast_s=1.0, compute_s=5.0,
    ...                 gather_s=1.0, aggregate_s=0.5, rounds="continuous")
    >>> flowing.total_minibatches, flowing.total_rounds, flowing.last_round_workers
    (64, 22, 1)
    >>> PSJob(1000, batch=32, epochs=1, machines=0, broadcast_s=1, compute_s=5, gather_s=1,
    ...       aggregate_s=0.5)
    Traceback (most recent call last):
    ...
    core.errors.InputError: machines: expected an int >= 1; got 0. Use at least one worker machine.
    """

    n_samples: int
    _: KW_ONLY
    batch: int
    epochs: int
    machines: int
    broadcast_s: float
    compute_s: float
    gather_s: float
    aggregate_s: float
    batch_kind: str = "per_worker"
    rounds: str = "per-epoch"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "n_samples", check_scalar(self.n_samples, "n_samples", int, min_val=1))
        set_(self, "batch", check_scalar(self.batch, "batch", int, min_val=1))
        set_(self, "epochs", check_scalar(self.epochs, "epochs", int, min_val=1))
        set_(self, "machines", check_scalar(self.machines, "machines", int, min_val=1,
                                            fix="Use at least one worker machine"))
        for name in ("broadcast_s", "gather_s", "aggregate_s"):
            set_(self, name, check_scalar(getattr(self, name), name, float, min_val=0))
        set_(self, "compute_s", check_scalar(self.compute_s, "compute_s", float, min_val=0,
                                             include_boundaries="neither",
                                             fix="A minibatch always takes some time"))
        if self.batch_kind not in BATCH_KINDS:
            raise InputError(f"batch_kind: expected one of {', '.join(BATCH_KINDS)}; got "
                             f"{self.batch_kind!r}. Say whether batch is per worker or global.")
        if self.rounds not in ROUND_MODES:
            raise InputError(f"rounds: expected one of {', '.join(ROUND_MODES)}; got "
                             f"{self.rounds!r}. Say whether each epoch starts a new round.")

    @property
    def per_worker_batch(self) -> float:
        """Samples in one worker's minibatch: ``batch`` or ``batch / machines``."""
        return float(self.batch) if self.batch_kind == "per_worker" else self.batch / self.machines

    @property
    def minibatches_per_epoch(self) -> int:
        """``ceil(n_samples / b)``; with a global batch ``ceil(n_samples * m / B)``."""
        if self.batch_kind == "per_worker":
            return -(-self.n_samples // self.batch)
        return -(-self.n_samples * self.machines // self.batch)

    @property
    def total_minibatches(self) -> int:
        """Minibatches over the run: ``epochs * minibatches_per_epoch``."""
        return self.epochs * self.minibatches_per_epoch

    @property
    def total_rounds(self) -> int:
        """Rounds over the run: ``epochs * ceil(n_mb / m)`` per epoch, ``ceil(N / m)`` continuous."""
        if self.rounds == "continuous":
            return -(-self.total_minibatches // self.machines)
        return self.epochs * self.rounds_per_epoch

    @property
    def rounds_per_epoch(self) -> int | float:
        """``ceil(n_mb / m)`` per epoch; continuous: ``total_rounds / epochs`` (an average)."""
        if self.rounds == "continuous":
            return self.total_rounds / self.epochs
        return -(-self.minibatches_per_epoch // self.machines)

    @property
    def last_round_workers(self) -> int:
        """Workers in the last round of an epoch, ``n_mb - (R - 1) * m`` (``m`` when full), or
        continuous: of the run, ``N - (total_rounds - 1) * m``."""
        if self.rounds == "continuous":
            return self.total_minibatches - (self.total_rounds - 1) * self.machines
        return self.minibatches_per_epoch - (self.rounds_per_epoch - 1) * self.machines

    @property
    def shard_minibatches(self) -> int:
        """Minibatches per epoch of the busiest worker when they are dealt out in turn:
        ``ceil(n_mb / m)`` (in either ``rounds`` mode)."""
        return -(-self.minibatches_per_epoch // self.machines)

    def round_time_s(self, workers: int) -> float:
        """Seconds of a round with ``workers`` active workers."""
        return (self.broadcast_s + self.compute_s + self.gather_s
                + workers * self.aggregate_s)

    def to_dict(self) -> dict:
        """The inputs as plain Python types."""
        return asdict(self)


@dataclass(frozen=True)
class PSRounds:
    """Rounds and time of a :class:`PSJob` (see :func:`ps_rounds`).

    ``total_time_s = compute_time_s + communication_time_s + aggregation_time_s`` where
    compute is the critical-path compute (one minibatch per round), communication is
    ``broadcast_s + gather_s`` per round and aggregation is ``aggregate_s`` per minibatch.

    ``rounds`` is the job's counting rule. With ``"per-epoch"``, ``last_round_workers`` and
    ``last_round_time_s`` describe the last round of every epoch and ``rounds_per_epoch`` and
    ``epoch_time_s`` are exact; with ``"continuous"`` the last round is the run's and
    ``rounds_per_epoch`` and ``epoch_time_s`` are averages over the epochs (run / epochs).
    """

    job: PSJob
    rounds: str
    per_worker_batch: float
    minibatches_per_epoch: int
    total_minibatches: int
    rounds_per_epoch: int | float
    last_round_workers: int
    total_rounds: int
    round_time_s: float
    last_round_time_s: float
    epoch_time_s: float
    total_time_s: float
    compute_time_s: float
    communication_time_s: float
    aggregation_time_s: float
    crossover_machines: int | None
    flags: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        """Plain Python types only; the job's inputs are flattened in."""
        out = self.job.to_dict()
        for key, value in asdict(self).items():
            if key != "job":
                out[key] = list(value) if isinstance(value, tuple) else value
        return out


@dataclass(frozen=True)
class LocalTraining:
    """The "train locally, then send the model back once" variant (see :func:`local_then_send`)."""

    job: PSJob
    workers_used: int
    local_minibatches: int
    compute_time_s: float
    communication_time_s: float
    aggregation_time_s: float
    total_time_s: float
    rounds_total_time_s: float
    note: str

    def to_dict(self) -> dict:
        out = self.job.to_dict()
        out.update({k: v for k, v in asdict(self).items() if k != "job"})
        return out


LOCAL_TRAINING_NOTE = (
    "Each worker trains its own copy on its shard and the server averages the copies once "
    "(one-shot model averaging, as in Zinkevich et al., 'Parallelized Stochastic Gradient "
    "Descent', NeurIPS 2010): far less communication, but not the same training as the "
    "synchronous rounds, so its accuracy has to be measured, not assumed."
)


def at_machines(job: PSJob, machines: int) -> PSJob:
    """The same job on ``machines`` workers.

    With ``batch_kind="per_worker"`` only ``machines`` changes. With ``"global"`` the
    per-worker share ``B / m`` changes, and compute time is taken proportional to it:
    ``compute_s * job.machines / machines``.

    Examples
    --------
    >>> job = PSJob(1024, batch=128, epochs=1, machines=4, broadcast_s=0, compute_s=2.0,
    ...             gather_s=0, aggregate_s=0, batch_kind="global")
    >>> at_machines(job, 8).compute_s   # 2.0 * 4 / 8
    1.0
    """
    machines = check_scalar(machines, "machines", int, min_val=1, fix="Use at least one worker machine")
    if job.batch_kind == "per_worker":
        return replace(job, machines=machines)
    return replace(job, machines=machines, compute_s=job.compute_s * job.machines / machines)


def crossover_machines(job: PSJob) -> int | None:
    """The smallest worker count at which communication + aggregation outweigh computation.

    Parameters
    ----------
    job : PSJob

    Returns
    -------
    int or None
        The smallest integer ``m >= 1`` with
        ``broadcast_s + gather_s + m * aggregate_s > compute_s(m)``, where ``compute_s(m)``
        is the job's ``compute_s`` (per-worker batch) or ``compute_s * job.machines / m``
        (global batch). ``None`` when no ``m`` satisfies it (``aggregate_s = 0`` and
        ``broadcast_s + gather_s <= compute_s`` with a per-worker batch).

    Notes
    -----
    Per-worker batch: ``m* = floor((compute_s - broadcast_s - gather_s) / aggregate_s) + 1``
    (1 when communication alone already exceeds compute). Global batch: with
    ``s = broadcast_s + gather_s`` and ``C = compute_s * job.machines``, the condition is
    ``aggregate_s * m**2 + s * m - C > 0``; ``m*`` is the integer just above its positive
    root ``(-s + sqrt(s**2 + 4 * aggregate_s * C)) / (2 * aggregate_s)``. Both are evaluated
    in exact rational arithmetic, so a tie (equality) is never mistaken for a crossing.

    Examples
    --------
    2 + 0.5 m > 5 first holds at m = 7 (at m = 6 the two sides are equal):

    >>> job = PSJob(1000, batch=32, epochs=1, machines=3, broadcast_s=1.0, compute_s=5.0,
    ...             gather_s=1.0, aggregate_s=0.5)
    >>> crossover_machines(job)
    7
    """
    tb, tc, tg, ta = (_exact(x) for x in (job.broadcast_s, job.compute_s, job.gather_s,
                                           job.aggregate_s))
    s = tb + tg
    if job.batch_kind == "per_worker":
        if s > tc:
            return 1
        if ta == 0:
            return None
        return math.floor((tc - s) / ta) + 1
    c = tc * job.machines                      # one worker's time for the whole round

    def excess(m: int) -> Fraction:            # > 0 past the crossover; increasing in m
        return ta * m * m + s * m - c

    if ta == 0:
        return None if s == 0 else math.floor(c / s) + 1
    root = (-float(s) + math.sqrt(float(s) ** 2 + 4 * float(ta) * float(c))) / (2 * float(ta))
    m = max(1, math.floor(root) + 1)
    while m > 1 and excess(m - 1) > 0:         # float root off by one: settle it exactly
        m -= 1
    while excess(m) <= 0:
        m += 1
    return m


def ps_rounds(job: PSJob) -> PSRounds:
    """Rounds, total time and the crossover of a parameter-server job.

    Parameters
    ----------
    job : PSJob

    Returns
    -------
    PSRounds

    Notes
    -----
    Per epoch: ``epoch_time_s = (R - 1) * round(m) + round(k_last)`` with ``round(k)`` the
    round time for ``k`` workers, and ``total_time_s = epochs * epoch_time_s``. Continuous:
    ``total_time_s = (total_rounds - 1) * round(m) + round(k_last)`` and
    ``epoch_time_s = total_time_s / epochs``. See the module docstring for the counting rules.

    Examples
    --------
    1000 samples, 32 per minibatch: ceil(1000/32) = 32 minibatches; 3 workers: ceil(32/3)
    = 11 rounds, the last with 32 - 10*3 = 2 workers. Full round 1 + 5 + 1 + 3*0.5 = 8.5 s,
    last round 7 + 2*0.5 = 8 s, epoch 10*8.5 + 8 = 93 s, two epochs 186 s:

    >>> job = PSJob(1000, batch=32, epochs=2, machines=3, broadcast_s=1.0, compute_s=5.0,
    ...             gather_s=1.0, aggregate_s=0.5)
    >>> r = ps_rounds(job)
    >>> r.total_rounds, r.last_round_workers, r.epoch_time_s, r.total_time_s
    (22, 2, 93.0, 186.0)

    The course's worked case: 76,800 samples in minibatches of 1,536 (50 an epoch), 10 epochs,
    6 machines, broadcast 1.5 s, compute 4 s, gather 1.5 s, 0.015 s per update. A full round
    takes 1.5 + 4 + 1.5 + 6*0.015 = 7.09 s, a round of 2 workers 7.03 s. Per epoch: 8 full
    rounds and one of 2 workers, 90 rounds, 10*(8*7.09 + 7.03) = 637.5 s. Continuous: the
    500 minibatches make 83 full rounds and one of 2 workers, 83*7.09 + 7.03 = 595.5 s:

    >>> course = PSJob(76_800, batch=1536, epochs=10, machines=6, broadcast_s=1.5,
    ...                compute_s=4.0, gather_s=1.5, aggregate_s=0.015)
    >>> for mode in ROUND_MODES:
    ...     r = ps_rounds(replace(course, rounds=mode))
    ...     print(mode, r.total_rounds, r.round_time_s, r.last_round_time_s, r.total_time_s)
    per-epoch 90 7.09 7.03 637.5
    continuous 84 7.09 7.03 595.5
    """
    n_mb, k_last, total_rounds = job.minibatches_per_epoch, job.last_round_workers, job.total_rounds
    full, last = job.round_time_s(job.machines), job.round_time_s(k_last)
    if job.rounds == "continuous":
        total = (total_rounds - 1) * full + last
        epoch = total / job.epochs
    else:
        epoch = (job.rounds_per_epoch - 1) * full + last
        total = job.epochs * epoch
    return PSRounds(
        job=job, rounds=job.rounds, per_worker_batch=job.per_worker_batch,
        minibatches_per_epoch=n_mb, total_minibatches=job.total_minibatches,
        rounds_per_epoch=job.rounds_per_epoch, last_round_workers=k_last,
        total_rounds=total_rounds, round_time_s=full, last_round_time_s=last,
        epoch_time_s=epoch, total_time_s=total,
        compute_time_s=total_rounds * job.compute_s,
        communication_time_s=total_rounds * (job.broadcast_s + job.gather_s),
        aggregation_time_s=job.total_minibatches * job.aggregate_s,
        crossover_machines=crossover_machines(job), flags=_flags(job),
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


def local_then_send(job: PSJob) -> LocalTraining:
    """Time of the variant where each worker trains locally and sends its model back once.

    Each worker receives the model once (``broadcast_s``), runs all minibatches of its shard
    for all epochs, sends its model back once (``gather_s``), and the server aggregates the
    ``workers_used = min(m, n_mb)`` models. Each worker keeps its shard of every epoch, so
    the job's ``rounds`` mode does not change this variant (only ``rounds_total_time_s``).

    Returns
    -------
    LocalTraining
        ``local_minibatches = epochs * ceil(n_mb / m)`` (the busiest worker when minibatches
        are dealt round-robin) and
        ``total_time_s = broadcast_s + local_minibatches * compute_s + gather_s
        + workers_used * aggregate_s``, next to ``rounds_total_time_s`` of the round model.

    Examples
    --------
    32 minibatches over 3 workers: the busiest has ceil(32/3) = 11 per epoch, 22 in two
    epochs; 1 + 22*5 + 1 + 3*0.5 = 113.5 s against 186 s in rounds:

    >>> r = local_then_send(PSJob(1000, batch=32, epochs=2, machines=3, broadcast_s=1.0,
    ...                           compute_s=5.0, gather_s=1.0, aggregate_s=0.5))
    >>> r.local_minibatches, r.total_time_s, r.rounds_total_time_s
    (22, 113.5, 186.0)
    """
    workers = min(job.machines, job.minibatches_per_epoch)
    local = job.epochs * job.shard_minibatches
    compute = local * job.compute_s
    comm = job.broadcast_s + job.gather_s
    agg = workers * job.aggregate_s
    return LocalTraining(
        job=job, workers_used=workers, local_minibatches=local, compute_time_s=compute,
        communication_time_s=comm, aggregation_time_s=agg, total_time_s=comm + compute + agg,
        rounds_total_time_s=ps_rounds(job).total_time_s, note=LOCAL_TRAINING_NOTE,
    )


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


def ps_time_vs_machines(job: PSJob, machines: Iterable[int] | None = None) -> pd.DataFrame:
    """Total time of the job over worker counts (the job moved with :func:`at_machines`).

    Parameters
    ----------
    job : PSJob
    machines : sequence of int, optional
        Worker counts to evaluate. Default: 1 … max(16, 2 m, 2 m*) with ``m*`` the
        crossover, capped at the minibatches per epoch (per-worker batch) or the global
        batch (global batch) and at :data:`MAX_DEFAULT_MACHINES`, always including m.

    Returns
    -------
    pandas.DataFrame
        One row per worker count: ``machines, minibatches_per_epoch, rounds_per_epoch,
        last_round_workers, round_compute_s, round_comm_s`` (broadcast + gather + m ×
        aggregate of a full round), ``round_time_s, total_time_s, local_time_s`` (the
        train-locally variant) and ``past_crossover`` (round_comm_s > round_compute_s).

    Examples
    --------
    >>> job = PSJob(1000, batch=32, epochs=2, machines=3, broadcast_s=1.0, compute_s=5.0,
    ...             gather_s=1.0, aggregate_s=0.5)
    >>> ps_time_vs_machines(job, [1, 3])["total_time_s"].tolist()   # 64*7 + 64*0.5; 186
    [480.0, 186.0]
    """
    if machines is None:
        machines = _default_machines(job)
    counts = [check_scalar(m, "machines", int, min_val=1, fix="Use at least one worker machine")
              for m in machines]
    if not counts:
        raise InputError("machines: expected at least one worker count; got none. "
                         "Pass e.g. range(1, 17).")
    rows = []
    for m in counts:
        j = at_machines(job, m)
        r = ps_rounds(j)
        comm = j.broadcast_s + j.gather_s + m * j.aggregate_s
        rows.append(dict(
            machines=m, minibatches_per_epoch=r.minibatches_per_epoch,
            rounds_per_epoch=r.rounds_per_epoch, last_round_workers=r.last_round_workers,
            round_compute_s=j.compute_s, round_comm_s=comm, round_time_s=r.round_time_s,
            total_time_s=r.total_time_s, local_time_s=local_then_send(j).total_time_s,
            past_crossover=comm > j.compute_s,
        ))
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- private steps

def _exact(x: float) -> Fraction:
    """The decimal value as written: ``Fraction(repr(0.1)) == 1/10``."""
    return Fraction(repr(float(x)))


def _flags(job: PSJob) -> tuple[str, ...]:
    flags = []
    n_mb = job.minibatches_per_epoch
    if job.rounds == "continuous" and job.machines > job.total_minibatches:
        flags.append(f"More workers ({job.machines}) than minibatches in the run "
                     f"({job.total_minibatches}): {job.machines - job.total_minibatches} "
                     "workers idle.")
    elif job.rounds == "continuous" and job.machines > n_mb:
        flags.append(f"More workers ({job.machines}) than minibatches per epoch ({n_mb}): "
                     "a round spans more than one epoch.")
    elif job.machines > n_mb:
        flags.append(f"More workers ({job.machines}) than minibatches per epoch ({n_mb}): "
                     f"{job.machines - n_mb} workers idle in every round.")
    if job.batch_kind == "global":
        b = job.batch / job.machines
        if b < 1:
            flags.append(f"Per-worker share batch/machines = {b:g} is under one sample.")
        elif job.batch % job.machines:
            flags.append(f"batch {job.batch} does not split evenly over {job.machines} "
                         f"workers; the model uses the average share {b:g}.")
    return tuple(flags)


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


def _default_machines(job: PSJob) -> range:
    cross = crossover_machines(job) or 0
    upper = max(16, 2 * job.machines, 2 * cross)
    cap = job.minibatches_per_epoch if job.batch_kind == "per_worker" else job.batch
    upper = max(min(upper, cap, MAX_DEFAULT_MACHINES), job.machines)
    return range(1, upper + 1)
