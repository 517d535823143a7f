"""Predict within the phases of a learning-rate schedule (``core.prediction.schedule``).

``predict_epoch_at_target(..., schedule=...)`` comes here: the fit sees only the epochs after
the last drop (renumbered from 1, the result shifted back), a prediction that lands after the
next drop is refused, and one made while a smooth decay is still going on has its interval
opened down to the next epoch.  Every change is said in ``TargetPrediction.flags`` or
``reason``.
"""

from __future__ import annotations

from dataclasses import replace

from core.logs import RunLog
from core.prediction.predict import TargetPrediction, _reached, n_epochs, predict_epoch_at_target
from core.prediction.schedule import MIN_PHASE_EPOCHS, Schedule


def predict_in_phases(log: RunLog, schedule: Schedule, **kwargs) -> TargetPrediction:
    """:func:`predict_epoch_at_target` within the current phase of ``schedule``, then its future checked.

    ``kwargs`` are ``predict_epoch_at_target``'s (``target_acc``, ``family``, ``route``, ``level``, ...).
    """
    n = n_epochs(log)
    d = schedule.phase_start(n)
    flags: list[str] = []
    if _reached(log, kwargs["target_acc"]):
        return predict_epoch_at_target(log, **kwargs)
    if d > 0:
        if n - d < MIN_PHASE_EPOCHS:
            return TargetPrediction(
                log.source, kwargs["route"], kwargs["family"], kwargs["target_acc"], n, "refused",
                level=kwargs["level"], steps_per_epoch=log.steps_per_epoch,
                reason=(f"only {n - d:g} epochs since the learning-rate drop after epoch {d:g} ({schedule.source}): "
                        f"too few to fit the new phase (at least {MIN_PHASE_EPOCHS})"))
        p = predict_epoch_at_target(epochs_after(log, d), **kwargs)
        p = _shift(p, d, n)
        flags.append(f"fitted on epochs {d + 1:g}–{n} only, after the learning-rate drop after epoch {d:g} "
                     f"({schedule.source})")
    else:
        p = predict_epoch_at_target(log, **kwargs)
    nxt = schedule.next_drop(n)
    if p.status in ("predicted", "unreachable") and nxt is not None and (p.epoch is None or p.epoch > nxt):
        where = "never reaches it before" if p.epoch is None else f"reaches it only at epoch {p.epoch:.0f}, after"
        return replace(p, status="refused", epoch=None, epoch_low=None, epoch_high=None, flags=tuple(flags),
                       reason=(f"the curve fitted on the current phase {where} the learning-rate drop after epoch "
                               f"{nxt:g} ({schedule.source}); a smooth curve cannot know the jump a drop brings, "
                               "so no extrapolation across it is given"))
    if p.status == "predicted" and schedule.decaying_after(n):
        flags.append(f"the learning rate keeps decaying until epoch {schedule.end_epoch:g} ({schedule.kind}, "
                     f"{schedule.source}): runs usually speed up as it anneals, so the interval is opened down "
                     "to the next epoch")
        p = replace(p, epoch_low=float(n + 1))
    return replace(p, flags=tuple(flags))


def epochs_after(log: RunLog, d: float) -> RunLog:
    """The log's epochs after epoch ``d``, renumbered from 1 (steps counted from the end of epoch ``d``).

    A new ``RunLog``; ``log`` is not changed.
    """
    frame = log.frame
    keep = (frame["epoch"] > d).fillna(False).to_numpy(dtype=bool)
    before = frame.loc[~keep & frame["epoch"].notna().to_numpy(dtype=bool), "global_step"]
    shift = float(before.max()) if len(before) else 0.0
    part = frame.loc[keep].copy()
    part["epoch"] = (part["epoch"] - int(d)).astype("Int64")
    part["global_step"] = part["global_step"] - shift
    return replace(log, frame=part.reset_index(drop=True))


def _shift(p: TargetPrediction, d: float, n: int) -> TargetPrediction:
    """A prediction made on the epochs after ``d``, back on the log's own epoch numbers."""
    def add(v):
        return None if v is None else float(v) + d

    return replace(p, epoch=add(p.epoch), epoch_low=add(p.epoch_low), epoch_high=add(p.epoch_high),
                   epoch_raw=add(p.epoch_raw), n_epochs_observed=n, epoch_offset=float(d))
