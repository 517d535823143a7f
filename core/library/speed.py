"""Measured-speed tables in the library: stored as given (checked first), found by name.

A speed table is the CSV ``python -m core fit-speed`` and the Plan page read (``p, w, speed``
or Pollux's ``scalability.csv``).  It is checked with ``core.speed.read_speed_csv`` before it
is stored, stored byte for byte under its content hash, and read back through the same
function, so a table from the library is exactly the file that was added.
"""

from __future__ import annotations

import pandas as pd

from core.errors import InputError
from core.library.library import Library, utc_now
from core.library.records import content_hash

SPEED_COLUMNS = ("table_id", "name", "n_rows", "content_hash", "added_at")


def add_speed_table(library: Library, name: str, data: bytes) -> tuple[int, bool]:
    """Store a speed CSV (``LogFormatError`` when ``core.plan`` cannot read it): ``(table_id, added)``."""
    from core.speed import read_speed_csv

    table = read_speed_csv(bytes(data), source=name)
    digest = content_hash(data)
    with library.store.transaction() as con:
        inserted = con.execute("INSERT INTO speed_tables (content_hash, name, data, n_rows, added_at) VALUES "
                               "(?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING table_id",
                               [digest, name, bytes(data), len(table), utc_now()])
        if not inserted:
            found = con.execute("SELECT table_id FROM speed_tables WHERE content_hash = ?", [digest])
            return int(found[0][0]), False
    return int(inserted[0][0]), True


def speed_tables(library: Library) -> pd.DataFrame:
    """The stored speed tables (``SPEED_COLUMNS``), by id; empty when there is no library file."""
    with library.store.connect() as con:
        if con is None:
            return pd.DataFrame(columns=list(SPEED_COLUMNS))
        return con.frame(f"SELECT {', '.join(SPEED_COLUMNS)} FROM speed_tables ORDER BY table_id")


def speed_table_bytes(library: Library, ref: str) -> tuple[str, bytes]:
    """``(name, bytes)`` of the stored table with id or name ``ref`` (the latest of that name)."""
    tables = speed_tables(library)
    text = str(ref).strip()
    hits = tables[(tables["name"] == text) | (tables["table_id"].astype(str) == text)]
    if hits.empty:
        names = ", ".join(tables["name"].astype(str)) or "none"
        raise InputError(f"{text}: expected the name or id of a speed table in the library; the library holds "
                         f"{names}. Add one with python -m core library add --speed FILE.")
    table_id = int(hits["table_id"].iloc[-1])
    with library.store.connect() as con:
        name, data = con.execute("SELECT name, data FROM speed_tables WHERE table_id = ?", [table_id])[0]
    return str(name), bytes(data)
