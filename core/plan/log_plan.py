"""The plan from training logs: time and cost to target at GPU counts and batches not yet run.

``python -m core plan --from-logs LOG... --mode allreduce --workers ... (--batch M | --per-worker-batch m)
[--model NAME] [--to-device NAME]`` and the Plan page's "from the logs" section both call
:func:`plan_from_logs`; for each GPU count ``w`` (global batch ``M`` fixed, or ``M = w·m``):

    time = samples_to_target(M) / M × t(w, M) × counted/training

* ``samples_to_target(M)``: the best source that knows, named in ``samples_source``
  (:func:`core.plan.from_logs.samples_at_batch`: the logs at that batch, a batch-scaling fit of the loaded runs,
  MLCommons' reference convergence points);
* ``t(w, M)``: a registered speed family (:mod:`core.speed.registry`) fitted to the logs' measured
  configurations, named in ``speed_model``.  ``auto`` (the default, page and CLI alike) chooses the family by
  **leave-one-size-out** on the loaded logs when they measured three or more GPU counts: each family is fitted
  with one size left out and predicts its step time; the smallest mean miss wins (:func:`choose_log_speed`).
  With fewer sizes nothing can be left out and the ``bracket`` family (:mod:`core.speed.per_gpu_batch`) is used.  The
  transformer model competes when the logs name a language-model benchmark and their device; it is the only
  family that plans on another device (``--to-device``);
* ``counted/training``: the median ratio of each log's counted time (MLPerf's ``run_stop − run_start``) to its
  training time, the evaluations' share as logged (:func:`counted_overhead`).

The interval multiplies the samples' interval by the step time's band: the family's leave-one-size-out misses
(and, for ``bracket``, the bracket it spans; for the transformer model, its calibration's band).  A GPU count no
strategy can use (the transformer model splits samples only in whole parallel degrees) is skipped and named.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from core.batch import EXTRAPOLATION_SIGMA
from core.errors import InputError, PlannerError
from core.logs import RunLog
from core.plan.from_logs import (
    MEASURED_COLUMNS,
    PLAN_COLUMNS,
    check_one_batch,
    logs_global_batch,
    measured_configurations,
    samples_at_batch,
)
from core.plan.grid import with_time_and_cost
from core.plan.log_speed_choice import (
    Fitter,
    LogSpeedChoice,
    choose_log_speed,
    log_speed_choices,
    registry_fitter,
    step_time_of,
)
from core.plan.to_device import default_device_for, log_device, transformer_from_logs
from core.speed import (
    FittedSpeed,
    PerGpuBatchSpeed,
    TransformerSpeedModel,
    bracket_band,
)
from core.targets import Target
from core.validation import check_option


def counted_overhead(measured: pd.DataFrame) -> tuple[float, str]:
    """The evaluations' share as MLPerf counts it: the median of each log's counted time over its training time.

    >>> counted_overhead(pd.DataFrame({"counted_over_training": [1.03, 1.05, None]}))
    (1.04, 'time counted as MLPerf counts it: training × 1.040 (evaluations, median of 2 log(s))')
    """
    ratios = measured["counted_over_training"].dropna().to_numpy(dtype=float)
    if not ratios.size:
        return 1.0, "no counted time in the logs: training only"
    overhead = float(np.median(ratios))
    return overhead, (f"time counted as MLPerf counts it: training × {overhead:.3f} (evaluations, median of "
                      f"{ratios.size} log(s))")


@dataclass(frozen=True)
class LogPlan:
    """The plan over GPU counts, the measured configurations and the speed model it came from, and what it assumed.

    ``skipped`` are the GPU counts asked for that no strategy can use, with the reason in ``flags``.
    """

    table: pd.DataFrame
    measured: pd.DataFrame
    speed: LogSpeedChoice
    overhead: float
    flags: tuple[str, ...]
    skipped: tuple[int, ...] = ()

    @property
    def model(self) -> FittedSpeed:
        """The fitted speed model the rows' step times come from."""
        return self.speed.model


def _band(choice: LogSpeedChoice, w: int, m: float, measured: pd.DataFrame) -> tuple[float, float]:
    """Factors on the step time for its interval: the leave-one-size-out misses, the bracket, the calibration's;
    beyond the measured GPU counts widened by ``EXTRAPOLATION_SIGMA`` per e-fold (as batch scaling widens its
    extrapolations): a step nobody measured at that scale is known less well the farther it lies."""
    err = choice.log_errors()
    low, high = (math.exp(min(float(err.min()), 0.0)), math.exp(max(float(err.max()), 0.0))) if err.size else (1, 1)
    model = choice.model
    if isinstance(model, PerGpuBatchSpeed) and model.family == "bracket":
        b_low, b_high = bracket_band(model, w, m)
        low, high = min(low, b_low), max(high, b_high)
    elif not err.size and model.time_band:
        low, high = model.time_band
    sizes = measured["w"].to_numpy(dtype=float)
    beyond = max(math.log(sizes.min() / w), math.log(w / sizes.max()), 0.0)
    widen = math.exp(EXTRAPOLATION_SIGMA * beyond)
    return float(low) / widen, float(high) * widen


def _extrapolation(measured: pd.DataFrame, w: int, m: float) -> str:
    per_gpu = measured["global_batch"].to_numpy(dtype=float) / measured["w"].to_numpy(dtype=float)
    here = m / w
    if per_gpu.min() <= here <= per_gpu.max() and measured["w"].min() <= w <= measured["w"].max():
        return ""
    def span(low, high, fmt):
        return format(low, fmt) if low == high else f"{format(low, fmt)}–{format(high, fmt)}"

    return (f"step time extrapolated: {w:,} GPUs at {here:.3g} samples per GPU, the logs measured "
            f"{span(measured['w'].min(), measured['w'].max(), ',')} GPUs at "
            f"{span(per_gpu.min(), per_gpu.max(), '.3g')}")


def _one_device(logs: Sequence[RunLog], measured: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The configurations whose step times describe one device: those of the device most logs ran on, when the logs
    span several (a step's time is the device's; samples to target are not, and keep every log), with a note."""
    devices = {log.source: log_device(log) for log in logs}
    named = [devices.get(src) for src in measured["source"]]
    kinds = [d for d in dict.fromkeys(named) if d is not None]
    if len(kinds) <= 1:
        return measured, ""
    main = max(kinds, key=named.count)
    keep = measured[[d == main for d in named]]
    others = ", ".join(f"{d}: {named.count(d)}" for d in kinds if d != main)
    return keep, (f"step time from the {len(keep)} log(s) on {main}, the device most logs ran on; the logs on other "
                  f"devices ({others}) are left out of the step-time fit (their samples to target are kept). A plan "
                  "on another device transfers the step with the transformer model")


def _fitters(logs: Sequence[RunLog], paths: Sequence[str | Path] | None, measured: pd.DataFrame,
             device: str | None, target: Target | None, options: dict) -> tuple[dict[str, Fitter], list[str]]:
    """Every registered all-reduce family that needs nothing beyond the speeds (``SpeedFamily.context``) as a
    fitter of measured configurations; the transformer model on ``device`` (else the logs' own) when the logs let
    it be calibrated (they name its model, device and sequence length)."""
    fitters = {name: registry_fitter(name) for name in log_speed_choices()[1:] if name != "transformer"}
    notes = []
    where = device or default_device_for(logs, target)
    if where is None:
        notes.append("step time: the transformer model is not a candidate (the logs name no language-model "
                     "benchmark with a known model, or not their device)")
    else:
        def fit_transformer(part: pd.DataFrame) -> FittedSpeed:
            return transformer_from_logs(logs, paths, part, where, **options)[0]

        fitters["transformer"] = fit_transformer
    return fitters, notes


def plan_from_logs(logs: Sequence[RunLog], workers: Sequence[int], *, global_batch: float | None = None,
                   per_worker_batch: float | None = None, target: Target | None = None, price_worker: float = 1.0,
                   model: str = "auto", device: str | None = None, paths: Sequence[str | Path] | None = None,
                   gpus_per_node: int | None = None, strategy=None, config=None,
                   precision: str = "bf16") -> LogPlan:
    """Time and cost to target for each GPU count in ``workers`` from the logs (module docstring).

    ``global_batch`` keeps ``M`` for every count; ``per_worker_batch`` plans ``M = w·m`` (``m`` may be a
    fraction). With neither, the logs' own global batch when they share one.  ``model`` is ``auto`` or a family
    of :func:`log_speed_choices`; ``device`` plans on another device with the transformer model (``auto``
    then means the transformer model, and any other family is refused: none of them knows devices).  ``paths``,
    ``gpus_per_node``, ``strategy``, ``config`` and ``precision`` are the transformer model's
    (:func:`core.plan.to_device.transformer_from_logs`).
    """
    check_option(model, "speed model", log_speed_choices(), fix="Pick auto or a registered speed family")
    check_one_batch(global_batch, per_worker_batch)
    if global_batch is not None and not (math.isfinite(global_batch) and global_batch >= 1
                                         and float(global_batch).is_integer()):
        raise InputError(f"--batch: expected a whole number of samples per step, >= 1; got {global_batch:g}.")
    if per_worker_batch is not None and not (math.isfinite(per_worker_batch) and per_worker_batch > 0):
        raise InputError(f"--per-worker-batch: expected samples per GPU > 0 (a fraction where tensor or pipeline "
                         f"parallelism splits a sample); got {per_worker_batch:g}.")
    if device is not None:
        if model not in ("auto", "transformer"):
            raise InputError(f"device {device}: expected the speed model transformer or auto (the transformer model "
                             f"is the one that knows devices); got {model}. Pick auto.")
        model = "transformer"
    measured, left_out = measured_configurations(logs, target)
    if measured.empty:
        raise InputError("plan --from-logs: expected at least one log with a GPU count, a global batch, a step "
                         "time and its target reached; got none. " + " ".join(left_out))
    kept = set(measured["source"])
    benchmarks = sorted({str(log.meta.model).lower() for log in logs if log.meta.model and log.source in kept})
    if len(benchmarks) > 1:
        raise InputError(f"plan --from-logs: expected logs of one benchmark (one model, one target); got "
                         f"{', '.join(benchmarks)}. Plan them separately.")
    benchmark = benchmarks[0] if benchmarks else None
    global_batch = logs_global_batch(measured, global_batch, per_worker_batch)
    options = dict(gpus_per_node=gpus_per_node, strategy=strategy, config=config, precision=precision)
    timed, device_note = _one_device(logs, measured) if device is None else (measured, "")
    fitters, notes = _fitters(logs, paths, timed, device, target, options)
    notes = ([device_note] if device_note else []) + notes
    where = device or default_device_for(logs, target)
    if model == "transformer" and "transformer" not in fitters:
        raise InputError("speed model transformer: expected logs of one language-model benchmark that name their "
                         "device (MLLOG submission_platform or the systems JSON); got none. Pick auto.")
    if model == "auto":
        choice = choose_log_speed(timed, fitters)
    else:
        choice = choose_log_speed(timed, {model: fitters[model]}, model=model)
        notes = notes[:1] if device_note else []
    overhead, overhead_note = counted_overhead(measured)
    speed = choice.model
    target_device = speed.device.name if isinstance(speed, TransformerSpeedModel) \
        else (default_device_for(logs, target) or "")
    rows, skipped, reasons = [], [], {}
    for w in workers:
        w = int(w)
        if w < 1:
            raise InputError(f"plan --from-logs: expected GPU counts >= 1; got {w}.")
        m = float(global_batch) if global_batch is not None else float(per_worker_batch) * w
        if not float(m).is_integer():       # a step takes whole samples: w·m must be one
            skipped.append(w)
            reasons.setdefault(f"the global batch w × {per_worker_batch:g} is not a whole number of samples", [])
            reasons[f"the global batch w × {per_worker_batch:g} is not a whole number of samples"].append(w)
            continue
        step = float(step_time_of(speed, w, m))
        if not math.isfinite(step):
            skipped.append(w)
            if isinstance(speed, TransformerSpeedModel):
                try:
                    speed.prediction(w, m)
                except PlannerError as err:
                    reasons.setdefault(str(err).split(";")[0].removeprefix("--gpus: "), []).append(w)
            continue
        s = samples_at_batch(measured, m, benchmark=benchmark)
        low_f, high_f = _band(choice, w, m, timed)
        time_s = s.samples / m * step * overhead
        note = "; ".join(filter(None, [s.how, _extrapolation(timed, w, m)]))
        strategy_text = speed.prediction(w, m).estimate.strategy.text() if isinstance(speed, TransformerSpeedModel) \
            else ""
        rows.append({"mode": "allreduce", "p": 0, "w": w, "steps_per_s": 1.0 / step, "time_s": time_s,
                     "global_batch": m, "samples_to_target": s.samples,
                     "step_time_s": step, "time_low": s.low / m * step * low_f * overhead,
                     "time_high": s.high / m * step * high_f * overhead, "speed_model": choice.chosen,
                     "samples_source": s.source, "device": target_device, "strategy": strategy_text, "note": note})
    if not rows:
        raise InputError(f"plan --from-logs: expected a GPU count the {choice.chosen} model can plan; got none of "
                         f"{', '.join(map(str, workers))}. " + " ".join(f"{k}." for k in reasons))
    flags = list(left_out) + list(choice.notes) + notes + [overhead_note]
    if isinstance(speed, TransformerSpeedModel):
        flags += transformer_from_logs(logs, paths, timed, where, **options)[1] + list(speed.notes)
    flags += [f for f in speed.flags if f not in flags and not isinstance(speed, TransformerSpeedModel)]
    if any(v is not None for v in (gpus_per_node, strategy, config)) and not isinstance(speed, TransformerSpeedModel):
        flags.append(f"--gpus-per-node, --parallel and --config describe the transformer model; the step time came "
                     f"from {choice.chosen}, which does not use them")
    for reason, counts in reasons.items():
        flags.append(f"skipped {len(counts)} GPU count(s) ({_ranges(counts)}): {reason}")
    table = with_time_and_cost(pd.DataFrame(rows), "s", price_worker=price_worker)[list(PLAN_COLUMNS)]
    return LogPlan(table, measured[list(MEASURED_COLUMNS)], choice, overhead, tuple(flags), tuple(skipped))


def _ranges(values: Sequence[int]) -> str:
    """``1, 2, 3, 5`` -> ``1–3, 5``.

    >>> _ranges([17, 18, 19, 21, 23, 24])
    '17–19, 21, 23–24'
    """
    out, start, prev = [], None, None
    for v in sorted(values):
        if start is None:
            start = prev = v
        elif v == prev + 1:
            prev = v
        else:
            out.append(f"{start}–{prev}" if prev != start else f"{start}")
            start = prev = v
    if start is not None:
        out.append(f"{start}–{prev}" if prev != start else f"{start}")
    return ", ".join(out)


def plan_on_device(logs: Sequence[RunLog], paths: Sequence[str | Path] | None, device: str, workers: Sequence[int],
                   **options) -> LogPlan:
    """The plan on ``workers`` × ``device`` with the transformer model calibrated on the logs: :func:`plan_from_logs`
    with ``device`` (and ``paths`` for the measured steps and systems JSONs; None reads the logs' metadata)."""
    return plan_from_logs(logs, workers, device=device, paths=paths, **options)
