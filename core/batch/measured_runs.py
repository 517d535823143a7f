"""One run of a job at its global batch: the samples and steps it took to reach the target, measured
from its log at the resolution of its evaluations.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from core.errors import InputError
from core.logs import ABORTED_FLAG, RunLog
from core.runs import find_target_crossing, metric_column
from core.targets import Target, target_label
from core.validation import check_scalar


# --------------------------------------------------------------------------- measured runs
@dataclass(frozen=True)
class BatchRun:
    """One run's samples, steps and epochs to target at its global batch.

    ``reached`` is False (and the counts None) when the run never passed the target, or
    when it was aborted; ``note`` says why it is left out of a fit.  ``samples_per_s`` is the
    throughput the log says (an MLLOG ``tracked_stats``), None when it says none.
    ``resolution`` is how many samples lie between the evaluation that passed the target and
    the one before (the run crossed somewhere in between: one epoch for whole-epoch
    evaluations), None when unknown; ``learning_rate`` the largest learning rate the log
    shows (its ``lr`` column), None when it has none.  ``in_fit`` is False for a run that reached the target
    but is kept out of the scaling fit (its learning rate capped: :func:`core.batch.batch.learning_rate_cap`);
    its measured counts stay, shown and marked, and ``note`` says why.
    """

    source: str
    global_batch: float
    reached: bool
    samples_to_target: float | None = None
    steps_to_target: float | None = None
    epochs_to_target: float | None = None
    note: str = ""
    samples_per_s: float | None = None
    resolution: float | None = None
    learning_rate: float | None = None
    in_fit: bool = True

    def to_dict(self) -> dict:
        return asdict(self)


def run_batch(log: RunLog, global_batch: float | None = None) -> float:
    """The run's global batch: given, else from the log (MLLOG ``global_batch_size``, a ``-<batch>`` name).

    Raises
    ------
    InputError
        When neither says it.
    """
    batch = global_batch if global_batch is not None else log.meta.global_batch
    if batch is None:
        raise InputError(f"{log.source}: expected the run's global batch; got none (the log does not say it and "
                         "its name has no -<batch> suffix). Name the file <name>-<batch>.csv, or give the batches "
                         "(batch-scaling --batch B,... in file order).")
    return check_scalar(batch, f"{log.source}: global batch", float, min_val=0, include_boundaries="neither",
                        fix="Give samples per optimiser step")


#: what :func:`measure_batch_run` measured, per log (a log is immutable and hashed by identity, so the entry goes
#: with it): the priors of a run's other runs measure the same logs hundreds of times (issue 23's calibrated
#: posterior: 10,785 measurements of 25 MLPerf logs for one prediction)
_MEASURED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_MEASURED_LOCK = threading.Lock()


def measure_batch_run(log: RunLog, *, target: Target, global_batch: float | None = None,
                      samples_per_epoch: float | None = None) -> BatchRun:
    """:func:`measure_run` of a log, remembered for as long as the log lives (the same arguments, the same
    :class:`BatchRun`, which is immutable)."""
    if not isinstance(target, Target):
        raise InputError(f"{log.source}: expected a Target (acc>=0.93, val_loss<=3.28); got {target!r}.")
    key = (target, global_batch, samples_per_epoch)
    with _MEASURED_LOCK:
        known = _MEASURED.get(log, {}).get(key)
    if known is not None:
        return known
    measured = measure_run(log, target=target, global_batch=global_batch, samples_per_epoch=samples_per_epoch)
    with _MEASURED_LOCK:
        _MEASURED.setdefault(log, {})[key] = measured
    return measured


def measure_run(log: RunLog, *, target: Target, global_batch: float | None = None,
                samples_per_epoch: float | None = None) -> BatchRun:
    """Samples, steps and epochs to ``target`` of one run (epoch-level criterion; either direction).

    ``samples = step at target × B`` (the step where the epoch-level criterion of
    :func:`core.runs.find_target_crossing` fires; for an MLLOG or Pollux trace the step of
    the first evaluation above target), ``steps = samples / B`` (a course ``_val`` log: epochs × ⌈N/B⌉, the
    optimiser steps with each epoch's last partial batch, as Lightning and Pollux count them; the model's
    predicted steps stay E(B)/B) and ``epochs = samples / N``
    with ``N`` the samples per epoch (given, or the log's ``train_samples``); without ``N``
    the crossing's epoch, except for a Pollux trace, whose epochs are AdaptDL's statistical
    epochs (then ``epochs`` is None).

    Examples
    --------
    >>> from core.logs import read_log
    >>> log = read_log(b"progress,iteration,metric\\n10,10,0.5\\n20,20,0.91\\n30,30,0.95\\n", "job/validation-64.csv")
    >>> from core.targets import accuracy_target
    >>> r = measure_batch_run(log, target=accuracy_target(0.9), samples_per_epoch=640)
    >>> r.samples_to_target, r.steps_to_target, r.epochs_to_target     # 20 steps × 64 = 1280 = 2 epochs
    (1280.0, 20.0, 2.0)
    """
    batch = run_batch(log, global_batch)
    speed = log.meta.throughput
    if ABORTED_FLAG in log.flags:
        return BatchRun(log.source, batch, False, note="aborted run (run_stop status 'aborted'): left out",
                        samples_per_s=speed)
    lr = log.frame["lr"].to_numpy(dtype=float) if "lr" in log.frame else np.array([])
    lr = float(np.nanmax(lr)) if np.isfinite(lr).any() else None
    crossing = find_target_crossing(log, target, criterion="epoch")
    if not crossing.reached:
        why = crossing.note if crossing.note.startswith("no ") else f"never reached {target_label(target)}"
        return BatchRun(log.source, batch, False, note=f"{why}: left out", samples_per_s=speed, learning_rate=lr)
    n = samples_per_epoch or log.meta.samples_per_epoch
    if log.counts_validation_batches:
        # a course validation log counts validation batches in its steps: training samples are epochs × N
        if not n or crossing.epoch is None:
            return BatchRun(log.source, batch, False, samples_per_s=speed, learning_rate=lr,
                            note="validation log (_val): its steps count validation batches, not training steps; "
                                 "give the training samples per epoch (--samples-per-epoch N): left out")
        samples = float(crossing.epoch) * float(n)
        steps = float(crossing.epoch) * math.ceil(float(n) / batch)     # the epoch's last batch kept (PyTorch)
        return BatchRun(log.source, batch, True, samples, steps, float(crossing.epoch),
                        samples_per_s=speed, resolution=float(n), learning_rate=lr)
    if log.fmt == "mllog" and crossing.samples is not None:
        samples = float(crossing.samples)           # MLLOG counts the samples itself (its step is samples / B)
    elif log.fmt == "metric-trace":
        samples = float(crossing.step) * batch      # AdaptDL's statistical epochs: no epoch structure in the steps
    else:
        samples = samples_at_step(float(crossing.step), batch, n, log.steps_per_epoch)
    if n:
        epochs = samples / float(n)
    else:
        epochs = None if log.fmt == "metric-trace" or crossing.epoch is None else float(crossing.epoch)
    return BatchRun(log.source, batch, True, samples, float(crossing.step), epochs, samples_per_s=speed,
                    resolution=evaluation_resolution(log, crossing, batch), learning_rate=lr)


def samples_at_step(step: float, batch: float, samples_per_epoch: float | None = None,
                    steps_per_epoch: int | None = None) -> float:
    """Training samples seen after ``step`` optimiser steps at global batch ``batch``.

    ``step × batch``, except where the epoch's last batch is partial (a loader that keeps it, as
    PyTorch's does by default: ``N`` samples make ``ceil(N / B)`` steps): when ``N`` is known and the
    log's steps per epoch are ``ceil(N / B)``, each whole epoch counts ``N`` samples and the steps
    into the current one ``B`` each.  A log that counts samples itself (MLLOG) agrees with this;
    ``step × batch`` would count ``B·ceil(N / B) − N`` phantom samples an epoch.

    >>> samples_at_step(630, 64, 4000, 63)          # 10 epochs of 4,000 (63 steps, the last one of 32)
    40000.0
    >>> samples_at_step(640, 64, 4000, 63), samples_at_step(640, 64)   # 10 epochs and 10 steps; steps x batch
    (40640.0, 40960.0)
    >>> samples_at_step(250, 16, 4000, 250)         # B divides N: the same as steps x batch
    4000.0
    """
    if not samples_per_epoch or not steps_per_epoch or steps_per_epoch != math.ceil(samples_per_epoch / batch) \
            or samples_per_epoch % batch == 0:
        return float(step) * float(batch)
    whole, into = divmod(float(step), float(steps_per_epoch))
    return whole * float(samples_per_epoch) + min(into * float(batch), float(samples_per_epoch))


def evaluation_resolution(log: RunLog, crossing, batch: float) -> float | None:
    """Samples between the evaluation that passed the target and the one before it (from 0 for the first).

    Per-step logs judged by epoch: one epoch of steps; else the evaluations' own spacing.
    """
    if log.granularity == "step" and crossing.criterion == "epoch" and log.steps_per_epoch:
        return float(log.steps_per_epoch) * batch
    column = metric_column(log, crossing.target.metric) or "acc"
    steps = log.frame.loc[log.frame[column].notna(), "global_step"].to_numpy(dtype=float)
    before = steps[steps < float(crossing.step)]
    gap = float(crossing.step) - (float(before.max()) if before.size else 0.0)
    return gap * batch if gap > 0 else None


def measure_batch_runs(logs: Sequence[RunLog], *, target: Target, batches: Sequence[float] | None = None,
                       samples_per_epoch: float | None = None) -> tuple[BatchRun, ...]:
    """:func:`measure_batch_run` for each log, ``batches`` given in the logs' order (or read from them)."""
    if batches is not None and len(batches) != len(logs):
        raise InputError(f"--batch: expected one global batch per log ({len(logs)}); got {len(batches)}. "
                         "Give them in the logs' order, or leave them out to read them from the logs.")
    return tuple(measure_batch_run(log, target=target, samples_per_epoch=samples_per_epoch,
                                   global_batch=None if batches is None else batches[i])
                 for i, log in enumerate(logs))
