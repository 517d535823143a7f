"""A parameter-server job, its size at another worker count, and the crossover worker count.

A :class:`PSJob` is one server and ``m`` workers training in rounds (the counting rules are in
:mod:`core.scaling.ps_rounds`). :func:`at_machines` rescales it to another ``m``.

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
from dataclasses import KW_ONLY, asdict, dataclass, replace
from fractions import Fraction

from core.validation import check_option, check_scalar

BATCH_KINDS: tuple[str, ...] = ("per_worker", "global")
#: how rounds are counted: a new round at each epoch start (default), or across epochs
ROUND_MODES: tuple[str, ...] = ("per-epoch", "continuous")
#: what each of :data:`ROUND_MODES` means, in a few words (for the page and the CLI)
ROUND_MODE_TEXT: dict[str, str] = {
    "per-epoch": "each epoch starts a new round",
    "continuous": "the minibatches of the whole run flow across epochs",
}


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
        check_option(self.batch_kind, "batch_kind", BATCH_KINDS, fix="Say whether batch is per worker or global")
        check_option(self.rounds, "rounds", ROUND_MODES, fix="Say whether each epoch starts a new round")

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


def _exact(x: float) -> Fraction:
    """The decimal value as written: ``Fraction(repr(0.1)) == 1/10``."""
    return Fraction(repr(float(x)))
