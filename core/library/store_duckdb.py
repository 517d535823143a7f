"""The embedded default store: one DuckDB file, used under a lock, briefly.

Concurrency
    DuckDB lets one process at a time open a file for writing, and an open that loses the race
    for DuckDB's own lock is not safe to retry in a loop (committed rows were lost in tests of
    duckdb 2.0.0).  So every use of the file (read or write) takes a sidecar lock first,
    ``<file>.lock`` (``filelock``: ``flock`` on POSIX, so a killed holder frees it at once),
    opens the database, does one short piece of work and closes it (which checkpoints the
    write-ahead log into the file).  The lock excludes other processes (the CLI) and other
    threads of this one (Streamlit sessions) alike.  A caller that cannot get it within
    ``timeout`` seconds gets a :class:`core.errors.LibraryBusyError` saying so; nothing is
    half-done.  Every write is one DuckDB transaction, so a writer killed mid-import leaves the
    runs it committed and none of the one it was writing.  Network file systems (NFS, SMB) do
    not honour ``flock`` reliably: keep the file on a local disk.

Reading never creates the file: a library that does not exist yet reads as empty.  The first
write creates it (and its folder) and runs the schema's migrations; opening a file made by an
older version upgrades it in place (:mod:`core.library.schema`).  A DuckDB file of another
program (tables, but no ``schema_version``) is refused, read-only, before any lock file is made.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pandas as pd

from core.errors import LibraryBusyError, LibraryError
from core.library.store import MEMORY, TABLES_SQL, Store, conflict_clause


class DuckDBConnection:
    """A :class:`core.library.store.Connection` over a ``duckdb`` connection."""

    def __init__(self, con) -> None:
        self.con = con

    def execute(self, sql: str, params: Sequence = ()) -> list[tuple]:
        cursor = self.con.execute(sql, list(params))
        return cursor.fetchall() if cursor.description else []

    def frame(self, sql: str, params: Sequence = ()) -> pd.DataFrame:
        return self.con.execute(sql, list(params)).df()

    def arrow(self, sql: str, params: Sequence = ()):
        return self.con.sql(sql, params=list(params)).to_arrow_table()

    def read_bulk(self, sql: str, params: Sequence = ()):
        """The rows as Arrow straight from DuckDB (no Python object per value), numbers as ``float64``."""
        import pyarrow as pa

        table = self.con.sql(sql, params=list(params)).to_arrow_table()
        return table.cast(pa.schema([(f.name, pa.float64() if _numeric(f.type) else f.type) for f in table.schema]))

    def insert_bulk(self, table: str, rows) -> None:
        self.insert_frame(table, rows)

    def insert_frame(self, table: str, frame: pd.DataFrame, *, on_conflict: str | None = None,
                     key: Sequence[str] = ()) -> None:
        columns = list(frame.column_names if hasattr(frame, "column_names") else frame.columns)
        self.con.register("incoming_rows", frame)
        try:
            self.con.execute(f"INSERT INTO {table} ({', '.join(columns)}) SELECT {', '.join(columns)} FROM "
                             f"incoming_rows {conflict_clause(columns, on_conflict, key)}")
        finally:
            self.con.unregister("incoming_rows")

    def tables(self) -> set[str]:
        return {str(r[0]) for r in self.con.execute(TABLES_SQL).fetchall()}

    @staticmethod
    def ddl(statement: str) -> str:
        return statement

    def begin(self) -> None:
        self.con.begin()

    def commit(self) -> None:
        self.con.commit()

    def rollback(self) -> None:
        self.con.rollback()

    def close(self) -> None:
        self.con.close()


class DuckDBStore(Store):
    """One library file (or ``:memory:``): its path, its lock, and short-lived connections to it.

    Parameters
    ----------
    path : str or Path
        The file, or ``":memory:"``.
    timeout : float, optional
        Seconds to wait for the lock (default 30, or ``$TTA_LIBRARY_TIMEOUT``).
    """

    kind = "duckdb"
    shared = False

    def __init__(self, path: str | Path, *, timeout: float | None = None) -> None:
        path = str(path)
        memory = path == MEMORY
        super().__init__(path if memory else str(Path(path).expanduser().absolute()), timeout=timeout)
        self.memory = memory
        self._memory_con = None
        self._thread_lock = threading.RLock()
        self._file_lock = None

    @classmethod
    def claims(cls, target: str) -> bool:
        return True

    @property
    def errors(self) -> tuple[type[BaseException], ...]:
        import duckdb

        return (duckdb.Error,)

    def exists(self) -> bool:
        """Whether the library holds anything yet (a file on disk, or an in-memory one started)."""
        return self._memory_con is not None if self.memory else Path(self.path).is_file()

    # ------------------------------------------------------------------ locking
    def _lock(self):
        if self._file_lock is None:
            from filelock import FileLock

            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self._file_lock = FileLock(f"{self.path}.lock", timeout=self.timeout, fallback_to_soft=False,
                                       preserve_lock_file=True)
        return self._file_lock

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        from filelock import Timeout

        start = time.perf_counter()
        if self.memory:
            with self._thread_lock:
                self.longest_wait_s = max(self.longest_wait_s, time.perf_counter() - start)
                yield
            return
        try:
            self._lock().acquire()
        except Timeout:
            raise LibraryBusyError(
                f"{self.path}: expected to get the library within {self.timeout:g} s; another process or "
                "browser session held it all that time. Try again, or wait longer (TTA_LIBRARY_TIMEOUT)."
            ) from None
        except OSError as exc:
            raise LibraryError(f"{self.path}: cannot lock {self.path}.lock: {exc.strerror or exc}. Keep the "
                               "library on a local disk you can write to.") from None
        self.longest_wait_s = max(self.longest_wait_s, time.perf_counter() - start)
        try:
            yield
        finally:
            self._lock().release()

    # ------------------------------------------------------------------ connections
    def _check_header(self) -> None:
        """Refuse an existing, non-empty file that is not a DuckDB database (its magic ``DUCK`` at byte 8)."""
        if self.memory or not self.exists():
            return
        try:
            with open(self.path, "rb") as f:
                head = f.read(12)
        except OSError as exc:
            raise LibraryError(f"{self.path}: cannot read it: {exc.strerror or exc}. Give another --db path.") from None
        if head and head[8:12] != b"DUCK":
            raise LibraryError(f"{self.path}: expected a library database (a DuckDB file); got another kind of "
                               "file. Give another --db path.")

    def _check_foreign(self) -> None:
        """A DuckDB file never used by the planner (no ``<file>.lock`` beside it) is read read-only first:
        another program's database is refused before anything (not even the lock file) is written."""
        if self.memory or not self.exists() or Path(f"{self.path}.lock").exists():
            return
        import duckdb

        try:
            con = duckdb.connect(self.path, read_only=True)
        except duckdb.Error:
            return                                # in use or damaged: the locked open below says which
        try:
            self.refuse_foreign(DuckDBConnection(con).tables())
        finally:
            con.close()

    def _open(self, *, create: bool):
        import duckdb

        if self.memory:
            if self._memory_con is None:
                self._memory_con = duckdb.connect(MEMORY)
            return self._memory_con
        if create:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            return duckdb.connect(self.path)
        except duckdb.Error as exc:
            raise LibraryError(f"{self.path}: expected a library database (a DuckDB file); opening it failed: "
                               f"{' '.join(str(exc).split())[:300]}. Give another --db path.") from None

    @contextlib.contextmanager
    def _session(self, *, create: bool) -> Iterator[DuckDBConnection | None]:
        if not create and not self.exists():   # nothing to read, and nothing (not even the lock file) is made
            yield None
            return
        self._check_header()                     # before the lock: no lock file beside a file that is not ours
        self._check_foreign()
        with self._locked():
            if not create and not self.exists():   # removed while we waited
                yield None
                return
            con = self._open(create=create)
            try:
                yield DuckDBConnection(con)
            finally:
                if not self.memory:
                    con.close()

    def close(self) -> None:
        """Forget an in-memory library (a file needs nothing: every connection is already closed)."""
        if self._memory_con is not None:
            self._memory_con.close()
            self._memory_con = None

    # ------------------------------------------------------------------ compaction
    def compact(self) -> tuple[int, int]:
        """Checkpoint and rewrite the file without free space: the tables are copied into ``<file>.compact``,
        which then replaces the file (``os.replace``, atomic), all under the lock."""
        if self.memory or not self.exists():
            return 0, 0
        import duckdb

        path = Path(self.path)
        fresh = path.with_name(path.name + ".compact")
        with self.connect(create=True) as con:   # holds the lock throughout; migrates an older file first
            con.execute("CHECKPOINT")
            con.close()
            before = path.stat().st_size
            fresh.unlink(missing_ok=True)
            copier = duckdb.connect()
            try:
                copier.execute(f"ATTACH {_quoted(str(path))} AS src (READ_ONLY)")
                copier.execute(f"ATTACH {_quoted(str(fresh))} AS dst")
                copier.execute("COPY FROM DATABASE src TO dst")
                # the copy restarts each sequence at its last value given: move it past every id in use
                for sequence, table, column in (("run_ids", "runs", "run_id"),
                                                 ("speed_table_ids", "speed_tables", "table_id"),
                                                 ("audit_ids", "audit", "event_id")):
                    top = copier.execute(f"SELECT coalesce(max({column}), 0) FROM dst.{table}").fetchall()[0][0]
                    last = copier.execute("SELECT last_value FROM duckdb_sequences() WHERE database_name = 'dst' "
                                          "AND sequence_name = ?", [sequence]).fetchall()
                    value = (last[0][0] if last and last[0][0] is not None else 0) + 1   # the next id, not used up
                    if value <= top:
                        raise LibraryError(f"{path}: compaction would give ids again ({sequence}: next {value} <= "
                                           f"{top}); the file was left as it was.")
                copier.execute("DETACH src")
                copier.execute("DETACH dst")
            except duckdb.Error as exc:
                copier.close()
                fresh.unlink(missing_ok=True)
                raise LibraryError(f"{path}: compaction failed ({' '.join(str(exc).split())[:200]}); the file was "
                                   "left as it was.") from None
            except BaseException:
                copier.close()
                fresh.unlink(missing_ok=True)
                raise
            copier.close()
            os.replace(fresh, path)
            after = path.stat().st_size
        return before, after


def _numeric(kind) -> bool:
    import pyarrow as pa

    return pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind)


def _quoted(path: str) -> str:
    return "'" + path.replace("'", "''") + "'"
