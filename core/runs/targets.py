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
from core.errors import InputError
from core.logs import RunLog, epoch_of_step
from core.runs.evaluations import compared_at, compared_rows, held_positions, metric_column
from core.targets import DEFAULT_TARGET, Target, accuracy_value, target_for
from core.validation import check_option

CRITERIA: dict[str, str] = {
    "epoch": "epoch-level: first epoch whose final running accuracy exceeds the target "
             "(step = that epoch's last step; loss = that epoch's mean loss); an evaluated accuracy "
             "(eval_accuracy, val_acc): its first evaluation at target",
    "first-row": "first row: first logged row whose accuracy exceeds the target (the course's "
                 "criterion; fires early on running averages)",
}


def criterion_text(criterion: str, target: Target | None = None) -> str:
    """What "the target was reached" means, in the words of ``target``'s metric and direction.

    An accuracy target (None: the default, ``acc>=0.92``) gets :data:`CRITERIA`'s text; another metric
    says its own name, direction and value (per-step logs compare each epoch's mean of it).

    >>> criterion_text("epoch", Target("val_loss", "<=", 3.28))[:70]
    'epoch-level: first epoch whose mean val_loss is ≤ 3.28 (per-step logs;'
    >>> criterion_text("first-row") == CRITERIA["first-row"]
    True
    """
    check_option(criterion, "criterion", CRITERIA)
    target = target_for(given=target)
    if accuracy_value(target) is not None:
        return CRITERIA[criterion]
    met = f"{target.metric} is {'≥' if target.climbs else '≤'} {target.value:g}"
    if criterion == "epoch":
        return (f"epoch-level: first epoch whose mean {met} (per-step logs; step = that epoch's last step); "
                "a log of evaluations: its first evaluation at target")
    return (f"first row: first logged row whose {met} (fires early on noisy per-step values; "
            "a log of evaluations: its first evaluation at target)")


@dataclass(frozen=True)
class TargetCrossing:
    """Where a logged run first met its ``target`` (``reached`` False when never).

    ``value`` is the metric there; ``samples``, ``tokens`` and ``time_s`` the progress at that
    point in the units the log counts (None where the log cannot say).
    """

    target: Target
    criterion: str
    reached: bool
    step: float | None = None
    epoch: int | None = None
    loss: float | None = None
    acc: float | None = None
    note: str = ""
    value: float | None = None
    samples: float | None = None
    tokens: float | None = None
    time_s: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.target, Target):
            raise InputError(f"crossing: expected a Target (acc>=0.92, val_loss<=3.28); got {self.target!r}.")

    def to_dict(self) -> dict:
        out = asdict(self)
        out.update(self.target.to_dict())
        return out


def _mean_or_none(values: np.ndarray) -> float | None:
    v = values[np.isfinite(values)]
    return float(v.mean()) if v.size else None


def _row_at(frame: pd.DataFrame, position: int, skip: tuple[str, ...] = ()) -> dict[str, float]:
    """The cells a crossing reads at one row of ``frame``, as floats (NaN: no value), without a row Series made
    (``skip``: cells the caller knows already)."""
    names = [c for c in ("global_step", "epoch", "loss", "acc", "time_s", "samples", "tokens")
             if c not in skip and c in frame]
    return {c: float(frame[c].to_numpy(dtype=float, na_value=np.nan)[position]) for c in names}


def _progress(log: RunLog, row: dict[str, float]) -> tuple[float | None, float | None, float | None]:
    """Samples, tokens and wall seconds at a row (:func:`_row_at`), in the units the log counts (None where unknown)."""
    def cell(name: str) -> float | None:
        value = row.get(name, math.nan)
        return None if math.isnan(value) else value

    meta = log.meta
    samples = cell("samples")
    if samples is None and meta.global_batch and not log.counts_validation_batches:
        # (a course _val log's steps count validation batches: no training samples there)
        samples = float(row["global_step"]) * meta.global_batch
    tokens = cell("tokens")
    seq_len = getattr(meta, "seq_len", None)
    if tokens is None and samples is not None and seq_len:
        tokens = samples * seq_len
    return samples, tokens, cell("time_s")


def _crossing_at(log: RunLog, target: Target, criterion: str, position: int, value: float, *, epoch=None,
                 loss: float | None = None, note: str = "") -> TargetCrossing:
    row = _row_at(log.frame, position, ("epoch",) * (epoch is not None) + ("loss",) * (loss is not None))
    samples, tokens, time_s = _progress(log, row)
    ep = row["epoch"] if epoch is None else epoch
    acc = None if math.isnan(row["acc"]) else row["acc"]
    if loss is None and not math.isnan(row["loss"]):
        loss = row["loss"]
    return TargetCrossing(target, criterion, True, step=row["global_step"],
                          epoch=None if pd.isna(ep) else int(ep), loss=loss, acc=acc, note=note,
                          value=float(value), samples=samples, tokens=tokens, time_s=time_s)


def find_target_crossing(log: RunLog, target: Target = DEFAULT_TARGET, *,
                         criterion: str = "epoch") -> TargetCrossing:
    """First step and epoch where the run met ``target``, in either direction.

    Parameters
    ----------
    log : RunLog
    target : Target, default ``acc>=0.92``
        ``acc>=0.92``, ``val_loss<=3.28``, ``eval_accuracy<=3.3``. "Met" includes equality.
    criterion : {"epoch", "first-row"}, default "epoch"
        See the module docstring; for a metric other than the running accuracy of a per-step
        log, each epoch's mean of the metric is compared (the same averaging).

    Returns
    -------
    TargetCrossing
        ``reached=False`` when the log does not have the metric or never meets the target.

    Examples
    --------
    >>> from core.logs import read_log
    >>> log = read_log(b"step,loss\\n1,4.0\\n2,3.5\\n3,3.2\\n4,3.0\\n", "a.csv")
    >>> c = find_target_crossing(log, Target("loss", "<=", 3.28))
    >>> c.reached, c.step, c.value
    (True, 3.0, 3.2)
    >>> find_target_crossing(log, Target("loss", "<=", 2.5)).reached
    False
    """
    if not isinstance(target, Target):
        raise InputError(f"target: expected a Target (acc>=0.92, val_loss<=3.28); got {target!r}.")
    check_option(criterion, "criterion", CRITERIA)
    column = metric_column(log, target.metric)
    if column is None:
        what = "no accuracy column" if target.metric.lower() in ("acc", "accuracy") else \
            f"no {target.metric!r} metric in the log"
        return TargetCrossing(target, criterion, False, note=what)
    frame = log.frame
    where = held_positions(frame, column)          # the rows holding the metric, as positions: no frame made
    epochs = frame["epoch"].to_numpy(dtype=float, na_value=np.nan)
    note = ""
    if criterion == "epoch" and log.granularity == "step" and where.size > 1 and np.isnan(epochs[where]).all():
        criterion, note = "first-row", "epochs unknown (set steps per epoch): first-row criterion used"
    positions, values = compared_at(log, column, criterion, where, epochs)
    if positions is not None:                    # several rows an epoch: the epoch is the unit
        hit = target.first_met(values)
        if hit is None:
            return TargetCrossing(target, criterion, False)
        last = int(where[positions[hit]])
        epoch = int(epochs[last])
        loss = _mean_or_none(frame["loss"].to_numpy(dtype=float)[epochs == epoch])
        return _crossing_at(log, target, criterion, last, values[hit], epoch=epoch, loss=loss)
    hit = target.first_met(values)             # every row holding the metric, as it is
    if hit is None:
        return TargetCrossing(target, criterion, False, note=note)
    return _crossing_at(log, target, criterion, int(where[hit]), values[hit], note=note)


def best_value(log: RunLog, target: Target = DEFAULT_TARGET, *, criterion: str = "epoch") -> float | None:
    """The best value of the target's metric the log shows, compared as :func:`find_target_crossing` compares.

    The run met the target exactly when ``target.met(best_value)``; None without the metric.
    """
    column = metric_column(log, target.metric)
    if column is None:
        return None
    values = compared_rows(log, column, criterion)[1]
    return float(np.max(values) if target.climbs else np.min(values))


def best_accuracy(log: RunLog, *, criterion: str = "epoch") -> float | None:
    """The highest accuracy ``log`` shows under ``criterion``: it reached a target ``t`` exactly when this is ``>= t``.

    The same accuracies :func:`find_target_crossing` compares with the target (each epoch's
    final running accuracy for ``"epoch"`` on a per-step log with epochs; every row
    otherwise), so a table of runs can say "reached or not" for any target without the log.
    ``None`` when the log has no accuracy.

    >>> from core.logs import read_log
    >>> from core.targets import accuracy_target
    >>> log = read_log(b"epoch,step,loss,acc\\n1,1,2,0.5\\n1,2,1.9,0.95\\n1,3,1.8,0.7\\n2,1,1,0.8\\n2,2,1,0.9\\n"
    ...                b"2,3,1,0.85\\n", "a.csv")
    >>> best_accuracy(log), best_accuracy(log, criterion="first-row")    # epoch ends: 0.7, 0.85
    (0.85, 0.95)
    >>> [find_target_crossing(log, accuracy_target(t)).reached for t in (0.85, 0.86)]
    [True, False]
    """
    check_option(criterion, "criterion", CRITERIA)
    if not log.has_acc:
        return None
    return float(np.max(compared_rows(log, "acc", criterion)[1]))


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
COVARIANCE_INTERVAL = ("parameter covariance of the fit: 4000 seeded draws of the parameters, widened where "
                       "needed to contain the best fit's own step; assumes independent residuals, so it is "
                       "narrower than the real uncertainty")


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
    if low is not None:
        # a floor close to L skews the draws: their quantiles may both lie on one side of the best fit's step
        low, high = min(low, step), max(high, step)
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
