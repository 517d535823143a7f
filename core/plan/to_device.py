"""The transformer model calibrated on training logs, on their device or another.

``python -m core plan --from-logs LOG... --to-device NAME`` (or ``--model transformer``): each log (an MLPerf
MLLOG result of a language-model benchmark, or a NanoGPT speedrun log) gives a measured step on its own device
(:func:`core.transformer.read_log_step`: the MLPerf systems JSON beside the results wins over
``submission_platform``; a speedrun log's ``nvidia-smi`` table).  Those steps calibrate the transformer
step-time model (:mod:`core.speed.transformer`), which predicts the step on ``w`` × the target device at
the asked global batch (:func:`transformer_from_logs`).  The plan itself (samples to target, the evaluations'
share, the rows) is :func:`core.plan.log_plan.plan_from_logs`'s, as for every other speed family.  The model's
shape comes from the logs' benchmark (:data:`BENCHMARK_CONFIGS`) unless one is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from core.errors import InputError
from core.logs import RunLog
from core.plan.from_logs import measured_configurations
from core.speed import TransformerSpeedModel, transformer_speed_model
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
    transfer_factor,
    with_dp,
)

#: MLPerf benchmark name -> (built-in config, LoRA rank or 0)
BENCHMARK_CONFIGS: dict[str, tuple[str, int]] = {
    "llama31_8b": ("llama31_8b", 0),
    "llama31_405b": ("llama31_405b", 0),
    "llama2_70b_lora": ("llama2_70b", 16),
}


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


def log_device(log: RunLog) -> str | None:
    """The device a log ran on, by the one device table's name (``meta.accelerator``, else ``meta.gpu``), or None.

    >>> from core.datasets import builtin_log_files
    >>> from core.logs import read_log_file
    >>> sorted({log_device(read_log_file(p, source=n)) for n, p in builtin_log_files("mlperf_llama8b")})
    ['B200', 'GB200']
    """
    device = accelerator_from_text(log.meta.accelerator or log.meta.gpu or "")
    return device.name if device is not None else None


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


def transformer_from_logs(logs: Sequence[RunLog], paths: Sequence[str | Path] | None, measured: pd.DataFrame,
                          device: str, *, global_batch: float | None = None, gpus_per_node: int | None = None,
                          strategy: Strategy | None = None, config: TransformerConfig | None = None,
                          precision: str = "bf16") -> tuple[TransformerSpeedModel, list[str]]:
    """The transformer model on ``device`` calibrated on the measured steps of the logs kept in ``measured``.

    ``logs`` are the parsed logs, ``paths`` their files (for the measured step and the source device:
    :func:`core.transformer.read_log_step`, with the systems JSON beside an MLPerf result); None reads both from the
    logs' metadata (:func:`step_from_meta`).  ``strategy`` keeps tp/pp/cp with dp from each GPU count (target and
    sources alike); None searches the fastest that fits, on each side.  Returns the model and a note per log.
    """
    target_device = get_accelerator(device)
    kept = set(measured["source"])
    ms, seq_lens, benchmarks, notes = [], set(), set(), []
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
        notes.append(f"{path or log.source}: source {gpus}×{step.device.name}"
                     + (f" (from {system.name})" if system else " (from the log)"))
    if len(seq_lens) != 1:
        raise InputError(f"plan --from-logs: expected one sequence length across the logs; got {sorted(seq_lens)}.")
    if config is None:
        if len(benchmarks) != 1:
            raise InputError(f"plan --from-logs: expected logs of one benchmark; got {sorted(map(str, benchmarks))}. "
                             "Plan them separately.")
        config = config_for_benchmark(next(iter(benchmarks)))
    model = transformer_speed_model(config, target_device, seq_len=seq_lens.pop(), measurements=tuple(ms),
                                    strategy=strategy, domain=gpus_per_node, precision=precision,
                                    global_batch=global_batch)
    _, note = transfer_factor([m.device.name for m in ms], target_device.name)
    if note:            # another architecture: its compute corrected by how far each runs from its datasheet
        notes.append(note.replace("the step ×", "compute time ×"))
    return model, notes
