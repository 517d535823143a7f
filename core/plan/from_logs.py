"""Plan straight from training logs: speed and samples to target measured in the logs, time at other GPU counts.

Each log (an MLPerf MLLOG result, or any log whose metadata give the GPU count, the global batch and a
step time or throughput) is one measured configuration: ``w`` accelerators, global batch ``M``, seconds
per optimiser step, samples to its target, and the time MLPerf counts (``run_start`` to ``run_stop``:
training plus the evaluations at the cadence logged). The plan for another ``(w, M)``:

* **step time** ``t(w, M)``: with three or more measured configurations, the Optimus all-reduce
  feature row fitted by non-negative least squares, ``t = θ0·M/w + θ1 + θ2·w`` (compute on the
  per-GPU batch, a fixed cost per step, a cost growing with the GPUs); with two, the exact
  two-parameter form ``t = θ0·M/w + θ1``; with one, ``t = θ0·M/w`` (perfect scaling, flagged). A
  per-GPU batch below one is normal where tensor or pipeline parallelism splits a sample.
* **samples to target** at ``M``: the median of the logs at that global batch (their range as the
  interval), else interpolated in ``ln M`` between the two nearest measured batches (outside
  them: the nearest batch's, flagged as an extrapolation, and the interval widened to include the
  measured samples at every batch).
* **time to train** = steps × ``t(w, M)`` × the median ratio of each log's counted time to its
  training time (the evaluations' share, as logged).

Every row says what it assumed (``core.plan.from_logs.LogPlan.flags``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import nnls

from core.errors import InputError
from core.logs import RunLog
from core.plan.grid import configuration_cost
from core.runs import find_target_crossing, run_target
from core.targets import Target

#: columns of :func:`measured_configurations`
MEASURED_COLUMNS: tuple[str, ...] = ("source", "w", "nodes", "global_batch", "step_time_s", "samples_to_target",
                                     "time_to_target_s", "counted_over_training")
#: columns of the plan (``python -m core plan --from-logs``)
PLAN_COLUMNS: tuple[str, ...] = ("mode", "p", "w", "steps_per_s", "time_s", "cost", "time_h", "time_unit",
                                 "global_batch", "samples_to_target", "step_time_s", "time_low", "time_high")


def _step_time(log: RunLog) -> float | None:
    meta = log.meta
    if meta.step_time_s:
        return float(meta.step_time_s)
    if meta.throughput and meta.global_batch:
        return float(meta.global_batch) / float(meta.throughput)
    return None


def measured_configurations(logs: Sequence[RunLog], target: Target | None = None) -> tuple[pd.DataFrame, list[str]]:
    """One row per log that can be planned from (``MEASURED_COLUMNS``), and a sentence per log left out."""
    rows, left_out = [], []
    for log in logs:
        meta = log.meta
        t = run_target(log, target)
        missing = [what for what, value in (("GPU count", meta.n_devices), ("global batch", meta.global_batch),
                                            ("step time or throughput", _step_time(log))) if not value]
        crossing = find_target_crossing(log, t, criterion="first-row")
        if not crossing.reached:
            missing.append(f"target {t.spec} reached")
        if missing:
            left_out.append(f"{log.source}: left out: no {', '.join(missing)} in the log")
            continue
        samples = crossing.samples if crossing.samples is not None else crossing.step * meta.global_batch
        step_time = _step_time(log)
        training = samples / meta.global_batch * step_time
        counted = meta.run_time_s if meta.run_time_s and meta.status in (None, "success") else crossing.time_s
        rows.append({"source": log.source, "w": int(meta.n_devices), "nodes": meta.n_nodes,
                     "global_batch": float(meta.global_batch), "step_time_s": step_time,
                     "samples_to_target": float(samples), "time_to_target_s": counted,
                     "counted_over_training": (counted / training) if counted else None})
    return pd.DataFrame(rows, columns=list(MEASURED_COLUMNS)), left_out


@dataclass(frozen=True)
class LogStepTime:
    """Seconds per step at ``(w, M)`` fitted to measured configurations: ``t = θ0·M/w + θ1 + θ2·w``."""

    theta: tuple[float, float, float]
    n_points: int
    description: str

    def step_time(self, w, global_batch) -> np.ndarray:
        w = np.asarray(w, dtype=float)
        m = np.asarray(global_batch, dtype=float)
        return self.theta[0] * m / w + self.theta[1] + self.theta[2] * w


def fit_log_step_time(measured: pd.DataFrame) -> LogStepTime:
    """The step-time model of the module docstring, fitted to the configurations' median step times.

    >>> table = pd.DataFrame({"w": [8, 72], "global_batch": [16.0, 36.0], "step_time_s": [0.42, 0.16]})
    >>> m = fit_log_step_time(table)
    >>> [round(v, 4) for v in m.theta], round(float(m.step_time(512, 64)), 4)  # 2θ0+θ1 = .42, θ0/2+θ1 = .16
    ([0.1733, 0.0733, 0.0], 0.095)
    """
    if measured.empty:
        raise InputError("plan --from-logs: expected at least one log with a GPU count, a global batch and a "
                         "step time; got none.")
    g = measured.groupby(["w", "global_batch"], as_index=False)["step_time_s"].median()
    w, m, t = (g[c].to_numpy(dtype=float) for c in ("w", "global_batch", "step_time_s"))
    n = len(g)
    if n == 1:
        return LogStepTime((float(t[0] * w[0] / m[0]), 0.0, 0.0), 1,
                           "one measured configuration: perfect scaling assumed (t = θ0·M/w)")
    features = np.column_stack([m / w, np.ones(n), w]) if n >= 3 else np.column_stack([m / w, np.ones(n)])
    scale = features.max(axis=0)
    coef, _ = nnls(features / scale, t)
    coef = coef / scale
    theta = (float(coef[0]), float(coef[1]), float(coef[2]) if n >= 3 else 0.0)
    form = "t = θ0·M/w + θ1 + θ2·w" if n >= 3 else "t = θ0·M/w + θ1"
    return LogStepTime(theta, n, f"{form} fitted to {n} measured configurations (NNLS)")


@dataclass(frozen=True)
class SamplesAtBatch:
    """Samples to target at a global batch, its interval and how it was obtained."""

    samples: float
    low: float
    high: float
    how: str


def samples_at_batch(measured: pd.DataFrame, global_batch: float) -> SamplesAtBatch:
    """Samples to target at ``global_batch`` from the measured configurations (module docstring).

    >>> table = pd.DataFrame({"global_batch": [16.0, 16.0, 64.0], "samples_to_target": [172032., 184320., 221184.]})
    >>> s = samples_at_batch(table, 16); (s.samples, s.low, s.high)
    (178176.0, 172032.0, 184320.0)
    >>> round(samples_at_batch(table, 32).samples)        # halfway in ln M between 178,176 and 221,184
    198519
    """
    by_batch = measured.groupby("global_batch")["samples_to_target"]
    med, lo, hi = by_batch.median(), by_batch.min(), by_batch.max()
    batches = med.index.to_numpy(dtype=float)
    if global_batch in med.index:
        return SamplesAtBatch(float(med[global_batch]), float(lo[global_batch]), float(hi[global_batch]),
                              f"median of {int(by_batch.size()[global_batch])} run(s) at global batch {global_batch:g}")
    if len(batches) >= 2 and batches.min() < global_batch < batches.max():
        below, above = batches[batches < global_batch].max(), batches[batches > global_batch].min()
        f = (math.log(global_batch) - math.log(below)) / (math.log(above) - math.log(below))

        def interp(a, b):
            return float(math.exp((1 - f) * math.log(a) + f * math.log(b)))

        return SamplesAtBatch(interp(med[below], med[above]), min(lo[below], lo[above]), max(hi[below], hi[above]),
                              f"interpolated in ln M between global batches {below:g} and {above:g}")
    nearest = batches[np.argmin(np.abs(np.log(batches) - math.log(global_batch)))]
    return SamplesAtBatch(float(med[nearest]), float(lo.min()), float(hi.max()),
                          f"extrapolated: global batch {global_batch:g} is outside the measured "
                          f"{batches.min():g}-{batches.max():g}; the samples at {nearest:g} are used and the interval "
                          "spans every measured batch")


@dataclass(frozen=True)
class LogPlan:
    """The plan over GPU counts, the measured configurations it came from, and what it assumed."""

    table: pd.DataFrame
    measured: pd.DataFrame
    step_time_model: LogStepTime
    overhead: float
    flags: tuple[str, ...]


def fastest_configuration(table: pd.DataFrame) -> dict:
    """The row of a plan (``plan_from_logs`` or ``plan_on_device``) with the least time to target, with its
    interval in hours too (``time_h_low``, ``time_h_high``).

    >>> fastest_configuration(pd.DataFrame({"w": [8, 64], "time_s": [7200.0, 3600.0], "time_h": [2.0, 1.0],
    ...                                     "time_low": [6000.0, 2880.0], "time_high": [9000.0, 4320.0]}))["time_h_low"]
    0.8
    """
    best = table.loc[table["time_s"].idxmin()].to_dict()
    best["time_h_low"], best["time_h_high"] = best["time_low"] / 3600.0, best["time_high"] / 3600.0
    return best


def check_one_batch(global_batch: float | None, per_worker_batch: float | None) -> None:
    """``--batch M`` or ``--per-worker-batch m``, never both."""
    if global_batch is not None and per_worker_batch is not None:
        raise InputError("plan --from-logs: expected --batch M or --per-worker-batch m; got both. Keep one.")


def logs_global_batch(measured: pd.DataFrame, global_batch: float | None,
                      per_worker_batch: float | None) -> float | None:
    """The global batch to plan at: the one asked, else the logs' own when they share one (None with a
    per-worker batch); logs at several batches need one asked."""
    if global_batch is not None or per_worker_batch is not None:
        return global_batch
    batches = measured["global_batch"].unique()
    if len(batches) != 1:
        raise InputError(f"plan --from-logs: expected --batch M or --per-worker-batch m; the logs use global "
                         f"batches {', '.join(f'{b:g}' for b in sorted(batches))}. Pass one.")
    return float(batches[0])


def plan_from_logs(logs: Sequence[RunLog], workers: Sequence[int], *, global_batch: float | None = None,
                   per_worker_batch: float | None = None, target: Target | None = None,
                   price_worker: float = 1.0) -> LogPlan:
    """Time and cost to target for each GPU count in ``workers`` from the logs (module docstring).

    ``global_batch`` keeps ``M`` for every count; ``per_worker_batch`` plans ``M = w·m`` (``m`` may be a
    fraction). With neither, the logs' own global batch when they share one.
    """
    check_one_batch(global_batch, per_worker_batch)
    measured, left_out = measured_configurations(logs, target)
    if measured.empty:
        raise InputError("plan --from-logs: expected at least one log with a GPU count, a global batch, a step "
                         "time and its target reached; got none. " + " ".join(left_out))
    model = fit_log_step_time(measured)
    global_batch = logs_global_batch(measured, global_batch, per_worker_batch)
    ratios = measured["counted_over_training"].dropna().to_numpy(dtype=float)
    overhead = float(np.median(ratios)) if ratios.size else 1.0
    flags = list(left_out) + [model.description,
                              f"time counted as MLPerf counts it: training × {overhead:.3f} (evaluations, median of "
                              f"{ratios.size} log(s))" if ratios.size else "no counted time in the logs: training only"]
    rows = []
    for w in workers:
        if int(w) < 1:
            raise InputError(f"plan --from-logs: expected GPU counts >= 1; got {w}.")
        m = float(global_batch) if global_batch is not None else float(per_worker_batch) * int(w)
        s = samples_at_batch(measured, m)
        step = float(model.step_time(int(w), m))
        steps = s.samples / m
        time_s = steps * step * overhead
        low, high = s.low / m * step * overhead, s.high / m * step * overhead
        rows.append({"mode": "allreduce", "p": 0, "w": int(w), "steps_per_s": 1.0 / step, "time_s": time_s,
                     "cost": float(configuration_cost(time_s, 0, int(w), price_worker=price_worker)),
                     "time_h": time_s / 3600.0, "time_unit": "s", "global_batch": m, "samples_to_target": s.samples,
                     "step_time_s": step, "time_low": low, "time_high": high, "samples_how": s.how})
    table = pd.DataFrame(rows)
    flags.extend(dict.fromkeys(table["samples_how"]))
    return LogPlan(table.drop(columns="samples_how"), measured, model, overhead, tuple(flags))
