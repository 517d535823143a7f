"""Predict the epoch where a run will pass its target accuracy, from the first epochs of its log.

Two routes, both fitted with ``core.curves.fit_curve`` on the observed epochs only:

* ``"accuracy"`` (direct): the per-epoch accuracy (for per-step logs, the epoch's final
  running accuracy, the quantity the epoch-level criterion of ``core.runs.targets`` tests) is
  fitted as the error ``1 − acc`` against the epoch number ``e`` with a decreasing family;
  the predicted epoch is the first whole epoch where the fitted error is at or below
  ``1 − target_acc``: ``ceil(e*)`` with ``e* = inverse(1 − target_acc)``.
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
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from core.curves import FAMILIES, FitResult
from core.defaults import DEFAULT_TARGET_ACC
from core.errors import InputError
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
from core.prediction.phases import check_future, epochs_after, shift_prediction
from core.prediction.schedule import MIN_PHASE_EPOCHS, Schedule, check_schedule
from core.runs import check_target_acc, epoch_summary
from core.validation import check_option, check_scalar

ROUTES = ("accuracy", "loss")
#: families ``family="auto"`` chooses from, and the order selectors list them
AUTO_FAMILIES: tuple[str, ...] = ("optimus", "pow3", "exp3", "pow4", "mmf", "weibull")
STATUSES = ("predicted", "reached", "unreachable", "not fitted", "refused")


@dataclass(frozen=True, eq=False)
class TargetPrediction:
    """The epoch where a run is predicted to pass ``target_acc``, with an interval.

    Attributes
    ----------
    source : str
        The log's file name.
    route : {"accuracy", "loss"}
    family : str
        The family used (the one ``"auto"`` chose, when it was asked for).
    target_acc : float
    n_epochs_observed : int
        Epochs of the log the prediction saw (1 .. n).
    status : str
        ``"predicted"``; ``"reached"`` (the observed epochs already passed the target);
        ``"unreachable"`` (the fitted curve never gets there: ``epoch`` is None, the
        interval ``[n + 1, inf]``); ``"not fitted"`` (see ``reason``); ``"refused"`` (a
        learning-rate drop lies between the observed epochs and the target, or too few
        epochs since the last one: ``reason`` says which).
    epoch, epoch_low, epoch_high : float or None
        Predicted whole epoch and the ``level`` interval (``epoch_high`` is ``inf`` when
        the run may never get there); never before ``n + 1``.
    epoch_raw : float or None
        The family's own extrapolation (continuous epoch, ``inf`` for never), before the
        drift correction.
    corrected : bool
        ``epoch`` is drift-corrected (see ``core.prediction.intervals``).
    drift : Drift or None
        Horizon ratios of the inner backtest (median and quantiles of ``ln g``, number of
        checks; ``core.prediction.intervals``).
    level : float
        Nominal coverage of the interval (0.8).
    inflation : float
        Factor the ``ln g`` quantiles were widened by (1: this run alone).
    interval_method : str
    loss_threshold : float or None
        ``L`` of the loss route.
    fit : FitResult or None
        The fit on the observed epochs (x = epoch for the accuracy route, global step for
        the loss route; y = error ``1 − acc`` or loss).
    scores : dict of str to float
        The inner-backtest score of every candidate family (lower is better).
    reason : str
        Why there is no prediction, or notes.
    epoch_offset : float
        The fit's epochs start after this one (the last learning-rate drop; 0: the whole log).
    flags : tuple of str
        What a learning-rate schedule changed, in words.
    """

    source: str
    route: str
    family: str
    target_acc: float
    n_epochs_observed: int
    status: str
    epoch: float | None = None
    epoch_low: float | None = None
    epoch_high: float | None = None
    epoch_raw: float | None = None
    corrected: bool = True
    drift: Drift | None = None
    level: float = DEFAULT_LEVEL
    inflation: float = 1.0
    interval_method: str = ""
    loss_threshold: float | None = None
    fit: FitResult | None = None
    steps_per_epoch: int | None = None
    scores: dict[str, float] = field(default_factory=dict)
    reason: str = ""
    x_per_epoch: float = 1.0
    mid_epoch: bool = False
    epoch_offset: float = 0.0
    flags: tuple[str, ...] = ()

    @property
    def target_level(self) -> float | None:
        """The level the fitted curve must reach: ``1 − target_acc``, or the loss threshold."""
        return 1.0 - self.target_acc if self.route == "accuracy" else self.loss_threshold

    @property
    def x_unit(self) -> str:
        return "epoch" if self.route == "accuracy" else "step"

    def to_dict(self) -> dict:
        """Plain Python types (the fit as its parameters, the drift as its numbers)."""
        out = {k: getattr(self, k) for k in ("source", "route", "family", "target_acc",
                                             "n_epochs_observed", "status", "epoch", "epoch_low",
                                             "epoch_high", "epoch_raw", "corrected", "level",
                                             "inflation", "interval_method", "loss_threshold",
                                             "steps_per_epoch", "reason", "epoch_offset")}
        out["flags"] = list(self.flags)
        d = self.drift
        out.update(drift_median=d.median if d else None, drift_low=d.low if d else None,
                   drift_high=d.high if d else None, n_checks=d.n_checks if d else 0)
        out["params"] = dict(self.fit.params) if self.fit is not None else {}
        out["scores"] = dict(self.scores)
        return out


# --------------------------------------------------------------------------- inputs
def check_family(family: str) -> str:
    """``family`` if it is a key of ``FAMILIES`` or ``"auto"``."""
    return check_option(family, "family", ("auto", *FAMILIES))


def check_route(route: str) -> str:
    return check_option(route, "route", ROUTES)


def n_epochs(log: RunLog) -> int:
    """Number of epochs in the log (its largest epoch number); 0 when epochs are unknown."""
    ep = log.frame["epoch"].dropna()
    return int(ep.max()) if len(ep) else 0


def first_epochs(log: RunLog, n: int) -> RunLog:
    """The log cut after its ``n``-th epoch (a new ``RunLog``; ``log`` is not changed).

    Everything a prediction sees comes through this cut, so the rest of the log cannot leak.
    """
    if log.frame["epoch"].isna().all():
        raise InputError(f"{log.source}: expected epoch numbers to cut the log by epochs; the log has "
                         "none. Give steps per epoch when reading it.")
    keep = (log.frame["epoch"] <= n).fillna(False).to_numpy(dtype=bool)
    cut = replace(log, frame=log.frame.loc[keep].reset_index(drop=True))
    # whole epochs are kept, so each one's summary is the same as in the whole log
    summary = epoch_summary(log)
    cut.__dict__["_memo"] = {"epoch_summary": summary[summary["epoch"] <= n].reset_index(drop=True)}
    return cut


def accuracy_series(log: RunLog) -> EpochSeries:
    """Per-epoch error ``1 − acc`` against the epoch number (the accuracy route's data)."""
    table = epoch_summary(log).dropna(subset=["acc"])
    e = table["epoch"].to_numpy(dtype=float)
    err = 1.0 - table["acc"].to_numpy(dtype=float)
    return EpochSeries(x=e, y=err, epoch=e, epochs=e, levels=err, x_per_epoch=1.0, mid_epoch=False)


def loss_series(log: RunLog) -> EpochSeries:
    """Per-step loss against the global step, and the per-epoch mean losses (loss route)."""
    frame = log.frame[log.frame["loss"].notna() & log.frame["epoch"].notna()]
    table = epoch_summary(log).dropna(subset=["loss"])
    spe = log.steps_per_epoch
    step_level = log.granularity == "step"
    x_per_epoch = float(spe) if spe else 1.0
    return EpochSeries(x=frame["global_step"].to_numpy(dtype=float), y=frame["loss"].to_numpy(dtype=float),
                  epoch=frame["epoch"].to_numpy(dtype=float),
                  epochs=table["epoch"].to_numpy(dtype=float), levels=table["loss"].to_numpy(dtype=float),
                  x_per_epoch=x_per_epoch, mid_epoch=step_level)


def loss_threshold_from_observed(log: RunLog, target_acc: float) -> float:
    """The loss ``L`` at which the accuracy should pass ``target_acc``, from ``log`` alone.

    Fits ``ln(1 − acc) = α + β·ln(loss)`` by least squares on the per-epoch mean loss and
    final accuracy of the later half of the log's epochs (the part nearest the target),
    and solves for the loss where ``1 − acc = 1 − target_acc``.  NaN when the fit has no
    positive slope (accuracy not improving with loss).

    >>> from core.logs.reader import read_log
    >>> rows = "".join(f"{e},{e},{l},{1 - 0.25 * l}\\n" for e, l in enumerate([2.0, 1.6, 1.2, 0.8], 1))
    >>> round(loss_threshold_from_observed(read_log(("epoch,step,loss,acc\\n" + rows).encode(), "r.csv"), 0.9), 6)
    0.4
    """
    table = epoch_summary(log).dropna(subset=["loss", "acc"])
    table = table[(table["loss"] > 0) & (table["acc"] < 1)]
    if len(table) < 2:
        return math.nan
    half = table.iloc[len(table) // 2:] if len(table) >= 4 else table
    x = np.log(half["loss"].to_numpy(dtype=float))
    y = np.log(1.0 - half["acc"].to_numpy(dtype=float))
    if np.ptp(x) == 0:
        return math.nan
    beta, alpha = np.polyfit(x, y, 1)
    if not beta > 0:
        return math.nan
    return float(np.exp((math.log(1.0 - target_acc) - alpha) / beta))


# --------------------------------------------------------------------------- prediction
def predict_epoch_at_target(log: RunLog, *, target_acc: float = DEFAULT_TARGET_ACC, family: str = "auto",
                            route: str = "accuracy", loss_threshold: float | None = None,
                            inflation: float = 1.0, level: float = DEFAULT_LEVEL, correct: bool = True,
                            cache: FitCache | None = None, schedule: Schedule | str | None = None
                            ) -> TargetPrediction:
    """Predict, from all of ``log`` (the observed epochs), the epoch where it passes ``target_acc``.

    Parameters
    ----------
    log : RunLog
        The observed part of a run (``first_epochs(full_log, n)``); nothing else is read.
    target_acc : float, default 0.92
    family : str, default "auto"
        A key of ``FAMILIES``, or ``"auto"``: the family with the best inner-backtest score.
    route : {"accuracy", "loss"}, default "accuracy"
    loss_threshold : float, optional
        ``L`` for the loss route; by default ``loss_threshold_from_observed(log, target_acc)``.
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
    >>> rows = "".join(f"{e},{e},{1 / e:.6f},{1 - 0.8 * 0.5 ** (e / 4):.6f}\\n" for e in range(1, 11))
    >>> log = read_log(("epoch,step,loss,acc\\n" + rows).encode(), "run.csv")
    >>> p = predict_epoch_at_target(log, target_acc=0.92, family="exp3")
    >>> p.status, p.epoch, p.epoch_low <= 14 <= p.epoch_high
    ('predicted', 14.0, True)
    """
    target_acc = check_target_acc(target_acc)
    check_family(family)
    check_route(route)
    inflation = check_scalar(inflation, "inflation", float, min_val=0, include_boundaries="neither")
    schedule = check_schedule(schedule)
    cache = cache or FitCache()
    options = dict(target_acc=target_acc, family=family, route=route, loss_threshold=loss_threshold,
                   inflation=inflation, level=level, correct=correct, cache=cache)
    if schedule is not None and schedule.kind != "none":
        return _predict_in_phases(log, schedule, **options)
    return _predict_unscheduled(log, **options)


def _predict_in_phases(log: RunLog, schedule: Schedule, **options) -> TargetPrediction:
    """The unscheduled prediction within the current phase of ``schedule``, then its future checked.

    ``options`` are ``_predict_unscheduled``'s (``target_acc``, ``family``, ``route``, ``level``, ...).
    """
    n = n_epochs(log)
    d = schedule.phase_start(n)
    flags: list[str] = []
    if reached_target(log, options["target_acc"]):
        return _predict_unscheduled(log, **options)
    if d > 0:
        if n - d < MIN_PHASE_EPOCHS:
            return TargetPrediction(
                log.source, options["route"], options["family"], options["target_acc"], n, "refused",
                level=options["level"], steps_per_epoch=log.steps_per_epoch,
                reason=(f"only {n - d:g} epochs since the learning-rate drop after epoch {d:g} ({schedule.source}): "
                        f"too few to fit the new phase (at least {MIN_PHASE_EPOCHS})"))
        p = shift_prediction(_predict_unscheduled(epochs_after(log, d), **options), d, n)
        flags.append(f"fitted on epochs {d + 1:g}–{n} only, after the learning-rate drop after epoch {d:g} "
                     f"({schedule.source})")
    else:
        p = _predict_unscheduled(log, **options)
    return check_future(p, schedule, n, flags)


def _predict_unscheduled(log: RunLog, *, target_acc: float, family: str, route: str, loss_threshold: float | None,
                         inflation: float, level: float, correct: bool, cache: FitCache) -> TargetPrediction:
    """The prediction from every observed epoch, one curve over them all (arguments checked by the caller)."""
    n_obs = n_epochs(log)
    base = dict(source=log.source, route=route, family=family, target_acc=target_acc,
                n_epochs_observed=n_obs, level=level, steps_per_epoch=log.steps_per_epoch,
                corrected=correct, inflation=float(inflation))
    if reached_target(log, target_acc):
        return TargetPrediction(**base, status="reached", reason="the observed epochs already passed the target")
    series, y_target, threshold, why = _route_data(log, route, target_acc, loss_threshold)
    if series is None:
        return TargetPrediction(**base, status="not fitted", loss_threshold=threshold, reason=why)
    candidates = AUTO_FAMILIES if family == "auto" else (family,)
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


def reached_target(log: RunLog, target_acc: float) -> bool:
    """Whether an observed epoch already passed ``target_acc`` (the epoch-level criterion)."""
    table = epoch_summary(log)
    return bool((table["acc"] >= target_acc).any())


def _route_data(log: RunLog, route: str, target_acc: float, loss_threshold: float | None
                ) -> tuple[EpochSeries | None, float, float | None, str]:
    """(series, level to reach, loss threshold, reason when there is no series)."""
    if route == "accuracy":
        if not log.has_acc:
            return None, math.nan, None, "no accuracy column"
        return accuracy_series(log), 1.0 - target_acc, None, ""
    if not log.has_loss:
        return None, math.nan, None, "no loss column (an accuracy trace): use the accuracy route"
    threshold = loss_threshold_from_observed(log, target_acc) if loss_threshold is None else float(loss_threshold)
    if not (math.isfinite(threshold) and threshold > 0):
        return None, math.nan, None, "no loss threshold: the observed loss and accuracy do not move together"
    return loss_series(log), threshold, threshold, ""


def prediction_curves(prediction: TargetPrediction, epochs) -> pd.DataFrame:
    """The fitted curve and its band against (continuous) epochs, in the route's units.

    Columns ``epoch, fitted, predicted, low, high``: ``fitted`` is the family's curve;
    ``predicted``, ``low`` and ``high`` are the same curve with its future (after epoch
    ``n``) stretched in time by the horizon ratios (``core.prediction.intervals``): at the target level
    they cross it at (about) the predicted epoch and the ends of the interval.  Up to epoch
    ``n`` all four are the fitted curve.  Values are accuracy (``1 − error``) for the
    accuracy route and loss for the loss route; NaN where there is no fit.
    """
    c = np.asarray(epochs, dtype=float)
    out = pd.DataFrame({"epoch": c})
    fit, d = prediction.fit, prediction.drift
    if fit is None:
        for col in ("fitted", "predicted", "low", "high"):
            out[col] = np.nan
        return out
    n = float(prediction.n_epochs_observed)
    offset = (0.5 if prediction.mid_epoch else 0.0) + prediction.epoch_offset

    def value(ce):
        with np.errstate(all="ignore"):
            v = fit.predict(np.maximum(ce - offset, 1e-9) * prediction.x_per_epoch)
            v = np.where(ce > prediction.epoch_offset, v, np.nan)   # before the current phase: no curve
        return 1.0 - v if prediction.route == "accuracy" else v

    def warped(log_g):
        """The curve with its future stretched: value at x > n is the fit at n + (x − n)/g."""
        if log_g is None or math.isnan(log_g):
            return np.full(c.shape, np.nan)
        g = math.exp(log_g)
        with np.errstate(all="ignore"):
            ce = np.where(c <= n, c, n + (c - n) / g if g > 0 else np.inf)
        return value(ce)

    out["fitted"] = value(c)
    if d is None or not d.usable:
        out["predicted"], out["low"], out["high"] = out["fitted"], np.nan, np.nan
        return out
    g_lo, g_hi = d.widened(prediction.inflation)
    out["predicted"] = warped(d.median if prediction.corrected and math.isfinite(d.median) else 0.0)
    fast, slow = warped(g_lo), warped(g_hi)   # g_lo: the least remaining time
    out["low"] = np.minimum(fast, slow)
    out["high"] = np.maximum(fast, slow)
    return out


def prediction_from_first_epochs(log: RunLog, n_epochs_seen: int, *, target_acc: float = DEFAULT_TARGET_ACC,
                                 family: str = "auto", route: str = "accuracy", **kwargs) -> TargetPrediction:
    """``predict_epoch_at_target(first_epochs(log, n_epochs_seen), ...)``: what the first epochs say.

    The rest of ``log`` is cut away before anything is fitted.
    """
    n_epochs_seen = check_scalar(n_epochs_seen, "n_epochs_seen", int, min_val=1)
    return predict_epoch_at_target(first_epochs(log, int(n_epochs_seen)), target_acc=target_acc,
                                   family=family, route=route, **kwargs)


def showcase_log(logs, target_acc: float = DEFAULT_TARGET_ACC) -> RunLog | None:
    """The first log whose target epoch lies in the second half of its epochs (so predicting from
    its first half can be compared with what happened); else the first log; None if empty.
    """
    from core.runs import find_target_crossing

    logs = list(logs)
    for log in logs:
        c = find_target_crossing(log, target_acc)
        if c.reached and c.epoch is not None and c.epoch > n_epochs(log) / 2:
            return log
    return logs[0] if logs else None
