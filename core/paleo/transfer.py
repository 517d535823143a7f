"""From step times measured on one GPU (or several) to the step time on another, with an interval.

The per-op roofline (:mod:`core.paleo.roofline`) prices every op of a training step from
its FLOPs and bytes with efficiencies per kind of op.  :func:`calibrate_transfer` fits those
efficiencies to measured step times, as multiplicative factors on the prior
(:data:`~core.paleo.roofline.DEFAULT_EFFICIENCIES`), by least squares on log times:

* ``fit="common"``: one factor on every efficiency (what one measurement can pin);
* ``fit="compute-memory"``: one factor on the compute efficiencies, one on the memory ones;
* ``fit="per-kind"``: one factor per kind of op present (compute and memory of that kind);
* ``fit="auto"`` (default): ``common`` for one measurement; ``compute-memory`` for several
  whose compute-bound shares differ by at least :data:`SPLIT_MIN_SPREAD` (otherwise the
  data cannot tell compute from memory and ``common`` is kept).

:func:`predict_step` then prices the same (or another) workload on any device of the table.

**The interval** says what the measurements leave open; it is the envelope of the
predictions of the fitted efficiencies and of these alternatives, each as consistent with
the measurements:

* when the compute/memory split was not fitted (``common``): the two extreme splits that
  keep the fit's agreement with the measurements: all of the shortfall from peak put on
  compute (memory efficiencies raised to 1) or all on memory (compute efficiencies raised
  to 1);
* with several measurements: each leave-one-out refit;
* with more measurements than fitted factors: the envelope is widened by the residual
  spread, ``exp(±t(0.95, dof) · s)`` with ``s`` the RMS log residual (a 90 % band).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.optimize import brentq, least_squares
from scipy.stats import t as student_t

from core.errors import InputError
from core.paleo.gpus import check_precision
from core.paleo.roofline import (
    DEFAULT_EFFICIENCIES,
    Efficiencies,
    Roof,
    check_form,
    op_arrays,
    op_seconds,
    roof_for,
    roofline_step,
)
from core.paleo.transfer_records import FittedMeasurement, Measurement, StepTimePrediction, TransferCalibration
from core.paleo.workload import KINDS, Workload
from core.validation import check_option, check_scalar

FITS = ("auto", "common", "compute-memory", "per-kind")
#: compute-bound shares of the measurements must differ by this much to fit compute and memory apart
SPLIT_MIN_SPREAD = 0.05
#: no efficiency above 1 (peak) in the split extremes and the multi-factor fits; none below this
EFFICIENCY_MAX, EFFICIENCY_MIN = 1.0, 1e-3
#: efficiencies fitted above this or below ``LOW_EFFICIENCY`` are flagged
LOW_EFFICIENCY = 0.05


# ---------------------------------------------------------------- the model of a measurement
def _roof(m: Measurement) -> Roof:
    return roof_for(m.device, m.precision)


def _model_s(m: Measurement, eff: Efficiencies, form: str) -> float:
    _, _, time = op_seconds(op_arrays(m.workload, int(m.batch_size), m.precision), _roof(m), eff, form)
    return float(time.sum())


def _compute_share(m: Measurement, eff: Efficiencies, form: str) -> float:
    compute, memory, time = op_seconds(op_arrays(m.workload, int(m.batch_size), m.precision), _roof(m), eff, form)
    total = float(time.sum())
    return float(time[compute >= memory].sum() / total) if total > 0 else 0.0


def _check_measurements(measurements: Sequence[Measurement]) -> tuple[Measurement, ...]:
    measurements = tuple(measurements)
    if not measurements:
        raise InputError("measurements: expected at least one measured step time; got none. Give one.")
    for m in measurements:
        where = m.label or f"measurement on {getattr(m.device, 'name', m.device)}"
        check_precision(m.precision)
        check_scalar(m.batch_size, f"{where}: batch_size", int, min_val=1)
        check_scalar(m.step_time_s, f"{where}: step_time_s", min_val=0, include_boundaries="neither",
                     fix="Give seconds per step")
        check_scalar(m.fixed_s, f"{where}: fixed_s", min_val=0)
        if m.compute_s <= 0:
            raise InputError(f"{where}: expected a step time above its fixed part ({m.fixed_s:.4g} s); got "
                             f"{m.step_time_s!r}. Check the communication time subtracted.")
        _roof(m)   # refuses an unknown device or a precision it lacks
    return measurements


# ---------------------------------------------------------------- groups of efficiencies
def _groups(fit: str, kinds_present: Sequence[bool]) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """``(name, compute mask, memory mask)`` per fitted factor."""
    every, none = np.ones(len(KINDS), bool), np.zeros(len(KINDS), bool)
    if fit == "common":
        return [("all", every, every)]
    if fit == "compute-memory":
        return [("compute", every, none), ("memory", none, every)]
    return [(k, np.arange(len(KINDS)) == i, np.arange(len(KINDS)) == i)
            for i, k in enumerate(KINDS) if kinds_present[i]]


def _efficiencies(base: Efficiencies, groups, phi: np.ndarray) -> Efficiencies:
    c, m = np.asarray(base.compute, float), np.asarray(base.memory, float)
    for (_, cm, mm), p in zip(groups, phi):
        c = np.where(cm, c * math.exp(p), c)
        m = np.where(mm, m * math.exp(p), m)
    return Efficiencies(tuple(float(v) for v in c), tuple(float(v) for v in m))


def _log_residuals(ms, eff, form) -> np.ndarray:
    return np.array([math.log(_model_s(m, eff, form) / m.compute_s) for m in ms])


def _common_factor(ms, prior, form) -> float:
    """Scaling every efficiency by s divides every op time by s: log s = mean log(model / measured)."""
    return float(np.mean(_log_residuals(ms, prior, form)))


def _fit(ms, prior: Efficiencies, form: str, fit: str) -> tuple[str, Efficiencies, list, np.ndarray]:
    """``(fit, efficiencies, groups, log factors)``; ``fit="auto"`` resolved."""
    phi0 = _common_factor(ms, prior, form)
    common = prior.scaled(math.exp(phi0), math.exp(phi0))
    if fit == "auto":
        shares = [_compute_share(m, common, form) for m in ms]
        fit = "compute-memory" if len(ms) >= 2 and max(shares) - min(shares) >= SPLIT_MIN_SPREAD else "common"
    if fit == "common":
        return fit, common, _groups("common", ()), np.array([phi0])
    present = [any(float(_kind_time(m, common, form)[i]) > 0 for m in ms) for i in range(len(KINDS))]
    groups = _groups(fit, present)
    if len(groups) > len(ms):
        raise InputError(f"fit: expected at most as many factors as measurements ({len(ms)}); got {fit!r} with "
                         f"{len(groups)} factors. Add measurements or use fit='common'.")
    lo = [math.log(EFFICIENCY_MIN / min(min(np.asarray(prior.compute)[cm], default=1),
                                         min(np.asarray(prior.memory)[mm], default=1))) for _, cm, mm in groups]
    hi = [math.log(EFFICIENCY_MAX / max(max(np.asarray(prior.compute)[cm], default=0),
                                         max(np.asarray(prior.memory)[mm], default=0))) for _, cm, mm in groups]
    start = np.clip(np.full(len(groups), phi0), np.array(lo) + 1e-9, np.array(hi) - 1e-9)
    sol = least_squares(lambda p: _log_residuals(ms, _efficiencies(prior, groups, p), form), start,
                        bounds=(lo, hi), xtol=1e-12, ftol=1e-12, gtol=1e-12)
    return fit, _efficiencies(prior, groups, sol.x), groups, sol.x


def _kind_time(m: Measurement, eff: Efficiencies, form: str) -> np.ndarray:
    arrays = op_arrays(m.workload, int(m.batch_size), m.precision)
    _, _, time = op_seconds(arrays, _roof(m), eff, form)
    return np.bincount(arrays.kind, weights=time, minlength=len(KINDS))


# ---------------------------------------------------------------- the interval
def _split_extremes(ms, eff: Efficiencies, form: str) -> list[Efficiencies]:
    """Efficiencies with all the shortfall on compute, then all on memory, keeping Σ log(model/measured)."""
    target = float(_log_residuals(ms, eff, form).sum())
    out = []
    for raise_memory in (True, False):
        cap = EFFICIENCY_MAX / max(eff.memory if raise_memory else eff.compute)
        if cap <= 1:
            continue

        def gap(u: float, cap=cap, raise_memory=raise_memory) -> float:
            scaled = eff.scaled(u, cap) if raise_memory else eff.scaled(cap, u)
            return float(_log_residuals(ms, scaled, form).sum()) - target

        if gap(1.0) >= 0:             # raising the other side changed nothing
            continue
        u = brentq(gap, 1e-9, 1.0, xtol=1e-14, rtol=1e-12)
        out.append(eff.scaled(u, cap) if raise_memory else eff.scaled(cap, u))
    return out


def _interval(ms, prior, form, fit, requested, eff, dof, residuals) -> tuple[list, float, str]:
    alternatives: list[Efficiencies] = []
    notes = []
    if fit == "common":
        alternatives += _split_extremes(ms, eff, form)
        notes.append("the compute/memory split the measurements cannot pin (all the shortfall from peak on "
                     "compute, or all on memory)")
    if len(ms) >= 2:
        for i in range(len(ms)):
            rest = ms[:i] + ms[i + 1:]
            try:
                alternatives.append(_fit(rest, prior, form, requested)[1])
            except InputError:        # too few measurements left for the factors asked: as many as they pin
                alternatives.append(_fit(rest, prior, form, "auto")[1])
        notes.append("the leave-one-out refits")
    band = 1.0
    if dof > 0:
        s = math.sqrt(float(np.sum(residuals ** 2)) / dof)
        band = math.exp(float(student_t.ppf(0.95, dof)) * s)
        notes.append(f"the residual spread (RMS {s * 100:.1f} % in log, 90 % band)")
    return alternatives, band, "Interval from " + "; ".join(notes) + "."


def calibrate_transfer(measurements: Sequence[Measurement], *, prior: Efficiencies = DEFAULT_EFFICIENCIES,
                       form: str = "max", fit: str = "auto") -> TransferCalibration:
    """Fit the roofline's efficiencies per kind of op to measured step times.

    Parameters
    ----------
    measurements : sequence of Measurement
        One or more measured steps (any workloads, devices, precisions, batches).
    prior : Efficiencies, default=DEFAULT_EFFICIENCIES
        Starting efficiencies; the fit multiplies them by its factors.
    form : {"max", "sum"}, default="max"
    fit : {"auto", "common", "compute-memory", "per-kind"}, default="auto"
        See the module docstring.

    Returns
    -------
    TransferCalibration

    Raises
    ------
    InputError
        No measurement; a measurement with a non-positive time, an unknown device or a
        precision the device lacks; more factors than measurements.

    Examples
    --------
    One convolution step measured at 25 ms on a toy GPU whose roofline at the prior gives
    16.7 ms: the common factor is 16.7 / 25 = 0.667, so conv's compute efficiency becomes
    0.6 x 0.667 = 0.4.

    >>> from core.paleo.workload import Op
    >>> w = Workload("toy", "hand", (Op("c", "convolution", "conv", "forward", 1e12, 0, 2e9, 0),), 0, "hand")
    >>> roof = Roof("toy GPU", "fp16", 100, 10, 1000, "hand")
    >>> cal = calibrate_transfer([Measurement(w, roof, "fp16", 1, 0.025)])
    >>> cal.fit, round(cal.efficiencies.to_dict()["compute"]["conv"], 4), cal.measurements[0].error_pct
    ('common', 0.4, 0.0)
    """
    ms = _check_measurements(measurements)
    check_form(form)
    check_option(fit, "fit", FITS, fix="Pick one")
    used, eff, groups, phi = _fit(ms, prior, form, fit)
    residuals = _log_residuals(ms, eff, form)
    dof = len(ms) - len(groups)
    alternatives, band, note = _interval(ms, prior, form, used, fit, eff, dof, residuals)
    fitted = tuple(FittedMeasurement(m.label, _roof(m).name, m.precision, int(m.batch_size), m.compute_s,
                                     _model_s(m, eff, form), _compute_share(m, eff, form)) for m in ms)
    return TransferCalibration(
        efficiencies=eff, prior=prior, fit=used, form=form,
        factors=tuple((g[0], float(math.exp(p))) for g, p in zip(groups, phi)), measurements=fitted, dof=dof,
        rms_log_residual=math.sqrt(float(np.sum(residuals ** 2)) / dof) if dof > 0 else float("nan"),
        band=band, alternatives=tuple(alternatives), interval_note=note,
        flags=_flags(eff, fitted))


def _flags(eff: Efficiencies, fitted: Sequence[FittedMeasurement]) -> tuple[str, ...]:
    flags = []
    for resource, values in (("compute", eff.compute), ("memory", eff.memory)):
        high = [f"{k} {v:.3g}" for k, v in zip(KINDS, values) if v > EFFICIENCY_MAX]
        low = [f"{k} {v:.3g}" for k, v in zip(KINDS, values) if v < LOW_EFFICIENCY]
        if high:
            flags.append(f"{resource} efficiencies above 1 ({', '.join(high)}): the measured step is faster than "
                         "the datasheet allows for these ops (fused kernels, a lower precision or a smaller batch "
                         "than stated?).")
        if low:
            flags.append(f"{resource} efficiencies below {LOW_EFFICIENCY} ({', '.join(low)}): the measured step is "
                         "over 20x the roofline; check the units (seconds), the device, the batch and the model.")
    for m in fitted:
        if abs(m.error_pct) > 10:
            flags.append(f"{m.label or m.device}: the calibrated model is {m.error_pct:+.0f} % off this measurement.")
    return tuple(flags)


def predict_step(calibration: TransferCalibration, workload: Workload, device: str | Roof, *, precision: str,
                 batch_size: int) -> StepTimePrediction:
    """The calibrated step time of ``workload`` on ``device`` and its interval.

    Examples
    --------
    The toy convolution (16.7 ms at the prior on the toy GPU, measured 25 ms) on a GPU with
    twice the tensor peak and the same bandwidth.  Calibrated, it is compute-bound (25 ms of
    compute against 7.5 ms of memory), so 12.5 ms there.  But one measurement cannot tell:
    if its 25 ms were memory time (compute at peak, 10 ms; memory efficiency 0.16), twice
    the compute would not help, and the step would stay at 25 ms.  The interval says so.

    >>> from core.paleo.workload import Op
    >>> w = Workload("toy", "hand", (Op("c", "convolution", "conv", "forward", 1e12, 0, 2e9, 0),), 0, "hand")
    >>> cal = calibrate_transfer([Measurement(w, Roof("toy", "fp16", 100, 10, 1000, "hand"), "fp16", 1, 0.025)])
    >>> p = predict_step(cal, w, Roof("toy", "fp16", 200, 20, 1000, "hand"), precision="fp16", batch_size=1)
    >>> round(p.time_s * 1e3, 2), round(p.low_s * 1e3, 2), round(p.high_s * 1e3, 2)
    (12.5, 12.5, 25.0)
    """
    check_scalar(batch_size, "batch_size", int, min_val=1)
    step = roofline_step(workload, device, precision=precision, batch_size=batch_size,
                         efficiencies=calibration.efficiencies, form=calibration.form)
    times = [step.total_s] + [roofline_step(workload, device, precision=precision, batch_size=batch_size,
                                            efficiencies=e, form=calibration.form).total_s
                              for e in calibration.alternatives]
    return StepTimePrediction(device=step.device, precision=precision, batch_size=int(batch_size), time_s=step.total_s,
                          low_s=min(times) / calibration.band, high_s=max(times) * calibration.band,
                          forward_s=step.forward_s, backward_s=step.backward_s, update_s=step.update_s,
                          compute_bound_share=step.compute_bound_share)
