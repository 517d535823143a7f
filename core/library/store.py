"""Where the library's database file lives, and the one way to open it: under a lock, briefly.

The file
    ``--db PATH`` (the CLI), else the environment variable ``TTA_LIBRARY_DB``, else
    ``library.duckdb`` in the per-user data directory (``platformdirs.user_data_path``:
    ``~/.local/share/tta-planner`` on Linux).  ``:memory:`` keeps a library in memory for the
    life of one :class:`Store` (one command), written nowhere.

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
older version upgrades it in place (:mod:`core.library.schema`).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from core.errors import LibraryBusyError, LibraryError
from core.library.schema import SCHEMA_VERSION, apply_migrations, current_version

#: the environment variable naming the library file (the CLI's ``--db`` wins over it)
ENV_VAR = "TTA_LIBRARY_DB"
#: seconds to wait for the library before giving up (``TTA_LIBRARY_TIMEOUT`` overrides)
TIMEOUT_ENV_VAR = "TTA_LIBRARY_TIMEOUT"
DEFAULT_TIMEOUT_S = 30.0
APP_NAME = "tta-planner"
MEMORY = ":memory:"


def default_db_path() -> str:
    """The library file used when none is given: ``$TTA_LIBRARY_DB``, else the per-user data directory.

    >>> import os
    >>> saved = os.environ.get(ENV_VAR)
    >>> os.environ[ENV_VAR] = "/tmp/team/library.duckdb"
    >>> default_db_path()
    '/tmp/team/library.duckdb'
    >>> _ = os.environ.pop(ENV_VAR) if saved is None else os.environ.update({ENV_VAR: saved})
    """
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return env
    from platformdirs import user_data_path

    return str(user_data_path(APP_NAME) / "library.duckdb")


def _timeout(timeout: float | None) -> float:
    if timeout is not None:
        return float(timeout)
    text = os.environ.get(TIMEOUT_ENV_VAR, "").strip()
    try:
        return float(text) if text else DEFAULT_TIMEOUT_S
    except ValueError:
        raise LibraryError(f"{TIMEOUT_ENV_VAR}: expected seconds (a number); got {text!r}.") from None


class Store:
    """One library database: its path, its lock, and short-lived connections to it.

    Parameters
    ----------
    path : str or Path, optional
        The file, or ``":memory:"``; default :func:`default_db_path`.
    timeout : float, optional
        Seconds to wait for the lock (default 30, or ``$TTA_LIBRARY_TIMEOUT``).

    Attributes
    ----------
    longest_wait_s : float
        The longest this object has waited for the lock (a benchmark reads it).
    """

    def __init__(self, path: str | Path | None = None, *, timeout: float | None = None) -> None:
        path = default_db_path() if path is None else str(path)
        self.memory = path == MEMORY
        self.path = path if self.memory else str(Path(path).expanduser().absolute())
        self.timeout = _timeout(timeout)
        self.longest_wait_s = 0.0
        self._memory_con = None
        self._thread_lock = threading.RLock()
        self._file_lock = None

    def __repr__(self) -> str:
        return f"Store({self.path!r})"

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

    def _prepare(self, con) -> None:
        """Create the tables of a new file, or upgrade an older one (one transaction)."""
        version = current_version(con)
        if version == SCHEMA_VERSION:
            return
        if version > SCHEMA_VERSION:
            raise LibraryError(f"{self.path}: expected a library of schema version {SCHEMA_VERSION} or older; "
                               f"the file is version {version} (made by a newer planner). Upgrade the planner.")
        import duckdb

        con.begin()
        try:
            apply_migrations(con, start=version)
        except duckdb.Error as exc:
            con.rollback()
            raise LibraryError(f"{self.path}: upgrading the library from schema version {version} to "
                               f"{SCHEMA_VERSION} failed ({' '.join(str(exc).split())[:200]}); the file was left at "
                               f"version {version}.") from None
        except BaseException:
            con.rollback()
            raise
        con.commit()

    @contextlib.contextmanager
    def connect(self, *, create: bool = False) -> Iterator:
        """An open connection, the lock held until it is closed; ``None`` when the file does not exist
        and ``create`` is False (a reader's "empty library")."""
        if not create and not self.exists():   # nothing to read, and nothing (not even the lock file) is made
            yield None
            return
        self._check_header()                     # before the lock: no lock file beside a file that is not ours
        with self._locked():
            if not create and not self.exists():   # removed while we waited
                yield None
                return
            con = self._open(create=create)
            try:
                self._prepare(con)
                yield con
            finally:
                if not self.memory:
                    con.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator:
        """A connection inside one transaction: committed on success, rolled back on any exception."""
        with self.connect(create=True) as con:
            con.begin()
            try:
                yield con
            except BaseException:
                con.rollback()
                raise
            con.commit()

    def close(self) -> None:
        """Forget an in-memory library (a file needs nothing: every connection is already closed)."""
        if self._memory_con is not None:
            self._memory_con.close()
            self._memory_con = None

    def schema_version(self) -> int:
        """The file's schema version (0 when it does not exist yet)."""
        with self.connect() as con:
            return 0 if con is None else current_version(con)
