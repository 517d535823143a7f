"""The backtest inside the observed epochs: family scores, drift correction and the interval.

Nothing here sees more of a run than the ``EpochSeries`` it is given (the observed epochs
``1..n``).  The *inner backtest* fits a family on the first ``m = round(r·n)`` epochs
(``r`` in ``INNER_FRACTIONS``, ``m >= MIN_INNER_EPOCHS``) and checks each later observed
epoch ``e``: the fitted curve says it reaches that epoch's level ``y_e`` (error ``1 − acc``
or mean loss) at the continuous epoch ``ĉ``.  Each check gives

* a relative horizontal error ``|ĉ − e| / e`` (capped at 1; a curve that never gets there,
  or a fit that fails, scores 1): their mean is the family's **score** (``"auto"`` takes
  the smallest);
* a **horizon ratio** ``g = (e − m) / (ĉ − m)``: the epochs the level really took after the
  fitted ones, over the epochs the fit said it would take (``g < 1``: the family's
  extrapolation is too slow; ``g = 0``: it said "never", yet the level came; ``ĉ <= m``
  counts as ``m + 1/2``).

The real prediction extrapolates from ``n`` epochs to the raw epoch ``p`` (the family's
inverse at the target; ``p <= n`` counts as ``n + 1/2``).  Its remaining epochs ``p − n``
are scaled by the ratios:

* the **drift-corrected** epoch is ``n + (p − n)·ĝ`` with ``ĝ`` the median ratio (a family
  whose tail is too heavy, as Optimus's is on these logs, is pulled earlier by what it got
  wrong inside the observed epochs);
* the ``level`` **interval** is ``[n + (p − n)·g_lo, n + (p − n)·g_hi]`` with ``ln g_lo``,
  ``ln g_hi`` the ``(1 ∓ level)/2`` quantiles of ``ln g``, each at least ``MIN_LOG_SPREAD``
  from the median and then widened around it by an inflation factor ``s``: ``s = 1`` uses
  this run's observed part alone; ``core.prediction.backtest`` learns ``s`` from other runs.

With fewer than ``MIN_CHECKS`` checks nothing is learned: no correction, and the interval
is every epoch after ``n`` (``[n + 1, inf]``).  Checks within one run are correlated
(consecutive epochs, three fits), so with ``s = 1`` the interval tends to be narrow; the
backtest measures its coverage.
"""

from __future__ import annotations

import hashlib
import math
import threading
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from core.curves import FitResult, fit_curve, get_family
from core.defaults import DEFAULT_LEVEL
from core.errors import FitError, FitWarning, InputError

#: the inner splits: fit on the first round(r·n) observed epochs, check on the rest
INNER_FRACTIONS: tuple[float, ...] = (0.5, 0.65, 0.8)
#: the fewest epochs an inner fit is made on
MIN_INNER_EPOCHS = 3
#: the fewest inner checks a correction and an interval are learned from
MIN_CHECKS = 4
#: the least half-width of the interval in ln g (a factor 1.22 on the remaining epochs)
MIN_LOG_SPREAD = 0.2
INTERVAL_METHOD = ("empirical: quantiles of the horizon ratios of the same family inside the observed "
                   "epochs (fit on the first 50/65/80 %, check the later observed epochs), applied to "
                   "the predicted remaining epochs")


@dataclass(frozen=True, eq=False)
class EpochSeries:
    """What one route fits: points ``(x, y)`` and the per-epoch levels they come from.

    Attributes
    ----------
    x, y : ndarray
        Fitted points (x = epoch number or global step; y = error or loss, decreasing).
    epoch : ndarray
        The epoch of each point.
    epochs, levels : ndarray
        Per epoch: its number and its level (error of the epoch, or its mean loss).
    x_per_epoch : float
        Units of ``x`` in one epoch (1 for epochs, steps per epoch for steps).
    mid_epoch : bool
        An epoch's level is the curve at the epoch's middle (per-step losses averaged over
        the epoch), rather than at its end.
    """

    x: np.ndarray
    y: np.ndarray
    epoch: np.ndarray
    epochs: np.ndarray
    levels: np.ndarray
    x_per_epoch: float
    mid_epoch: bool

    @property
    def n_epochs(self) -> int:
        return int(self.epochs.size)

    def first(self, n: int) -> "EpochSeries":
        """The series cut after epoch ``n``."""
        keep, keep_e = self.epoch <= n, self.epochs <= n
        return EpochSeries(self.x[keep], self.y[keep], self.epoch[keep], self.epochs[keep_e],
                      self.levels[keep_e], self.x_per_epoch, self.mid_epoch)

    def continuous_epoch(self, x) -> np.ndarray:
        """Where on the epoch axis the curve value at ``x`` is an epoch's level."""
        return np.asarray(x, dtype=float) / self.x_per_epoch + (0.5 if self.mid_epoch else 0.0)

    def key(self) -> bytes:
        """A digest of the data (fits are cached by content, never by name)."""
        h = hashlib.blake2b(digest_size=16)
        for a in (self.x, self.y):
            h.update(np.ascontiguousarray(a, dtype=float).tobytes())
        h.update(repr((self.x_per_epoch, self.mid_epoch)).encode())
        return h.digest()


def whole_epoch(c: float) -> float:
    """The first whole epoch at or after the continuous epoch ``c`` (NaN and inf kept; >= 1).

    >>> whole_epoch(12.0), whole_epoch(12.2), whole_epoch(0.3), whole_epoch(math.inf)
    (12.0, 13.0, 1.0, inf)
    """
    if not math.isfinite(c):
        return float(c)
    return float(max(1, math.ceil(c - 1e-9)))


#: log-spaced bins the predictions' fits use at most (``fit_curve``'s ``max_points``): per-step
#: logs of a few thousand steps fit 3-10× faster, parameters within about 0.1 %
PREDICTION_MAX_POINTS = 300
#: optimiser tolerance of the predictions' fits (``fit_curve``'s ``tol``)
PREDICTION_TOL = 1e-8


@dataclass
class FitCache:
    """Fits by (family, data digest): a backtest refits the same first epochs many times.

    Keys are the content of the data, so a cached fit is exactly the fit that would be made.
    ``None`` is cached for a fit that failed (or had too few points).  ``max_fits`` bounds it
    (least recently used fits go first; 0: no bound), so one cache can be shared by every
    prediction a server makes; it is safe to share between threads.
    """

    max_points: int = PREDICTION_MAX_POINTS
    max_fits: int = 0
    fits: OrderedDict = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def fit(self, series: EpochSeries, family: str) -> FitResult | None:
        key = (family, series.key())
        with self._lock:
            if key in self.fits:
                self.fits.move_to_end(key)
                return self.fits[key]
        result = _quiet_fit(series, family, self.max_points)      # outside the lock: fits run in parallel
        with self._lock:
            self.fits[key] = result
            while self.max_fits and len(self.fits) > self.max_fits:
                self.fits.popitem(last=False)
        return result


def _quiet_fit(series: EpochSeries, family: str, max_points: int) -> FitResult | None:
    if series.x.size <= len(get_family(family).param_names):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FitWarning)
            return fit_curve(series.x, series.y, family=family, max_points=max_points,
                             tol=PREDICTION_TOL, name="observed epochs")
    except (FitError, InputError):
        return None


@dataclass(frozen=True)
class InnerBacktest:
    """The checks of one family inside the observed epochs (one entry per check).

    ``fitted_epochs[i]`` epochs were fitted, epoch ``epoch[i]`` reached its level, and the
    fit said ``predicted[i]`` (continuous epoch; ``inf`` never; NaN when the fit failed).
    """

    family: str
    fitted_epochs: np.ndarray
    epoch: np.ndarray
    predicted: np.ndarray

    @property
    def n_checks(self) -> int:
        return int(self.epoch.size)

    @property
    def score(self) -> float:
        """Mean relative horizontal error, each capped at 1 (NaN without checks)."""
        if self.n_checks == 0:
            return math.nan
        with np.errstate(all="ignore"):
            rel = np.abs(self.predicted - self.epoch) / self.epoch
        return float(np.mean(np.where(np.isfinite(rel), np.minimum(rel, 1.0), 1.0)))

    @property
    def ratios(self) -> np.ndarray:
        """``g = (e − m)/(ĉ − m)`` of the checks whose fit succeeded (0 where the fit said never)."""
        ok = ~np.isnan(self.predicted)
        c, e, m = self.predicted[ok], self.epoch[ok], self.fitted_epochs[ok]
        with np.errstate(all="ignore"):
            g = (e - m) / np.maximum(c - m, 0.5)
        return np.where(np.isinf(c), 0.0, g)


def inner_backtest(series: EpochSeries, family: str, *, cache: FitCache | None = None) -> InnerBacktest:
    """Fit ``family`` on the first 50/65/80 % of the epochs of ``series``; check the later ones."""
    cache = cache or FitCache()
    n = series.n_epochs
    fitted, epochs, predicted, seen = [], [], [], set()
    for r in INNER_FRACTIONS:
        m = int(round(r * n))
        if m < MIN_INNER_EPOCHS or m >= n or m in seen:
            continue
        seen.add(m)
        later = series.epochs > m
        fit = cache.fit(series.first(m), family)
        if fit is None:
            c = np.full(int(later.sum()), np.nan)
        else:
            with np.errstate(all="ignore"):
                c = series.continuous_epoch(fit.step_at_many(series.levels[later]))
            c = np.where(np.isnan(c), np.inf, c)
        fitted.append(np.full(c.size, float(m)))
        epochs.append(series.epochs[later])
        predicted.append(c)

    def cat(parts):
        return np.concatenate(parts) if parts else np.array([], dtype=float)

    return InnerBacktest(family, cat(fitted), cat(epochs), cat(predicted))


@dataclass(frozen=True)
class Drift:
    """Median and ``level`` quantiles of ``ln g`` over the inner checks (see the module docstring).

    ``-inf`` stands for ``g = 0`` (the fit said never); all NaN when there are no checks.
    """

    median: float
    low: float
    high: float
    n_checks: int

    @classmethod
    def from_backtest(cls, bt: InnerBacktest, level: float = DEFAULT_LEVEL) -> "Drift":
        g = bt.ratios
        if g.size == 0:
            return cls(math.nan, math.nan, math.nan, 0)
        with np.errstate(divide="ignore"):
            lg = np.log(g)
        return cls(float(np.quantile(lg, 0.5, method="lower")),
                   float(np.quantile(lg, (1 - level) / 2, method="lower")),
                   float(np.quantile(lg, (1 + level) / 2, method="higher")), int(g.size))

    @property
    def usable(self) -> bool:
        """Enough checks to learn from (``MIN_CHECKS``)."""
        return self.n_checks >= MIN_CHECKS

    def widened(self, inflation: float) -> tuple[float, float]:
        """``(ln g_lo, ln g_hi)``: at least ``MIN_LOG_SPREAD`` from the median, then × ``inflation``.

        >>> Drift(0.0, -0.1, 0.5, 9).widened(2.0)   # spreads 0.2 (the floor) and 0.5, doubled
        (-0.4, 1.0)
        """
        m = self.median
        if not math.isfinite(m):
            return self.low, self.high
        lo = m - inflation * max(m - self.low, MIN_LOG_SPREAD)
        hi = m + inflation * max(self.high - m, MIN_LOG_SPREAD)
        return float(lo), float(hi)


def stretch(raw: float, n: int, log_ratio: float) -> float:
    """``n + (p − n)·exp(log_ratio)`` with ``p = max(raw, n + 1/2)``: a prediction's remaining
    epochs scaled by a horizon ratio.

    >>> stretch(20.0, 10, 0.0), stretch(20.0, 10, math.log(0.5)), stretch(20.0, 10, -math.inf)
    (20.0, 15.0, 10.0)
    """
    if not math.isfinite(raw) or math.isnan(log_ratio):
        return raw if not math.isfinite(raw) else math.nan
    return float(n + (max(raw, n + 0.5) - n) * math.exp(log_ratio))
