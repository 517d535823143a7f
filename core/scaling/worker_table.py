"""Worker timings from a table with one row per worker (an edited table): start times and the durations
of successive gradients, checked cell by cell, ready for
:func:`~core.scaling.sync_async.async_schedule` and :func:`~core.scaling.sync_async.sync_schedule`.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from core.errors import InputError

#: the start-time column of a worker table (:func:`schedule_inputs`)
WORKER_START_COLUMN = "start_s"
#: duration columns of a worker table: ``compute_s`` or ``compute_1_s``, ``compute_2_s``, …
_DURATION_COLUMN = re.compile(r"compute(?:_(\d+))?_s")


def schedule_inputs(table: pd.DataFrame, *, source: str = "worker table"
                    ) -> tuple[tuple[float, ...], tuple[tuple[float, ...], ...]]:
    """Start times and durations from a table with one row per worker (an edited table).

    Parameters
    ----------
    table : pandas.DataFrame
        Column ``start_s`` (seconds, >= 0) and the durations of successive gradients in
        ``compute_1_s``, ``compute_2_s``, … (or one ``compute_s``), each > 0. Header names
        are stripped and lower-cased. Blank cells at the end of a row mean that worker
        computes fewer gradients; a row left entirely blank is skipped (a new, unfilled row
        of an editor).
    source : str, default="worker table"
        Named in error messages.

    Returns
    -------
    start_s : tuple of float
    compute_s : tuple of tuple of float
        Ready for :func:`async_schedule` and :func:`sync_schedule` (hashable, so a cached
        caller can take them as they are).

    Raises
    ------
    InputError
        ``table`` is not a DataFrame; no ``start_s`` or duration column, no worker, a blank or non-numeric start, a
        duration that is not > 0, a blank duration before a filled one.

    Examples
    --------
    >>> t = pd.DataFrame({"start_s": [0.0, 1.0], "compute_1_s": [3.0, 1.0],
    ...                   "compute_2_s": [2.0, None]})
    >>> schedule_inputs(t)
    ((0.0, 1.0), ((3.0, 2.0), (1.0,)))
    >>> schedule_inputs(t.assign(compute_1_s=[3.0, -1.0]))
    Traceback (most recent call last):
    ...
    core.errors.InputError: worker table: expected compute_1_s > 0 (seconds) in every filled row; got -1.0 ...
    """
    if not isinstance(table, pd.DataFrame):
        raise InputError(f"{source}: expected a DataFrame with one row per worker; got "
                        f"{type(table).__name__}.")
    frame = table.rename(columns=lambda c: str(c).strip().lower())
    durations = sorted((c for c in frame.columns if _DURATION_COLUMN.fullmatch(c)),
                       key=lambda c: int(_DURATION_COLUMN.fullmatch(c).group(1) or 0))
    if WORKER_START_COLUMN not in frame.columns or not durations:
        raise InputError(f"{source}: expected a column {WORKER_START_COLUMN} and duration "
                         f"columns compute_1_s, compute_2_s, … (or compute_s); got "
                         f"{', '.join(frame.columns) or 'no columns'}. Rename the columns.")
    cells = frame[[WORKER_START_COLUMN, *durations]]
    values = cells.apply(pd.to_numeric, errors="coerce").astype(float)
    filled = cells.notna() & cells.astype(str).apply(lambda c: c.str.strip() != "")
    starts, computes = [], []
    for i in range(len(frame)):
        if not filled.iloc[i].any():
            continue
        row = f"row {i + 1}"
        start = _table_cell(values, filled, i, WORKER_START_COLUMN, cells, source, row,
                            positive=False)
        ds = []
        for col in durations:
            if not filled.iloc[i][col]:
                continue
            if len(ds) < durations.index(col):
                raise InputError(f"{source}: expected the durations of {row} without gaps; "
                                 f"got a blank cell before {col}. Fill it or move the "
                                 "later durations left.")
            ds.append(_table_cell(values, filled, i, col, cells, source, row, positive=True))
        if not ds:
            raise InputError(f"{source}: expected at least one duration in {row}; got none. "
                             f"Fill {durations[0]} or clear the row.")
        starts.append(start)
        computes.append(tuple(ds))
    if not starts:
        raise InputError(f"{source}: expected at least one worker row; got none. Add a row "
                         "with a start time and a duration.")
    return tuple(starts), tuple(computes)


def _table_cell(values: pd.DataFrame, filled: pd.DataFrame, i: int, col: str,
                cells: pd.DataFrame, source: str, row: str, *, positive: bool) -> float:
    value = values.iloc[i][col]
    bound = "> 0" if positive else ">= 0"
    if not filled.iloc[i][col] or not np.isfinite(value) or value < 0 or (positive and value == 0):
        got = "a blank cell" if not filled.iloc[i][col] else repr(_plain(cells.iloc[i][col]))
        raise InputError(f"{source}: expected {col} {bound} (seconds) in every filled row; "
                         f"got {got} in {row}. Fix that cell.")
    return float(value)


def _plain(value: object) -> object:
    return value.item() if hasattr(value, "item") else value
