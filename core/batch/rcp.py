"""Batch scaling from MLCommons' reference convergence points (RCPs), read from the installed ``mlperf-logging``.

The points are read from the installed ``mlperf-logging`` by :mod:`core.batch.rcp_data` (each
batch's mean as the package's own checker takes it); this module predicts the samples to target
at a batch from the other batches:

* **inside** the measured batches: linear interpolation between the two neighbouring
  batches, which is McCandlish's ``E(B) = E_min·(1 + B/B_noise)`` through those two points
  (a line in ``B``) and the interpolation the RCP checker itself applies between RCPs;
* **outside**: McCandlish's line fitted to all the batches (:func:`core.plan.batch.fit_batch_scaling`),
  flagged ``extrapolated``.

Intervals are for one new run (a seed): ``Ê·exp(±z·s)`` with ``s²`` the seeds' relative
spread at that batch (interpolated between batches) plus the model's own error, estimated
by leave-one-batch-out on the batches given (interpolation errors for a point inside, the
fit's line covariance and :data:`core.plan.batch.EXTRAPOLATION_SIGMA` per e-fold outside,
kept between perfect scaling and none from the nearest batch).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from core.batch.batch import fit_batch_scaling
from core.batch.measured_runs import BatchRun
from core.batch.rcp_data import RcpPoint, RcpSet
from core.batch.scaling_model import EXTRAPOLATION_SIGMA
from core.defaults import DEFAULT_LEVEL
from core.errors import InputError

#: the columns of :func:`rcp_table`
RCP_COLUMNS = ("benchmark", "round", "global_batch", "seeds", "mean", "seed_cv_pct", "learning_rate",
               "predicted", "low", "high", "error_pct", "mccandlish", "mccandlish_error_pct", "region", "note")


# --------------------------------------------------------------------------- prediction
@dataclass(frozen=True)
class BatchPrediction:
    """Samples to target at one batch: the estimate, a ``level`` interval for one run, and where it lies."""

    global_batch: float
    samples: float
    low: float
    high: float
    region: str
    method: str
    note: str = ""


def _interp_errors(batches: np.ndarray, means: np.ndarray) -> np.ndarray:
    """Log errors of linear interpolation at each interior batch from its two neighbours."""
    out = []
    for i in range(1, len(batches) - 1):
        guess = np.interp(batches[i], batches[[i - 1, i + 1]], means[[i - 1, i + 1]])
        out.append(math.log(guess / means[i]))
    return np.array(out, dtype=float)


def predict_from_points(batches: Sequence[float], means: Sequence[float], cvs: Sequence[float], batch: float, *,
                        level: float = DEFAULT_LEVEL) -> BatchPrediction:
    """Samples to target at ``batch`` from mean samples at other batches (interpolation inside, McCandlish outside).

    ``cvs`` are the seeds' relative spreads at each batch (a new run scatters that much;
    :attr:`RcpPoint.spread`);
    the model's own error inside the range is the root mean square of interpolation's
    leave-one-out errors at the interior batches given (none with two batches: then the
    seeds' spread alone).

    Examples
    --------
    Points on ``E = 1000 + 10·B`` with a 2 % seed spread: inside, the line through the
    neighbours; outside, the fitted line, flagged.

    >>> p = predict_from_points([100, 200, 400], [2000, 3000, 5000], [0.02] * 3, 300)
    >>> p.samples, p.region
    (4000.0, 'interpolated')
    >>> q = predict_from_points([100, 200, 400], [2000, 3000, 5000], [0.02] * 3, 800)
    >>> round(q.samples), q.region, q.low < 9000 < q.high
    (9000, 'extrapolated', True)
    """
    b = np.asarray(batches, dtype=float)
    e = np.asarray(means, dtype=float)
    cv = np.asarray(cvs, dtype=float)
    order = np.argsort(b)
    b, e, cv = b[order], e[order], cv[order]
    z = float(ndtri((1 + level) / 2))
    seed = float(np.interp(batch, b, cv))
    if np.any(b == batch):
        i = int(np.flatnonzero(b == batch)[0])
        half = z * seed
        return BatchPrediction(batch, float(e[i]), float(e[i] * math.exp(-half)), float(e[i] * math.exp(half)),
                               "measured", "measured")
    if b[0] < batch < b[-1]:
        guess = float(np.interp(batch, b, e))
        inner = _interp_errors(b, e)
        model = float(np.sqrt(np.mean(inner ** 2))) if inner.size else 0.0
        half = z * math.hypot(seed, model)
        return BatchPrediction(batch, guess, guess * math.exp(-half), guess * math.exp(half), "interpolated",
                               "interpolation between the neighbouring batches")
    runs = [BatchRun(f"B={x:g}", float(x), True, float(y), float(y) / float(x)) for x, y in zip(b, e)]
    fit = fit_batch_scaling(runs, level=level)
    guess = float(fit.samples(batch))
    line = 0.0
    if fit.cov is not None:
        c = np.asarray(fit.cov, dtype=float)
        line = max(c[0, 0] + 2 * batch * c[0, 1] + batch * batch * c[1, 1], 0.0) / guess ** 2
    widen = float(fit.extrapolation_sigma(batch))
    half = z * math.sqrt(seed ** 2 + line + widen ** 2)
    low, high = guess * math.exp(-half), guess * math.exp(half)
    edge = b[-1] if batch > b[-1] else b[0]
    # samples never fall and steps never grow as the batch grows: stay between the nearest batch's interval
    # (perfect scaling) and that interval scaled with the batch (no scaling)
    k = 0 if batch < b[0] else -1
    e_low, e_high = e[k] * math.exp(-z * cv[k]), e[k] * math.exp(z * cv[k])
    if batch > edge:
        low, high = max(low, e_low), min(high, e_high * batch / edge)
    else:
        low, high = max(low, e_low * batch / edge), min(high, e_high)
    low, high = float(min(low, guess)), float(max(high, guess))
    note = (f"extrapolated {max(batch, edge) / min(batch, edge):.3g}x beyond the measured batch {edge:,.0f} "
            f"(interval widened by {EXTRAPOLATION_SIGMA:g} per e-fold)")
    return BatchPrediction(batch, guess, low, high, "extrapolated", "McCandlish's line fitted to every batch", note)


def mccandlish_prediction(batches: Sequence[float], means: Sequence[float], batch: float) -> float:
    """The plain baseline: McCandlish's line fitted to every batch given, at ``batch``.

    >>> round(mccandlish_prediction([100, 200, 400], [2000, 3000, 5000], 300), 6)
    4000.0
    """
    runs = [BatchRun(f"B={x:g}", float(x), True, float(y)) for x, y in zip(batches, means)]
    return float(fit_batch_scaling(runs).samples(batch))


#: a learning rate this far (ratio) off the other runs' trend, and beyond their own scatter about it, is off the curve
LR_TOLERANCE = 1.25


def lr_deviation(points: Sequence[RcpPoint], batch: float, learning_rate: float | None) -> float | None:
    """``ln(lr / trend)`` when ``learning_rate`` is off the others' learning-rate trend, else None.

    The trend is ``ln lr = a + k·ln B`` fitted to ``points`` (the rule by which the
    references scaled their rate with the batch); a run whose rate is more than
    :data:`LR_TOLERANCE` times off it, and further off than any of the others, is not on the
    same curve (a raised, capped or cut rate).

    >>> pts = [RcpPoint(b, (1.0,), 1.0, 4e-4) for b in (8, 16, 32)]          # LoRA: one rate for 8 to 32
    >>> round(lr_deviation(pts, 128, 1e-3), 3)                               # ln(1e-3 / 4e-4)
    0.916
    >>> lr_deviation(pts, 64, 4e-4) is None
    True
    """
    pts = [(p.global_batch, p.learning_rate) for p in points if p.learning_rate]
    if not learning_rate or len(pts) < 2:
        return None
    x = np.log([p[0] for p in pts])
    y = np.log([p[1] for p in pts])
    k, a = np.polyfit(x, y, 1) if np.ptp(x) > 0 else (0.0, float(np.mean(y)))
    scatter = float(np.max(np.abs(y - (a + k * x))))
    dev = math.log(learning_rate) - (a + k * math.log(batch))
    return float(dev) if abs(dev) > max(math.log(LR_TOLERANCE), scatter + 1e-9) else None


def rcp_leave_one_out(rcps: RcpSet, *, level: float = DEFAULT_LEVEL) -> list[dict]:
    """Leave one batch out: each batch predicted from the others, beside plain McCandlish.

    One row per batch with :data:`RCP_COLUMNS`; ``error_pct`` is ``100·(predicted/mean − 1)``.
    Needs three or more batches (two to fit, one to predict).
    """
    pts = rcps.points
    if len(pts) < 3:
        raise InputError(f"--rcp {rcps.benchmark}:{rcps.round}: expected RCPs at three or more global batches to "
                         f"leave one out; got {len(pts)}.")
    rows = []
    for i, held in enumerate(pts):
        rest = [p for j, p in enumerate(pts) if j != i]
        b = [p.global_batch for p in rest]
        e = [p.mean for p in rest]
        pred = predict_from_points(b, e, [p.spread for p in rest], held.global_batch, level=level)
        base = mccandlish_prediction(b, e, held.global_batch)
        dev = lr_deviation(rest, held.global_batch, held.learning_rate)
        low, high, lr_note = pred.low, pred.high, ""
        if dev is not None:          # off the curve: widen by the rate's own deviation (one standard deviation)
            z = float(ndtri((1 + level) / 2))
            up = math.sqrt(math.log(pred.high / pred.samples) ** 2 + (z * dev) ** 2)
            down = math.sqrt(math.log(pred.samples / pred.low) ** 2 + (z * dev) ** 2)
            low, high = pred.samples * math.exp(-down), pred.samples * math.exp(up)
            lr_note = (f"learning rate {held.learning_rate:g} is {math.exp(dev):.2g}x the other batches' trend: "
                       "not on the same curve (interval widened by that factor)")
        note = "; ".join(x for x in (pred.note, lr_note) if x)
        rows.append(dict(benchmark=rcps.benchmark, round=rcps.round, global_batch=held.global_batch,
                         seeds=len(held.values), mean=held.mean, seed_cv_pct=100 * held.cv,
                         resolution=held.resolution,
                         learning_rate=held.learning_rate, predicted=pred.samples, low=low, high=high,
                         lr_off_trend=dev is not None,
                         error_pct=100 * (pred.samples / held.mean - 1), mccandlish=base,
                         mccandlish_error_pct=100 * (base / held.mean - 1), region=pred.region, note=note,
                         seeds_covered=float(np.mean([low <= v <= high for v in held.values]))))
    return rows


def rcp_fit(rcps: RcpSet, *, level: float = DEFAULT_LEVEL):
    """McCandlish's line fitted to every batch's mean (:class:`core.plan.batch.BatchScaling`)."""
    runs = [BatchRun(f"{rcps.benchmark} B={p.global_batch:g}", p.global_batch, True, p.mean,
                     p.mean / p.global_batch) for p in rcps.points]
    return fit_batch_scaling(runs, level=level)
