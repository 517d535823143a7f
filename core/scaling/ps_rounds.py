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

The job itself, its size at another worker count and the crossover worker count are in
:mod:`core.scaling.ps_job`; the schedule tables in :mod:`core.scaling.ps_schedule`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

import pandas as pd

from core.errors import InputError
from core.scaling.ps_job import PSJob, at_machines, crossover_machines
from core.validation import check_scalar

#: largest default sweep of :func:`ps_time_vs_machines`
MAX_DEFAULT_MACHINES = 1024


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
    >>> from dataclasses import replace
    >>> from core.scaling.ps_job import ROUND_MODES
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


def _default_machines(job: PSJob) -> range:
    cross = crossover_machines(job) or 0
    upper = max(16, 2 * job.machines, 2 * cross)
    cap = job.minibatches_per_epoch if job.batch_kind == "per_worker" else job.batch
    upper = max(min(upper, cap, MAX_DEFAULT_MACHINES), job.machines)
    return range(1, upper + 1)
