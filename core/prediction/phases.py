"""The steps of a prediction within the phases of a learning-rate schedule (``core.prediction.schedule``).

``predict_epoch_at_target(..., schedule=...)`` (:mod:`core.prediction.predict`, the public
predictor over its private unscheduled one) uses them: the fit sees only the epochs after the
last drop (:func:`epochs_after`, renumbered from 1; :func:`shift_prediction` puts the result
back), a prediction that lands after the next drop is refused and one made while a smooth decay
is still going on has its interval opened down to the next epoch (:func:`check_future`).  Every
change is said in ``TargetPrediction.flags`` or ``reason``.  This module knows the prediction
only through :func:`dataclasses.replace` on its fields, and imports nothing of ``predict``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TypeVar

from core.logs import RunLog
from core.prediction.schedule import Schedule

#: a ``core.prediction.target_prediction.TargetPrediction``
P = TypeVar("P")


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


def shift_prediction(p: P, d: float, n: int) -> P:
    """A prediction made on the epochs after ``d``, back on the log's own epoch numbers."""
    def add(v):
        return None if v is None else float(v) + d

    return replace(p, epoch=add(p.epoch), epoch_low=add(p.epoch_low), epoch_high=add(p.epoch_high),
                   epoch_raw=add(p.epoch_raw), n_epochs_observed=n, epoch_offset=float(d))


def check_future(p: P, schedule: Schedule, n: int, flags: list[str]) -> P:
    """``p`` (made on ``n`` observed epochs) refused across the next drop, or opened under a decay; ``flags`` kept."""
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
