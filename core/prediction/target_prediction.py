"""A prediction of the epoch at target (TargetPrediction: the epoch, its interval, the fit and the
drift behind it) and its fitted curve and band against epochs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core.curves import FitResult
from core.prediction.intervals import (
    DEFAULT_LEVEL,
    Drift,
)

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
