"""Read MLCommons MLLOG logs (MLPerf Training result files) into a ``RunLog``.

An MLLOG log holds one JSON event per line after the marker ``:::MLLOG`` (the
``mlperf_logging`` package writes them); anything else on other lines (shell echo, driver
messages) is ignored, and a marker in the middle of a line (two processes writing to one
console) starts the event there, as MLCommons' own compliance checker reads them.  The
events used:

==========================  ===================================================================
event (``key``)             becomes
==========================  ===================================================================
``eval_accuracy``           the accuracy curve: one row per evaluation, at
                            ``metadata.epoch_num`` epochs (or ``metadata.samples_count``
                            samples) done; a later event for the same point replaces it
``time_ms`` (every event)   ``time_s``: seconds since ``run_start`` (wall clock)
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

Every refusal is a :class:`core.errors.LogFormatError` naming the file, and the line for
a truncated or non-JSON event.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core.errors import LogFormatError
from core.logs.naming import RunMeta, depth_of
from core.logs.reader import ColumnRoles, RunLog

MARKER = b":::MLLOG"
#: names under which submitters log the throughput (samples per second) in ``tracked_stats``
THROUGHPUT_KEYS_ORDER: tuple[str, ...] = ("throughput", "imgs_sec", "samples_per_second")
THROUGHPUT_KEYS = frozenset(THROUGHPUT_KEYS_ORDER)
#: the flags an MLLOG run can carry (pages and the batch-scaling fit test for the first)
ABORTED_FLAG = "aborted run: run_stop status 'aborted' (the run did not finish as a success; not fitted as one)"
NO_STOP_FLAG = "no run_stop event: the log may be cut short"
ACC_ONLY_FLAG = "accuracy-only trace: no loss curve to fit"
#: ``<nodes>x<system>x<devices per node><device>``, e.g. ``4xR750xax4A100-PCIE-80GB``
_NODES = re.compile(r"^(\d+)x")
_PER_NODE = re.compile(r"x(\d+)(?=[A-Za-z])")


#: optimiser events (``lars_opt_...``, ``sgd_opt_...``) that declare a polynomial learning-rate decay
_DECAY_KEYS = ("_opt_learning_rate_decay_steps", "_opt_learning_rate_decay_poly_power")


def _schedule(decay: dict[str, float]) -> str | None:
    """``poly:END:POWER`` from the optimiser's decay events (END: the decay steps as logged, in epochs;
    the warm-up before it is not modelled), None without them."""
    end = decay.get(_DECAY_KEYS[0])
    if end is None or not math.isfinite(end) or end <= 0:
        return None
    power = decay.get(_DECAY_KEYS[1], 1.0)
    return f"poly:{end:g}:{power:g}" if math.isfinite(power) and power > 0 else f"poly:{end:g}"


@dataclass
class _Events:
    """What the event lines said, collected in one pass (private, mutable while reading)."""

    first_ms: float | None = None
    run_start_ms: float | None = None
    global_batch: int | None = None
    train_samples: int | None = None
    status: str | None = None
    stopped: bool = False
    throughput: list[float] = field(default_factory=list)
    evals: dict[tuple[str, float], tuple[float, float, int]] = field(default_factory=dict)
    info: dict[str, object] = field(default_factory=dict)
    keys: set[str] = field(default_factory=set)
    #: the optimiser's learning-rate decay: ``decay_steps`` (epochs) and ``poly_power``, first seen
    decay: dict[str, float] = field(default_factory=dict)


def is_mllog(data: bytes) -> bool:
    """Whether ``data`` holds MLLOG event lines (the marker anywhere in the file).

    >>> is_mllog(b'x\\n:::MLLOG {"key": "run_start", "time_ms": 1}\\n'), is_mllog(b"epoch,loss\\n1,2\\n")
    (True, False)
    """
    return MARKER in data


def _event(raw: bytes, lineno: int, source: str) -> dict:
    """The JSON object after the marker, or a LogFormatError naming the line."""
    text = raw[raw.index(MARKER) + len(MARKER):].strip()
    try:
        event = json.loads(text.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise LogFormatError(source, f"line {lineno}: expected UTF-8 text after ':::MLLOG'; got the byte "
                             f"0x{text[exc.start]:02x}. The line is damaged; remove it or re-export the log.") from None
    except json.JSONDecodeError as exc:
        shown = text[:60].decode("utf-8", "replace") + ("…" if len(text) > 60 else "")
        raise LogFormatError(source, f"line {lineno}: expected one JSON object after ':::MLLOG'; got "
                             f"{shown!r} ({exc.msg} at column {exc.pos + 1}). The line is truncated or not "
                             "JSON; remove it or take the log again from the run.") from None
    if not isinstance(event, dict) or not isinstance(event.get("key"), str):
        raise LogFormatError(source, f"line {lineno}: expected a JSON object with a 'key' after ':::MLLOG'; got "
                             f"{type(event).__name__}. Is this an MLLOG event?")
    return event


def _number(value, lineno: int, source: str, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise LogFormatError(source, f"line {lineno}: expected {what} as a finite number; got {value!r}. "
                             "Fix or remove that event.")
    return float(value)


def _collect(data: bytes, source: str) -> _Events:
    ev = _Events()
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        if MARKER not in raw:
            continue
        e = _event(raw, lineno, source)
        key, value = e["key"], e.get("value")
        meta = e.get("metadata") if isinstance(e.get("metadata"), dict) else {}
        ev.keys.add(key)
        t = e.get("time_ms")
        t = float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t) else math.nan
        if ev.first_ms is None and math.isfinite(t):
            ev.first_ms = t
        if key == "run_start" and ev.run_start_ms is None and math.isfinite(t):
            ev.run_start_ms = t
        elif key == "global_batch_size":
            ev.global_batch = int(_number(value, lineno, source, "global_batch_size"))
        elif key == "train_samples":
            ev.train_samples = int(_number(value, lineno, source, "train_samples"))
        elif key == "run_stop":
            ev.stopped, ev.status = True, str(meta.get("status")) if meta.get("status") is not None else None
        elif key == "tracked_stats" and isinstance(value, dict) and THROUGHPUT_KEYS & value.keys():
            name = next(k for k in THROUGHPUT_KEYS_ORDER if k in value)
            ev.throughput.append(_number(value[name], lineno, source, f"tracked_stats {name}"))
        elif key == "eval_accuracy":
            _add_eval(ev, value, meta, t, lineno, source)
        elif key.startswith("submission_") or key in ("number_of_nodes", "accelerators_per_node"):
            ev.info[key] = value
        elif key.endswith(_DECAY_KEYS) and not isinstance(value, bool) and isinstance(value, (int, float)):
            ev.decay.setdefault(next(k for k in _DECAY_KEYS if key.endswith(k)), float(value))
    return ev


def _add_eval(ev: _Events, value, meta: dict, t: float, lineno: int, source: str) -> None:
    acc = _number(value, lineno, source, "eval_accuracy")
    if "samples_count" in meta:
        point = ("samples", _number(meta["samples_count"], lineno, source, "samples_count"))
    elif "epoch_num" in meta:
        point = ("epochs", _number(meta["epoch_num"], lineno, source, "epoch_num"))
    else:
        raise LogFormatError(source, f"line {lineno}: expected eval_accuracy metadata epoch_num or samples_count; "
                             "got neither. Log the epoch (or samples) each evaluation was taken at.")
    ev.evals[point] = (acc, t, lineno)


def _platform(info: dict) -> tuple[str | None, int | None, int | None]:
    """(platform, nodes, devices) from the submission description (None where it does not say)."""
    platform = info.get("submission_platform")
    platform = str(platform).strip() if platform not in (None, "") else None
    nodes = info.get("number_of_nodes")
    per_node = info.get("accelerators_per_node")
    if platform:
        m = _NODES.match(platform)
        if nodes is None and m:
            nodes = int(m.group(1))
        k = _PER_NODE.search(platform[m.end() if m else 0:])
        if per_node is None and k:
            per_node = int(k.group(1))
    nodes = int(nodes) if isinstance(nodes, (int, float)) and nodes >= 1 else None
    per_node = int(per_node) if isinstance(per_node, (int, float)) and per_node >= 1 else None
    devices = nodes * per_node if nodes and per_node else None
    return platform, nodes, devices


def _frame(ev: _Events, source: str) -> tuple[pd.DataFrame, list[str]]:
    """Evaluations as rows ``global_step, epoch, loss, acc, time_s``, ordered by samples seen."""
    flags: list[str] = []
    n, batch = ev.train_samples, ev.global_batch
    rows = []
    for (kind, x), (acc, t, _lineno) in ev.evals.items():
        samples = x if kind == "samples" else (x * n if n else math.nan)
        epochs = x if kind == "epochs" else (x / n if n else math.nan)
        rows.append((samples, epochs, acc, t))
    table = pd.DataFrame(rows, columns=["samples", "epochs", "acc", "time_ms"])
    if batch and table["samples"].notna().all():
        step = table["samples"] / batch
    else:
        flags.append("global batch or samples per epoch unknown: k counts epochs")
        step = table["epochs"]
    if step.isna().any():
        raise LogFormatError(source, "expected train_samples to place evaluations logged by samples_count on an "
                             "epoch axis; got none. Log train_samples (samples per epoch).")
    table = table.assign(global_step=step).sort_values("global_step", kind="stable").reset_index(drop=True)
    acc = table["acc"].to_numpy(dtype=float)
    if acc.min() < 0 or acc.max() > 100:
        raise LogFormatError(source, f"expected eval_accuracy in [0, 1] (or percent); got values from "
                             f"{acc.min():g} to {acc.max():g}. Is it an accuracy?")
    if acc.max() > 1:
        flags.append("accuracy given in percent; divided by 100")
        acc = acc / 100.0
    t0 = ev.run_start_ms if ev.run_start_ms is not None else ev.first_ms
    if ev.run_start_ms is None:
        flags.append("no run_start event: times count from the first event")
    time_s = (table["time_ms"].to_numpy(dtype=float) - t0) / 1000.0 if t0 is not None else np.nan
    epochs = np.ceil(table["epochs"].to_numpy(dtype=float) - 1e-9)
    frame = pd.DataFrame({"global_step": table["global_step"].to_numpy(dtype=float),
                          "epoch": pd.array(np.where(np.isfinite(epochs), epochs, np.nan),
                                            dtype="Float64").astype("Int64"),
                          "loss": np.nan, "acc": acc, "time_s": time_s, "lr": np.nan})
    return frame, flags


def read_mllog(data: bytes, source: str, *, split: str | None = None,
               steps_per_epoch: int | None = None) -> RunLog:
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

    Returns
    -------
    RunLog
        ``fmt="mllog"``, ``granularity="epoch"`` (one row per evaluation), no loss.

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
    >>> log.meta.global_batch, log.meta.samples_per_epoch, log.meta.status, log.steps_per_epoch
    (1000, 50000, 'success', 50)
    >>> read_mllog(b':::MLLOG {"key": "eval_accuracy", "value": 0.5, "time_', "cut.txt")
    Traceback (most recent call last):
    ...
    core.errors.LogFormatError: cut.txt: line 1: expected one JSON object after ':::MLLOG'; got '{"key": ...
    """
    data = bytes(data)
    ev = _collect(data, source)
    if not ev.evals:
        raise LogFormatError(source, "expected eval_accuracy events (the accuracy curve); got none "
                             f"among {len(ev.keys)} kinds of MLLOG event. Is the run's evaluation logged?")
    frame, flags = _frame(ev, source)
    platform, nodes, devices = _platform(ev.info)
    if ev.status == "aborted":
        flags.append(ABORTED_FLAG)
    elif not ev.stopped:
        flags.append(NO_STOP_FLAG)
    flags.append(ACC_ONLY_FLAG)
    org = ev.info.get("submission_org")
    system = " · ".join(str(v) for v in (org, platform) if v not in (None, "")) or None
    model = ev.info.get("submission_benchmark")
    model = str(model) if model not in (None, "") else None
    throughput = float(np.median(ev.throughput)) if ev.throughput else None
    meta = RunMeta(model=model, depth=depth_of(model), gpu=platform, split=split or "val",
                   global_batch=ev.global_batch, samples_per_epoch=ev.train_samples, status=ev.status,
                   system=system, n_nodes=nodes, n_devices=devices, throughput=throughput,
                   schedule=_schedule(ev.decay))
    spe = steps_per_epoch
    if spe is None and ev.global_batch and ev.train_samples:
        spe = -(-ev.train_samples // ev.global_batch)
    roles = ColumnRoles(epoch="epoch_num", step="samples / global_batch_size", acc="eval_accuracy", time="time_ms")
    return RunLog(source=source, frame=frame, fmt="mllog", roles=roles, meta=meta, steps_per_epoch=spe,
                  granularity="epoch", flags=tuple(flags), columns=tuple(sorted(ev.keys)))
