"""The batch-scaling model of one job, BatchScaling: E_min and B_noise with their intervals,
predictions at any batch (measured, interpolated or extrapolated), and the model typed in or
anchored at one run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
from scipy.special import stdtrit

from core.batch.formulas import samples_to_target, statistical_efficiency, steps_to_target
from core.batch.measured_runs import BatchRun
from core.validation import check_scalar

#: relative standard deviation added per e-fold of batch beyond the measured range (ln B/B_edge): how far
#: McCandlish's line misses when it extrapolates; leave-one-batch-out over MLCommons' reference convergence
#: points (mlperf-logging 4.1.68, 19 benchmarks, 38 end points): median 0.13, root mean square 0.19
EXTRAPOLATION_SIGMA = 0.15
#: the regions of a prediction
REGIONS = ("measured", "interpolated", "extrapolated")


# --------------------------------------------------------------------------- the model
@dataclass(frozen=True)
class BatchScaling:
    """``E_min`` and ``B_noise`` of one job, with intervals and the runs they came from.

    Attributes
    ----------
    e_min : float
        Samples to target at a vanishing batch (``E(0)``), > 0.
    b_noise : float
        The noise scale, samples; ``inf``: no cost of a larger batch was measured.
    e_min_low, e_min_high, b_noise_low, b_noise_high : float or None
        The ``level`` interval (None when there is none: two runs, typed values); for the
        noise-scale method the range of the measured noise scale instead (``level`` None).
    level : float or None
    method : {"fit", "noise-scale", "typed"}
    runs : tuple of BatchRun
        Every run given, reached or not (those not reached are left out, with a note).
    samples_per_epoch : float or None
        ``N``, to turn samples into epochs.
    cov : tuple or None
        Covariance of ``(E_min, E_min/B_noise)`` (the fitted line's intercept and slope).
    sigma_rel : float or None
        Standard deviation of the runs' relative misses (a new run's scatter).
    nfree : int
        Runs used minus 2 (fit); 0 otherwise.
    mape_pct : float or None
        Mean absolute percentage error of the model on the runs it used.
    flags : tuple of str
    lr_cap_batch : float or None
        The smallest batch whose run's learning rate stopped growing with the batch (capped)
        while the smaller runs' grew: from there on runs are not on the tuned curve, and a
        prediction there is flagged (the model needs fewer samples than such a run).
    sigma_floor : float or None
        The relative scatter the runs' resolution alone implies (``sqrt(mean((r_i/E_i)²/12))``,
        ``r_i`` the samples between the passing evaluation and the one before): the fit's
        ``sigma_rel`` is never below it, so runs on an exact line keep an interval.
    """

    e_min: float
    b_noise: float
    method: str
    runs: tuple[BatchRun, ...] = ()
    e_min_low: float | None = None
    e_min_high: float | None = None
    b_noise_low: float | None = None
    b_noise_high: float | None = None
    level: float | None = None
    samples_per_epoch: float | None = None
    cov: tuple[tuple[float, float], tuple[float, float]] | None = None
    sigma_rel: float | None = None
    nfree: int = 0
    mape_pct: float | None = None
    flags: tuple[str, ...] = ()
    lr_cap_batch: float | None = None
    sigma_floor: float | None = None

    @property
    def s_min(self) -> float:
        """Steps to target at an infinite batch, ``E_min / B_noise``."""
        return self.e_min / self.b_noise

    @property
    def used(self) -> tuple[BatchRun, ...]:
        """The runs the model was learned from: reached the target and kept in the fit (those it describes)."""
        return tuple(r for r in self.runs if r.reached and r.in_fit)

    @property
    def measured(self) -> tuple[BatchRun, ...]:
        """Every run that reached the target, in the fit or not (a capped learning rate: ``in_fit`` False)."""
        return tuple(r for r in self.runs if r.reached)

    def samples(self, global_batch):
        """``E(B)``, samples to target."""
        return samples_to_target(global_batch, self.e_min, self.b_noise)

    def steps(self, global_batch):
        """``S(B)``, steps to target."""
        return steps_to_target(global_batch, self.e_min, self.b_noise)

    def epochs(self, global_batch):
        """``E(B)/N`` epochs to target, NaN when the samples per epoch are unknown."""
        n = self.samples_per_epoch
        out = np.asarray(self.samples(global_batch), dtype=float) / n if n else \
            np.full(np.shape(global_batch), np.nan)
        return float(out) if np.ndim(out) == 0 else out

    def efficiency(self, global_batch, *, base_batch: float | None = None):
        """:func:`statistical_efficiency` with this model's ``B_noise``."""
        return statistical_efficiency(global_batch, self.b_noise, base_batch=base_batch)

    def samples_interval(self, global_batch) -> tuple[np.ndarray, np.ndarray] | None:
        """``level`` interval of a new run's samples to target at ``B``; None without one.

        Fit: multiplicative (it never reaches 0 samples), ``Ê·exp(±t·s)`` with the relative
        spread ``s² = x·Cov·xᵀ/Ê² + σ² + (EXTRAPOLATION_SIGMA·ln(B/B_edge))²``: the line's
        covariance, the runs' scatter ``σ`` (never below the runs' resolution,
        ``sigma_floor``), and, beyond the measured batches only, a widening per e-fold of
        extrapolation (``B_edge`` the nearest measured batch; :data:`EXTRAPOLATION_SIGMA`),
        kept within what McCandlish's model allows there (samples never fall and steps never
        grow as the batch grows): above the runs between the interval at ``B_edge`` and that
        interval's upper end × ``B/B_edge``, below them the mirror image;
        noise scale: ``E_min·(1 + B/B_noise)`` over the range of ``B_noise`` (and the matching
        ``E_min``).
        """
        b = np.asarray(global_batch, dtype=float)
        if self.method == "noise-scale" and self.b_noise_low is not None:
            ends = [samples_to_target(b, e, n) for e, n in ((self.e_min_high, self.b_noise_low),
                                                             (self.e_min_low, self.b_noise_high))]
            return np.minimum(*ends), np.maximum(*ends)
        if self.cov is None or self.level is None or self.nfree < 1:
            return None
        c = np.asarray(self.cov, dtype=float)
        mean = np.asarray(self.samples(b), dtype=float)
        line = (c[0, 0] + 2 * b * c[0, 1] + b * b * c[1, 1]) / mean ** 2
        s2 = np.maximum(line, 0.0) + self.sigma_rel ** 2 + self.extrapolation_sigma(b) ** 2
        t = stdtrit(self.nfree, (1 + self.level) / 2)      # Student's t quantile
        half = t * np.sqrt(s2)
        low, high = mean * np.exp(-half), mean * np.exp(half)
        span = self.batch_range()
        if span is not None and (np.any(b > span[1]) or np.any(b < span[0])):
            # beyond the runs, samples never fall and steps never grow with the batch (E and S monotone):
            # the interval stays between perfect scaling (E flat) and none (S flat) from the nearest run's interval
            edge = np.clip(b, span[0], span[1])
            e_mean = np.asarray(self.samples(edge), dtype=float)
            e_line = (c[0, 0] + 2 * edge * c[0, 1] + edge * edge * c[1, 1]) / e_mean ** 2
            e_half = t * np.sqrt(np.maximum(e_line, 0.0) + self.sigma_rel ** 2)
            e_low, e_high = e_mean * np.exp(-e_half), e_mean * np.exp(e_half)
            up, down = b > span[1], b < span[0]
            low = np.where(up, np.maximum(low, e_low), np.where(down, np.maximum(low, e_low * b / edge), low))
            high = np.where(up, np.minimum(high, e_high * b / edge), np.where(down, np.minimum(high, e_high), high))
            low = np.minimum(low, mean)
            high = np.maximum(high, mean)
        if np.ndim(low) == 0:
            return float(low), float(high)
        return low, high

    def batch_range(self) -> tuple[float, float] | None:
        """Smallest and largest global batch of the runs the model was fitted on (None: none)."""
        batches = [r.global_batch for r in self.used]
        return (min(batches), max(batches)) if batches else None

    def extrapolation_sigma(self, global_batch):
        """``EXTRAPOLATION_SIGMA·|ln(B/B_edge)|`` outside the measured batches, 0 inside.

        >>> from core.batch.batch import fit_batch_scaling
        >>> m = fit_batch_scaling([BatchRun(f"r{b}", b, True, 1e6 * (1 + b / 2000)) for b in (250, 1000, 4000)])
        >>> m.extrapolation_sigma([1000, 4000 * math.e])        # inside: 0; one e-fold beyond 4,000: 0.15
        array([0.  , 0.15])
        """
        b = np.asarray(global_batch, dtype=float)
        span = self.batch_range()
        if span is None:
            return np.zeros_like(b)
        out = EXTRAPOLATION_SIGMA * np.abs(np.log(np.clip(b, span[0], span[1]) / b))
        return float(out) if out.ndim == 0 else out

    def region(self, global_batch: float) -> str:
        """``measured`` (a fitted run's batch), ``interpolated`` (inside their range) or ``extrapolated``."""
        b = float(global_batch)
        if any(r.global_batch == b for r in self.used):
            return "measured"
        span = self.batch_range()
        return "interpolated" if span and span[0] <= b <= span[1] else "extrapolated"

    def note(self, global_batch: float) -> str:
        """What a reader of a prediction at ``B`` must know: extrapolation, a learning-rate cap."""
        b = float(global_batch)
        notes = []
        span = self.batch_range()
        if span and self.region(b) == "extrapolated":
            edge = span[1] if b > span[1] else span[0]
            notes.append(f"extrapolated {max(b, edge) / min(b, edge):.3g}x beyond the measured batch {edge:,.0f}: "
                         f"interval widened by {EXTRAPOLATION_SIGMA:g} per e-fold")
        if self.lr_cap_batch is not None and b >= self.lr_cap_batch:
            notes.append(f"at or past batch {self.lr_cap_batch:,.0f}, where the runs' learning rate stopped "
                         "growing with the batch: a capped run needs more samples than this curve")
        return "; ".join(notes)

    def steps_interval(self, global_batch) -> tuple[np.ndarray, np.ndarray] | None:
        """The samples interval divided by ``B`` (None without one)."""
        band = self.samples_interval(global_batch)
        if band is None:
            return None
        b = np.asarray(global_batch, dtype=float)
        return band[0] / b, band[1] / b

    def table(self, batches: Sequence[float] | None = None) -> list[dict]:
        """Rows ``global_batch, epochs_to_target, samples_to_target, steps_to_target, steps_low, steps_high, source``.

        One per run that reached the target (``measured``; the interval is the model's at that
        batch), in the fit or not: ``in_fit`` False and the reason in ``note`` for a run kept out
        of it (a capped learning rate), its measured values shown all the same; then one per
        batch of ``batches`` (``predicted``, ``in_fit`` None), each with ``region``
        (:meth:`region`) and ``note`` (:meth:`note`: extrapolation, a learning-rate cap).
        """
        rows = []
        for r in sorted(self.measured, key=lambda r: (r.global_batch, r.source)):
            rows.append(dict(global_batch=r.global_batch, epochs_to_target=r.epochs_to_target,
                             samples_to_target=r.samples_to_target, steps_to_target=r.steps_to_target,
                             **self._band(r.global_batch), source="measured", file=r.source,
                             region="measured", in_fit=r.in_fit, note="" if r.in_fit else r.note))
        for b in batches or ():
            b = float(b)
            epochs = self.epochs(b)
            rows.append(dict(global_batch=b, epochs_to_target=None if math.isnan(epochs) else epochs,
                             samples_to_target=self.samples(b), steps_to_target=self.steps(b),
                             **self._band(b), source="predicted", file="", region=self.region(b),
                             in_fit=None, note=self.note(b)))
        return rows

    def _band(self, b: float) -> dict:
        band = self.steps_interval(b)
        if band is None:
            return {"steps_low": None, "steps_high": None}
        return {"steps_low": float(band[0]), "steps_high": float(band[1])}

    def summary(self) -> str:
        """One line: ``E_min``, ``B_noise``, their intervals and the fit's error on the runs."""
        def span(lo, hi, fmt):
            if lo is None or hi is None:
                return ""
            what = f"{self.level:.0%} interval" if self.level else "range"
            return f" ({what} {fmt(lo)} to {fmt(hi)})"

        def num(x):
            return "inf" if not math.isfinite(x) else f"{x:,.4g}"

        err = f"; error on the {len(self.used)} measured runs: MAPE {self.mape_pct:.1f} %" \
            if self.mape_pct is not None else ""
        return (f"E_min = {num(self.e_min)} samples{span(self.e_min_low, self.e_min_high, num)}, "
                f"B_noise = {num(self.b_noise)}{span(self.b_noise_low, self.b_noise_high, num)}, "
                f"S_min = {num(self.s_min)} steps [{self.method}]{err}")

    def to_dict(self) -> dict:
        """Plain Python types only (runs as dicts)."""
        out = asdict(self)
        out["runs"] = [r.to_dict() for r in self.runs]
        out["flags"] = list(self.flags)
        out["cov"] = [list(r) for r in self.cov] if self.cov is not None else None
        return out


def typed_batch_scaling(e_min: float, b_noise: float, *, samples_per_epoch: float | None = None) -> BatchScaling:
    """A model from typed values (``python -m core plan --batch-model E_MIN,B_NOISE``).

    >>> typed_batch_scaling(1e6, 1000).steps(3000)      # 1e6·(1 + 3)/3000
    1333.3333333333333
    """
    e = check_scalar(e_min, "E_min", float, min_val=0, include_boundaries="neither",
                     fix="Give the samples to target at a small batch")
    n = check_scalar(b_noise, "B_noise", float, min_val=0, include_boundaries="neither",
                     fix="Give the noise scale in samples (a batch size)")
    return BatchScaling(e, n, "typed", samples_per_epoch=samples_per_epoch)


def anchored_batch_scaling(steps: float, global_batch: float, b_noise: float, *,
                           samples_per_epoch: float | None = None) -> BatchScaling:
    """A model through one known point: ``steps`` to target at ``global_batch``, and a typed ``B_noise``.

    ``E_min = steps · B / (1 + B/B_noise)``; what the Plan page uses to scale a steps estimate
    measured at one batch to the others.

    >>> m = anchored_batch_scaling(2000, 1000, 1000)    # E(1000) = 2e6 = E_min · 2
    >>> m.e_min, m.steps(1000)
    (1000000.0, 2000.0)
    """
    s = check_scalar(steps, "steps to target", float, min_val=0, include_boundaries="neither")
    b = check_scalar(global_batch, "global batch", float, min_val=0, include_boundaries="neither")
    n = check_scalar(b_noise, "B_noise", float, min_val=0, include_boundaries="neither",
                     fix="Give the noise scale in samples (a batch size)")
    return BatchScaling(s * b / (1 + b / n), n, "typed", samples_per_epoch=samples_per_epoch,
                        flags=(f"anchored at {s:,.0f} steps at batch {b:,.0f}; B_noise typed in",))
