"""A refit's runs loaded in bulk (issue 35): the ``RunLog`` of thousands of runs from two queries.

:func:`load_logs` gives what :meth:`core.library.library.Library.get_many` gives (the same frames,
dtypes, metadata and flags; ``tests/core/library/test_refit_io.py`` compares them on both stores),
without a Python object per stored value: the ``runs`` rows come as a frame, the series as one
Arrow table (``Connection.read_bulk``: Arrow from DuckDB, ``COPY ... TO STDOUT`` from PostgreSQL),
cut into runs by position (it is ordered by run and row).  The optional columns' JSON lists
(``series.extra``) are parsed by DuckDB's JSON reader over the Arrow column, all rows at once; a run
whose lists are not all of its width falls back to ``json.loads`` row by row, as ``log_from_rows``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pandas as pd

from core.errors import InputError
from core.library.records import log_from_frame
from core.library.store import Store
from core.logs import FRAME_COLUMNS, RunLog

#: a chunk's series, in run and row order (the columns of ``RunLog.frame``, then the optional ones as JSON)
SERIES_SQL = ("SELECT run_id, " + ", ".join(FRAME_COLUMNS) + ", extra FROM series WHERE run_id IN ({marks}) "
              "ORDER BY run_id, row_index")


def _extra_lists(extra):
    """The ``extra`` JSON texts as an Arrow list<double> array (null where the text is NULL)."""
    import duckdb
    import pyarrow as pa

    con = duckdb.connect()
    try:
        con.register("texts", pa.table({"extra": extra}))
        return con.sql("""SELECT from_json(extra, '["DOUBLE"]') AS v FROM texts""").to_arrow_table().column(
            "v").combine_chunks()
    finally:
        con.close()


def _extra_block(names: list[str], lists, texts, start: int, stop: int) -> np.ndarray:
    """The run's optional columns, (rows, len(names)): from the parsed lists when every row holds one of the
    run's width, else row by row as ``log_from_rows`` reads them."""
    width = len(names)
    offsets = lists.offsets.to_numpy()[start:stop + 1]
    if lists.slice(start, stop - start).null_count == 0 and np.all(np.diff(offsets) == width):
        values = lists.values.slice(int(offsets[0]), int(offsets[-1] - offsets[0]))
        return values.to_numpy(zero_copy_only=False).astype(float).reshape(stop - start, width)
    cells = [json.loads(t) if isinstance(t, str) else [None] * width for t in texts.slice(start, stop - start)
             .to_pylist()]
    return np.array([[np.nan if v is None else v for v in cell] for cell in cells], dtype=float).reshape(
        len(cells), width)


def load_logs(store: Store, run_ids: Sequence[int]) -> list[tuple[int, RunLog]]:
    """``(run_id, RunLog)`` for each id, in the order given, as ``Library.get_many`` gives them; an unknown or
    removed id raises ``InputError``."""
    ids = [int(i) for i in run_ids]
    if not ids:
        return []
    wanted = sorted(set(ids))
    marks = ", ".join("?" for _ in wanted)
    with store.connect() as con:
        if con is None:
            raise InputError(f"{store.path}: expected a library holding run #{ids[0]}; there is no library "
                             "file yet. Add runs first (python -m core library add).")
        rows = con.frame(f"SELECT * FROM runs WHERE run_id IN ({marks}) AND deleted_at IS NULL", wanted)
        series = con.read_bulk(SERIES_SQL.format(marks=marks), wanted)
    by_id = {int(r["run_id"]): r for r in rows.to_dict("records")}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise InputError(f"{store.path}: expected run ids in the library; run #{missing[0]} is not there. "
                         "See python -m core library list.")
    run_col = series.column("run_id").to_numpy().astype(np.int64)
    columns = {c: series.column(c).to_numpy().astype(float) for c in FRAME_COLUMNS}
    texts = series.column("extra").combine_chunks()
    lists = _extra_lists(texts) if texts.null_count < len(texts) else None
    bounds = np.searchsorted(run_col, np.array(wanted), side="left"), np.searchsorted(run_col, np.array(wanted),
                                                                                        side="right")
    groups: dict[tuple[str, ...], list[tuple[int, int, int]]] = {}       # runs by their optional columns
    for run_id, start, stop in zip(wanted, *bounds):
        text = by_id[run_id].get("extra_columns")
        groups.setdefault(tuple(json.loads(text)) if isinstance(text, str) else (), []).append(
            (run_id, int(start), int(stop)))
    logs: dict[int, RunLog] = {}
    for names, members in groups.items():
        # one frame for the group, cut into runs: a slice costs less than a frame made per run
        rows_of = np.concatenate([np.arange(a, b) for _, a, b in members]) if members else np.array([], int)
        data = {c: columns[c][rows_of] if c != "epoch" else pd.array(columns[c][rows_of], dtype="Int64")
                for c in FRAME_COLUMNS}
        if names:
            blocks = [_extra_block(list(names), lists, texts, a, b) if lists is not None and b > a else
                      np.full((b - a, len(names)), np.nan) for _, a, b in members]
            block = np.concatenate(blocks) if blocks else np.empty((0, len(names)))
            data.update({name: block[:, i] for i, name in enumerate(names)})
        whole = pd.DataFrame(data)
        offset = 0
        for run_id, a, b in members:
            frame = whole.iloc[offset:offset + b - a]       # a new frame over the group's columns (copy on write)
            frame.index = pd.RangeIndex(b - a)               # what reset_index(drop=True) gives, at half the cost
            offset += b - a
            logs[run_id] = log_from_frame(by_id[run_id], frame)
    return [(i, logs[i]) for i in ids]
