"""Predict the epoch where a run will pass its target accuracy, from the first epochs of its log.

Two routes, both fitted with ``core.curves.fit_curve`` on the observed epochs only:

* ``"accuracy"`` (direct): the per-epoch accuracy (for per-step logs, the epoch's final
  running accuracy, the quantity the epoch-level criterion of ``core.runs.targets`` tests) is
  fitted as the error ``1 − acc`` against the epoch number ``e`` with a decreasing family;
  the predicted epoch is the first whole epoch where the fitted error is at or below
  ``1 − A`` for the target ``acc>=A``: ``ceil(e*)`` with ``e* = inverse(1 − A)``.
* ``"loss"`` (through a loss threshold): the per-step loss is fitted against the global
  step ``k``; the threshold ``L`` is the loss at which the accuracy is expected to pass the
  target, taken **from the observed epochs only** (see ``loss_threshold_from_observed``) or
  given by the caller (e.g. the median loss at target of other, finished runs); the curve
  reaches ``L`` at ``k* = inverse(L)`` and an epoch's mean loss is the curve at its middle
  step, so the predicted epoch is ``ceil(k*/steps_per_epoch + 1/2)``.

A prediction is never earlier than the first unseen epoch: the observed epochs did not pass
the target (when they did, there is nothing to predict and ``status`` says "reached").

``family="auto"`` chooses the family by a backtest **inside the observed epochs**; the same
inner backtest corrects the family's drift and gives the interval (``core.prediction.intervals``).

With a learning-rate ``schedule`` (``core.prediction.schedule``) the fit sees only the current
phase (the epochs after the last drop), and a prediction that lands after the next drop is
refused (``status="refused"``); under a decay still going on its interval opens down to the
next epoch.  ``flags`` say what was done.
"""

from __future__ import annotations

import math
from dataclasses import replace

from core.curves import FAMILIES, FitResult, auto_families
from core.logs import RunLog
from core.prediction.intervals import (
    DEFAULT_LEVEL,
    INTERVAL_METHOD,
    MIN_CHECKS,
    Drift,
    EpochSeries,
    FitCache,
    inner_backtest,
    stretch,
    whole_epoch,
)
from core.prediction.log_series import (
    accuracy_series,
    first_epochs,
    loss_series,
    loss_threshold_from_observed,
    n_epochs,
    reached_target,
)
from core.prediction.phases import check_future, epochs_after, shift_prediction
from core.prediction.schedule import MIN_PHASE_EPOCHS, Schedule, check_schedule
from core.prediction.target_prediction import TargetPrediction
from core.targets import DEFAULT_TARGET, Target, require_accuracy
from core.validation import check_option, check_scalar

ROUTES = ("accuracy", "loss")


# --------------------------------------------------------------------------- inputs
def check_family(family: str) -> str:
    """``family`` if it is a key of ``FAMILIES`` or ``"auto"``."""
    return check_option(family, "family", ("auto", *FAMILIES))


def check_route(route: str) -> str:
    return check_option(route, "route", ROUTES)


# --------------------------------------------------------------------------- prediction
def predict_epoch_at_target(log: RunLog, *, target: Target = DEFAULT_TARGET, family: str = "auto",
                            route: str = "accuracy", loss_threshold: float | None = None,
                            inflation: float = 1.0, level: float = DEFAULT_LEVEL, correct: bool = True,
                            cache: FitCache | None = None, schedule: Schedule | str | None = None
                            ) -> TargetPrediction:
    """Predict, from all of ``log`` (the observed epochs), the epoch where it passes ``target``.

    Parameters
    ----------
    log : RunLog
        The observed part of a run (``first_epochs(full_log, n)``); nothing else is read.
    target : Target, default acc>=0.92
        An accuracy that climbs (``acc>=A``); any other target is refused (the epoch route models an accuracy).
    family : str, default "auto"
        A key of ``FAMILIES``, or ``"auto"``: the family with the best inner-backtest score.
    route : {"accuracy", "loss"}, default "accuracy"
    loss_threshold : float, optional
        ``L`` for the loss route; by default ``loss_threshold_from_observed(log, target)``.
    inflation : float, default 1.0
        Widening of the interval (1: from this run's observed epochs alone; see
        ``core.prediction.backtest`` for a factor learned on other runs).
    level : float, default 0.8
        Nominal coverage of the interval.
    correct : bool, default True
        Apply the drift correction (``False``: the family's own extrapolation, and the
        interval stretched to contain it).
    cache : FitCache, optional
        Reuse fits of identical data (backtests).
    schedule : Schedule or str, optional
        The learning-rate schedule (``core.prediction.schedule``; text is parsed): fit within
        the current phase, refuse across a future drop, flag a decay still going on.

    Returns
    -------
    TargetPrediction

    Examples
    --------
    A run whose error ``1 − acc`` halves every 4 epochs from 0.8 passes 0.92 (error 0.08)
    at epoch ``4·log2(10) = 13.3``, i.e. in epoch 14:

    >>> from core.logs.reader import read_log
    >>> from core.targets import accuracy_target
    >>> rows = "".join(f"{e},{e},{1 / e:.6f},{1 - 0.8 * 0.5 ** (e / 4):.6f}\\n" for e in range(1, 11))
    >>> log = read_log(("epoch,step,loss,acc\\n" + rows).encode(), "run.csv")
    >>> p = predict_epoch_at_target(log, target=accuracy_target(0.92), family="exp3")
    >>> p.status, p.epoch, p.epoch_low <= 14 <= p.epoch_high
    ('predicted', 14.0, True)
    """
    require_accuracy(target, "the epoch prediction from the first epochs")
    check_family(family)
    check_route(route)
    inflation = check_scalar(inflation, "inflation", float, min_val=0, include_boundaries="neither")
    schedule = check_schedule(schedule)
    cache = cache or FitCache()
    options = dict(target=target, family=family, route=route, loss_threshold=loss_threshold,
                   inflation=inflation, level=level, correct=correct, cache=cache)
    if schedule is not None and schedule.kind != "none":
        return _predict_in_phases(log, schedule, **options)
    return _predict_unscheduled(log, **options)


def _predict_in_phases(log: RunLog, schedule: Schedule, **options) -> TargetPrediction:
    """The unscheduled prediction within the current phase of ``schedule``, then its future checked.

    ``options`` are ``_predict_unscheduled``'s (``target``, ``family``, ``route``, ``level``, ...).
    """
    n = n_epochs(log)
    d = schedule.phase_start(n)
    flags: list[str] = []
    if reached_target(log, options["target"]):
        return _predict_unscheduled(log, **options)
    if d > 0:
        if n - d < MIN_PHASE_EPOCHS:
            return TargetPrediction(
                log.source, options["route"], options["family"], options["target"].value, n, "refused",
                level=options["level"], steps_per_epoch=log.steps_per_epoch,
                reason=(f"only {n - d:g} epochs since the learning-rate drop after epoch {d:g} ({schedule.source}): "
                        f"too few to fit the new phase (at least {MIN_PHASE_EPOCHS})"))
        p = shift_prediction(_predict_unscheduled(epochs_after(log, d), **options), d, n)
        flags.append(f"fitted on epochs {d + 1:g}–{n} only, after the learning-rate drop after epoch {d:g} "
                     f"({schedule.source})")
    else:
        p = _predict_unscheduled(log, **options)
    return check_future(p, schedule, n, flags)


def _predict_unscheduled(log: RunLog, *, target: Target, family: str, route: str, loss_threshold: float | None,
                         inflation: float, level: float, correct: bool, cache: FitCache) -> TargetPrediction:
    """The prediction from every observed epoch, one curve over them all (arguments checked by the caller)."""
    n_obs = n_epochs(log)
    base = dict(source=log.source, route=route, family=family, target_acc=target.value,
                n_epochs_observed=n_obs, level=level, steps_per_epoch=log.steps_per_epoch,
                corrected=correct, inflation=float(inflation))
    if reached_target(log, target):
        return TargetPrediction(**base, status="reached", reason="the observed epochs already passed the target")
    series, y_target, threshold, why = _route_data(log, route, target, loss_threshold)
    if series is None:
        return TargetPrediction(**base, status="not fitted", loss_threshold=threshold, reason=why)
    candidates = auto_families() if family == "auto" else (family,)
    backtests = {f: inner_backtest(series, f, cache=cache) for f in candidates}
    scores = {f: bt.score for f, bt in backtests.items()}
    chosen = _best(scores) if family == "auto" else family
    fit = cache.fit(series, chosen)
    base.update(family=chosen, loss_threshold=threshold, scores=scores, interval_method=INTERVAL_METHOD,
                x_per_epoch=series.x_per_epoch, mid_epoch=series.mid_epoch)
    if fit is None:
        return TargetPrediction(**base, status="not fitted",
                                reason=f"the {chosen} fit on {n_obs} epochs failed (too few points?)")
    raw = float(series.continuous_epoch(fit.step_at(y_target)))
    raw = math.inf if math.isnan(raw) else raw
    drift = Drift.from_backtest(backtests[chosen], level)
    return _package(TargetPrediction(**base, status="predicted", epoch_raw=raw, drift=drift, fit=fit,
                                     reason=_note(drift, fit, y_target, raw)))


def widen(prediction: TargetPrediction, inflation: float) -> TargetPrediction:
    """The same prediction with its interval widened by ``inflation`` (no refit).

    >>> p = TargetPrediction("r.csv", "accuracy", "exp3", 0.9, 10, "predicted", epoch_raw=20.0,
    ...                      drift=Drift(0.0, -0.5, 0.5, 9))
    >>> p = widen(p, 1.0); (p.epoch, p.epoch_low, p.epoch_high)   # 10 + 10·e^(∓0.5): 16.1, 26.5
    (20.0, 17.0, 27.0)
    >>> p = widen(p, 2.0); (p.epoch_low, p.epoch_high)            # 10 + 10·e^(∓1): 13.7, 37.2
    (14.0, 38.0)
    """
    return _package(replace(prediction, inflation=float(inflation)))


def _package(p: TargetPrediction) -> TargetPrediction:
    """Fill epoch, epoch_low, epoch_high from epoch_raw, drift, inflation and ``corrected``."""
    if p.epoch_raw is None or p.drift is None or p.status == "refused":
        return p
    n, raw, d = p.n_epochs_observed, p.epoch_raw, p.drift
    first = n + 1.0
    if not math.isfinite(raw):
        return replace(p, status="unreachable", epoch=None, epoch_low=first, epoch_high=math.inf)
    plain = max(raw, n + 0.5)
    if not d.usable:  # nothing to learn the error from: the honest interval is every later epoch
        centre, lo, hi = plain, first, math.inf
    else:
        g_lo, g_hi = d.widened(p.inflation)
        correct = p.corrected and math.isfinite(d.median)
        centre = stretch(raw, n, d.median) if correct else plain
        lo, hi = stretch(raw, n, g_lo), stretch(raw, n, g_hi)
        lo, hi = min(lo, centre), max(hi, centre if correct else plain)
    return replace(p, status="predicted", epoch=max(whole_epoch(centre), first),
                   epoch_low=max(whole_epoch(lo), first), epoch_high=max(whole_epoch(hi), first))


def _best(scores: dict[str, float]) -> str:
    finite = {f: s for f, s in scores.items() if math.isfinite(s)}
    return min(finite, key=finite.get) if finite else next(iter(scores))


def _note(drift: Drift, fit: FitResult, y_target: float, raw: float) -> str:
    if not math.isfinite(raw):
        return f"the fitted curve never reaches {y_target:.4g} (its floor is {fit.floor:.4g})"
    if not drift.usable:
        return (f"{drift.n_checks} checks inside the observed epochs (fewer than {MIN_CHECKS}): no "
                "correction, interval = every later epoch")
    return ""


def _route_data(log: RunLog, route: str, target: Target, loss_threshold: float | None
                ) -> tuple[EpochSeries | None, float, float | None, str]:
    """(series, level to reach, loss threshold, reason when there is no series)."""
    if route == "accuracy":
        if not log.has_acc:
            return None, math.nan, None, "no accuracy column"
        return accuracy_series(log), 1.0 - target.value, None, ""
    if not log.has_loss:
        return None, math.nan, None, "no loss column (an accuracy trace): use the accuracy route"
    threshold = loss_threshold_from_observed(log, target) if loss_threshold is None else float(loss_threshold)
    if not (math.isfinite(threshold) and threshold > 0):
        return None, math.nan, None, "no loss threshold: the observed loss and accuracy do not move together"
    return loss_series(log), threshold, threshold, ""


def prediction_from_first_epochs(log: RunLog, n_epochs_seen: int, *, target: Target = DEFAULT_TARGET,
                                 family: str = "auto", route: str = "accuracy", **kwargs) -> TargetPrediction:
    """``predict_epoch_at_target(first_epochs(log, n_epochs_seen), ...)``: what the first epochs say.

    The rest of ``log`` is cut away before anything is fitted.
    """
    n_epochs_seen = check_scalar(n_epochs_seen, "n_epochs_seen", int, min_val=1)
    return predict_epoch_at_target(first_epochs(log, int(n_epochs_seen)), target=target,
                                   family=family, route=route, **kwargs)
