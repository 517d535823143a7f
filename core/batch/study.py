"""The batch study of a set of logs: each run measured at its batch, the job's batch-scaling model
learned from them, and one row per run of where it crossed the target.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from core.batch.batch import batch_scaling
from core.batch.measured_runs import BatchRun, measure_batch_run
from core.batch.scaling_model import BatchScaling
from core.defaults import DEFAULT_LEVEL
from core.errors import InputError, LogFormatError
from core.logs import RunLog
from core.logs.noise import GradientNoise
from core.runs import metric_column
from core.targets import Target


def crossing_row(log: RunLog, target: Target) -> int | None:
    """1-based row of a per-evaluation log where ``target`` (either direction) was first met (None: never).

    >>> from core.logs import read_log
    >>> from core.targets import accuracy_target
    >>> log = read_log(b"progress,iteration,metric\\n1,1,0.5\\n2,2,0.95\\n", "t/validation-8.csv")
    >>> crossing_row(log, accuracy_target(0.9))
    2
    """
    column = metric_column(log, target.metric)
    if column is None:
        return None
    hit = target.first_met(log.frame[column].to_numpy(dtype=float))
    return None if hit is None else hit + 1


@dataclass(frozen=True)
class BatchStudy:
    """What a set of runs says about batch scaling: the model, or why there is none.

    ``runs`` are every run measured (reached or left out, with notes); ``model`` is None
    when nothing could be fitted and ``problem`` says why; ``errors`` are ``(source,
    message)`` for runs whose batch could not be told.
    """

    runs: tuple[BatchRun, ...]
    model: BatchScaling | None = None
    problem: str = ""
    errors: tuple[tuple[str, str], ...] = ()

    @property
    def left_out(self) -> tuple[BatchRun, ...]:
        return tuple(r for r in self.runs if not r.reached)


def batch_study(logs: Sequence[RunLog], *, target: Target, noise: dict[str, GradientNoise] | None = None,
                batches: Sequence[float] | None = None, samples_per_epoch: float | None = None,
                level: float = DEFAULT_LEVEL, base_batch: float | None = None,
                learning_rates: Sequence[float] | None = None) -> BatchStudy:
    """Measure every run and fit the batch-scaling model; refusals are kept, not raised.

    The one call of the batch-size view and of ``python -m core batch-scaling``: each log
    gives a :class:`BatchRun` (:func:`measure_batch_run`; a log whose batch cannot be told
    is named in ``errors``), then :func:`batch_scaling` (a fit, or one run's noise scale).
    ``batches`` and ``learning_rates`` (each log's, in the logs' order) replace what the logs say: a
    course log has no learning-rate column, so a capped rate is seen only when it is given.

    Examples
    --------
    >>> from core.logs import read_log
    >>> logs = [read_log(f"progress,iteration,metric\\n1,{s},0.5\\n2,{2 * s},0.95\\n".encode(), f"j/validation-{b}.csv")
    ...         for b, s in ((100, 500), (400, 200), (1600, 125))]
    >>> from core.targets import accuracy_target
    >>> study = batch_study(logs, target=accuracy_target(0.9))
    >>> [r.samples_to_target for r in study.runs]            # 1000·100, 400·400, 250·1600
    [100000.0, 160000.0, 400000.0]
    >>> round(study.model.e_min), round(study.model.b_noise)  # the line 80,000 + 200·B: B_noise = 80000/200
    (80000, 400)
    """
    if learning_rates is not None and len(learning_rates) != len(logs):
        raise InputError(f"--lr: expected one learning rate per log ({len(logs)}); got {len(learning_rates)}. "
                         "Give them in the logs' order, or leave them out to read them from the logs.")
    measured, errors = [], []
    for i, log in enumerate(logs):
        try:
            run = measure_batch_run(log, target=target, samples_per_epoch=samples_per_epoch,
                                    global_batch=None if batches is None else batches[i])
            measured.append(run if learning_rates is None else replace(run, learning_rate=float(learning_rates[i])))
        except InputError as exc:
            errors.append((log.source, str(exc)))
    rows = {log.source: crossing_row(log, target) for log in logs}
    try:
        model = batch_scaling(measured, noise=noise, rows={k: v for k, v in rows.items() if v is not None},
                              base_batch=base_batch, level=level, samples_per_epoch=samples_per_epoch)
    except (InputError, LogFormatError) as exc:
        return BatchStudy(tuple(measured), None, str(exc), tuple(errors))
    return BatchStudy(tuple(measured), model, "", tuple(errors))
