"""Plan from training logs on another device: the logs' measured step transferred by the transformer model.

``python -m core plan --from-logs LOG... --to-device NAME``: each log (an MLPerf MLLOG result of a
language-model benchmark, or a NanoGPT speedrun log) gives a measured step on its own device
(:func:`core.transformer.read_log_step`: the MLPerf systems JSON beside the results wins over
``submission_platform``; a speedrun log's ``nvidia-smi`` table).  Those steps calibrate the
transformer step-time model (:mod:`core.plan.transformer_speed`), which predicts the step on ``w`` ×
the target device at the asked global batch; the samples to target and the evaluations' share come
from the logs as in :func:`core.plan.from_logs.plan_from_logs`:

    time = samples_to_target(M) / M × t_device(w, M) × counted/training

The interval multiplies the samples' range by the calibration's band (leave-one-out over the logs'
configurations, ±15 % with one).  The model's shape comes from the logs' benchmark
(:data:`BENCHMARK_CONFIGS`) unless one is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from core.errors import InputError
from core.logs import RunLog
from core.plan.from_logs import (
    PLAN_COLUMNS,
    check_one_batch,
    logs_global_batch,
    measured_configurations,
    samples_at_batch,
)
from core.plan.grid import configuration_cost
from core.plan.transformer_speed import TransformerSpeedModel, transformer_speed_model
from core.targets import Target
from core.transformer import (
    LogStep,
    Measurement,
    Strategy,
    TransformerConfig,
    accelerator_from_text,
    get_accelerator,
    load_config,
    read_log_step,
    with_dp,
)

#: MLPerf benchmark name -> (built-in config, LoRA rank or 0)
BENCHMARK_CONFIGS: dict[str, tuple[str, int]] = {
    "llama31_8b": ("llama31_8b", 0),
    "llama31_405b": ("llama31_405b", 0),
    "llama2_70b_lora": ("llama2_70b", 16),
}
#: columns of the plan on another device: the ``--from-logs`` columns, then the device and the strategy
DEVICE_PLAN_COLUMNS: tuple[str, ...] = (*PLAN_COLUMNS, "device", "strategy")


def config_for_benchmark(benchmark: str | None, source: str = "logs") -> TransformerConfig:
    """The built-in model of an MLPerf language-model benchmark (``llama2_70b_lora``: rank-16 adapters).

    >>> config_for_benchmark("llama2_70b_lora").lora_rank
    16
    >>> config_for_benchmark("resnet")
    Traceback (most recent call last):
    ...
    core.errors.InputError: logs: expected a language-model benchmark (llama31_8b, llama31_405b, llama2_70b_lora); \
got 'resnet'. Give the model with --config FILE|NAME.
    """
    key = (benchmark or "").lower()
    if key not in BENCHMARK_CONFIGS:
        raise InputError(f"{source}: expected a language-model benchmark ({', '.join(BENCHMARK_CONFIGS)}); got "
                         f"{benchmark!r}. Give the model with --config FILE|NAME.")
    name, rank = BENCHMARK_CONFIGS[key]
    cfg = load_config(name)
    return cfg.with_lora(rank) if rank else cfg


def systems_json_for(log_path: str | Path) -> Path | None:
    """The MLPerf systems JSON of a result file: ``<round>/systems/<submission dir>.json`` above it, if present.

    MLPerf's layout is ``<round>/<benchmark>/<system>/result_N.txt`` beside ``<round>/systems/<system>.json``.
    """
    path = Path(log_path).resolve()
    system = path.parent.name
    for up in path.parents[1:4]:
        candidate = up / "systems" / f"{system}.json"
        if candidate.is_file():
            return candidate
    return None


@dataclass(frozen=True)
class DevicePlan:
    """The plan on the target device, the calibrated model behind it, and what it assumed."""

    table: pd.DataFrame
    model: TransformerSpeedModel
    measured: pd.DataFrame
    overhead: float
    flags: tuple[str, ...]


def step_from_meta(log: RunLog, step_time: float) -> LogStep:
    """A log's measured step as its reader left it in ``log.meta`` (for logs without a file on disk, such as
    uploads and the built-in sets): the device named by ``meta.accelerator`` (the systems JSON's, or the
    ``nvidia-smi`` table's), ``meta.n_devices`` GPUs, the scale-up domain as :func:`core.transformer.system_from_json`
    derives it (the accelerator's own, 72 for an NVL72 rack, when it spans more than a node; else the GPUs per
    node).

    >>> from core.datasets import builtin_log_files
    >>> from core.logs import read_log_file
    >>> name, path = builtin_log_files("mlperf_llama8b")[3]            # 8 GB200, 2 trays of 4, one NVL72 rack
    >>> step = step_from_meta(read_log_file(path, source=name), 0.405)
    >>> step.device.name, step.gpus, step.domain, step.global_batch, step.seq_len
    ('GB200', 8, 8, 16, 8192)
    """
    meta = log.meta
    device = accelerator_from_text(meta.accelerator or meta.gpu or "")
    gpus = int(meta.n_devices) if meta.n_devices else None
    domain = None
    if device is not None and gpus:
        per_node = gpus // int(meta.n_nodes) if meta.n_nodes else gpus
        domain = min(device.domain, gpus) if device.domain > per_node else per_node
    return LogStep(float(step_time), "the log's step time as read (median tracked step time, or batch / throughput)",
                   int(meta.global_batch or 0), int(meta.seq_len or 0), device, gpus, domain, log.source)


def default_device_for(logs: Sequence[RunLog], target: Target | None = None) -> str | None:
    """The device to plan the logs on with the transformer model by default: the one most of the plannable logs
    ran on, when they are runs of one language-model benchmark with a known model (:data:`BENCHMARK_CONFIGS`)
    and say their device; None otherwise (plan from the logs' own step times).

    >>> from core.datasets import builtin_log_files
    >>> from core.logs import read_log_file
    >>> default_device_for([read_log_file(p, source=n) for n, p in builtin_log_files("mlperf_llama8b")])
    'GB200'
    """
    kept = set(measured_configurations(logs, target)[0]["source"])
    runs = [log for log in logs if log.source in kept]
    if not runs or len({str(log.meta.model).lower() for log in runs}) != 1 \
            or str(runs[0].meta.model).lower() not in BENCHMARK_CONFIGS:
        return None
    devices = [accelerator_from_text(log.meta.accelerator or log.meta.gpu or "") for log in runs]
    if any(d is None for d in devices):
        return None
    names = [d.name for d in devices]
    return max(dict.fromkeys(names), key=names.count)


def plan_on_device(logs: Sequence[RunLog], paths: Sequence[str | Path] | None, device: str, workers: Sequence[int], *,
                   global_batch: float | None = None, per_worker_batch: float | None = None,
                   target: Target | None = None, price_worker: float = 1.0, gpus_per_node: int | None = None,
                   strategy: Strategy | None = None, config: TransformerConfig | None = None,
                   precision: str = "bf16") -> DevicePlan:
    """Time and cost to target on ``workers`` × ``device`` from the logs (module text).

    ``logs`` are the parsed logs (for samples to target and counted time), ``paths`` their files (for
    the measured step and the source device: :func:`core.transformer.read_log_step`, with the systems JSON beside
    an MLPerf result); None reads both from the logs' metadata (:func:`step_from_meta`).
    ``strategy`` keeps tp/pp/cp with dp from each GPU count
    (target and sources alike); None searches the fastest that fits, on each side.
    """
    check_one_batch(global_batch, per_worker_batch)
    target_device = get_accelerator(device)
    measured, left_out = measured_configurations(logs, target)
    if measured.empty:
        raise InputError("plan --from-logs: expected at least one log with a GPU count, a global batch, a step "
                         "time and its target reached; got none. " + " ".join(left_out))
    kept = set(measured["source"])
    ms, seq_lens, benchmarks, flags = [], set(), set(), list(left_out)
    step_times = dict(zip(measured["source"], measured["step_time_s"]))
    for log, path in zip(logs, paths if paths is not None else [None] * len(logs)):
        if log.source not in kept:
            continue
        system = systems_json_for(path) if path is not None else None
        step = read_log_step(path, system) if path is not None else step_from_meta(log, step_times[log.source])
        if step.device is None:
            raise InputError(f"{path or log.source}: expected the source device in the log (MLLOG "
                             "submission_platform, the systems JSON beside the results, or a speedrun log's "
                             "nvidia-smi table); got none. Put the systems JSON at <round>/systems/<system>.json.")
        gpus = step.gpus or log.meta.n_devices
        ms.append(Measurement(step.step_time, step.device, int(gpus), step.global_batch, step.seq_len,
                              with_dp(strategy, int(gpus)) if strategy is not None else None, step.domain,
                              source=f"measured: {path or log.source}, {step.how}"))
        seq_lens.add(step.seq_len)
        benchmarks.add(log.meta.model)
        flags.append(f"{path or log.source}: source {gpus}×{step.device.name}"
                     + (f" (from {system.name})" if system else " (from the log)"))
    if len(seq_lens) != 1:
        raise InputError(f"plan --from-logs: expected one sequence length across the logs; got {sorted(seq_lens)}.")
    if config is None:
        if len(benchmarks) != 1:
            raise InputError(f"plan --from-logs: expected logs of one benchmark; got {sorted(map(str, benchmarks))}. "
                             "Plan them separately.")
        config = config_for_benchmark(next(iter(benchmarks)))
    global_batch = logs_global_batch(measured, global_batch, per_worker_batch)
    model = transformer_speed_model(config, target_device, seq_len=seq_lens.pop(), measurements=tuple(ms),
                                    strategy=strategy, domain=gpus_per_node, precision=precision,
                                    global_batch=global_batch)
    ratios = measured["counted_over_training"].dropna().to_numpy(dtype=float)
    overhead = float(np.median(ratios)) if ratios.size else 1.0
    flags.append(f"time counted as MLPerf counts it: training × {overhead:.3f} (evaluations, median of "
                 f"{ratios.size} log(s))" if ratios.size else "no counted time in the logs: training only")
    flags += list(model.notes)
    band = model.time_band or (1.0, 1.0)
    rows = []
    for w in workers:
        if int(w) < 1:
            raise InputError(f"plan --from-logs: expected GPU counts >= 1; got {w}.")
        m = float(global_batch) if global_batch is not None else float(per_worker_batch) * int(w)
        pred = model.prediction(int(w), m)       # raises with the reason when nothing fits
        s = samples_at_batch(measured, m)
        step = pred.time * model.factor
        time_s = s.samples / m * step * overhead
        rows.append({"mode": "allreduce", "p": 0, "w": int(w), "steps_per_s": 1.0 / step, "time_s": time_s,
                     "cost": float(configuration_cost(time_s, 0, int(w), price_worker=price_worker)),
                     "time_h": time_s / 3600.0, "time_unit": "s", "global_batch": m, "samples_to_target": s.samples,
                     "step_time_s": step, "time_low": s.low / m * step * band[0] * overhead,
                     "time_high": s.high / m * step * band[1] * overhead, "device": target_device.name,
                     "strategy": pred.estimate.strategy.text(), "samples_how": s.how})
    table = pd.DataFrame(rows)
    flags.extend(dict.fromkeys(table["samples_how"]))
    return DevicePlan(table.drop(columns="samples_how")[list(DEVICE_PLAN_COLUMNS)], model, measured, overhead,
                      tuple(flags))
