"""Read training-log CSVs of several formats into one tidy shape, ``RunLog``.

Accepted formats (detected from the header, roles overridable):

* the course's per-step logs ``epoch, step, loss, acc`` (spaces after commas; ``step``
  restarts every epoch; ``acc`` is the running training accuracy within the epoch);
* PyTorch Lightning ``CSVLogger`` ``metrics.csv`` (sparse rows, global ``step``, 0-based
  ``epoch``, ``train_loss``/``train_loss_step``/``val_loss`` ... columns);
* TensorBoard scalar exports ``Wall time, Step, Value`` and Weights & Biases exports
  ``Step, <run> - <metric>`` (one metric per file, min/max columns ignored);
* per-epoch metric traces such as Pollux's ``progress, iteration, metric, ...`` (format
  ``metric-trace``: AdaptDL's statistical epochs; ``epoch-trace`` when ``progress`` equals
  ``iteration`` on every row, a run without AdaScale whose epochs are real passes).

The format and the role of each column are told by :mod:`core.logs.csv_roles`; global steps and
epochs by :mod:`core.logs.csv_steps`; this module reads the table, checks its values and builds the
``RunLog``. Every error is a :class:`core.errors.LogFormatError` whose message starts with the file name.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import pandas as pd

from core.errors import LogFormatError
from core.logs.csv_roles import apply_overrides, detect_format, detect_roles, looks_like_course_validation
from core.logs.csv_steps import global_steps, partial_epoch_flag, resolve_restarts
from core.logs.naming import parse_run_name
from core.logs.runlog import MAX_LOG_BYTES, ROLES, ColumnRoles, RunLog, steps_are_validation_batches
from core.tables import (
    MAX_BAD_ROW_SHARE,
    as_utf8,
    decode_head,
    head_text,
    read_csv_columns,
    separator,
)
from core.targets import accuracy_in_percent

#: a number written with a decimal comma (``2,5``, ``-0,001``, ``1,5e-3``), and a whole number
_DECIMAL_COMMA = r"[-+]?\d*,\d+(?:[eE][-+]?\d+)?"
_INTEGER = r"[-+]?\d+"
_THOUSANDS = r"[-+]?\d{1,3}(?:,\d{3})+"        # 1,000 or 12,500: a thousands separator as much as a decimal comma
#: cells that are numbers of some notation (digits, points, commas, an exponent)
_NUMERIC = r"[-+]?[\d.,]+(?:[eE][-+]?\d+)?"
#: csv.Sniffer reads the header and this many rows, when they are no longer than this
_SNIFF_LINES, _SNIFF_CHARS = 6, 65536


# --------------------------------------------------------------------------- bytes → table
def _read_table(data: bytes, text: str, source: str, flags: list[str]) -> dict[str, np.ndarray]:
    """Parse the CSV into ``{column name: values}`` (names stripped, duplicates numbered).

    pyarrow's reader only, in bounded work: a row with more fields than the header stops the
    parse at that row (the message names it and both counts), rows with fewer fields are
    skipped with a flag (a log cut off while being written ends in one).
    """
    start = head_text(text)[:1]
    if start in {"{", "["}:
        raise LogFormatError(source, "expected a CSV with a header row; got JSON. Export the "
                             "metrics as CSV (TensorBoard and W&B both offer 'Download CSV').")
    if start == "<":
        raise LogFormatError(source, "expected a CSV with a header row; got HTML or XML.")
    sep = sniff_separator(text)
    names, arrays, short = read_csv_columns(data, source, sep=sep)
    columns = [str(c).strip() for c in names]
    seen: dict[str, int] = {}
    for i, c in enumerate(columns):  # duplicated names become name.1, name.2 (as pandas does)
        if c in seen:
            seen[c] += 1
            columns[i] = f"{c}.{seen[c]}"
        else:
            seen[c] = 0
    if len(columns) < 2:
        raise LogFormatError(source, "expected a CSV with at least a step and a loss column; got "
                             f"one column {columns[0]!r}. Is it comma-separated?")
    n = len(arrays[0])
    if short:
        if len(short) > MAX_BAD_ROW_SHARE * (n + len(short)):
            raise LogFormatError(source, f"expected {len(columns)} fields per row as in the header; "
                                 f"{len(short):,} row(s) have fewer (first: line {short[0]}). Check the separator.")
        flags.append(f"skipped {len(short)} row(s) with fewer fields than the header (first: line {short[0]})")
    if n == 0:
        raise LogFormatError(source, "the file has a header but no data rows.")
    table = dict(zip(columns, arrays))
    return _decimal_commas(table, source, flags) if sep != "," else table


def sniff_separator(text: str) -> str:
    """The field separator of a CSV text (comma, semicolon or tab): ``csv.Sniffer`` over the header and the first
    rows, when the separator it finds is in the header; else the header's (``core.tables.separator``).

    >>> sniff_separator("epoch;step;loss\\n1;1;2,5\\n1;2;1,5\\n"), sniff_separator("step\\tloss\\n1\\t2.0\\n")
    (';', '\\t')
    >>> sniff_separator("step,loss\\n1,2.0\\n"), sniff_separator("loss\\n2.0\\n")
    (',', ',')
    """
    lines = head_text(text).split("\n", _SNIFF_LINES)[:_SNIFF_LINES]
    sample = "\n".join(lines)
    if len(sample) <= _SNIFF_CHARS:
        try:
            sep = csv.Sniffer().sniff(sample, delimiters=",;\t").delimiter
        except csv.Error:
            sep = None
        if sep is not None and sep in lines[0]:
            return sep
    return separator(text)


def _decimal_commas(table: dict[str, np.ndarray], source: str, flags: list[str]) -> dict[str, np.ndarray]:
    """A semicolon- or tab-separated table's columns of numbers written with a decimal comma (``2,5``), as numbers;
    a column whose numbers mix decimal commas and points (``1.234,5``), or whose every comma could separate
    thousands (``1,000``, ``12,500``), is refused, never read as other numbers."""
    converted = []
    for name, values in table.items():
        if values.dtype.kind != "O":
            continue
        cells = pd.Series(values, dtype=object).dropna().astype(str).str.strip()
        cells = cells[cells != ""]
        if not (cells.str.contains(r"\d,\d").any() and cells.str.fullmatch(_NUMERIC).all()):
            continue     # no number with a comma in it, or a column of text
        comma = cells.str.fullmatch(_DECIMAL_COMMA)
        plain = cells.str.fullmatch(_INTEGER)
        if not (comma | plain).all():
            bad = cells[~(comma | plain)].iloc[0]
            raise LogFormatError(source, f"expected the numbers in column {name!r} written with one decimal "
                                 f"separator; got {bad!r} among numbers with a decimal comma. Save the file with "
                                 "decimal points (or commas only).")
        if cells[comma].str.fullmatch(_THOUSANDS).all():
            raise LogFormatError(source, f"expected the numbers in column {name!r} written with a decimal comma or "
                                 f"point; got {cells[comma].iloc[0]!r}, which reads as a thousands separator as well "
                                 "as a decimal comma. Save the file without thousands separators.")
        series = pd.Series(values, dtype=object)
        table[name] = pd.to_numeric(series.str.strip().str.replace(",", ".", regex=False),
                                    errors="coerce").to_numpy(dtype=float)
        converted.append(name)
    if converted:
        flags.append(f"decimal commas read as decimal points in {', '.join(map(repr, converted))}")
    return table


# --------------------------------------------------------------------------- values
def _numeric(table: dict[str, np.ndarray], col: str | None, n: int) -> tuple[np.ndarray, int]:
    """The column as float64 and the number of cells holding text that is not a number."""
    if col is None:
        return np.full(n, np.nan), 0
    raw = table[col]
    if raw.dtype.kind in "iuf":
        return raw.astype(float, copy=False), 0  # already numbers: nothing is text
    series = pd.Series(raw, dtype=object)
    values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)
    bad_text = int((np.isnan(values) & series.notna().to_numpy()).sum())
    return values, bad_text


def _first_bad(values: np.ndarray, mask: np.ndarray) -> str:
    i = int(np.flatnonzero(mask)[0])
    return f"{float(values[i]):g} at data row {i + 1}"


def _validate_values(source: str, roles: ColumnRoles, cols: dict[str, np.ndarray],
                     text_counts: dict[str, int], flags: list[str], *, sparse: bool) -> np.ndarray:
    """Check the numbers; return the mask of rows to keep."""
    n = len(cols["loss"])
    for role in ("epoch", "step", "loss"):
        name = getattr(roles, role)
        if name is None:
            continue
        v = cols[role]
        if text_counts[role] == n or np.isnan(v).all():
            raise LogFormatError(source, f"expected numbers in column {name!r} ({role}); it holds "
                                 "no numeric value. Check the column roles.")
        neg = v < 0
        if neg.any():
            raise LogFormatError(source, f"expected {role} >= 0 in column {name!r}; found "
                                 f"{int(neg.sum())} negative values (first: {_first_bad(v, neg)}). "
                                 + ("A loss below 0 cannot be fitted by 1/(b0·k+b1)+b2; is this "
                                    "column a log-likelihood?" if role == "loss" else ""))
    metric = cols["loss"] if roles.loss is not None else cols["acc"]
    metric_name = roles.loss if roles.loss is not None else roles.acc
    keep = np.isfinite(metric)
    if roles.step is not None:
        keep &= np.isfinite(cols["step"])
    if roles.epoch is not None:
        keep &= np.isfinite(cols["epoch"])
    inf_count = int(np.isinf(metric).sum())
    text = text_counts["loss" if roles.loss is not None else "acc"] + text_counts["step"]
    dropped = n - int(keep.sum())
    rest = dropped - inf_count - text
    if keep.sum() == 0:
        raise LogFormatError(source, f"expected finite values in column {metric_name!r}; every row "
                             "is NaN, inf or empty.")
    bad = inf_count + text + (0 if sparse else rest)
    if bad > MAX_BAD_ROW_SHARE * n:
        raise LogFormatError(source, f"expected mostly finite numbers; {bad} of {n} rows hold NaN, "
                             f"inf, text or nothing in {metric_name!r} or the step column.")
    if dropped and not (sparse and rest == dropped):
        parts = []
        if inf_count:
            parts.append(f"{inf_count} inf")
        if text:
            parts.append(f"{text} non-numeric")
        if rest:
            parts.append(f"{rest} empty/NaN")
        flags.append(f"skipped {dropped} of {n} rows without a usable value ({', '.join(parts)})")
    return keep


def _normalise_acc(acc: np.ndarray, source: str, column: str | None, flags: list[str]) -> np.ndarray:
    finite = acc[np.isfinite(acc)]
    if finite.size == 0:
        return acc
    lo, hi = float(finite.min()), float(finite.max())
    if lo < 0 or hi > 100:
        raise LogFormatError(source, f"expected accuracy in [0, 1] (or percent in [0, 100]) in "
                             f"column {column!r}; got values from {lo:g} to {hi:g}. Is it the "
                             "accuracy column?")
    if accuracy_in_percent(finite):
        flags.append("accuracy given in percent; divided by 100")
        return acc / 100.0
    return acc


def _progress_is_iteration(table: dict[str, np.ndarray], columns: list[str], n_rows: int) -> bool:
    """Whether a Pollux-layout trace's ``progress`` equals its ``iteration`` on every row (no AdaScale gain)."""
    names = {c.lower().strip(): c for c in columns}
    progress, _ = _numeric(table, names.get("progress"), n_rows)
    iteration, _ = _numeric(table, names.get("iteration"), n_rows)
    both = np.isfinite(progress) & np.isfinite(iteration)
    return bool(both.any()) and bool(np.all(progress[both] == iteration[both]))


# --------------------------------------------------------------------------- public
def _carry_forward(values: np.ndarray, step: np.ndarray) -> np.ndarray:
    """Each row's value, or the last one logged at or before its step (rows of a sparse log, in step order).

    >>> _carry_forward(np.array([0.1, np.nan, np.nan, 0.05, np.nan]), np.array([0, 4, 4, 9, 9.]))
    array([0.1 , 0.1 , 0.1 , 0.05, 0.05])
    """
    order = np.argsort(step, kind="stable")
    filled = pd.Series(values[order]).ffill().to_numpy(dtype=float)
    out = np.empty_like(filled)
    out[order] = filled
    return out


def read_csv_log(data: bytes, source: str, *, roles: Mapping[str, str | None] | None = None,
             steps_per_epoch: int | None = None, split: str | None = None,
             max_bytes: int = MAX_LOG_BYTES) -> RunLog:
    """Read one training-log CSV from its bytes (``core.logs.reader.read_log`` picks the reader).

    Parameters
    ----------
    data : bytes
        The file's content (never executed or unpickled; read as UTF-8 CSV text).
    source : str
        The file name: used for metadata (``<model>_<GPU>[_val].csv``) and in every message.
    roles : mapping, optional
        Column for each role to use instead of the detected one (``{"loss": "val_loss"}``);
        ``None`` for a role removes it.
    steps_per_epoch : int, optional
        Overrides the inferred number of steps per epoch.
    split : {"train", "val"}, optional
        Overrides the split parsed from the file name (also chooses ``val_*`` columns).
    max_bytes : int, default MAX_LOG_BYTES
        Larger files are refused.

    Returns
    -------
    RunLog

    Raises
    ------
    LogFormatError
        For anything that is not a usable log: empty, binary, not UTF-8, not CSV, no loss
        (or accuracy-trace) column, non-numeric or negative values, too large.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data must be bytes, not {type(data).__name__}")
    if steps_per_epoch is not None and (not isinstance(steps_per_epoch, (int, np.integer))
                                        or steps_per_epoch < 1):
        raise LogFormatError(source, f"expected steps per epoch to be an integer >= 1; got {steps_per_epoch!r}.")
    data = as_utf8(bytes(data), source, max_bytes)
    text = decode_head(data, source)
    flags: list[str] = []
    table = _read_table(data, text, source, flags)
    return log_of_table(table, source, roles=roles, steps_per_epoch=steps_per_epoch, split=split, flags=flags)


def log_of_table(table: dict[str, np.ndarray], source: str, *, roles: Mapping[str, str | None] | None = None,
                 steps_per_epoch: int | None = None, split: str | None = None,
                 flags: list[str] | None = None) -> RunLog:
    """The ``RunLog`` of a table already parsed (``{column name: values}``, as :func:`read_csv_log` parses a CSV
    into: names stripped and unique, at least one row): the roles, checks, steps and epochs of a CSV log.
    ``flags`` are the parse's own, kept first.  (``core.logs.scalar_log`` builds MLflow runs through it.)"""
    flags = list(flags or ())
    columns = list(table)
    meta = parse_run_name(source)
    if split is not None:
        meta = replace(meta, split=split)
    fmt = detect_format(columns)
    found = apply_overrides(detect_roles(columns, source=source, split=meta.split), roles, columns, source)
    if found.loss is None and not (found.acc is not None and (fmt in {"metric-trace", "tensorboard", "wandb"}
                                                              or (roles and "loss" in roles))):
        raise LogFormatError(source, f"expected a loss column (loss, train_loss, Value, ...); got "
                             f"{', '.join(columns)}. Name the loss column under 'Column roles'.")
    cols: dict[str, np.ndarray] = {}
    text_counts: dict[str, int] = {}
    n_rows = len(next(iter(table.values())))
    for role in ROLES:
        cols[role], text_counts[role] = _numeric(table, getattr(found, role), n_rows)
    if fmt == "lightning" and looks_like_course_validation(columns, cols["step"], meta.split):
        fmt = "course"     # a course _val log with val_ column names: its steps count validation batches
        flags.append("validation log whose steps count validation batches (1, 2, 3, ...): read as the course "
                     "format, never as training steps")
    sparse = fmt in {"lightning", "wandb"}
    keep = _validate_values(source, found, cols, text_counts, flags, sparse=sparse)
    if sparse and found.lr is not None and found.step is not None and not np.isfinite(cols["lr"][keep]).all():
        # Lightning's LearningRateMonitor logs the rate on rows of its own: each kept row gets the last rate
        # logged at or before its step
        cols["lr"] = _carry_forward(cols["lr"], cols["step"])
    # every row with an epoch and a step (a sparse log's other metrics too: Lightning's validation rows mark each
    # epoch's last step where the training loss is logged every n steps only)
    every_row = (cols["epoch"], cols["step"]) if sparse else None
    if not keep.all():
        cols = {role: v[keep] for role, v in cols.items()}
    acc = _normalise_acc(cols["acc"], source, found.acc, flags)
    with np.errstate(over="ignore", invalid="ignore"):
        k, epoch, spe, granularity = global_steps(cols, found, source, steps_per_epoch, flags, fmt,
                                                  every_row=every_row)
    if not np.isfinite(k).all() or k.max() > 1e15 or np.nanmax(np.abs(np.nan_to_num(epoch)), initial=0) > 1e12:
        raise LogFormatError(source, "expected step numbers below 1e15 and epochs below 1e12; got "
                             f"steps up to {np.nanmax(np.where(np.isfinite(k), k, np.inf)):g}.")
    if found.loss is None:
        flags.append("accuracy-only trace: no loss curve to fit")
    frame = pd.DataFrame({"global_step": k.astype(float), "epoch": epoch, "loss": cols["loss"],
                          "acc": acc, "time_s": cols["time"], "lr": cols["lr"]})
    if fmt == "metric-trace" and _progress_is_iteration(table, columns, n_rows):
        # no AdaScale: Pollux's layout, but its epochs are real passes over the data
        fmt = "epoch-trace"
        flags.append("progress equals iteration: real epochs, not AdaptDL's statistical epochs")
    frame = resolve_restarts(frame, flags)
    if (meta.global_batch and not steps_are_validation_batches(fmt, meta.split)
            and not any("k counts epochs" in f for f in flags)):
        # samples seen: optimiser steps × the global batch the name gives (a _val course log counts
        # validation batches, not training steps: no samples there)
        frame["samples"] = frame["global_step"] * float(meta.global_batch)
    ep = frame["epoch"].to_numpy(dtype=float)
    partial_epoch_flag(ep, spe, granularity, flags, frame["global_step"].to_numpy(dtype=float))
    if np.isfinite(ep).all():
        frame["epoch"] = pd.array(np.rint(ep).astype(np.int64), dtype="Int64")
    else:
        frame["epoch"] = pd.array(np.where(np.isfinite(ep), np.rint(ep), np.nan), dtype="Float64").astype("Int64")
    return RunLog(source=source, frame=frame, fmt=fmt, roles=found, meta=meta,
                  steps_per_epoch=spe, granularity=granularity, flags=tuple(flags),
                  columns=tuple(columns))
