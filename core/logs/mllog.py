"""Read MLCommons MLLOG logs (MLPerf Training result files) into a ``RunLog``.

An MLLOG log holds one JSON event per line after the marker ``:::MLLOG`` (the
``mlperf_logging`` package writes them); anything else on other lines (shell echo, driver
messages) is ignored, and a marker in the middle of a line (two processes writing to one
console) starts the event there, as MLCommons' own compliance checker reads them.  The
events used:

==========================  ===================================================================
event (``key``)             becomes
==========================  ===================================================================
``eval_accuracy``           the evaluation curve: one row per evaluation, at
                            ``metadata.epoch_num`` epochs (or ``metadata.samples_count``
                            samples) done; a later event for the same point replaces it.
                            In the ``acc`` column for a benchmark whose metric climbs, in the
                            ``loss`` column for one whose metric falls (the LLM benchmarks log
                            a log-perplexity or a loss as ``eval_accuracy``); the direction is
                            the one MLCommons' compliance checker applies
                            (:func:`benchmark_rule`)
``target_accuracy``         ``RunLog.target`` (``eval_accuracy`` with the benchmark's direction)
``samples_count``           the ``samples`` column; ``tokens`` = samples × ``max_sequence_length``
``time_ms`` (every event)   ``time_s``: seconds since ``run_start`` (wall clock);
                            ``RunMeta.run_time_s``: ``run_stop − run_start``
``tracked_stats``,          ``RunLog.steps`` (per-step ``train_loss``, ``step_time_s``,
``train_loss``              ``throughput``, ``lr``); the frame's ``train_loss`` and ``lr`` at
                            each evaluation are the last ones logged before it
``opt_learning_rate_*``,    ``RunMeta.warmup_steps``, ``decay_steps``, ``max_steps`` and
``max_steps``               ``schedule`` (``cosine:END`` / ``poly:END``, END in epochs)
``global_batch_size``       ``RunMeta.global_batch`` (samples per optimiser step)
``train_samples``           ``RunMeta.samples_per_epoch``
``tracked_stats``           ``RunMeta.throughput``: median ``value.throughput`` (or ``imgs_sec``),
                            samples/s as the submitter measured it
``run_stop``                ``RunMeta.status`` (``metadata.status``: "success" or "aborted");
                            an aborted run is flagged, and the batch-scaling fit leaves it out
``submission_*``            ``RunMeta.system`` (organisation and platform), ``RunMeta.gpu``
                            (the platform), ``RunMeta.model`` (the benchmark)
==========================  ===================================================================

The global step of an evaluation is ``samples / global_batch`` (``samples = epoch_num ×
train_samples`` when the event gives epochs), so ``step × global_batch`` is exactly the
samples seen; ``steps_per_epoch`` is ``ceil(train_samples / global_batch)``.

The system (accelerator model, nodes, accelerators per node) comes from the submitter's
system description where the caller found one (``core.logs.reader.read_log_file`` looks
beside the file), else from the ``submission_platform`` name: a leading ``<n>x`` is the number
of nodes (``8xSUBMISSION_PLATFORM_PLACEHOLDER``: 8 nodes).

The events are read (:mod:`core.logs.mllog_events`) by our own bounded reader rather than
``mlperf_logging.compliance_checker.mlp_parser``: that parser numbers only the marker lines
(a message could not name the file's line), decodes as Latin-1 and raises a bare ``KeyError``
for an event without ``metadata``.  What the package does know, each benchmark's direction
and target, is taken from it.

Every refusal is a :class:`core.errors.LogFormatError` naming the file, and the line for
a truncated or non-JSON event.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping

import numpy as np
import pandas as pd

from core.errors import LogFormatError
from core.logs.mllog_events import DECAY_KEYS, EVAL_METRIC, collect_events, events_frame, steps_table
from core.logs.naming import RunMeta, depth_of
from core.logs.runlog import ColumnRoles, RunLog
from core.targets import ACCURACY_METRIC, Target

#: the flags an MLLOG run can carry (pages and the batch-scaling fit test for the first)
ABORTED_FLAG = "aborted run: run_stop status 'aborted' (the run did not finish as a success; not fitted as one)"
NO_STOP_FLAG = "no run_stop event: the log may be cut short"
ACC_ONLY_FLAG = "accuracy-only trace: no loss curve to fit"
#: ``<nodes>x<system>x<devices per node><device>``, e.g. ``4xR750xax4A100-PCIE-80GB``
_NODES = re.compile(r"^(\d+)x")
_PER_NODE = re.compile(r"x(\d+)(?=[A-Za-z])")
#: a compliance check on the evaluated value: ``v['value'] >= 0.759``, ``(v['value'] <= 3.3)``
_CHECK = re.compile(r"v\[['\"]value['\"]\]\s*(>=|<=|>|<)\s*([0-9.eE+-]+)?")


#: Benchmarks whose direction the installed ``mlperf-logging`` does not state (none of the v4/v5
#: Training benchmarks; kept for older names): metric falls (``<=``) or climbs (``>=``).
_FALLBACK_DIRECTIONS: dict[str, str] = {"gpt3": "<="}


@functools.lru_cache(maxsize=64)
def benchmark_rule(benchmark: str | None) -> tuple[str, float | None] | None:
    """``(direction, target)`` of a benchmark's ``eval_accuracy``, as MLCommons' compliance checker has it.

    Read from the ``mlperf-logging`` package's YAML rules (``training_<round>/closed_<benchmark>.yaml``,
    the newest round that has the benchmark): its ``ATLEAST_ONE_CHECK`` on ``eval_accuracy`` compares
    the value with ``>=`` (a metric that climbs) or ``<=`` (one that falls).  ``None`` for a benchmark
    the package does not know (then :data:`_FALLBACK_DIRECTIONS`, then the curve itself, decide).

    >>> benchmark_rule("llama31_8b"), benchmark_rule("llama2_70b_lora"), benchmark_rule("resnet")
    (('<=', 3.3), ('<=', 0.925), ('>=', 0.759))
    >>> benchmark_rule("llama31_405b")[0], benchmark_rule("not_a_benchmark")
    ('<=', None)
    """
    if not isinstance(benchmark, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", benchmark):
        return None
    try:
        import importlib.resources as resources

        import yaml
        root = resources.files("mlperf_logging.compliance_checker")
        rounds = sorted((d for d in root.iterdir() if d.name.startswith("training_") and d.is_dir()),
                        key=lambda d: tuple(int(x) if x.isdigit() else 0
                                            for x in re.findall(r"\d+", d.name)), reverse=True)
    except (ImportError, OSError, TypeError):   # the package is pinned in requirements.txt
        return None
    for directory in rounds:
        rules = directory / f"closed_{benchmark.lower()}.yaml"
        if not rules.is_file():
            continue
        try:
            entries = yaml.safe_load(rules.read_text())
        except (OSError, yaml.YAMLError):
            continue
        for entry in entries if isinstance(entries, list) else []:
            key = entry.get("KEY") if isinstance(entry, dict) else None
            if not isinstance(key, dict) or key.get("NAME") != EVAL_METRIC:
                continue
            m = _CHECK.search(str(key.get("ATLEAST_ONE_CHECK", "")))
            if m:
                direction = ">=" if m.group(1).startswith(">") else "<="
                value = float(m.group(2)) if m.group(2) else None
                return direction, value
    return None


def _schedule(decay: dict[str, float]) -> str | None:
    """``poly:END:POWER`` from the optimiser's decay events (END: the decay steps as logged, in epochs;
    the warm-up before it is not modelled), None without them."""
    end = decay.get(DECAY_KEYS[0])
    if end is None or not math.isfinite(end) or end <= 0:
        return None
    power = decay.get(DECAY_KEYS[1], 1.0)
    return f"poly:{end:g}:{power:g}" if math.isfinite(power) and power > 0 else f"poly:{end:g}"


def declared_lr_schedule(opt: Mapping[str, object]) -> str | None:
    """The planned learning rate a language-model log declares, as a ``core.schedules`` spec in optimiser steps:
    ``opt_learning_rate_decay_schedule`` (cosine or linear, "with linear warmup"), the warm-up and decay steps, the
    base and end rates, ``max_steps``; None when any of the kind, the decay steps or the base rate is missing.

    >>> declared_lr_schedule({"opt_learning_rate_decay_schedule": "cosine with linear warmup",
    ...     "opt_learning_rate_warmup_steps": 16, "opt_learning_rate_decay_steps": 1199984,
    ...     "opt_base_learning_rate": 4e-4, "opt_end_learning_rate": 4e-5, "max_steps": 1200000})
    'cosine:total=1200000,warmup=16,peak=0.0004,final=4e-05,decay_end=1200000'
    """
    kind = str(opt.get("opt_learning_rate_decay_schedule") or "").lower()
    kind = "cosine" if "cos" in kind else "linear" if ("linear" in kind.replace("linear warmup", "")
                                                        or "poly" in kind) else None
    warmup = float(opt.get("opt_learning_rate_warmup_steps") or 0.0)
    decay, peak = opt.get("opt_learning_rate_decay_steps"), opt.get("opt_base_learning_rate")
    if kind is None or not isinstance(decay, (int, float)) or not isinstance(peak, (int, float)) \
            or not (decay > 0 and peak > 0 and warmup >= 0):
        return None
    end = warmup + float(decay)
    total = opt.get("max_steps", opt.get("opt_learning_rate_training_steps"))
    total = max(float(total), end) if isinstance(total, (int, float)) and math.isfinite(total) else end
    final = opt.get("opt_end_learning_rate")
    final = float(final) if isinstance(final, (int, float)) and 0 <= final <= peak else 0.0
    return (f"{kind}:total={total:.12g},warmup={warmup:.12g},peak={float(peak):.12g},final={final:.12g},"
            f"decay_end={end:.12g}")


def _declared_schedule(kind: str | None, warmup: float | None, decay: float | None, batch: int | None,
                       train_samples: int | None) -> str | None:
    """``cosine:END`` or ``poly:END`` (END in epochs: warm-up plus decay steps × batch / samples per epoch)."""
    if not kind or not decay or not batch or not train_samples:
        return None
    end = ((warmup or 0.0) + decay) * batch / train_samples
    if not math.isfinite(end) or end <= 0:
        return None
    kind = kind.lower()
    if "cos" in kind:
        return f"cosine:{end:.6g}"
    if "linear" in kind or "poly" in kind:
        return f"poly:{end:.6g}"
    return None


def _count(value) -> int | None:
    """A positive whole count from a log event or a system description (``"4"``, 4, 4.0), else None."""
    if isinstance(value, str):
        value = value.strip()
        if not re.fullmatch(r"\d+(\.0+)?", value):
            return None
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 1:
        return None
    return int(value) if float(value).is_integer() else None


def _platform(info: dict, system: Mapping | None = None) -> tuple[str | None, int | None, int | None, list[str]]:
    """(platform, nodes, devices, flags) from the submission events and the system description."""
    flags: list[str] = []
    platform = info.get("submission_platform")
    platform = str(platform).strip() if platform not in (None, "") else None
    nodes = _count(info.get("number_of_nodes"))
    per_node = _count(info.get("accelerators_per_node"))
    system = system if isinstance(system, Mapping) else {}
    sys_nodes, sys_per_node = _count(system.get("number_of_nodes")), _count(system.get("accelerators_per_node"))
    name_nodes = name_per_node = None
    if platform:
        m = _NODES.match(platform)
        name_nodes = int(m.group(1)) if m and int(m.group(1)) >= 1 else None
        k = _PER_NODE.search(platform[m.end() if m else 0:])
        name_per_node = int(k.group(1)) if k and int(k.group(1)) >= 1 else None
    nodes = nodes or sys_nodes or name_nodes
    per_node = per_node or sys_per_node or name_per_node
    if sys_nodes and name_nodes and sys_nodes != name_nodes:
        flags.append(f"the system description says {sys_nodes} nodes, the platform name {platform!r} "
                     f"{name_nodes}: {nodes} used")
    devices = nodes * per_node if nodes and per_node else None
    return platform, nodes, devices, flags


def _direction(benchmark: str | None, values: np.ndarray, target: float | None) -> tuple[str, str | None]:
    """The direction of ``eval_accuracy`` and, where the package did not say it, how it was chosen."""
    rule = benchmark_rule(benchmark)
    if rule is not None:
        return rule[0], None
    if isinstance(benchmark, str) and benchmark.lower() in _FALLBACK_DIRECTIONS:
        return _FALLBACK_DIRECTIONS[benchmark.lower()], None
    if target is not None and values.size and float(values[0]) > target:
        return "<=", (f"benchmark {benchmark!r} unknown to mlperf-logging: eval_accuracy read as a metric that "
                      "falls (its first evaluation is above the target)")
    return ">=", (f"benchmark {benchmark!r} unknown to mlperf-logging: eval_accuracy read as an accuracy "
                  "(a metric that climbs)") if benchmark else None


def _last_before(step_x: np.ndarray, step_v: np.ndarray, at: np.ndarray) -> np.ndarray:
    """For each ``at``, the last finite ``step_v`` whose ``step_x`` is at or before it (NaN if none)."""
    ok = np.isfinite(step_x) & np.isfinite(step_v)
    x, v = step_x[ok], step_v[ok]
    out = np.full(at.shape, np.nan)
    if x.size == 0:
        return out
    order = np.argsort(x, kind="stable")
    x, v = x[order], v[order]
    idx = np.searchsorted(x, at, side="right") - 1
    has = idx >= 0
    out[has] = v[idx[has]]
    return out


def read_mllog(data: bytes, source: str, *, split: str | None = None,
               steps_per_epoch: int | None = None, system: Mapping | None = None) -> RunLog:
    """Read one MLLOG log (the bytes of an MLPerf ``result_<n>.txt``) into a ``RunLog``.

    Parameters
    ----------
    data : bytes
        The file's content; only lines holding ``:::MLLOG`` are read.
    source : str
        The file name, first in every message.
    split : {"train", "val"}, optional
        Defaults to "val": ``eval_accuracy`` is measured on held-out data.
    steps_per_epoch : int, optional
        Overrides ``ceil(train_samples / global_batch)``.
    system : mapping, optional
        The submitter's system description (``accelerator_model_name``, ``number_of_nodes``,
        ``accelerators_per_node``).

    Returns
    -------
    RunLog
        ``fmt="mllog"``, ``granularity="epoch"`` (one row per evaluation); the evaluation in
        ``acc`` or, for a benchmark whose metric falls, in ``loss``.

    Raises
    ------
    LogFormatError
        A truncated or non-JSON event line (the line is named), an event value that is not a
        number, or a log without any ``eval_accuracy`` event.

    Examples
    --------
    >>> log = read_mllog(b'''noise from the shell
    ... :::MLLOG {"key": "global_batch_size", "value": 1000, "time_ms": 0}
    ... :::MLLOG {"key": "train_samples", "value": 50000, "time_ms": 0}
    ... :::MLLOG {"key": "run_start", "value": null, "time_ms": 1000}
    ... :::MLLOG {"key": "eval_accuracy", "value": 0.5, "time_ms": 11000, "metadata": {"epoch_num": 2}}
    ... :::MLLOG {"key": "eval_accuracy", "value": 0.8, "time_ms": 21000, "metadata": {"epoch_num": 4}}
    ... :::MLLOG {"key": "run_stop", "value": null, "time_ms": 22000, "metadata": {"status": "success"}}
    ... ''', "run.txt")
    >>> log.frame[["global_step", "epoch", "acc", "time_s"]].to_numpy().tolist()   # 2 · 50000 / 1000 = 100 steps
    [[100.0, 2, 0.5, 10.0], [200.0, 4, 0.8, 20.0]]
    >>> log.meta.global_batch, log.meta.samples_per_epoch, log.meta.status, log.steps_per_epoch, log.meta.run_time_s
    (1000, 50000, 'success', 50, 21.0)

    A language-model benchmark's ``eval_accuracy`` is a log-perplexity that falls: the ``loss`` column.

    >>> log = read_mllog(b'''
    ... :::MLLOG {"key": "submission_benchmark", "value": "llama31_8b", "time_ms": 0}
    ... :::MLLOG {"key": "global_batch_size", "value": 16, "time_ms": 0}
    ... :::MLLOG {"key": "max_sequence_length", "value": 8192, "time_ms": 0}
    ... :::MLLOG {"key": "train_samples", "value": 1574207408, "time_ms": 0}
    ... :::MLLOG {"key": "target_accuracy", "value": 3.3, "time_ms": 0}
    ... :::MLLOG {"key": "run_start", "value": null, "time_ms": 0}
    ... :::MLLOG {"key": "eval_accuracy", "value": 5.6, "time_ms": 9000, "metadata": {"samples_count": 12288}}
    ... :::MLLOG {"key": "eval_accuracy", "value": 3.29, "time_ms": 18000, "metadata": {"samples_count": 24576}}
    ... ''', "llama.txt")
    >>> log.frame[["loss", "samples", "tokens"]].to_numpy().tolist(), log.has_acc
    ([[5.6, 12288.0, 100663296.0], [3.29, 24576.0, 201326592.0]], False)
    >>> log.target.spec, log.metrics["eval_accuracy"], log.metric_series("eval_accuracy").tolist()
    ('eval_accuracy<=3.3', 'loss', [5.6, 3.29])
    >>> read_mllog(b':::MLLOG {"key": "eval_accuracy", "value": 0.5, "time_', "cut.txt")
    Traceback (most recent call last):
    ...
    core.errors.LogFormatError: cut.txt: line 1: expected one JSON object after ':::MLLOG'; got '{"key": ...
    """
    data = bytes(data)
    ev = collect_events(data, source)
    if not ev.evals:
        raise LogFormatError(source, "expected eval_accuracy events (the evaluation curve); got none "
                             f"among {len(ev.keys)} kinds of MLLOG event. Is the run's evaluation logged?")
    model = ev.info.get("submission_benchmark")
    model = str(model) if model not in (None, "") else None
    ordered = [v[0] for _, v in sorted(ev.evals.items(), key=lambda kv: kv[0][1])]   # by epochs or samples
    rule = benchmark_rule(model)
    declared = ev.target if ev.target is not None else (rule[1] if rule else None)
    direction, how = _direction(model, np.asarray(ordered, dtype=float), declared)
    frame, flags, scale = events_frame(ev, source, direction)
    if how:
        flags.append(how)
    platform, nodes, devices, platform_flags = _platform(ev.info, system)
    flags.extend(platform_flags)
    if ev.status == "aborted":
        flags.append(ABORTED_FLAG)
    elif not ev.stopped:
        flags.append(NO_STOP_FLAG)
    if direction == ">=":
        flags.append(ACC_ONLY_FLAG)
    steps = steps_table(ev)
    metrics = {EVAL_METRIC: "acc" if direction == ">=" else "loss"}
    if steps is not None and "samples" in frame:
        at = frame["samples"].to_numpy(dtype=float)
        for column in ("train_loss", "lr"):
            values = _last_before(steps["samples"].to_numpy(dtype=float), steps[column].to_numpy(dtype=float), at)
            if np.isfinite(values).any():
                frame[column] = values
        if "train_loss" in frame:
            metrics["train_loss"] = "train_loss"
    org = ev.info.get("submission_org")
    system_name = " · ".join(str(v) for v in (org, platform) if v not in (None, "")) or None
    throughput = float(np.median(ev.throughput)) if ev.throughput else None
    step_times = steps["step_time_s"].dropna() if steps is not None else pd.Series(dtype=float)
    accelerator = system.get("accelerator_model_name") if isinstance(system, Mapping) else None
    accelerator = str(accelerator).strip() if isinstance(accelerator, str) and accelerator.strip() else None
    run_time = ((ev.run_stop_ms - ev.run_start_ms) / 1000.0
                if ev.run_stop_ms is not None and ev.run_start_ms is not None else None)
    warmup = ev.opt.get("opt_learning_rate_warmup_steps")
    decay = ev.opt.get("opt_learning_rate_decay_steps")
    max_steps = ev.opt.get("max_steps", ev.opt.get("opt_learning_rate_training_steps"))
    schedule = _schedule(ev.decay) or _declared_schedule(ev.opt.get("opt_learning_rate_decay_schedule"), warmup,
                                                         decay, ev.global_batch, ev.train_samples)
    meta = RunMeta(model=model, depth=depth_of(model), gpu=platform, split=split or "val",
                   global_batch=ev.global_batch, samples_per_epoch=ev.train_samples, status=ev.status,
                   system=system_name, n_nodes=nodes, n_devices=devices, throughput=throughput,
                   schedule=schedule, seq_len=ev.seq_len, run_time_s=run_time, accelerator=accelerator,
                   max_steps=int(max_steps) if max_steps is not None and math.isfinite(max_steps) else None,
                   warmup_steps=warmup, decay_steps=decay,
                   step_time_s=float(step_times.median()) if len(step_times) else None,
                   lr_schedule=declared_lr_schedule(ev.opt))
    if declared is not None and scale != 1 and declared > 1:
        declared = declared / scale          # a target in percent, as the evaluations were
    # a climbing eval_accuracy is the log's accuracy role (roles below): its declared target is the accuracy
    # target acc>=V, the same one --target-acc V gives, so that every verb answers it by one route
    metric = ACCURACY_METRIC if direction == ">=" else EVAL_METRIC
    target = Target(metric, direction, declared, "log") if declared is not None else None
    spe = steps_per_epoch
    if spe is None and ev.global_batch and ev.train_samples:
        spe = -(-ev.train_samples // ev.global_batch)
    roles = (ColumnRoles(epoch="epoch_num", step="samples / global_batch_size", acc=EVAL_METRIC, time="time_ms")
             if direction == ">=" else
             ColumnRoles(epoch="epoch_num", step="samples / global_batch_size", loss=EVAL_METRIC, time="time_ms"))
    return RunLog(source=source, frame=frame, fmt="mllog", roles=roles, meta=meta, steps_per_epoch=spe,
                  granularity="epoch", flags=tuple(flags), columns=tuple(sorted(ev.keys)), metrics=metrics,
                  target=target, steps=steps)
