"""Changes of learning-rate schedule a log declares, and whether a progress prediction crosses one unseen.

A power law fitted to the observed part of a run knows nothing of a change that comes later: the end of
a warm-up, the start of a warmup-stable-decay (WSD) cool-down (after a stable phase, the loss falls
fastest in the final decay: a curve fitted before it over-predicts the progress still needed), or the
end of the declared schedule.  The readers leave the declaration in the log's metadata
(``RunMeta.max_steps``, ``warmup_steps``, ``decay_steps``, in optimiser steps: MLLOG's
``opt_learning_rate_warmup_steps`` / ``opt_learning_rate_decay_steps``, a speedrun script's
``num_iterations`` and cool-down).  :func:`schedule_flags` says when a prediction lies past such a
change that the observed part does not contain, so the answer never extrapolates through a change it
was told about without saying so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.logs import RunLog


@dataclass(frozen=True)
class ScheduleChange:
    """A change of schedule at optimiser step ``step``: ``what`` happens there."""

    step: float
    what: str


def declared_changes(log: RunLog) -> list[ScheduleChange]:
    """The changes of schedule ``log`` declares, in step order.

    A decay that starts after a stable phase (``max_steps − decay_steps`` beyond the warm-up) is a
    warmup-stable-decay cool-down; a decay that starts right after the warm-up (cosine, linear) is one
    smooth phase, whose only changes are its ends.

    >>> from core.datasets import builtin_log_files
    >>> from core.logs import read_log_file
    >>> name, path = builtin_log_files("speedrun")[0]
    >>> [(c.step, c.what.split(":")[0]) for c in declared_changes(read_log_file(path, source=name))]
    [(855.0, 'the learning rate starts its final decay'), (1670.0, 'the declared schedule ends')]
    """
    meta = log.meta
    warmup = float(meta.warmup_steps or 0.0)
    changes = []
    if warmup > 0:
        changes.append(ScheduleChange(warmup, "the warm-up ends"))
    if meta.max_steps and meta.decay_steps:
        start = float(meta.max_steps) - float(meta.decay_steps)
        if start > warmup + 1:
            changes.append(ScheduleChange(start, f"the learning rate starts its final decay: a stable phase "
                                                 f"before it, a cool-down over the last {meta.decay_steps:,.0f} "
                                                 "steps (warmup-stable-decay)"))
    if meta.max_steps:
        changes.append(ScheduleChange(float(meta.max_steps), "the declared schedule ends"))
    return sorted(changes, key=lambda c: c.step)


def declared_end(log: RunLog) -> float | None:
    """The last step of the schedule ``log`` declares (``RunMeta.max_steps``), None when it declares none.

    >>> from core.datasets import builtin_log_files
    >>> from core.logs import read_log_file
    >>> name, path = builtin_log_files("speedrun")[0]
    >>> declared_end(read_log_file(path, source=name))
    1670.0
    """
    return float(log.meta.max_steps) if log.meta.max_steps else None


def step_to_progress(steps: np.ndarray, progress: np.ndarray, step: float) -> float:
    """The progress (samples, tokens, steps or epochs) at optimiser step ``step``: interpolated in the logged
    ``(steps, progress)`` pairs, continued at the last logged rate past them.

    >>> step_to_progress(np.array([10.0, 20.0]), np.array([640.0, 1280.0]), 40)
    2560.0
    """
    steps, progress = np.asarray(steps, dtype=float), np.asarray(progress, dtype=float)
    keep = np.isfinite(steps) & np.isfinite(progress) & (steps > 0)
    steps, progress = steps[keep], progress[keep]
    if not steps.size:
        return float("nan")
    order = np.argsort(steps)
    steps, progress = steps[order], progress[order]
    if step <= steps[-1]:
        return float(np.interp(step, steps, progress))
    return float(progress[-1] * step / steps[-1])


def schedule_flags(log: RunLog, progress: np.ndarray, observed: float, predicted: float | None,
                   unit: str) -> tuple[str, ...]:
    """One sentence per declared change the prediction ``predicted`` lies past and the observed part (up to
    ``observed``, in ``unit``) does not reach; ``progress`` is the progress of every row of ``log``.

    >>> from core.datasets import builtin_log_files
    >>> from core.logs import read_log_file
    >>> from core.prediction.progress_measure import progress
    >>> name, path = builtin_log_files("speedrun")[0]
    >>> log = read_log_file(path, source=name)
    >>> flags = schedule_flags(log, progress(log), 100e6, 500e6, "tokens")
    >>> len(flags), flags[0].startswith("the prediction (500,000,000 tokens) lies past step 855 (336,199,680")
    (1, True)
    >>> schedule_flags(log, progress(log), 100e6, 200e6, "tokens")
    ()
    """
    if predicted is None or not np.isfinite(predicted):
        return ()
    steps = log.frame["global_step"].to_numpy(dtype=float)
    flags = []
    for change in declared_changes(log):
        at = step_to_progress(steps, progress, change.step)
        if np.isfinite(at) and observed < at < predicted:
            flags.append(f"the prediction ({predicted:,.0f} {unit}) lies past step {change.step:,.0f} "
                         f"({at:,.0f} {unit}), where {change.what}; the observed part ends before it and the "
                         "curve fitted to it does not know the change"
                         + (" (the loss falls fastest in a final decay: read the prediction as pessimistic)"
                            if "final decay" in change.what else ""))
    return tuple(flags)
