"""Training logs as measured configurations, and the samples to target at any global batch.

Each log (an MLPerf MLLOG result, or any log whose metadata give the GPU count, the global batch and a
step time or throughput) is one measured configuration: ``w`` accelerators, global batch ``M``, seconds
per optimiser step, samples to its target, and the time MLPerf counts (``run_start`` to ``run_stop``:
training plus the evaluations at the cadence logged) (:func:`measured_configurations`).

**Samples to target** at a global batch come from the best source that knows (:func:`samples_at_batch`),
named in the plan's ``samples_source`` column:

1. ``logs``: the logs at that batch (their median; their range as the interval);
2. ``batch-fit``: a batch-scaling fit of the loaded runs (McCandlish's ``E(B) = E_min·(1 + B/B_noise)``, by
   :func:`core.batch.predict_from_points`) when the batch lies inside the logged batches and three or more
   batches were logged (a line through two batches cannot be judged: no batch is left to check it on);
3. ``rcp``: MLCommons' reference convergence points of the logs' benchmark (installed ``mlperf-logging``),
   their seeds' interval, when the benchmark has them;
4. otherwise the batch-scaling fit of the loaded runs at two or more batches (its note says that no reference
   points were found, and whether it extrapolates), or with one logged batch that batch's samples (flagged:
   samples assumed not to change with the batch).

The plan itself (step time from a speed family, rows, intervals) is :mod:`core.plan.log_plan`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.batch import evaluation_resolution, load_rcps, predict_from_points, rcp_benchmarks
from core.defaults import DEFAULT_LEVEL
from core.errors import InputError, PlannerError
from core.logs import RunLog
from core.runs import find_target_crossing
from core.targets import Target, target_for

#: columns of :func:`measured_configurations`
MEASURED_COLUMNS: tuple[str, ...] = ("source", "w", "nodes", "global_batch", "step_time_s", "samples_to_target",
                                     "samples_resolution", "time_to_target_s", "counted_over_training")
#: columns of the plan (``python -m core plan --from-logs``)
PLAN_COLUMNS: tuple[str, ...] = ("mode", "p", "w", "steps_per_s", "time_s", "cost", "time_h", "time_unit",
                                 "global_batch", "samples_to_target", "step_time_s", "time_low", "time_high",
                                 "speed_model", "samples_source", "device", "strategy", "note")


def _step_time(log: RunLog) -> float | None:
    meta = log.meta
    if meta.step_time_s:
        return float(meta.step_time_s)
    if meta.throughput and meta.global_batch:
        return float(meta.global_batch) / float(meta.throughput)
    return None


def measured_step_time(log: RunLog) -> float | None:
    """Seconds per optimiser step the log measured: its own step time or batch / throughput (MLLOG), else the
    median wall-clock time between consecutive logged steps (a ``time_s`` column); None when it has neither.

    >>> from core.datasets import builtin_log_files
    >>> from core.logs import read_log_file
    >>> path = dict(builtin_log_files("mnist1d"))["resnet14_Intel Xeon Processor.csv"]
    >>> round(measured_step_time(read_log_file(path)), 4)
    0.012
    """
    own = _step_time(log)
    if own:
        return own
    frame = log.frame.dropna(subset=["time_s"]).drop_duplicates("global_step").sort_values("global_step")
    if len(frame) < 2:
        return None
    dt = np.diff(frame["time_s"].to_numpy(dtype=float)) / np.diff(frame["global_step"].to_numpy(dtype=float))
    dt = dt[np.isfinite(dt) & (dt > 0)]
    return float(np.median(dt)) if dt.size else None


def measured_configurations(logs: Sequence[RunLog], target: Target | None = None) -> tuple[pd.DataFrame, list[str]]:
    """One row per log that can be planned from (``MEASURED_COLUMNS``), and a sentence per log left out."""
    rows, left_out = [], []
    for log in logs:
        meta = log.meta
        t = target_for(log, target)
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
                     "samples_to_target": float(samples),
                     "samples_resolution": evaluation_resolution(log, crossing, float(meta.global_batch)),
                     "time_to_target_s": counted,
                     "counted_over_training": (counted / training) if counted else None})
    return pd.DataFrame(rows, columns=list(MEASURED_COLUMNS)), left_out


#: where the samples to target of a plan's row come from (``samples_source``), best first
SAMPLES_SOURCES: tuple[str, ...] = ("logs", "batch-fit", "rcp")
#: logged batches a batch-scaling fit of the loaded runs needs before it is trusted inside their range
MIN_FIT_BATCHES = 3


@dataclass(frozen=True)
class SamplesAtBatch:
    """Samples to target at a global batch, its interval, where it came from (``SAMPLES_SOURCES``) and how."""

    samples: float
    low: float
    high: float
    source: str
    how: str


def _log_spread(values: np.ndarray) -> float:
    """Relative spread of the samples of runs at one batch (standard deviation of their logarithm; 0 for one)."""
    return float(np.std(np.log(values), ddof=1)) if values.size > 1 else 0.0


def _rcp_points(benchmark: str | None):
    """The benchmark's RCPs, or None (no benchmark, none installed, or none for it)."""
    if not benchmark:
        return None
    key = str(benchmark).lower()
    try:
        if key not in rcp_benchmarks(None):
            return None
        return load_rcps(key)
    except (PlannerError, ImportError, OSError, ValueError):
        return None


def samples_at_batch(measured: pd.DataFrame, global_batch: float, *, benchmark: str | None = None,
                     level: float = DEFAULT_LEVEL) -> SamplesAtBatch:
    """Samples to target at ``global_batch`` from the best source that knows (module docstring).

    Examples
    --------
    >>> table = pd.DataFrame({"global_batch": [16.0, 16.0, 64.0], "samples_to_target": [172032., 184320., 221184.]})
    >>> s = samples_at_batch(table, 16); (s.samples, s.low, s.high, s.source)
    (178176.0, 172032.0, 184320.0, 'logs')
    >>> s = samples_at_batch(table, 128, benchmark="llama31_8b")      # MLCommons' RCPs know batch 128
    >>> s.source, round(s.samples)
    ('rcp', 344747)
    >>> s = samples_at_batch(table, 32); s.source, round(s.samples)   # no benchmark: the line through two batches
    ('batch-fit', 192512)
    """
    global_batch = float(global_batch)
    by_batch = measured.groupby("global_batch")["samples_to_target"]
    med, lo, hi = by_batch.median(), by_batch.min(), by_batch.max()
    batches = med.index.to_numpy(dtype=float)
    if global_batch in med.index:
        at = measured[measured["global_batch"] == global_batch]
        gap = pd.to_numeric(at.get("samples_resolution"), errors="coerce") if "samples_resolution" in at else None
        low = float(lo[global_batch])
        if gap is not None and gap.notna().any():     # each run crossed after the evaluation before the one logged
            low = float((at["samples_to_target"] - gap.fillna(0.0)).min())
        return SamplesAtBatch(float(med[global_batch]), low, float(hi[global_batch]), "logs",
                              f"samples: median of {int(by_batch.size()[global_batch])} run(s) at global batch "
                              f"{global_batch:g} (interval: from the evaluation before each run's crossing to the "
                              "latest crossing)")
    spreads = [_log_spread(v.to_numpy(dtype=float)) for _, v in by_batch]
    inside = len(batches) >= 2 and batches.min() < global_batch < batches.max()
    if inside and len(batches) >= MIN_FIT_BATCHES:
        p = predict_from_points(batches, med.to_numpy(dtype=float), spreads, global_batch, level=level)
        return SamplesAtBatch(p.samples, p.low, p.high, "batch-fit",
                              f"samples: batch-scaling fit of the runs at {len(batches)} global batches, "
                              f"{p.region} at {global_batch:g}")
    rcps = _rcp_points(benchmark)
    if rcps is not None:
        p = predict_from_points(rcps.batches, rcps.means, rcps.spreads, global_batch, level=level)
        return SamplesAtBatch(p.samples, p.low, p.high, "rcp",
                              f"samples: MLCommons reference convergence points of {rcps.benchmark} (round "
                              f"{rcps.round}), {p.region} at global batch {global_batch:g}"
                              + (f"; {p.note}" if p.note else ""))
    if len(batches) >= 2:
        p = predict_from_points(batches, med.to_numpy(dtype=float), spreads, global_batch, level=level)
        return SamplesAtBatch(p.samples, min(p.low, float(lo.min())), max(p.high, float(hi.max())), "batch-fit",
                              f"samples: batch-scaling fit of the runs at {len(batches)} global batches, "
                              f"{p.region} at {global_batch:g} (no reference convergence points for the benchmark)"
                              + (f"; {p.note}" if p.note else ""))
    nearest = batches[np.argmin(np.abs(np.log(batches) - math.log(global_batch)))]
    return SamplesAtBatch(float(med[nearest]), float(lo.min()), float(hi.max()), "logs",
                          f"samples: extrapolated: global batch {global_batch:g} has no runs and the logs one batch; "
                          f"the samples at {nearest:g} are used (assumed not to change with the batch)")


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
