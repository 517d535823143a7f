"""MLLOG events: the bounded reader of the JSON events after each :::MLLOG marker, what they say
collected in one record, and the evaluation frame and per-step table built from it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core.errors import LogFormatError
from core.targets import accuracy_in_percent

#: the marker before every MLLOG event (the one place it is written)
MARKER = b":::MLLOG"
#: the metric name MLLOG logs every evaluation under, whatever it measures
EVAL_METRIC = "eval_accuracy"
#: names under which submitters log the throughput (samples per second) in ``tracked_stats``
THROUGHPUT_KEYS_ORDER: tuple[str, ...] = ("throughput", "imgs_sec", "samples_per_second")
THROUGHPUT_KEYS = frozenset(THROUGHPUT_KEYS_ORDER)
#: names of the per-step training loss and step time in ``tracked_stats``
_TRAIN_LOSS_KEYS = ("reduced_train_loss", "train_loss", "loss")
_STEP_TIME_KEYS = ("train_step_time", "step_time")
#: optimiser events (``lars_opt_...``, ``sgd_opt_...``) that declare a polynomial learning-rate decay
DECAY_KEYS = ("_opt_learning_rate_decay_steps", "_opt_learning_rate_decay_poly_power")


@dataclass
class MllogEvents:
    """What the event lines said, collected in one pass (private, mutable while reading)."""

    first_ms: float | None = None
    run_start_ms: float | None = None
    run_stop_ms: float | None = None
    global_batch: int | None = None
    train_samples: int | None = None
    seq_len: int | None = None
    target: float | None = None
    status: str | None = None
    stopped: bool = False
    throughput: list[float] = field(default_factory=list)
    evals: dict[tuple[str, float], tuple[float, float, int]] = field(default_factory=dict)
    info: dict[str, object] = field(default_factory=dict)
    keys: set[str] = field(default_factory=set)
    #: the optimiser's learning-rate decay: ``decay_steps`` (epochs) and ``poly_power``, first seen
    decay: dict[str, float] = field(default_factory=dict)
    #: the declared schedule of the LLM benchmarks: warm-up and decay steps, kind, total steps
    opt: dict[str, object] = field(default_factory=dict)
    #: per-step rows ``(samples, step, train_loss, step_time_s, throughput, lr)``
    steps: list[tuple[float, float, float, float, float, float]] = field(default_factory=list)


def is_mllog(data: bytes) -> bool:
    """Whether ``data`` holds MLLOG event lines (the marker anywhere in the file).

    >>> is_mllog(b'x\\n:::MLLOG {"key": "run_start", "time_ms": 1}\\n'), is_mllog(b"epoch,loss\\n1,2\\n")
    (True, False)
    """
    return b":" in data and MARKER in data    # one byte first: found by memchr, 20x faster than the marker's search


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


def _maybe(value) -> float:
    """A finite number, or NaN (per-step figures are kept where readable, never refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return math.nan
    return float(value)


def _first(value: dict, names: tuple[str, ...]) -> float:
    return next((_maybe(value[k]) for k in names if k in value), math.nan)


def collect_events(data: bytes, source: str) -> MllogEvents:
    ev = MllogEvents()
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
        elif key == "max_sequence_length":
            ev.seq_len = int(_number(value, lineno, source, "max_sequence_length"))
        elif key == "target_accuracy":
            ev.target = _number(value, lineno, source, "target_accuracy")
        elif key == "run_stop":
            ev.stopped, ev.status = True, str(meta.get("status")) if meta.get("status") is not None else None
            ev.run_stop_ms = t if math.isfinite(t) else None
        elif key == "tracked_stats" and isinstance(value, dict):
            if THROUGHPUT_KEYS & value.keys():
                name = next(k for k in THROUGHPUT_KEYS_ORDER if k in value)
                ev.throughput.append(_number(value[name], lineno, source, f"tracked_stats {name}"))
            loss, step_time = _first(value, _TRAIN_LOSS_KEYS), _first(value, _STEP_TIME_KEYS)
            put = _first(value, THROUGHPUT_KEYS_ORDER)
            if any(math.isfinite(x) for x in (loss, step_time, put)):
                ev.steps.append((_maybe(meta.get("samples_count")), _maybe(meta.get("step")), loss, step_time,
                                 put, _maybe(meta.get("lr"))))
        elif key == "train_loss":
            ev.steps.append((_maybe(meta.get("samples_count")), _maybe(meta.get("step")), _maybe(value),
                             math.nan, math.nan, _maybe(meta.get("lr"))))
        elif key == EVAL_METRIC:
            _add_eval(ev, value, meta, t, lineno, source)
        elif key.startswith("submission_") or key in ("number_of_nodes", "accelerators_per_node"):
            ev.info[key] = value
        elif key in ("opt_learning_rate_warmup_steps", "opt_learning_rate_decay_steps", "max_steps",
                     "opt_learning_rate_training_steps", "opt_base_learning_rate", "opt_end_learning_rate") \
                and _maybe(value) == _maybe(value):
            ev.opt.setdefault(key, _maybe(value))
        elif key == "opt_learning_rate_decay_schedule" and isinstance(value, str):
            ev.opt.setdefault(key, value)
        elif key.endswith(DECAY_KEYS) and not isinstance(value, bool) and isinstance(value, (int, float)):
            ev.decay.setdefault(next(k for k in DECAY_KEYS if key.endswith(k)), float(value))
    return ev


def _add_eval(ev: MllogEvents, value, meta: dict, t: float, lineno: int, source: str) -> None:
    acc = _number(value, lineno, source, EVAL_METRIC)
    if "samples_count" in meta:
        point = ("samples", _number(meta["samples_count"], lineno, source, "samples_count"))
    elif "epoch_num" in meta:
        point = ("epochs", _number(meta["epoch_num"], lineno, source, "epoch_num"))
    else:
        raise LogFormatError(source, f"line {lineno}: expected eval_accuracy metadata epoch_num or samples_count; "
                             "got neither. Log the epoch (or samples) each evaluation was taken at.")
    ev.evals[point] = (acc, t, lineno)


def events_frame(ev: MllogEvents, source: str, direction: str) -> tuple[pd.DataFrame, list[str], float]:
    """Evaluations as rows ``global_step, epoch, loss, acc, time_s, lr, samples[, tokens]``, by samples seen.

    Returns the frame, the flags and the factor the evaluation values were divided by (100 for an
    accuracy given in percent, else 1).
    """
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
    value = table["acc"].to_numpy(dtype=float)
    scale = 1.0
    if direction == ">=":
        if value.min() < 0 or value.max() > 100:
            raise LogFormatError(source, f"expected eval_accuracy in [0, 1] (or percent); got values from "
                                 f"{value.min():g} to {value.max():g}. Is it an accuracy?")
        if accuracy_in_percent(value, direction=direction):
            flags.append("accuracy given in percent; divided by 100")
            scale = 100.0
        acc, loss = value / scale, np.full(value.shape, np.nan)
    else:   # a loss or a log-perplexity: never rescaled
        if value.min() < 0:
            raise LogFormatError(source, f"expected eval_accuracy (a loss here, which falls) >= 0; got "
                                 f"{value.min():g}. Is it a log-likelihood?")
        acc, loss = np.full(value.shape, np.nan), value
    t0 = ev.run_start_ms if ev.run_start_ms is not None else ev.first_ms
    if ev.run_start_ms is None:
        flags.append("no run_start event: times count from the first event")
    time_s = (table["time_ms"].to_numpy(dtype=float) - t0) / 1000.0 if t0 is not None else np.nan
    epochs = np.ceil(table["epochs"].to_numpy(dtype=float) - 1e-9)
    samples = table["samples"].to_numpy(dtype=float)
    frame = pd.DataFrame({"global_step": table["global_step"].to_numpy(dtype=float),
                          "epoch": pd.array(np.where(np.isfinite(epochs), epochs, np.nan),
                                            dtype="Float64").astype("Int64"),
                          "loss": loss, "acc": acc, "time_s": time_s, "lr": np.nan})
    if np.isfinite(samples).all():
        frame["samples"] = samples
        if ev.seq_len:
            frame["tokens"] = samples * ev.seq_len
    return frame, flags, scale


def steps_table(ev: MllogEvents) -> pd.DataFrame | None:
    if not ev.steps:
        return None
    steps = pd.DataFrame(ev.steps, columns=["samples", "step", "train_loss", "step_time_s", "throughput", "lr"])
    return steps.dropna(axis=0, how="all", subset=["train_loss", "step_time_s", "throughput", "lr"]).reset_index(
        drop=True)
