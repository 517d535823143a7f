"""Samples and steps to target as a function of the global batch (McCandlish et al. 2018).

A larger global batch ``B`` averages more samples per step, so each step makes more
progress, but with diminishing returns once ``B`` passes the gradient noise scale
``B_noise``.  McCandlish, Kaplan, Amodei et al., "An Empirical Model of Large-Batch
Training" (2018, arXiv:1812.06162), Eq. 2.11, for the samples ``E`` and steps ``S`` to
reach a given target:

    E(B) = E_min · (1 + B / B_noise)          samples
    S(B) = S_min · (1 + B_noise / B)          steps,  S_min = E_min / B_noise,  S = E / B

``E_min`` is what an infinitely small batch would need (perfect sample efficiency), ``S_min``
what an infinitely large one would (perfect step efficiency).  The **statistical
efficiency** of batch ``B`` relative to a base batch ``B0`` is ``E(B0)/E(B) = (B_noise +
B0)/(B_noise + B)`` (Pollux, Qiao et al. OSDI 2021, ``GoodputFunction.efficiency``), and
``E_min/E(B) = 1/(1 + B/B_noise)`` relative to the smallest batch.

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
from dataclasses import asdict, dataclass, replace

import numpy as np
from scipy.optimize import nnls
from scipy.special import stdtrit

from core.defaults import DEFAULT_LEVEL
from core.errors import InputError, LogFormatError
from core.logs import ABORTED_FLAG, RunLog
from core.logs.noise import GradientNoise, noise_scale_at
from core.runs import as_target, find_target_crossing, metric_column
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
#: relative standard deviation added per e-fold of batch beyond the measured range (ln B/B_edge): how far
#: McCandlish's line misses when it extrapolates; leave-one-batch-out over MLCommons' reference convergence
#: points (mlperf-logging 4.1.68, 19 benchmarks, 38 end points): median 0.13, root mean square 0.19
EXTRAPOLATION_SIGMA = 0.15
#: the regions of a prediction
REGIONS = ("measured", "interpolated", "extrapolated")
#: formulas, for pages
SAMPLES_LATEX = r"E(B) = E_{\min}\left(1 + \frac{B}{B_\text{noise}}\right)"
STEPS_LATEX = r"S(B) = \frac{E(B)}{B} = S_{\min}\left(1 + \frac{B_\text{noise}}{B}\right)"
EFFICIENCY_LATEX = r"\text{efficiency}(B) = \frac{E_{\min}}{E(B)} = \frac{1}{1 + B/B_\text{noise}}"


# --------------------------------------------------------------------------- formulas
def samples_to_target(global_batch, e_min: float, b_noise: float):
    """``E(B) = E_min · (1 + B/B_noise)`` samples (McCandlish et al. 2018, Eq. 2.11).

    ``b_noise = inf`` is perfect scaling (``E = E_min`` at every batch).

    >>> samples_to_target(1000, 1e6, 1000)      # 1e6 · (1 + 1000/1000)
    2000000.0
    >>> samples_to_target([0, 3000], 1e6, 1000).tolist()
    [1000000.0, 4000000.0]
    """
    b = np.asarray(global_batch, dtype=float)
    out = e_min * (1.0 + (b / b_noise if math.isfinite(b_noise) else 0.0 * b))
    return float(out) if out.ndim == 0 else out


def steps_to_target(global_batch, e_min: float, b_noise: float):
    """``S(B) = E(B)/B = S_min · (1 + B_noise/B)`` steps, ``S_min = E_min/B_noise``.

    >>> steps_to_target(1000, 1e6, 1000)        # 2e6 samples / 1000 per step
    2000.0
    >>> steps_to_target(1e9, 1e6, 1000)         # S_min = 1e6/1000: no fewer steps however large B
    1000.001
    """
    b = np.asarray(global_batch, dtype=float)
    out = np.asarray(samples_to_target(b, e_min, b_noise)) / b
    return float(out) if out.ndim == 0 else out


def statistical_efficiency(global_batch, b_noise: float, *, base_batch: float | None = None):
    """Samples-to-target efficiency of batch ``B``: ``(B_noise + B0)/(B_noise + B)``.

    With ``base_batch=None`` (``B0 = 0``) it is ``E_min/E(B) = 1/(1 + B/B_noise)``; with a
    base batch it is Pollux's efficiency relative to ``B0`` (``1`` at ``B = B0``).

    Examples
    --------
    ``B_noise = 1000``: batch 1000 needs twice the samples of a tiny batch; batch 3000 is
    ``(1000 + 1000)/(1000 + 3000) = 0.5`` as efficient as batch 1000.

    >>> statistical_efficiency(1000, 1000)
    0.5
    >>> statistical_efficiency(3000, 1000, base_batch=1000)
    0.5
    """
    b = np.asarray(global_batch, dtype=float)
    b0 = 0.0 if base_batch is None else float(base_batch)
    out = (b_noise + b0) / (b_noise + b) if math.isfinite(b_noise) else np.ones_like(b)
    return float(out) if np.ndim(out) == 0 else np.asarray(out)


def goodput(samples_per_s, global_batch, b_noise: float):
    """Goodput: throughput × statistical efficiency, in ``E_min``-equivalent samples per second.

    Pollux (OSDI 2021) maximises it; time to target is ``E_min / goodput`` exactly.

    >>> goodput(4000.0, 1000, 1000)             # 4000 samples/s at half efficiency
    2000.0
    """
    out = np.asarray(samples_per_s, dtype=float) * statistical_efficiency(global_batch, b_noise)
    return float(out) if np.ndim(out) == 0 else out


# --------------------------------------------------------------------------- measured runs
@dataclass(frozen=True)
class BatchRun:
    """One run's samples, steps and epochs to target at its global batch.

    ``reached`` is False (and the counts None) when the run never passed the target, or
    when it was aborted; ``note`` says why it is left out of a fit.  ``samples_per_s`` is the
    throughput the log says (an MLLOG ``tracked_stats``), None when it says none.
    ``resolution`` is how many samples lie between the evaluation that passed the target and
    the one before (the run crossed somewhere in between: one epoch for whole-epoch
    evaluations), None when unknown; ``learning_rate`` the largest learning rate the log
    shows (its ``lr`` column), None when it has none.
    """

    source: str
    global_batch: float
    reached: bool
    samples_to_target: float | None = None
    steps_to_target: float | None = None
    epochs_to_target: float | None = None
    note: str = ""
    samples_per_s: float | None = None
    resolution: float | None = None
    learning_rate: float | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def run_batch(log: RunLog, global_batch: float | None = None) -> float:
    """The run's global batch: given, else from the log (MLLOG ``global_batch_size``, a ``-<batch>`` name).

    Raises
    ------
    InputError
        When neither says it.
    """
    batch = global_batch if global_batch is not None else log.meta.global_batch
    if batch is None:
        raise InputError(f"{log.source}: expected the run's global batch; got none (the log does not say it and "
                         "its name has no -<batch> suffix). Name the file <name>-<batch>.csv, or give the batches "
                         "(batch-scaling --batch B,... in file order).")
    return check_scalar(batch, f"{log.source}: global batch", float, min_val=0, include_boundaries="neither",
                        fix="Give samples per optimiser step")


def measure_batch_run(log: RunLog, *, target_acc: float, global_batch: float | None = None,
                      samples_per_epoch: float | None = None) -> BatchRun:
    """Samples, steps and epochs to ``target_acc`` of one run (epoch-level criterion, ``acc >= target``).

    ``samples = step at target × B`` (the step where the epoch-level criterion of
    :func:`core.runs.find_target_crossing` fires; for an MLLOG or Pollux trace the step of
    the first evaluation above target), ``steps = samples / B`` and ``epochs = samples / N``
    with ``N`` the samples per epoch (given, or the log's ``train_samples``); without ``N``
    the crossing's epoch, except for a Pollux trace, whose epochs are AdaptDL's statistical
    epochs (then ``epochs`` is None).

    Examples
    --------
    >>> from core.logs import read_log
    >>> log = read_log(b"progress,iteration,metric\\n10,10,0.5\\n20,20,0.91\\n30,30,0.95\\n", "job/validation-64.csv")
    >>> r = measure_batch_run(log, target_acc=0.9, samples_per_epoch=640)
    >>> r.samples_to_target, r.steps_to_target, r.epochs_to_target     # 20 steps × 64 = 1280 = 2 epochs
    (1280.0, 20.0, 2.0)
    """
    batch = run_batch(log, global_batch)
    speed = log.meta.throughput
    if ABORTED_FLAG in log.flags:
        return BatchRun(log.source, batch, False, note="aborted run (run_stop status 'aborted'): left out",
                        samples_per_s=speed)
    lr = log.frame["lr"].to_numpy(dtype=float) if "lr" in log.frame else np.array([])
    lr = float(np.nanmax(lr)) if np.isfinite(lr).any() else None
    crossing = find_target_crossing(log, target_acc, criterion="epoch")
    if not crossing.reached:
        target = as_target(target_acc)
        why = crossing.note if crossing.note.startswith("no ") else \
            f"never reached {target.value:g}" if target.is_accuracy else f"never reached {target.spec}"
        return BatchRun(log.source, batch, False, note=f"{why}: left out", samples_per_s=speed, learning_rate=lr)
    n = samples_per_epoch or log.meta.samples_per_epoch
    if log.fmt == "course" and log.meta.split == "val":
        # a course validation log counts validation batches in its steps: training samples are epochs × N
        if not n or crossing.epoch is None:
            return BatchRun(log.source, batch, False, samples_per_s=speed, learning_rate=lr,
                            note="validation log (_val): its steps count validation batches, not training steps; "
                                 "give the training samples per epoch (--samples-per-epoch N): left out")
        samples = float(crossing.epoch) * float(n)
        return BatchRun(log.source, batch, True, samples, samples / batch, float(crossing.epoch),
                        samples_per_s=speed, resolution=float(n), learning_rate=lr)
    if log.fmt == "mllog" and crossing.samples is not None:
        samples = float(crossing.samples)           # MLLOG counts the samples itself (its step is samples / B)
    elif log.fmt == "metric-trace":
        samples = float(crossing.step) * batch      # AdaptDL's statistical epochs: no epoch structure in the steps
    else:
        samples = samples_at_step(float(crossing.step), batch, n, log.steps_per_epoch)
    if n:
        epochs = samples / float(n)
    else:
        epochs = None if log.fmt == "metric-trace" or crossing.epoch is None else float(crossing.epoch)
    return BatchRun(log.source, batch, True, samples, float(crossing.step), epochs, samples_per_s=speed,
                    resolution=_resolution(log, crossing, batch), learning_rate=lr)


def samples_at_step(step: float, batch: float, samples_per_epoch: float | None = None,
                    steps_per_epoch: int | None = None) -> float:
    """Training samples seen after ``step`` optimiser steps at global batch ``batch``.

    ``step × batch``, except where the epoch's last batch is partial (a loader that keeps it, as
    PyTorch's does by default: ``N`` samples make ``ceil(N / B)`` steps): when ``N`` is known and the
    log's steps per epoch are ``ceil(N / B)``, each whole epoch counts ``N`` samples and the steps
    into the current one ``B`` each.  A log that counts samples itself (MLLOG) agrees with this;
    ``step × batch`` would count ``B·ceil(N / B) − N`` phantom samples an epoch.

    >>> samples_at_step(630, 64, 4000, 63)          # 10 epochs of 4,000 (63 steps, the last one of 32)
    40000.0
    >>> samples_at_step(640, 64, 4000, 63), samples_at_step(640, 64)   # 10 epochs and 10 steps; steps x batch
    (40640.0, 40960.0)
    >>> samples_at_step(250, 16, 4000, 250)         # B divides N: the same as steps x batch
    4000.0
    """
    if not samples_per_epoch or not steps_per_epoch or steps_per_epoch != math.ceil(samples_per_epoch / batch) \
            or samples_per_epoch % batch == 0:
        return float(step) * float(batch)
    whole, into = divmod(float(step), float(steps_per_epoch))
    return whole * float(samples_per_epoch) + min(into * float(batch), float(samples_per_epoch))


def _resolution(log: RunLog, crossing, batch: float) -> float | None:
    """Samples between the evaluation that passed the target and the one before it (from 0 for the first).

    Per-step logs judged by epoch: one epoch of steps; else the evaluations' own spacing.
    """
    if log.granularity == "step" and crossing.criterion == "epoch" and log.steps_per_epoch:
        return float(log.steps_per_epoch) * batch
    column = metric_column(log, crossing.target.metric) or "acc"
    steps = log.frame.loc[log.frame[column].notna(), "global_step"].to_numpy(dtype=float)
    before = steps[steps < float(crossing.step)]
    gap = float(crossing.step) - (float(before.max()) if before.size else 0.0)
    return gap * batch if gap > 0 else None


def measure_batch_runs(logs: Sequence[RunLog], *, target_acc: float, batches: Sequence[float] | None = None,
                       samples_per_epoch: float | None = None) -> tuple[BatchRun, ...]:
    """:func:`measure_batch_run` for each log, ``batches`` given in the logs' order (or read from them)."""
    if batches is not None and len(batches) != len(logs):
        raise InputError(f"--batch: expected one global batch per log ({len(logs)}); got {len(batches)}. "
                         "Give them in the logs' order, or leave them out to read them from the logs.")
    return tuple(measure_batch_run(log, target_acc=target_acc, samples_per_epoch=samples_per_epoch,
                                   global_batch=None if batches is None else batches[i])
                 for i, log in enumerate(logs))


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
        """The runs that reached the target (those the model describes)."""
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

        One per run (``measured``; the interval is the model's at that batch), then one per
        batch of ``batches`` (``predicted``), each with ``region`` (:meth:`region`) and
        ``note`` (:meth:`note`: extrapolation, a learning-rate cap).
        """
        rows = []
        for r in sorted(self.used, key=lambda r: (r.global_batch, r.source)):
            rows.append(dict(global_batch=r.global_batch, epochs_to_target=r.epochs_to_target,
                             samples_to_target=r.samples_to_target, steps_to_target=r.steps_to_target,
                             **self._band(r.global_batch), source="measured", file=r.source,
                             region="measured", note=""))
        for b in batches or ():
            b = float(b)
            epochs = self.epochs(b)
            rows.append(dict(global_batch=b, epochs_to_target=None if math.isnan(epochs) else epochs,
                             samples_to_target=self.samples(b), steps_to_target=self.steps(b),
                             **self._band(b), source="predicted", file="", region=self.region(b),
                             note=self.note(b)))
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
    used = [r for r in runs if r.reached]
    batches = sorted({r.global_batch for r in used})
    if len(batches) < 2:
        left = [f"{r.source} ({r.note})" for r in runs if not r.reached]
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
        flags.append(f"learning rate capped from batch {cap:,.0f} on (it grew with the batch below): those runs are "
                     "not on the tuned curve and are left out of the fit; predictions there are flagged")
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
    """The runs with those at or past a learning-rate cap marked not fitted (when two batches remain)."""
    cap = learning_rate_cap(runs)
    if cap is None or len({r.global_batch for r in runs if r.reached and r.global_batch < cap}) < 2:
        return list(runs), None
    out = []
    for r in runs:
        if r.reached and r.global_batch >= cap:
            r = replace(r, reached=False, note=f"learning rate {r.learning_rate:g} capped (batch {cap:,.0f} and "
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


def crossing_row(log: RunLog, target_acc) -> int | None:
    """1-based row of a per-evaluation log where its target was first met (None: never).

    ``target_acc`` is an accuracy fraction (``acc>=value``) or a ``core.targets.Target`` in either direction.

    >>> from core.logs import read_log
    >>> crossing_row(read_log(b"progress,iteration,metric\\n1,1,0.5\\n2,2,0.95\\n", "t/validation-8.csv"), 0.9)
    2
    """
    target = as_target(target_acc)
    column = metric_column(log, target.metric)
    if column is None:
        return None
    hit = target.first_met(log.frame[column].to_numpy(dtype=float))
    return None if hit is None else hit + 1


@dataclass(frozen=True)
class BatchStudy:
    """What a set of runs says about batch scaling: the model, or why there is none.

    ``runs`` are every run measured (reached or left out, with notes); ``model`` is None
    when nothing could be fitted and ``problem`` says why; ``errors`` are ``(source,
    message)`` for runs whose batch could not be told.
    """

    runs: tuple[BatchRun, ...]
    model: BatchScaling | None = None
    problem: str = ""
    errors: tuple[tuple[str, str], ...] = ()

    @property
    def left_out(self) -> tuple[BatchRun, ...]:
        return tuple(r for r in self.runs if not r.reached)


def batch_study(logs: Sequence[RunLog], *, target_acc: float, noise: dict[str, GradientNoise] | None = None,
                batches: Sequence[float] | None = None, samples_per_epoch: float | None = None,
                level: float = DEFAULT_LEVEL, base_batch: float | None = None) -> BatchStudy:
    """Measure every run and fit the batch-scaling model; refusals are kept, not raised.

    The one call of the batch-size view and of ``python -m core batch-scaling``: each log
    gives a :class:`BatchRun` (:func:`measure_batch_run`; a log whose batch cannot be told
    is named in ``errors``), then :func:`batch_scaling` (a fit, or one run's noise scale).

    Examples
    --------
    >>> from core.logs import read_log
    >>> logs = [read_log(f"progress,iteration,metric\\n1,{s},0.5\\n2,{2 * s},0.95\\n".encode(), f"j/validation-{b}.csv")
    ...         for b, s in ((100, 500), (400, 200), (1600, 125))]
    >>> study = batch_study(logs, target_acc=0.9)
    >>> [r.samples_to_target for r in study.runs]            # 1000·100, 400·400, 250·1600
    [100000.0, 160000.0, 400000.0]
    >>> round(study.model.e_min), round(study.model.b_noise)  # the line 80,000 + 200·B: B_noise = 80000/200
    (80000, 400)
    """
    measured, errors = [], []
    for i, log in enumerate(logs):
        try:
            measured.append(measure_batch_run(log, target_acc=target_acc, samples_per_epoch=samples_per_epoch,
                                              global_batch=None if batches is None else batches[i]))
        except InputError as exc:
            errors.append((log.source, str(exc)))
    rows = {log.source: crossing_row(log, target_acc) for log in logs}
    try:
        model = batch_scaling(measured, noise=noise, rows={k: v for k, v in rows.items() if v is not None},
                              base_batch=base_batch, level=level, samples_per_epoch=samples_per_epoch)
    except (InputError, LogFormatError) as exc:
        return BatchStudy(tuple(measured), None, str(exc), tuple(errors))
    return BatchStudy(tuple(measured), model, "", tuple(errors))
