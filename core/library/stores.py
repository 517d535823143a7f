"""Every kind of run-library store by name: one explicit registry, filled here and nowhere else.

A store kind is a ``core.library.store.Store`` subclass with ``kind`` and ``claims(target)``;
:func:`open_store` picks the first that claims a target, so the file-backed default (DuckDB, which
takes any path) comes last. Adding a kind: its module and one entry here.
"""

from __future__ import annotations

import os

from core.errors import LibraryError
from core.library.store import Store, default_db_path
from core.library.store_duckdb import DuckDBStore
from core.library.store_postgres import PostgresStore

#: the kinds of store, tried in order (the last, DuckDB, takes any path)
STORES: dict[str, type[Store]] = {cls.kind: cls for cls in (PostgresStore, DuckDBStore)}


def open_store(target: str | os.PathLike | None = None, *, timeout: float | None = None) -> Store:
    """The store ``target`` names (default :func:`core.library.store.default_db_path`).

    >>> open_store("/tmp/x/library.duckdb").kind, open_store("postgresql://me@localhost/tta").kind
    ('duckdb', 'postgresql')
    """
    target = default_db_path() if target is None else os.fspath(target)
    for cls in STORES.values():
        if cls.claims(target):
            return cls(target, timeout=timeout)
    raise LibraryError(  # pragma: no cover - the last kind (DuckDB) takes any path
        f"{target}: expected a target one of the store kinds ({', '.join(STORES)}) claims; none does.")
