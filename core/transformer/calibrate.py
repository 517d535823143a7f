"""Calibrated, not guessed: measured steps fix the achieved fractions of peak; predictions carry intervals.

One measured step time (or one read from a log) fixes one number: a common factor on the prior
fractions of the compute classes (matmul, attention, memory-bound), keeping their ratios.  Two or
more measurements whose communication shares differ also fix a factor on the communication
fraction.  A prediction on another device or scale keeps the calibrated fractions — the achieved
fraction of a datasheet peak is taken as a property of the op class and the software, which
transfers; the peaks, bandwidths and memory change with the device.  That assumption is named in
every answer's notes.

The interval: leave-one-out over the measurements (calibrate on all but one, predict it; the
largest relative miss, applied both ways), or, with one measurement, a stated prior spread of
±:data:`PRIOR_SPREAD` (NeuSight forecasts an unseen GPU within 0.1–17.6 %; Calculon's Megatron
validation misses by up to 8.9 %).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
from scipy.optimize import brentq, least_squares

from core.errors import FitError, InputError
from core.transformer.achieved import transfer_factor
from core.transformer.config import TransformerConfig
from core.transformer.devices import Accelerator
from core.transformer.parallel import Efficiency, Latency, Overlap, StepEstimate, best_strategy, estimate_step
from core.transformer.strategy import Strategy, with_dp

#: relative half-width of the interval when only one measurement calibrates (assumed)
PRIOR_SPREAD = 0.15
TRANSFER_NOTE = ("assumed: the achieved fractions of peak (matmul, attention, memory-bound, communication) "
                 "transfer unchanged to other scales and to devices of the same architecture (a plan on another "
                 "architecture corrects them by its measured achieved efficiency, core.transformer.achieved); "
                 "peaks and bandwidths are the datasheets'")


@dataclass(frozen=True)
class Measurement:
    """One measured step.

    Attributes
    ----------
    step_time : float
        Seconds per optimizer step.
    device : Accelerator
    gpus, global_batch, seq_len : int
    strategy : Strategy or None
        None: the fastest strategy that fits (searched with the prior fractions).
    domain : int or None
        GPUs per scale-up domain (None: the device's).
    source : str
        Where the number comes from (``"measured: result_0.txt train_step_time median"``).
    """

    step_time: float
    device: Accelerator
    gpus: int
    global_batch: int
    seq_len: int
    strategy: Strategy | None = None
    domain: int | None = None
    source: str = "measured"


@dataclass(frozen=True)
class Calibration:
    """Calibrated fractions and how well they reproduce what they were fitted on."""

    efficiency: Efficiency
    compute_factor: float
    comm_factor: float
    measurements: tuple[Measurement, ...]
    loo_errors: tuple[float, ...]
    notes: tuple[str, ...] = field(default=())
    latency: Latency = Latency()

    @property
    def spread(self) -> float:
        """Relative half-width of prediction intervals."""
        if not self.loo_errors:
            return PRIOR_SPREAD
        return float(max(abs(e) for e in self.loo_errors))

    @property
    def spread_source(self) -> str:
        if not self.loo_errors:
            return f"assumed prior spread ±{PRIOR_SPREAD:.0%} (one measurement: no leave-one-out)"
        return f"leave-one-out over {len(self.measurements)} measurements: largest miss {self.spread:.1%}"


def _scaled(prior: Efficiency, kc: float, km: float, source: str) -> Efficiency:
    return replace(prior, matmul=prior.matmul * kc, attention=prior.attention * kc, memory=prior.memory * kc,
                   comm=prior.comm * km, source=source)


def _estimate(cfg: TransformerConfig, m: Measurement, eff: Efficiency, overlap: Overlap,
              strategy: Strategy, latency: Latency | None = None) -> StepEstimate:
    return estimate_step(cfg, m.device, strategy, global_batch=m.global_batch, seq_len=m.seq_len, domain=m.domain,
                         eff=eff, overlap=overlap, check_memory=False, latency=latency)


def _strategy(cfg: TransformerConfig, m: Measurement, prior: Efficiency, overlap: Overlap,
              latency: Latency | None = None) -> Strategy:
    if m.strategy is not None:
        return m.strategy
    return best_strategy(cfg, m.device, m.gpus, global_batch=m.global_batch, seq_len=m.seq_len, domain=m.domain,
                         eff=prior, overlap=overlap, latency=latency).strategy


def _fit(cfg: TransformerConfig, ms: list[Measurement], strategies: list[Strategy], prior: Efficiency,
         overlap: Overlap, latency: Latency | None = None) -> tuple[float, float]:
    def times(kc: float, km: float) -> np.ndarray:
        eff = _scaled(prior, kc, km, "fit")
        return np.array([_estimate(cfg, m, eff, overlap, s, latency).time for m, s in zip(ms, strategies)])

    measured = np.array([m.step_time for m in ms])
    if len(ms) == 1:
        def gap(log_kc: float) -> float:
            return float(np.log(times(float(np.exp(log_kc)), 1.0)[0] / measured[0]))
        lo, hi = np.log(0.02), np.log(20.0)
        if gap(lo) * gap(hi) > 0:
            raise FitError(f"calibration: expected a compute factor in [0.02, 20] reproducing the measured "
                           f"{measured[0]:.4g} s; got none (communication alone takes longer). Check the strategy "
                           "and the link bandwidths.")
        return float(np.exp(brentq(gap, lo, hi, xtol=1e-6))), 1.0

    def resid(x: np.ndarray) -> np.ndarray:
        return np.log(times(float(np.exp(x[0])), float(np.exp(x[1]))) / measured)

    fit = least_squares(resid, x0=np.zeros(2), bounds=([np.log(0.02)] * 2, [np.log(20.0)] * 2))
    return float(np.exp(fit.x[0])), float(np.exp(fit.x[1]))


def calibrate(cfg: TransformerConfig, measurements: list[Measurement] | tuple[Measurement, ...], *,
              prior: Efficiency | None = None, overlap: Overlap | None = None,
              latency: Latency | None = None) -> Calibration:
    """Fractions of peak that reproduce ``measurements`` (see the module text).

    Examples
    --------
    A step measured at exactly the prior's prediction leaves the prior unchanged (factor 1):

    >>> from core.transformer.config import load_config
    >>> from core.transformer.devices import get_accelerator
    >>> from core.transformer.parallel import Strategy, estimate_step
    >>> cfg, h100 = load_config("llama31_8b"), get_accelerator("H100")
    >>> s = Strategy(dp=8, micro_batch=1, recompute=True)
    >>> t = estimate_step(cfg, h100, s, global_batch=16, seq_len=8192).time
    >>> cal = calibrate(cfg, [Measurement(t, h100, 8, 16, 8192, s)])
    >>> round(cal.compute_factor, 4), cal.spread
    (1.0, 0.15)
    """
    prior = prior or Efficiency()
    overlap = overlap or Overlap()
    latency = latency or Latency()
    ms = list(measurements)
    if not ms:
        raise InputError("calibrate: expected at least one measured step; got none. "
                         "Give --measured-step S@DEVICE,GPUS.")
    strategies = [_strategy(cfg, m, prior, overlap, latency) for m in ms]
    kc, km = _fit(cfg, ms, strategies, prior, overlap, latency)
    loo: list[float] = []
    if len(ms) > 1:
        for i in range(len(ms)):
            rest = [m for j, m in enumerate(ms) if j != i]
            rest_s = [s for j, s in enumerate(strategies) if j != i]
            kci, kmi = _fit(cfg, rest, rest_s, prior, overlap, latency)
            pred = _estimate(cfg, ms[i], _scaled(prior, kci, kmi, "loo"), overlap, strategies[i], latency).time
            loo.append(pred / ms[i].step_time - 1)
    fitted = "compute" if len(ms) == 1 else "compute and communication"
    source = (f"calibrated ({fitted} factors) on " + "; ".join(
        f"{m.step_time:.4g} s at {m.gpus}×{m.device.name} ({m.source})" for m in ms))
    eff = _scaled(prior, kc, km, source)
    notes = [f"fractions of peak: matmul {eff.matmul:.3f}, attention {eff.attention:.3f}, memory-bound "
             f"{eff.memory:.3f}, communication {eff.comm:.3f} ({source})", TRANSFER_NOTE]
    if max(eff.matmul, eff.attention) > 1:
        notes.append(f"a calibrated fraction exceeds the {prior.precision.upper()} peak: the run computes faster than "
                     "that peak (FP8 matmuls?); compare against the FP8 peak (precision fp8)")
    notes.append(f"collective latency: {latency.source}")
    return Calibration(eff, kc, km, tuple(ms), tuple(loo), tuple(notes), latency)


@dataclass(frozen=True)
class Prediction:
    """A predicted step with its interval and the provenance of its numbers."""

    estimate: StepEstimate
    low: float
    high: float
    notes: tuple[str, ...]

    @property
    def time(self) -> float:
        return self.estimate.time


def predict(cfg: TransformerConfig, device: Accelerator, gpus: int, *, global_batch: int, seq_len: int,
            calibration: Calibration | None = None, strategy: Strategy | None = None, domain: int | None = None,
            overlap: Overlap | None = None, prior: Efficiency | None = None) -> Prediction:
    """The step time on ``gpus`` × ``device`` with its interval (see the module text)."""
    overlap = overlap or Overlap()
    eff = calibration.efficiency if calibration else (prior or Efficiency())
    latency = calibration.latency if calibration else Latency()
    factor, achieved_note = transfer_factor([m.device.name for m in calibration.measurements], device.name) \
        if calibration else (1.0, "")
    if achieved_note:   # another architecture: its compute runs that much faster or slower than its datasheet says
        eff = replace(eff, matmul=eff.matmul / factor, attention=eff.attention / factor, memory=eff.memory / factor)
    if strategy is None:
        est = best_strategy(cfg, device, gpus, global_batch=global_batch, seq_len=seq_len, domain=domain, eff=eff,
                            overlap=overlap, latency=latency)
    else:
        est = estimate_step(cfg, device, strategy, global_batch=global_batch, seq_len=seq_len, domain=domain,
                            eff=eff, overlap=overlap, latency=latency)
    spread = calibration.spread if calibration else 0.5
    spread_source = calibration.spread_source if calibration else "uncalibrated: assumed prior spread ±50%"
    fp8 = f"{device.fp8.value:g} TFLOP/s" if device.fp8 is not None else "none"
    notes = [f"peaks: {device.label}: BF16 {device.bf16.value:g} TFLOP/s, FP8 {fp8}, "
             f"HBM {device.mem_bandwidth.value:g} GB/s, scale-up {device.scale_up_gbs.value:g} GB/s, NIC "
             f"{device.scale_out_gbps.value:g} Gb/s (datasheet: {device.bf16.source})",
             f"overlap declared (assumed): DP {overlap.dp:.0%}, TP {overlap.tp:.0%}, CP {overlap.cp:.0%}, "
             f"PP {overlap.pp:.0%}", f"interval: {spread_source}"]
    notes += list(calibration.notes) if calibration else [f"fractions of peak: {eff.source}",
                                                          f"collective latency: {latency.source}"]
    if strategy is None:
        notes.append(f"strategy searched: the fastest that fits ({est.strategy.text()})")
    if achieved_note:
        notes.append(achieved_note.replace("the step ×", "compute time ×"))
    return Prediction(est, est.time * (1 - spread), est.time * (1 + spread), tuple(notes))


def step_table(cfg: TransformerConfig, device: Accelerator, gpu_counts: list[int], *, global_batch: int,
               seq_len: int, strategy: Strategy | None = None, domain: int | None = None,
               calibration: Calibration | None = None, overlap: Overlap | None = None,
               prior: Efficiency | None = None) -> tuple[list[dict], tuple[str, ...]]:
    """One row per GPU count (the ``transformer`` verb's table) and the notes that name every source.

    ``strategy`` keeps its tensor/pipeline/context split and takes dp from each GPU count; None
    searches the fastest that fits.
    """

    rows, notes = [], ()
    eff = calibration.efficiency if calibration else (prior or Efficiency())
    for gpus in gpu_counts:
        s = with_dp(strategy, gpus) if strategy is not None else None
        p = predict(cfg, device, gpus, global_batch=global_batch, seq_len=seq_len, calibration=calibration,
                    strategy=s, domain=domain, overlap=overlap, prior=prior)
        e = p.estimate
        peak = device.peak_flops(eff.precision)
        rows.append({
            "gpus": gpus, "device": device.name, "model": cfg.name, "strategy": e.strategy.text(),
            "step_s": e.time, "step_low_s": p.low, "step_high_s": p.high,
            "tokens_per_s": e.tokens / e.time, "tokens_per_s_low": e.tokens / p.high,
            "tokens_per_s_high": e.tokens / p.low,
            "mfu": e.model_flops / (e.time * gpus * peak), "precision": eff.precision,
            "compute_s": e.compute_time, "comm_exposed_s": e.comm_exposed, "bubble_s": e.bubble,
            "memory_gb_per_gpu": e.memory.total / 1e9,
            "memory_usable_gb": 0.9 * device.memory_gb.value,
            "comm": "; ".join(f"{c.kind} {c.bytes / 1e9:.3g} GB over {c.link}" for c in e.comms),
        })
        notes = tuple(dict.fromkeys(notes + p.notes))
    return rows, notes
