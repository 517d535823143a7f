"""A run's logged scalars (``tag, step, wall_time, value`` rows) as a ``RunLog``, without a CSV text (issue 35).

TensorBoard runs (:mod:`core.logs.tfevents`) and MLflow runs (:mod:`core.library.mlflow_source`) are
read as one row per step with a column per tag (:func:`~core.logs.tfevents.wide_scalars`, then
:func:`~core.logs.tfevents.table_for_reader`: roles detected, epoch and lr carried forward).  Writing
that table as CSV text and reading it back (``read_log``) cost about 55 ms a run of 1,000 steps, most of
the client's time of an MLflow import.  :func:`log_from_scalars` hands the same table, as the columns the
CSV parser would have given (names stripped and made unique, numbers as float64), straight to the
CSV reader's checks (:func:`core.logs.csvlog.log_of_table`), then to the same point count check:
the same frame, flags and fingerprint, the same refusals with the same messages
(``tests/core/logs/test_scalar_log.py`` compares both ways on varied runs).

One difference: a CSV larger than ``MAX_LOG_BYTES`` is refused by its size; here no text is made, so
a run is refused when it has more than ``MAX_LINES`` steps (the CSV reader's row bound) instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import pandas as pd

from core.errors import LogFormatError
from core.logs.csvlog import log_of_table
from core.logs.naming import parse_run_name
from core.logs.points import check_points
from core.logs.runlog import RunLog
from core.logs.tfevents import table_for_reader
from core.tables import MAX_LINES


def wide_of_scalars(scalars: pd.DataFrame) -> pd.DataFrame:
    """:func:`~core.logs.tfevents.wide_scalars` in numpy: one row per step (sorted), one column per tag (sorted;
    a tag named ``step`` or ``time_s`` becomes ``tag:step``, ``tag:time_s``), the latest write of a (tag, step)
    wins; ``time_s`` is the step's latest wall time less the run's first.  The same frame, about 10x faster
    (``tests/core/logs/test_scalar_log.py`` compares both)."""
    tags, tag_code = np.unique(scalars["tag"].to_numpy(dtype=object).astype(str), return_inverse=True)
    steps, step_code = np.unique(scalars["step"].to_numpy(dtype=np.int64), return_inverse=True)
    key = step_code.astype(np.int64) * len(tags) + tag_code
    _, first_from_end = np.unique(key[::-1], return_index=True)
    last = len(key) - 1 - first_from_end                            # each (step, tag)'s latest write
    grid = np.full(len(steps) * len(tags), np.nan)
    grid[key[last]] = scalars["value"].to_numpy(dtype=float)[last]
    wall = scalars["wall_time"].to_numpy(dtype=float)[last]
    times = np.full(len(steps), np.nan)
    np.fmax.at(times, step_code[last], wall)                        # NaN times skipped, as groupby's max skips them
    with np.errstate(all="ignore"):
        start = np.nanmin(wall) if np.isfinite(wall).any() else np.nan
    names = [f"tag:{t}" if t in ("step", "time_s") else str(t) for t in tags]
    columns = {"step": steps, "time_s": times - start}
    columns.update(zip(names, grid.reshape(len(steps), len(tags)).T))
    return pd.DataFrame(columns)


def table_columns(table: pd.DataFrame) -> dict[str, np.ndarray]:
    """A frame's columns as the CSV parser gives a table: names stripped (a repeated name gets ``.1``, ``.2``
    as pandas does), values as numpy arrays (a column of whole numbers stays integer, as it parses)."""
    out: dict[str, np.ndarray] = {}
    seen: dict[str, int] = {}
    for name in table.columns:
        values = table[name].to_numpy()
        label = str(name).strip()
        if label in seen:
            seen[label] += 1
            label = f"{label}.{seen[label]}"
        else:
            seen[label] = 0
        out[label] = values
    return out


def log_from_scalars(scalars: pd.DataFrame, source: str, *, roles: Mapping[str, str | None] | None = None,
                   split: str | None = None, steps_per_epoch: int | None = None, fmt: str = "scalars",
                   empty: str = "expected logged metrics (loss, accuracy, ...); the run has none.") -> RunLog:
    """The ``RunLog`` of a run's scalars (``tag, step, wall_time, value``), named ``source``, in format ``fmt``.

    ``roles`` name tags, as ``read_log``'s name columns; ``split`` and ``steps_per_epoch`` as for ``read_log``;
    ``empty`` is the message for a run without scalars.  Raises ``LogFormatError`` as ``read_log`` would on
    the same table written as CSV.

    >>> s = pd.DataFrame({"tag": ["loss"] * 4 + ["acc"] * 4, "step": [1, 2, 3, 4] * 2,
    ...                   "wall_time": [0.0, 1.0, 2.0, 3.0] * 2, "value": [2.0, 1.0, 0.7, 0.6, 0.2, 0.5, 0.7, 0.8]})
    >>> log = log_from_scalars(s, "resnet20_V100", fmt="mlflow")
    >>> log.meta.model, log.frame["loss"].tolist(), log.frame["acc"].tolist(), log.fmt
    ('resnet20', [2.0, 1.0, 0.7, 0.6], [0.2, 0.5, 0.7, 0.8], 'mlflow')
    """
    if steps_per_epoch is not None and (not isinstance(steps_per_epoch, (int, np.integer)) or steps_per_epoch < 1):
        raise LogFormatError(source, f"expected steps per epoch to be an integer >= 1; got {steps_per_epoch!r}.")
    if scalars.empty:
        raise LogFormatError(source, empty)
    table, found = table_for_reader(wide_of_scalars(scalars), source, roles, split or parse_run_name(source).split)
    if len(table) > MAX_LINES:
        raise LogFormatError(source, f"expected at most {MAX_LINES:,} rows; got {len(table):,}. Thin the "
                             "log (keep every n-th step) or split it into several files.")
    if table.empty:
        raise LogFormatError(source, "the file has a header but no data rows.")
    log = log_of_table(table_columns(table), source, roles=found, steps_per_epoch=steps_per_epoch, split=split)
    return replace(check_points(log, 1), fmt=fmt)
