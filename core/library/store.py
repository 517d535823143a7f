"""Where the library lives, and the small interface every store gives the rest of ``core.library``.

Which store
    ``--db TARGET`` (the CLI), else the environment variable ``TTA_LIBRARY_DB``, else
    ``library.duckdb`` in the per-user data directory (``platformdirs.user_data_path``:
    ``~/.local/share/tta-planner`` on Linux).  A target is a DuckDB file (the default, embedded),
    ``:memory:``, or a PostgreSQL server's URL (``postgresql://user@host:5432/db``).  The kinds
    are a registry (:data:`core.library.stores.STORES`): :func:`core.library.stores.open_store` picks the
    first that claims a target; adding a kind touches its own module and the registry, nothing else.

The interface
    A store opens short connections (:meth:`Store.connect`, :meth:`Store.transaction`); a
    connection (:class:`Connection`) runs SQL with ``?`` parameters and returns rows, a pandas
    frame or an Arrow table, inserts a frame, and names its tables.  The SQL above this
    interface is written once, in the part of SQL both stores accept (``ON CONFLICT``,
    ``RETURNING``, ``string_agg``, ``strpos``, sequences); the few differences of table
    definitions are a dialect table in the store's module.  Creating and upgrading the tables
    (:mod:`core.library.schema`), and refusing a database that is not a library, happen here,
    once for every kind.

Concurrency
    The DuckDB store takes a file lock around every connection (:mod:`core.library.store_duckdb`);
    the PostgreSQL store relies on the server's transactions and the unique content hash
    (:mod:`core.library.store_postgres`).  Either way every run is written in one transaction.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from typing import ClassVar, Protocol

import pandas as pd

from core.errors import LibraryError
from core.library.schema import SCHEMA_VERSION, apply_migrations, current_version

#: the environment variable naming the library (the CLI's ``--db`` wins over it)
ENV_VAR = "TTA_LIBRARY_DB"
#: seconds to wait for the library before giving up (``TTA_LIBRARY_TIMEOUT`` overrides)
TIMEOUT_ENV_VAR = "TTA_LIBRARY_TIMEOUT"
DEFAULT_TIMEOUT_S = 30.0
APP_NAME = "tta-planner"
MEMORY = ":memory:"


def default_db_path() -> str:
    """The library used when none is given: ``$TTA_LIBRARY_DB``, else the per-user data directory.

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


def conflict_clause(columns: Sequence[str], on_conflict: str | None, key: Sequence[str] = ()) -> str:
    """The ``ON CONFLICT`` tail of an insert, as both stores read it.

    >>> conflict_clause(["a", "b", "c"], "replace", key=["a"])
    'ON CONFLICT (a) DO UPDATE SET b = excluded.b, c = excluded.c'
    >>> conflict_clause(["a"], "ignore")
    'ON CONFLICT DO NOTHING'
    """
    if on_conflict is None:
        return ""
    if on_conflict == "ignore":
        return "ON CONFLICT DO NOTHING"
    rest = [c for c in columns if c not in key]
    return f"ON CONFLICT ({', '.join(key)}) DO UPDATE SET " + ", ".join(f"{c} = excluded.{c}" for c in rest)


class Connection(Protocol):
    """One open connection to a store: what ``core.library`` asks of it (SQL with ``?`` parameters)."""

    def execute(self, sql: str, params: Sequence = ()) -> list[tuple]:
        """Run one statement; its rows (empty for a statement without any)."""

    def frame(self, sql: str, params: Sequence = ()) -> pd.DataFrame:
        """A query's rows as a frame (whole numbers ``int64``, or ``float64`` with NaN where some are NULL)."""

    def arrow(self, sql: str, params: Sequence = ()):
        """A query's rows as a ``pyarrow.Table`` typed as the table's columns (an export writes it)."""

    def read_bulk(self, sql: str, params: Sequence = ()):
        """Many rows at once as a ``pyarrow.Table``: every number ``float64`` (NULL a null), text ``string``
        (a refit loads its series so: Arrow from DuckDB, ``COPY ... TO STDOUT`` from PostgreSQL)."""

    def insert_bulk(self, table: str, rows) -> None:
        """Insert a ``pyarrow.Table`` (its columns named as the table's) in one statement, no conflict
        handling (a benchmark fills a library so: Arrow into DuckDB, ``COPY ... FROM STDIN`` into PostgreSQL)."""

    def insert_frame(self, table: str, frame: pd.DataFrame, *, on_conflict: str | None = None,
                     key: Sequence[str] = ()) -> None:
        """Insert the frame's rows (its columns named as the table's); NaN and NA become NULL."""

    def tables(self) -> set[str]:
        """The names of the tables in the connection's schema."""

    def ddl(self, statement: str) -> str:
        """A table definition of :mod:`core.library.schema` as this store reads it."""

    def begin(self) -> None: ...

    def commit(self) -> None: ...

    def rollback(self) -> None: ...


TABLES_SQL = ("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
              "AND table_catalog = current_database()")


class Store:
    """A library's database: the base of every kind (see the module docstring).

    Attributes
    ----------
    path : str
        What names the store (a file, ``:memory:``, a URL without its password).
    kind : str
        Its key in ``core.library.stores.STORES``.
    shared : bool
        Whether the store is meant to be shared by several servers (a database server).
    longest_wait_s : float
        The longest this object has waited for the library (a benchmark reads it).
    errors : tuple of exception types
        What the store's driver raises (a run that fails to be written is refused by these).
    """

    kind: ClassVar[str] = ""
    shared: ClassVar[bool] = False
    memory = False

    def __init__(self, target: str, *, timeout: float | None = None) -> None:
        self.path = target
        self.timeout = _timeout(timeout)
        self.longest_wait_s = 0.0

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.path!r})"

    @classmethod
    def claims(cls, target: str) -> bool:
        """Whether ``target`` names a store of this kind."""
        raise NotImplementedError

    @property
    def errors(self) -> tuple[type[BaseException], ...]:
        raise NotImplementedError

    def exists(self) -> bool:
        """Whether the library holds anything yet (its tables are made)."""
        raise NotImplementedError

    def worker_target(self) -> str | None:
        """What another process opens this store with (a Dask worker loading its chunk): the file or the
        URL (with its password); None where it cannot (an in-memory library)."""
        return None if self.memory else self.path

    def prepare_bulk_read(self) -> None:
        """Make what reading many runs' series at once needs (nothing for an embedded file)."""

    def _session(self, *, create: bool) -> contextlib.AbstractContextManager:
        """An open :class:`Connection` (``None``: nothing to read and nothing to make), closed afterwards."""
        raise NotImplementedError

    def _schema_guard(self, con: Connection) -> None:
        """Called inside the migration's transaction before the version is read again (a server's lock)."""

    def compact(self) -> tuple[int, int]:
        """Give the space of removed rows back: the store's size in bytes before and after."""
        raise NotImplementedError

    def close(self) -> None:
        """Forget what the store keeps open between connections (an in-memory library)."""

    # ------------------------------------------------------------------ shared logic
    def refuse_foreign(self, tables: set[str]) -> None:
        """``LibraryError`` for a database of another program: tables, but no ``schema_version``."""
        if tables and "schema_version" not in tables:
            names = ", ".join(sorted(tables)[:6])
            raise LibraryError(f"{self.path}: expected a run library of this planner (a schema_version table) "
                               f"or an empty database; it holds other tables ({names}). Give another --db; "
                               "nothing was written.")

    def _ours(self, con: Connection, *, create: bool) -> bool:
        """Whether the library's tables are there (made or upgraded now when ``create``, or when older);
        a database holding other tables and no ``schema_version`` is refused without writing."""
        tables = con.tables()
        self.refuse_foreign(tables)
        if "schema_version" not in tables:
            if not create:
                return False
            version = 0
        else:
            version = current_version(con)
        if version == SCHEMA_VERSION:
            return True
        if version > SCHEMA_VERSION:
            raise LibraryError(f"{self.path}: expected a library of schema version {SCHEMA_VERSION} or older; "
                               f"the file is version {version} (made by a newer planner). Upgrade the planner.")
        con.begin()
        try:
            self._schema_guard(con)
            version = current_version(con) if "schema_version" in con.tables() else 0
            apply_migrations(con, start=version)
        except self.errors as exc:
            con.rollback()
            raise LibraryError(f"{self.path}: upgrading the library from schema version {version} to "
                               f"{SCHEMA_VERSION} failed ({' '.join(str(exc).split())[:200]}); the file was left at "
                               f"version {version}.") from None
        except BaseException:
            con.rollback()
            raise
        con.commit()
        return True

    @contextlib.contextmanager
    def connect(self, *, create: bool = False) -> Iterator[Connection | None]:
        """An open connection with the library's tables ready; ``None`` when there is no library yet and
        ``create`` is False (a reader's "empty library": nothing is made)."""
        with self._session(create=create) as con:
            if con is None or not self._ours(con, create=create):
                yield None
                return
            yield con

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Connection]:
        """A connection inside one transaction: committed on success, rolled back on any exception."""
        with self.connect(create=True) as con:
            con.begin()
            try:
                yield con
            except BaseException:
                con.rollback()
                raise
            con.commit()

    def schema_version(self) -> int:
        """The library's schema version (0 when it does not exist yet)."""
        with self.connect() as con:
            return 0 if con is None else current_version(con)
