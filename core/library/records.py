"""A ``RunLog`` as rows of the library's tables, and back: nothing lost, nothing executed.

A run's row holds its metadata (``RunMeta`` field by field, so that runs can be filtered by
model, device or batch), how it was read (format, granularity, steps per epoch, column
roles, columns, flags: JSON text, never pickled objects) and a summary a table of runs shows
without loading the series (points, epochs, best accuracy, final loss).  The series holds the
tidy frame row by row.  :func:`log_from_rows` rebuilds the same ``RunLog``: same frame,
dtypes, metadata and flags, hence the same :meth:`RunLog.fingerprint`.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import fields

import numpy as np
import pandas as pd

from core.logs import FRAME_COLUMNS, ColumnRoles, RunLog, RunMeta
from core.runs import best_accuracy
from core.targets import Target

#: the series columns: those of every ``RunLog.frame``, then ``extra`` (the optional columns, a JSON list per row)
SERIES_COLUMNS = (*FRAME_COLUMNS, "extra")
#: the ``RunMeta`` fields stored as columns of ``runs`` (all of them)
META_FIELDS = tuple(f.name for f in fields(RunMeta))
#: the columns a table of runs shows, in order (``Library.runs``, ``python -m core library list``)
RUN_COLUMNS = ("run_id", "source", "model", "depth", "n_params", "gpu", "global_batch", "dataset", "split", "tags",
               "n_points", "n_epochs", "best_acc", "final_loss", "fmt", "granularity", "steps_per_epoch",
               "samples_per_epoch", "status", "system", "n_nodes", "n_devices", "throughput", "schedule",
               "seq_len", "run_time_s", "accelerator", "max_steps", "warmup_steps", "decay_steps", "step_time_s",
               "lr_schedule", "metrics", "target", "content_hash", "added_at")


def content_hash(data: bytes) -> str:
    """The SHA-256 of a file's bytes: the identity of a run's content in the library.

    >>> content_hash(b"")[:16]            # SHA-256 of no bytes, as sha256sum prints it
    'e3b0c44298fc1c14'
    """
    return hashlib.sha256(bytes(data)).hexdigest()


def data_hash(log: RunLog) -> str:
    """The SHA-256 of a run as the library stores it: its series (with the optional columns ``series.extra``
    holds), how it was read, its metadata, metric names, own target and per-step figures (not its name).
    An import is matched by this hash, computed from the rows it is about to store, never by the hash an export
    claims; a file's run gets it too, so that a file and an export of it are the same run.

    >>> from core.logs import read_log
    >>> a = read_log(b"step,loss\\n1,2.0\\n2,1.0\\n", "resnet20_V100.csv")
    >>> data_hash(a) == data_hash(read_log(b"step, loss\\n1,2.00\\n2,1\\n", "resnet20_V100.csv"))
    True
    >>> data_hash(a) == data_hash(read_log(b"step,loss\\n1,2.0\\n2,1.5\\n", "resnet20_V100.csv"))
    False
    """
    h = hashlib.sha256()
    frame = log.frame
    # every frame column, the optional ones (samples, tokens, extra metrics: series.extra) by name too
    for column in (*FRAME_COLUMNS, *_extra_columns(log)):
        h.update(json.dumps(column).encode())
        h.update(frame[column].to_numpy(dtype=float, na_value=np.nan).tobytes())
    target = log.target
    h.update(json.dumps([log.fmt, log.roles.to_dict(), [_plain(getattr(log.meta, n)) for n in META_FIELDS],
                         _plain(log.steps_per_epoch), log.granularity, list(log.flags), list(log.columns),
                         dict(log.metrics),
                         [target.metric, target.direction, target.value, target.origin] if target else None,
                         _table_json(log.steps) if log.steps is not None else None],
                        default=str).encode())
    return h.hexdigest()


def _plain(value):
    """A Python scalar (int, float, str) or None: numpy types and NaN never reach the database."""
    if value is None or value is pd.NA:
        return None
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if math.isnan(value) else float(value)
    return value


def _n_epochs(log: RunLog) -> int | None:
    epochs = log.frame["epoch"].dropna()
    return int(epochs.nunique()) if len(epochs) else None


def _final_loss(log: RunLog) -> float | None:
    loss = log.frame["loss"].dropna()
    return float(loss.iloc[-1]) if len(loss) else None


def run_row(log: RunLog, *, digest: str, dataset: str | None, n_params: int | None) -> dict:
    """The ``runs`` row of ``log`` (without ``run_id`` and ``added_at``, which the library sets)."""
    row = {"content_hash": digest, "data_hash": data_hash(log), "source": log.source, "dataset": dataset,
           "n_params": n_params,
           "fmt": log.fmt, "granularity": log.granularity, "steps_per_epoch": _plain(log.steps_per_epoch),
           "roles": json.dumps(log.roles.to_dict()), "columns": json.dumps(list(log.columns)),
           "flags": json.dumps(list(log.flags)), "n_points": log.n_points, "n_epochs": _n_epochs(log),
           "best_acc": best_accuracy(log), "final_loss": _final_loss(log),
           "metrics": json.dumps(dict(log.metrics)), "extra_columns": json.dumps(list(_extra_columns(log))),
           "target": json.dumps({"metric": log.target.metric, "direction": log.target.direction,
                                 "value": log.target.value, "origin": log.target.origin}) if log.target else None,
           "steps": _table_json(log.steps) if log.steps is not None else None}
    row.update({name: _plain(getattr(log.meta, name)) for name in META_FIELDS})
    return row


def _extra_columns(log: RunLog) -> tuple[str, ...]:
    """The frame's columns beyond ``FRAME_COLUMNS`` (``samples``, ``tokens``, extra metrics), in order."""
    return tuple(c for c in log.frame.columns if c not in FRAME_COLUMNS)


def _table_json(table: pd.DataFrame) -> str:
    """A float table as JSON text ``{"columns": [...], "data": [[...], ...]}`` (exact: floats by ``repr``)."""
    return json.dumps({"columns": [str(c) for c in table.columns],
                       "data": [[_json_number(v) for v in row] for row in table.to_numpy(dtype=float)]})


def _json_number(value) -> float | None:
    value = float(value)
    return None if math.isnan(value) else value


def series_frame(log: RunLog) -> pd.DataFrame:
    """The ``series`` rows of ``log`` (without ``run_id``): ``row_index`` then ``SERIES_COLUMNS``."""
    frame = log.frame
    out: dict = {"row_index": np.arange(len(frame), dtype=np.int32)}      # one frame built once: columns added
    extra = _extra_columns(log)                                            # one by one cost 9 ms a run
    for column in SERIES_COLUMNS:
        if column == "extra":
            values = frame[list(extra)].to_numpy(dtype=float) if extra else None
            out[column] = (pd.Series([json.dumps([_json_number(v) for v in row]) for row in values], dtype=object)
                           if extra else pd.Series([None] * len(frame), dtype=object))
        elif column == "epoch":
            out[column] = pd.array(frame[column], dtype="Int64")
        else:
            out[column] = frame[column].to_numpy(dtype=float)
    return pd.DataFrame(out)


def _int_or_none(value) -> int | None:
    value = _plain(value)
    return None if value is None else int(value)


def _float_or_none(value) -> float | None:
    value = _plain(value)
    return None if value is None else float(value)


_META_TYPES = {"model": str, "depth": _int_or_none, "gpu": str, "split": str, "global_batch": _int_or_none,
               "samples_per_epoch": _int_or_none, "status": str, "system": str, "n_nodes": _int_or_none,
               "n_devices": _int_or_none, "throughput": _float_or_none, "schedule": str, "seq_len": _int_or_none,
               "run_time_s": _float_or_none, "accelerator": str, "max_steps": _int_or_none,
               "warmup_steps": _float_or_none, "decay_steps": _float_or_none, "step_time_s": _float_or_none,
               "lr_schedule": str}


def meta_from_row(row: dict) -> RunMeta:
    """The ``RunMeta`` of a ``runs`` row (types as the reader makes them: int, float, str or None)."""
    values = {}
    for name in META_FIELDS:
        value = _plain(row.get(name))
        convert = _META_TYPES[name]
        values[name] = None if value is None else convert(value)
    return RunMeta(**values)


def log_from_rows(row: dict, series: pd.DataFrame) -> RunLog:
    """The ``RunLog`` stored as ``row`` (a ``runs`` row) and ``series`` (its rows, in ``row_index`` order)."""
    series = series.sort_values("row_index", kind="stable") if len(series) else series
    frame = pd.DataFrame({c: series[c].to_numpy(dtype=float, na_value=np.nan) if c != "epoch" else
                          pd.array(series[c], dtype="Int64") for c in FRAME_COLUMNS})
    frame = frame.reset_index(drop=True)
    extra = json.loads(_plain(row.get("extra_columns")) or "[]")
    if extra:
        texts = series["extra"] if "extra" in series else [None] * len(series)
        cells = [json.loads(text) if isinstance(text, str) else [None] * len(extra) for text in texts]
        values = np.array([[np.nan if v is None else v for v in cell] for cell in cells], dtype=float).reshape(
            len(cells), len(extra))
        for i, name in enumerate(extra):
            frame[name] = values[:, i]
    return log_from_frame(row, frame)


def _steps_frame(data: list, columns: list) -> pd.DataFrame:
    """The ``steps`` table stored as JSON rows (null: NaN), as floats: numpy reads the rows in one call (None is
    NaN there); rows of unequal length are left to pandas, which refuses them as before.

    >>> _steps_frame([[1, None], [2, 0.5]], ["step", "lr"]).to_numpy().tolist()
    [[1.0, nan], [2.0, 0.5]]
    """
    try:
        values = np.array(data, dtype=float).reshape(len(data), len(columns))
    except (ValueError, TypeError):
        return pd.DataFrame([[np.nan if v is None else v for v in row] for row in data], columns=columns, dtype=float)
    return pd.DataFrame(values, columns=columns)


def log_from_frame(row: dict, frame: pd.DataFrame) -> RunLog:
    """The ``RunLog`` stored as ``row`` (a ``runs`` row) whose frame is already made (a refit's bulk load)."""
    target = _plain(row.get("target"))
    target = Target(**json.loads(target)) if target else None
    steps = _plain(row.get("steps"))
    if steps:
        table = json.loads(steps)
        steps = _steps_frame(table["data"], table["columns"])
    else:
        steps = None
    return RunLog(source=str(row["source"]), frame=frame, fmt=str(row["fmt"]),
                  roles=ColumnRoles(**json.loads(row["roles"])), meta=meta_from_row(row),
                  steps_per_epoch=_int_or_none(row.get("steps_per_epoch")), granularity=str(row["granularity"]),
                  flags=tuple(json.loads(row["flags"])), columns=tuple(json.loads(row["columns"])),
                  metrics=json.loads(_plain(row.get("metrics")) or "{}"), target=target, steps=steps)


def library_name(run_id: int, source: str) -> str:
    """How a library run is named beside uploads and built-in files: its source and its id.

    Two runs in the library may share a file name (a run repeated); the id tells them apart,
    and the folder and file name stay first, so a train log and its ``_val`` twin still pair up.

    >>> library_name(12, "resnet20_V100.csv")
    'resnet20_V100.csv (library #12)'
    """
    return f"{source} (library #{int(run_id)})"
