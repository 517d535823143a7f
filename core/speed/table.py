"""Measured-speed tables: read a CSV and normalise it to ``p, w, global_batch, steps_per_s``.

Accepted columns (names are matched after stripping spaces and lower-casing; other
columns, such as Pollux's ``num_nodes`` and ``sync_time``, are ignored):

=================  ==========================================================  ==========
normalised column  accepted input column(s)                                    required
=================  ==========================================================  ==========
``p``              ``p``, ``n_ps``, ``num_ps``                                  no: 0 (no PS)
``w``              ``w``, ``n_workers``, ``num_workers``, ``num_replicas``      yes
``global_batch``   ``global_batch``, ``m``, ``batch``; or ``local_bsz`` /        no
                   ``local_batch`` (then ``M = w · local``)
``steps_per_s``    exactly one of ``steps_per_s``, ``step_time_s``,             yes
                   ``step_time`` (seconds), ``samples_per_s`` (needs M)
=================  ==========================================================  ==========

A Pollux ``scalability.csv`` (``num_nodes, num_replicas, local_bsz, step_time,
sync_time``) therefore reads as an all-reduce trace: ``p = 0``, ``w = num_replicas``,
``M = num_replicas · local_bsz`` (a different M on each row) and
``steps_per_s = 1 / step_time``.
"""

from __future__ import annotations

import os
from typing import IO, Union

import numpy as np
import pandas as pd

from core.errors import InputError, LogFormatError
from core.tables import MAX_BYTES, file_bytes, read_csv_frame

COLUMNS: tuple[str, ...] = ("p", "w", "global_batch", "steps_per_s")
P_NAMES = ("p", "n_ps", "num_ps")
W_NAMES = ("w", "n_workers", "num_workers", "num_replicas")
BATCH_NAMES = ("global_batch", "m", "batch")
LOCAL_BATCH_NAMES = ("local_bsz", "local_batch")
SPEED_NAMES = ("steps_per_s", "step_time_s", "step_time", "samples_per_s")

SpeedSource = Union[str, os.PathLike, bytes, IO]


class _Problem(Exception):
    """Internal: what is wrong with a table, worded without the source name."""


def _pick(columns: dict[str, str], names: tuple[str, ...], what: str) -> str | None:
    found = [columns[n] for n in names if n in columns]
    if len(found) > 1:
        raise _Problem(f"expected one {what} column; got {', '.join(found)}. Keep one of them")
    return found[0] if found else None


def _numbers(df: pd.DataFrame, column: str, *, integer: bool, minimum: float,
             strict: bool = False, allow_missing: bool = False) -> np.ndarray:
    values = pd.to_numeric(df[column], errors="coerce").to_numpy(dtype=float)
    missing = df[column].isna().to_numpy() if allow_missing else np.zeros(len(values), bool)
    bad = ~np.isfinite(values) | ((values <= minimum) if strict else (values < minimum))
    bad &= ~missing
    if integer:
        bad |= np.isfinite(values) & (values != np.round(values))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        kind = "integers" if integer else "numbers"
        bound = f"> {minimum:g}" if strict else f">= {minimum:g}"
        raise _Problem(f"expected {column} {kind} {bound}; got {_show(df[column].iloc[i])} in row {i + 1}. "
                       "Fix or remove that row")
    return values


def _show(value) -> str:
    if isinstance(value, str):
        return repr(value)
    if pd.isna(value):
        return "an empty cell"
    return f"{value:g}" if isinstance(value, (int, float, np.number)) else repr(value)


def _normalise(df: pd.DataFrame, global_batch: float | None) -> pd.DataFrame:
    columns = {str(c).strip().lower(): c for c in df.columns}
    if len(df) == 0:
        raise _Problem("expected at least one measured row; got none. Add measurements")
    w_col = _pick(columns, W_NAMES, "worker-count")
    speed_col = _pick(columns, SPEED_NAMES, "speed")
    if w_col is None or speed_col is None:
        raise _Problem(f"expected columns w (or {', '.join(W_NAMES[1:])}) and one of "
                       f"{', '.join(SPEED_NAMES)}; got {', '.join(map(str, df.columns))}. "
                       "Rename the columns as documented in docs/plan.md")
    p_col = _pick(columns, P_NAMES, "parameter-server")
    m_col = _pick(columns, BATCH_NAMES, "global-batch")
    local_col = _pick(columns, LOCAL_BATCH_NAMES, "local-batch")
    if m_col is not None and local_col is not None:
        raise _Problem(f"expected one batch column; got {m_col} and {local_col}. Keep one of them")
    w = _numbers(df, w_col, integer=True, minimum=1)
    p = _numbers(df, p_col, integer=True, minimum=0) if p_col else np.zeros(len(df))
    if m_col is not None:
        m = _numbers(df, m_col, integer=False, minimum=0, strict=True, allow_missing=True)
    elif local_col is not None:
        m = w * _numbers(df, local_col, integer=False, minimum=0, strict=True)
    else:
        m = np.full(len(df), np.nan)
    if global_batch is not None:
        m = np.where(np.isnan(m), float(global_batch), m)
    speed = _numbers(df, speed_col, integer=False, minimum=0, strict=True)
    name = str(speed_col).strip().lower()
    if name.startswith("step_time"):
        speed = 1.0 / speed
    elif name == "samples_per_s":
        if np.isnan(m).any():
            raise _Problem("expected the global batch M to turn samples_per_s into steps; got none. "
                           "Add a global_batch column or pass the batch (--batch M)")
        speed = speed / m
    return pd.DataFrame(dict(zip(COLUMNS, (p.astype(int), w.astype(int), m, speed))))


def normalise_speed_table(table: pd.DataFrame, *, global_batch: float | None = None,
                          source: str = "table") -> pd.DataFrame:
    """A new frame ``p, w, global_batch, steps_per_s`` from a table of measured speeds.

    Parameters
    ----------
    table : DataFrame
        Columns as in the module table; the argument is not modified.
    global_batch : float or None, default=None
        ``M`` for a table without a batch column (needed to convert ``samples_per_s``).
    source : str, default="table"
        Name used at the start of error messages.

    Returns
    -------
    DataFrame
        ``p`` (int, 0 = no parameter server), ``w`` (int >= 1), ``global_batch`` (float,
        NaN when unknown), ``steps_per_s`` (float > 0). Normalising it again is a no-op.

    Raises
    ------
    InputError
        Missing or ambiguous columns, non-numeric or out-of-range values (the row is named).

    Examples
    --------
    >>> tab = pd.DataFrame({"num_nodes": [1], "num_replicas": [4], "local_bsz": [32],
    ...                     "step_time": [0.5], "sync_time": [0.1]})
    >>> normalise_speed_table(tab).to_dict("records")
    [{'p': 0, 'w': 4, 'global_batch': 128.0, 'steps_per_s': 2.0}]
    >>> normalise_speed_table(pd.DataFrame({"w": [0], "steps_per_s": [1.0]}), source="s.csv")
    Traceback (most recent call last):
    ...
    core.errors.InputError: s.csv: expected w integers >= 1; got 0 in row 1. Fix or remove that row.
    """
    _check_global_batch(global_batch, source)
    try:
        return _normalise(table, global_batch)
    except _Problem as problem:
        raise InputError(f"{source}: {problem}.") from None


def read_speed_csv(file: SpeedSource, *, global_batch: float | None = None, source: str | None = None) -> pd.DataFrame:
    """Read a CSV of measured speeds and check it; return it as it is (every column kept).

    What Pollux's model needs beyond the normalised columns (``num_nodes``) stays in the
    frame; :func:`read_speed_table` is this, normalised.

    Raises
    ------
    LogFormatError
        As :func:`read_speed_table`.

    Examples
    --------
    >>> read_speed_csv(b"num_nodes,num_replicas,local_bsz,step_time\\n2,8,32,0.5\\n").columns.tolist()
    ['num_nodes', 'num_replicas', 'local_bsz', 'step_time']
    """
    source = _source_name(file, source)
    df = _read_csv(file, global_batch, source)
    try:
        _normalise(df, global_batch)
    except _Problem as problem:
        raise LogFormatError(source, f"{problem}.") from None
    return df


def _source_name(file: SpeedSource, source: str | None) -> str:
    if source is not None:
        return source
    return os.path.basename(os.fspath(file)) if isinstance(file, (str, os.PathLike)) else "<input>"


def _read_csv(file: SpeedSource, global_batch: float | None, source: str) -> pd.DataFrame:
    """The table's bytes read in bounded work (``core.tables``): a path, bytes or a file object."""
    _check_global_batch(global_batch, source)
    if isinstance(file, (bytes, bytearray)):
        data = bytes(file)
    elif isinstance(file, (str, os.PathLike)):
        data = file_bytes(file, source=source)
    else:
        data = file.read(MAX_BYTES + 1)
        if len(data) > MAX_BYTES:
            raise LogFormatError(source, f"expected at most {MAX_BYTES / 2**20:.0f} MB; got more. Thin the table.")
    return read_csv_frame(data, source)


def read_speed_table(file: SpeedSource, *, global_batch: float | None = None,
                     source: str | None = None) -> pd.DataFrame:
    """Read a CSV of measured speeds (path, bytes or file object) and normalise it.

    Parameters
    ----------
    file : str, PathLike, bytes or file-like
    global_batch : float or None, default=None
        See :func:`normalise_speed_table`.
    source : str or None, default=None
        Name for messages; defaults to the path's file name, or ``"<input>"``.

    Returns
    -------
    DataFrame
        As :func:`normalise_speed_table`.

    Raises
    ------
    LogFormatError
        The file cannot be read or parsed, or its columns or values are wrong
        (``.source`` names the file).

    Examples
    --------
    >>> read_speed_table(b"p,w,M,steps_per_s\\n2,4,128,0.5\\n").to_dict("records")
    [{'p': 2, 'w': 4, 'global_batch': 128.0, 'steps_per_s': 0.5}]
    """
    source = _source_name(file, source)
    df = _read_csv(file, global_batch, source)
    try:
        return _normalise(df, global_batch)
    except _Problem as problem:
        raise LogFormatError(source, f"{problem}.") from None


def _check_global_batch(global_batch: float | None, source: str) -> None:
    if global_batch is not None and not (isinstance(global_batch, (int, float, np.number))
                                         and np.isfinite(global_batch) and global_batch > 0):
        raise InputError(f"{source}: expected global_batch M > 0 samples per step; "
                         f"got {global_batch!r}. Give the samples in one step.")


def has_parameter_servers(table: pd.DataFrame) -> bool:
    """Whether a raw or normalised speed table has a p column with some p >= 1.

    >>> has_parameter_servers(pd.DataFrame({"num_replicas": [4], "step_time": [0.5]}))
    False
    """
    columns = {str(c).strip().lower(): c for c in table.columns}
    found = [columns[n] for n in P_NAMES if n in columns]
    return bool(found) and bool((pd.to_numeric(table[found[0]], errors="coerce") >= 1).any())


def speed_table_from_logs(logs) -> tuple[pd.DataFrame, tuple[tuple[str, str], ...]]:
    """A measured-speed table from runs that log their throughput (MLLOG ``tracked_stats``).

    One row per run: ``num_nodes``, ``w`` (accelerators, from the platform name), ``global_batch``
    and ``samples_per_s`` (the median logged throughput), as :func:`normalise_speed_table`
    and Pollux's model read them; runs without a throughput, device count or batch are
    returned as ``(source, reason)``.

    >>> from core.logs import read_log
    >>> log = read_log(b'''
    ... :::MLLOG {"key": "submission_platform", "value": "2xBOXx4GPU", "time_ms": 0}
    ... :::MLLOG {"key": "global_batch_size", "value": 256, "time_ms": 0}
    ... :::MLLOG {"key": "tracked_stats", "value": {"throughput": 1000.0}, "time_ms": 1}
    ... :::MLLOG {"key": "eval_accuracy", "value": 0.5, "time_ms": 2, "metadata": {"epoch_num": 1}}
    ... ''', "r.txt")
    >>> table, skipped = speed_table_from_logs([log])
    >>> table.to_dict("records"), skipped
    ([{'num_nodes': 2, 'w': 8, 'global_batch': 256.0, 'samples_per_s': 1000.0}], ())
    """
    rows, skipped = [], []
    for log in logs:
        meta = log.meta
        missing = [what for what, value in (("throughput", meta.throughput), ("device count", meta.n_devices),
                                            ("global batch", meta.global_batch)) if not value]
        if missing:
            skipped.append((log.source, f"no {', '.join(missing)} in the log"))
            continue
        rows.append({"num_nodes": meta.n_nodes or 1, "w": meta.n_devices, "global_batch": float(meta.global_batch),
                     "samples_per_s": float(meta.throughput)})
    return pd.DataFrame(rows, columns=["num_nodes", "w", "global_batch", "samples_per_s"]), tuple(skipped)


def default_speed_mode(table: pd.DataFrame) -> str:
    """'allreduce' when the table has no parameter servers (no p column, or every p == 0), else 'sync'.

    >>> default_speed_mode(pd.DataFrame({"num_replicas": [4, 8], "step_time": [1.0, 0.6]}))
    'allreduce'
    >>> default_speed_mode(pd.DataFrame({"p": [1, 2], "w": [4, 8], "steps_per_s": [1.0, 0.6]}))
    'sync'
    """
    return "sync" if has_parameter_servers(table) else "allreduce"


def table_context(table: pd.DataFrame, required: tuple[str, ...], optional: tuple[str, ...] = (), *,
                  source: str, what: str, fix: str) -> dict[str, str]:
    """The context a family reads from a speed table beside the speeds (``SpeedFamily.context``): one value per
    column named, the same on every row; ``required`` columns must be there.

    >>> table_context(pd.DataFrame({"Net": ["alex_v2"] * 2, "w": [1, 2]}), ("net",), ("network",),
    ...               source="t.csv", what="Paleo's speed model (the network)", fix="Add it.")
    {'net': 'alex_v2'}
    """
    columns = {str(c).strip().lower(): c for c in table.columns}
    missing = [c for c in required if c not in columns]
    if missing:
        raise InputError(f"{source}: expected columns {', '.join(required)} for {what}; got none for "
                         f"{', '.join(missing)}. {fix}")
    out = {}
    for name in (*required, *optional):
        if name not in columns:
            continue
        distinct = table[columns[name]].dropna().astype(str).str.strip().unique()
        if len(distinct) != 1:
            raise InputError(f"{source}: expected one {name} for every row; got {', '.join(map(str, distinct))}. "
                             "Split the table.")
        out[name] = distinct[0]
    return out
