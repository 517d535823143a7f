"""Where a run reached its target accuracy, and where a fitted curve reaches a loss.

Two criteria for "the target was reached" in a per-step log whose ``acc`` is a running
average reset every epoch:

* ``"epoch"`` (default): the first epoch whose **final** running accuracy exceeds the
  target, i.e. the accuracy over that whole epoch; its step is that epoch's last step and
  the loss there is the mean loss over that epoch (the same averaging as the accuracy).
* ``"first-row"`` (the course's): the first logged row whose accuracy exceeds the target.
  Early rows of an epoch average only a few batches, so this fires epochs early on noisy
  runs; the loss there is that row's loss.

For epoch-level traces (one row per epoch) both criteria pick the first row above target.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from core.curves import FitResult
from core.defaults import DEFAULT_TARGET_ACC
from core.errors import InputError
from core.logs import RunLog, epoch_of_step
from core.validation import check_scalar

CRITERIA: dict[str, str] = {
    "epoch": "epoch-level: first epoch whose final running accuracy exceeds the target "
             "(step = that epoch's last step; loss = that epoch's mean loss)",
    "first-row": "first row: first logged row whose accuracy exceeds the target (the course's "
                 "criterion; fires early on running averages)",
}


def check_target_acc(target_acc: float, name: str = "target_acc") -> float:
    """Validate a target accuracy given as a fraction.

    >>> check_target_acc(0.92)
    0.92
    """
    hint = ""
    if isinstance(target_acc, (int, float, np.floating)) and not isinstance(target_acc, bool) \
            and 1 < target_acc <= 100:
        hint = f"Did you mean {target_acc / 100:g}?"
    return check_scalar(target_acc, name, float, min_val=0, max_val=1, include_boundaries="neither", fix=hint)


@dataclass(frozen=True)
class TargetCrossing:
    """Where a logged run first passed ``target_acc`` (``reached`` False when never)."""

    target_acc: float
    criterion: str
    reached: bool
    step: float | None = None
    epoch: int | None = None
    loss: float | None = None
    acc: float | None = None
    note: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def _mean_or_none(values: pd.Series) -> float | None:
    v = values.to_numpy(dtype=float)
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else None


def _epoch_ends(rows: pd.DataFrame) -> np.ndarray:
    """Positions (in ``rows``) of the last row of each epoch, ordered by epoch (rows without an epoch skipped)."""
    epoch = rows["epoch"].to_numpy(dtype=float, na_value=np.nan)
    known = np.flatnonzero(~np.isnan(epoch))
    backwards = epoch[known][::-1]
    _, first_from_end = np.unique(backwards, return_index=True)   # unique epochs ascending
    return known[len(known) - 1 - first_from_end]


def find_target_crossing(log: RunLog, target_acc: float = DEFAULT_TARGET_ACC, *,
                         criterion: str = "epoch") -> TargetCrossing:
    """First step and epoch where the run's accuracy exceeded ``target_acc``.

    Parameters
    ----------
    log : RunLog
    target_acc : float, default 0.92
        A fraction in (0, 1); "exceeds" is strict (``acc > target_acc``).
    criterion : {"epoch", "first-row"}, default "epoch"
        See the module docstring.

    Returns
    -------
    TargetCrossing
        ``reached=False`` when the log has no accuracy or never passes the target.
    """
    target_acc = check_target_acc(target_acc)
    if criterion not in CRITERIA:
        raise InputError(f"criterion: expected one of {', '.join(CRITERIA)}; got {criterion!r}.")
    frame = log.frame
    if not log.has_acc:
        return TargetCrossing(target_acc, criterion, False, note="no accuracy column")
    rows = frame[frame["acc"].notna()]
    note = ""
    if criterion == "epoch" and log.granularity == "step":
        if rows["epoch"].isna().all():
            criterion, note = "first-row", "epochs unknown (set steps per epoch): first-row criterion used"
        else:
            ends = _epoch_ends(rows)           # the last logged row of each epoch, by epoch
            hits = np.flatnonzero(rows["acc"].to_numpy(dtype=float)[ends] > target_acc)
            if hits.size == 0:
                return TargetCrossing(target_acc, criterion, False)
            last = rows.iloc[int(ends[hits[0]])]
            epoch = int(last["epoch"])
            loss = _mean_or_none(frame.loc[frame["epoch"] == epoch, "loss"])
            return TargetCrossing(target_acc, criterion, True, step=float(last["global_step"]),
                                  epoch=epoch, loss=loss, acc=float(last["acc"]))
    above = rows[rows["acc"] > target_acc]
    if above.empty:
        return TargetCrossing(target_acc, criterion, False, note=note)
    first = above.iloc[0]
    epoch = first["epoch"]
    loss = float(first["loss"]) if pd.notna(first["loss"]) else None
    return TargetCrossing(target_acc, criterion, True, step=float(first["global_step"]),
                          epoch=None if pd.isna(epoch) else int(epoch), loss=loss,
                          acc=float(first["acc"]), note=note)


def best_accuracy(log: RunLog, *, criterion: str = "epoch") -> float | None:
    """The highest accuracy ``log`` shows under ``criterion``: it reached a target ``t`` exactly when this is ``> t``.

    The same accuracies :func:`find_target_crossing` compares with the target (each epoch's
    final running accuracy for ``"epoch"`` on a per-step log with epochs; every row
    otherwise), so a table of runs can say "reached or not" for any target without the log.
    ``None`` when the log has no accuracy.

    >>> from core.logs import read_log
    >>> log = read_log(b"epoch,step,loss,acc\\n1,1,2,0.5\\n1,2,1.9,0.95\\n1,3,1.8,0.7\\n2,1,1,0.8\\n2,2,1,0.9\\n"
    ...                b"2,3,1,0.85\\n", "a.csv")
    >>> best_accuracy(log), best_accuracy(log, criterion="first-row")    # epoch ends: 0.7, 0.85
    (0.85, 0.95)
    >>> find_target_crossing(log, 0.84).reached, find_target_crossing(log, 0.85).reached
    (True, False)
    """
    if criterion not in CRITERIA:
        raise InputError(f"criterion: expected one of {', '.join(CRITERIA)}; got {criterion!r}.")
    if not log.has_acc:
        return None
    rows = log.frame[log.frame["acc"].notna()]
    acc = rows["acc"].to_numpy(dtype=float)
    if criterion == "epoch" and log.granularity == "step" and not rows["epoch"].isna().all():
        acc = acc[_epoch_ends(rows)]
    return float(np.max(acc))


@dataclass(frozen=True)
class StepPrediction:
    """The step (and epoch) where a fitted curve falls to a loss threshold.

    ``step_low``/``step_high`` bound a ``level`` interval (``inf`` high: within the
    interval the curve may never get there); ``interval_method`` says where it comes from.
    """

    loss_threshold: float
    reachable: bool
    step: float | None = None
    epoch: int | None = None
    reason: str = ""
    step_low: float | None = None
    step_high: float | None = None
    level: float | None = None
    interval_method: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


#: how the default interval of ``predict_step_at_loss`` is made
COVARIANCE_INTERVAL = ("parameter covariance of the fit: 4000 seeded draws of the parameters; "
                       "assumes independent residuals, so it is narrower than the real uncertainty")


def predict_step_at_loss(fit: FitResult, loss_threshold: float, steps_per_epoch: int | None = None,
                         *, level: float = 0.8, seed: int = 0) -> StepPrediction:
    """Step ``k*`` where the fitted curve first reaches ``loss_threshold``, and its epoch.

    For the Optimus curve ``k* = (1/(L - b2) - b1)/b0`` and the epoch is
    ``ceil(k*/steps_per_epoch)``; when ``L <= b2`` the curve never gets there and the result
    says "unreachable" with the reason.

    Examples
    --------
    >>> from core.curves import fit_curve, optimus_loss
    >>> k = np.arange(1, 3001.0); fit = fit_curve(k, optimus_loss(k, 0.001, 1.0, 0.1))
    >>> p = predict_step_at_loss(fit, 0.6, steps_per_epoch=391)   # (1/0.5 - 1)/0.001
    >>> round(p.step), p.epoch
    (1000, 3)
    >>> predict_step_at_loss(fit, 0.05).reachable
    False

    The ``level`` interval comes from ``COVARIANCE_INTERVAL``.
    """
    if not isinstance(loss_threshold, (int, float, np.floating)) or not math.isfinite(loss_threshold):
        raise InputError(f"loss_threshold must be a finite number; got {loss_threshold!r}.")
    if fit.degenerate:
        return StepPrediction(float(loss_threshold), False,
                              reason="unreachable: the fit is degenerate, so it predicts nothing")
    step = fit.step_at(float(loss_threshold))
    if not math.isfinite(step):
        floor = fit.params.get("b2")
        why = (f"the fitted floor b2 = {floor:.4g} is at or above the threshold L = {loss_threshold:.4g}"
               if floor is not None else f"the curve never reaches {loss_threshold:.4g}")
        return StepPrediction(float(loss_threshold), False, reason=f"unreachable: {why}")
    low, high = _covariance_interval(fit, float(loss_threshold), level=level, seed=seed)
    return StepPrediction(float(loss_threshold), True, step=step,
                          epoch=epoch_of_step(step, steps_per_epoch), step_low=low, step_high=high,
                          level=level, interval_method=COVARIANCE_INTERVAL if low is not None else "")


def _covariance_interval(fit: FitResult, loss: float, *, level: float, seed: int,
                         n_draws: int = 4000) -> tuple[float | None, float | None]:
    """Quantiles of the step at ``loss`` over parameters drawn from the fit's covariance."""
    if not fit.errorbars or not 0 < level < 1:
        return None, None
    rng = np.random.default_rng(seed)
    mean = np.array(fit.values)
    cov = np.array(fit.cov)
    try:
        draws = rng.multivariate_normal(mean, cov, size=n_draws, method="eigh")
    except (np.linalg.LinAlgError, ValueError):
        return None, None
    curve = fit.curve
    draws = np.clip(draws, curve.lower, curve.upper)
    steps = np.array([curve.inverse(loss, *d) for d in draws], dtype=float)
    steps = np.where(np.isfinite(steps), steps, np.inf)
    q = np.quantile(steps, [(1 - level) / 2, (1 + level) / 2])
    return float(q[0]), float(q[1])
