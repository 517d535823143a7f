"""Learning a job's batch-scaling model from its runs: fitted across batches, or from a noise scale.

The model (:mod:`core.batch.formulas`): ``E(B) = E_min · (1 + B / B_noise)`` samples and
``S(B) = S_min · (1 + B_noise / B)`` steps to the target; :class:`~core.batch.scaling_model.BatchScaling`
holds a job's ``E_min`` and ``B_noise`` with their intervals, and the runs it is learned from are
measured in :mod:`core.batch.measured_runs`. This module learns it.

Two ways to learn ``E_min`` and ``B_noise`` (:func:`batch_scaling`):

* **fit** (two or more runs of one job at different global batches that reached the
  target): ``E(B) = E_min + (E_min/B_noise)·B`` is a line in ``B``; it is fitted by
  non-negative least squares on relative errors (each run's measured samples to target
  counts by its relative miss), with ``level`` intervals from the fit's covariance
  (t-distribution, ``n − 2`` degrees of freedom; two runs give no interval), multiplicative
  (never down to 0 samples), the runs' scatter floored at their resolution (one evaluation),
  widened per e-fold beyond the measured batches (flagged ``extrapolated``), runs past a
  learning-rate cap left out (:func:`learning_rate_cap`);
* **noise scale** (one run whose log has Pollux's ``grad_sqr``, ``grad_var``, or a
  ``noise_scale`` column): ``B_noise`` is measured (:mod:`core.logs.noise`, the median over
  the evaluations just before the target), and ``E_min = E(B_run)/(1 + B_run/B_noise)``.

**Each run is assumed tuned for its batch** (its learning rate scaled, for example by the
linear rule of :mod:`core.scaling.batch_size`): the model describes tuned runs, and a run
whose learning rate was left at the small-batch value needs more samples than it says.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
from scipy.optimize import nnls
from scipy.special import stdtrit

from core.batch.measured_runs import BatchRun
from core.batch.scaling_model import BatchScaling
from core.defaults import DEFAULT_LEVEL
from core.errors import InputError, LogFormatError
from core.logs.noise import GradientNoise, noise_scale_at
from core.validation import check_scalar

#: shown wherever a batch-scaling result is: the model's one assumption about the runs
TUNED_NOTE = ("Each run is assumed tuned for its batch (learning rate scaled, e.g. by the linear rule); "
              "untuned large-batch runs need more samples than this model says.")
#: how each method learns the model
BATCH_SCALING_METHODS: dict[str, str] = {
    "fit": "E(B) = E_min·(1 + B/B_noise) fitted to runs at two or more global batches",
    "noise-scale": "B_noise measured by the gradient noise scale of one run; E_min from its samples to target",
    "typed": "E_min and B_noise typed in",
}
#: evaluations before the target over which the measured noise scale is taken (median)
NOISE_WINDOW = 5


def fit_batch_scaling(runs: Sequence[BatchRun], *, level: float = DEFAULT_LEVEL,
                      samples_per_epoch: float | None = None) -> BatchScaling:
    """Fit ``E(B) = E_min·(1 + B/B_noise)`` to runs at two or more global batches.

    The model is the line ``E = a + b·B`` with ``a = E_min``, ``b = E_min/B_noise >= 0``;
    ``scipy.optimize.nnls`` minimises ``Σ ((E_i − a − b·B_i)/E_i)²`` (relative misses, so a
    run needing 3e6 samples counts as much as one needing 3e7).  The covariance of
    ``(a, b)`` is ``s²·(AᵀA)⁻¹`` with ``s² = rss/(n − 2)``; ``E_min`` gets ``a ± t·se(a)``
    and ``B_noise = a/b`` the delta-method interval of ``ln a − ln b``, open above when the
    slope's interval reaches 0 (no measurable cost of larger batches).

    Parameters
    ----------
    runs : sequence of BatchRun
        From :func:`measure_batch_runs`; runs that did not reach the target are kept in the
        result (with their notes) but not fitted.
    level : float, default=0.8
    samples_per_epoch : float or None

    Raises
    ------
    InputError
        Fewer than two distinct global batches among the runs that reached the target.

    Examples
    --------
    Noise-free runs from ``E_min = 1e6``, ``B_noise = 2000`` are recovered:

    >>> runs = [BatchRun(f"r{b}", b, True, 1e6 * (1 + b / 2000), 1e6 * (1 + b / 2000) / b) for b in (250, 1000, 4000)]
    >>> m = fit_batch_scaling(runs)
    >>> round(m.e_min), round(m.b_noise), round(m.mape_pct, 9)
    (1000000, 2000, 0.0)
    >>> fit_batch_scaling(runs[:1])
    Traceback (most recent call last):
    ...
    core.errors.InputError: batch scaling: expected runs of one job at two or more global batches that reached...
    """
    level = check_scalar(level, "level", float, min_val=0, max_val=1, include_boundaries="neither")
    runs, cap = _leave_out_capped(runs)
    used = [r for r in runs if r.reached and r.in_fit]
    batches = sorted({r.global_batch for r in used})
    if len(batches) < 2:
        left = [f"{r.source} ({r.note})" for r in runs if not (r.reached and r.in_fit)]
        raise InputError("batch scaling: expected runs of one job at two or more global batches that reached the "
                         f"target; got {len(used)} run(s) at {len(batches)} batch(es)"
                         + (f" ({', '.join(left)} left out)" if left else "")
                         + ". Add a run at another global batch, or use a log with a gradient-noise-scale column "
                           "(grad_sqr and grad_var, or noise_scale).")
    e = np.array([r.samples_to_target for r in used], dtype=float)
    b = np.array([r.global_batch for r in used], dtype=float)
    design = np.column_stack([np.ones_like(b), b]) / e[:, None]
    (a, slope), _ = nnls(design, np.ones_like(e))
    if a <= 0:
        raise InputError(f"batch scaling: expected samples to target that grow less than in proportion to the "
                         f"batch; got E_min = 0 (steps to target the same at every batch {batches}). Check the "
                         "runs' batches and targets.")
    rel = (e - (a + slope * b)) / e
    nfree = len(e) - 2
    mape = float(np.mean(np.abs(rel)) * 100)
    flags = []
    if cap is not None:
        out = sum(not r.in_fit for r in runs)
        flags.append(f"learning rate capped from batch {cap:,.0f} on (it grew with the batch below): those runs "
                     f"({out}) are not on the tuned curve; their measured values are shown (in_fit False) and left "
                     "out of the fit; predictions there are flagged")
    cov = sigma = None
    lows = highs = (None, None)
    res = np.array([r.resolution / r.samples_to_target for r in used if r.resolution], dtype=float)
    floor = math.sqrt(float(np.mean(res ** 2)) / 12) if res.size else None     # uniform within one evaluation
    if nfree >= 1:
        s2 = float(rel @ rel) / nfree
        if floor is not None and floor ** 2 > s2:
            flags.append(f"the runs lie on the line within their resolution (one evaluation = {100 * res.mean():.1f} % "
                         f"of their samples on average): the interval comes from that resolution "
                         f"(scatter {100 * floor:.2f} %), not from the residuals ({100 * math.sqrt(s2):.2f} %)")
            s2 = floor ** 2
        cov_m = s2 * np.linalg.pinv(design.T @ design)
        cov, sigma = tuple(map(tuple, cov_m.tolist())), math.sqrt(s2)
        lows, highs = _intervals(a, slope, cov_m, level, nfree)
        if highs[1] == math.inf and slope > 0:
            flags.append(f"B_noise is not determined: the runs' samples to target grow with the batch by no more "
                         f"than their scatter, so B_noise follows the noise ({level:.0%} interval "
                         f"{lows[1]:,.0f} to inf); predictions at larger batches range from perfect scaling to the "
                         "interval's upper end. Add a run at a larger batch")
    else:
        flags.append("two runs: the line passes through both, no interval (add a run at a third batch)")
    a, slope = float(a), float(slope)
    if slope * max(batches) <= 1e-9 * a:       # rounding: runs needing the same samples at every batch
        slope = 0.0
    b_noise = a / slope if slope > 0 else math.inf
    if slope == 0:
        flags.append("no cost of larger batches measured (samples to target do not grow with the batch): "
                     "B_noise beyond the batches measured")
    if math.isfinite(b_noise) and b_noise > 4 * max(batches):
        flags.append(f"B_noise ({b_noise:,.0f}) is beyond 4× the largest batch measured ({max(batches):,.0f}): "
                     "the curve's bend is extrapolated")
    n_used = len({r.source for r in used})
    note = f"fitted on {n_used} runs at {len(batches)} global batches"
    return BatchScaling(a, b_noise, "fit", runs=tuple(runs), e_min_low=lows[0], e_min_high=highs[0],
                        b_noise_low=lows[1], b_noise_high=highs[1], level=level if nfree >= 1 else None,
                        samples_per_epoch=samples_per_epoch or _epoch_size(used), cov=cov, sigma_rel=sigma,
                        nfree=max(nfree, 0), mape_pct=mape, flags=(note, *flags), lr_cap_batch=cap,
                        sigma_floor=floor)


def learning_rate_cap(runs: Sequence[BatchRun]) -> float | None:
    """The smallest batch whose learning rate stopped growing with the batch, or None.

    Read from the runs that reached the target and whose logs carry a learning rate (all of
    them, at three or more batches): sorted by batch, the rate must have grown from one batch
    to the next at least once (the sweep scaled it), then a larger batch's rate is no higher
    than the rate below it (a cap, or a cut).  A sweep at one rate throughout has no cap.

    >>> runs = [BatchRun(f"r{b}", b, True, 1e3 * b, 1e3, learning_rate=lr)
    ...         for b, lr in ((16, 0.01), (32, 0.02), (64, 0.04), (128, 0.04), (256, 0.04))]
    >>> learning_rate_cap(runs)
    128.0
    >>> learning_rate_cap([BatchRun(f"r{b}", b, True, 1e3 * b, learning_rate=0.1) for b in (16, 32, 64)]) is None
    True
    """
    used = sorted((r for r in runs if r.reached), key=lambda r: r.global_batch)
    if len({r.global_batch for r in used}) < 3 or any(r.learning_rate is None for r in used):
        return None
    lr_by_batch: dict[float, float] = {}
    for r in used:
        lr_by_batch[r.global_batch] = max(lr_by_batch.get(r.global_batch, 0.0), float(r.learning_rate))
    batches = sorted(lr_by_batch)
    grew = False
    for lo, hi in zip(batches, batches[1:]):
        if lr_by_batch[hi] > lr_by_batch[lo] * (1 + 1e-9):
            grew = True
        elif grew:
            return float(hi)
    return None


def _leave_out_capped(runs: Sequence[BatchRun]) -> tuple[list[BatchRun], float | None]:
    """The runs with those at or past a learning-rate cap marked ``in_fit=False`` (when two batches remain).

    They keep ``reached`` and their measured counts: shown, marked, and left out of the fit.
    """
    cap = learning_rate_cap(runs)
    if cap is None or len({r.global_batch for r in runs if r.reached and r.global_batch < cap}) < 2:
        return list(runs), None
    out = []
    for r in runs:
        if r.reached and r.global_batch >= cap:
            r = replace(r, in_fit=False, note=f"learning rate {r.learning_rate:g} capped (batch {cap:,.0f} and "
                                              "larger): not on the tuned curve, left out of the fit")
        out.append(r)
    return out, cap


def _intervals(a: float, slope: float, cov: np.ndarray, level: float, nfree: int):
    """((E_min low, B_noise low), (E_min high, B_noise high)) from the line's covariance."""
    t = float(stdtrit(nfree, (1 + level) / 2))
    se_a, se_b = math.sqrt(max(cov[0, 0], 0.0)), math.sqrt(max(cov[1, 1], 0.0))
    e_lo, e_hi = max(a - t * se_a, 0.0), a + t * se_a
    if slope <= 0 or slope - t * se_b <= 0:
        n_hi = math.inf
        n_lo = (a - t * se_a) / (slope + t * se_b) if slope + t * se_b > 0 else 0.0
        return (e_lo, max(n_lo, 0.0)), (e_hi, n_hi)
    se_log = math.sqrt(max(cov[0, 0] / a ** 2 + cov[1, 1] / slope ** 2 - 2 * cov[0, 1] / (a * slope), 0.0))
    n_mid = a / slope
    n_lo, n_hi = n_mid * math.exp(-t * se_log), n_mid * math.exp(t * se_log)
    if a - t * se_a <= 0:
        n_lo = 0.0
    return (e_lo, n_lo), (e_hi, n_hi)


def _epoch_size(runs: Sequence[BatchRun]) -> float | None:
    """``N`` implied by the runs (samples / epochs), when they say it and agree."""
    sizes = {round(r.samples_to_target / r.epochs_to_target) for r in runs
             if r.epochs_to_target and r.samples_to_target}
    return float(sizes.pop()) if len(sizes) == 1 else None


def noise_batch_scaling(run: BatchRun, noise: GradientNoise, *, row: int, base_batch: float | None = None,
                        samples_per_epoch: float | None = None, window: int = NOISE_WINDOW) -> BatchScaling:
    """``B_noise`` from one run's gradient noise scale, ``E_min`` from its samples to target.

    ``B_noise`` is the median of the log's noise scale over the ``window`` evaluations up to
    ``row`` (the one where the run passed the target; :func:`core.logs.noise.noise_scale_at`),
    and ``E_min = E(B_run)/(1 + B_run/B_noise)``; the smallest and largest noise scale in the
    window give the model's range (not a coverage interval: ``level`` is None).

    Parameters
    ----------
    run : BatchRun
        A run that reached the target.
    noise : GradientNoise
        Its gradient statistics (:func:`core.logs.noise.read_gradient_noise`).
    row : int
        1-based row of the log where the run passed the target.
    base_batch : float or None
        ``B0``, the batch ``grad_var`` refers to (Pollux: the job's initial batch); None:
        inferred from ``progress`` and ``samples_per_epoch``, else the run's own batch (flagged).

    Examples
    --------
    >>> g = GradientNoise("t.csv", np.arange(1, 4), noise_scale=np.array([500.0, 1000, 1500]))
    >>> m = noise_batch_scaling(BatchRun("t.csv", 1000, True, 3e6, 3000), g, row=3)
    >>> m.b_noise, m.e_min                  # median(500, 1000, 1500); 3e6 / (1 + 1000/1000)
    (1000.0, 1500000.0)
    """
    if not run.reached:
        raise InputError(f"{run.source}: expected a run that reached the target to anchor the noise scale; got "
                         f"one that did not ({run.note}).")
    flags = []
    b0 = base_batch
    if noise.noise_scale is None and b0 is None:
        b0 = noise.base_batch(samples_per_epoch)
        if b0 is None:
            b0 = run.global_batch
            flags.append(f"grad_var taken as the variance at the run's own batch {b0:g} (B0 unknown: give the "
                         "job's initial batch, or the samples per epoch to infer it from progress)")
        else:
            flags.append(f"B0 = {b0:g}: the batch grad_var refers to, inferred from progress and "
                         f"{samples_per_epoch:,.0f} samples per epoch")
    mid, lo, hi = noise_scale_at(noise.scale(b0), row, window=window)
    if not (math.isfinite(mid) and mid > 0):
        raise LogFormatError(noise.source, f"expected a positive gradient noise scale in the {window} evaluations "
                             f"before row {row}; got none. Check the grad_sqr and grad_var columns.")
    batch, e = run.global_batch, float(run.samples_to_target)
    e_min = e / (1 + batch / mid)
    return BatchScaling(e_min, mid, "noise-scale", runs=(run,), e_min_low=e / (1 + batch / lo),
                        e_min_high=e / (1 + batch / hi), b_noise_low=lo, b_noise_high=hi,
                        samples_per_epoch=samples_per_epoch or _epoch_size([run]),
                        flags=(f"B_noise measured in {noise.source}: median of the last {window} evaluations "
                               f"before the target (range {lo:,.0f} to {hi:,.0f})", *flags))


def batch_scaling(runs: Sequence[BatchRun], *, noise: dict[str, GradientNoise] | None = None,
                  rows: dict[str, int] | None = None, base_batch: float | None = None, level: float = DEFAULT_LEVEL,
                  samples_per_epoch: float | None = None) -> BatchScaling:
    """The batch-scaling model of some runs: a fit at two or more batches, else one run's noise scale.

    The one home of "which method": pages and the CLI call it.  With runs at two or more
    global batches, :func:`fit_batch_scaling`; with runs at one batch, the gradient noise
    scale of the first run that has one (``noise`` by source, ``rows`` the row where each
    passed the target; :func:`noise_batch_scaling`).

    Raises
    ------
    InputError
        One batch and no noise scale (the message says what is missing).
    """
    reached = [r for r in runs if r.reached]
    if len({r.global_batch for r in reached}) >= 2 or not noise:
        return fit_batch_scaling(runs, level=level, samples_per_epoch=samples_per_epoch)
    for r in reached:
        if r.source in noise and rows and r.source in rows:
            model = noise_batch_scaling(r, noise[r.source], row=rows[r.source], base_batch=base_batch,
                                        samples_per_epoch=samples_per_epoch)
            return replace(model, runs=tuple(runs))
    return fit_batch_scaling(runs, level=level, samples_per_epoch=samples_per_epoch)
