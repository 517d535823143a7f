"""A library on a PostgreSQL server: several app servers and CLI processes share one set of tables.

``TTA_LIBRARY_DB=postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE`` (or ``--db`` with the
URL) uses the tables in the URL's database (its ``current_schema()``, ``public`` unless
``options=-csearch_path=...`` says otherwise); the first write makes them.  The queries are
those of the DuckDB store; this module only connects (``psycopg``, version 3), turns ``?``
parameters into ``%s``, reads rows into frames and Arrow tables, copies series in with
``COPY``, and translates the few table definitions DuckDB writes otherwise (:data:`DIALECT`).

Concurrency
    No file lock: every connection is the server's own, every run one transaction, and the
    unique content hash (and data hash) makes two writers of the same run add it once: the
    second insert waits for the first transaction and then does nothing (``ON CONFLICT DO
    NOTHING``).  Creating and upgrading the tables holds a transaction-scoped advisory lock, so
    two servers starting at once migrate once.  A writer killed mid-run leaves nothing of it
    (the server rolls the transaction back when its connection drops).
"""

from __future__ import annotations

import contextlib
import re
import time
import warnings
from collections.abc import Iterator, Sequence

import pandas as pd

from core.errors import LibraryBusyError, LibraryError
from core.library.schema import ALL_TABLES
from core.library.store import TABLES_SQL, Store, conflict_clause

#: DuckDB's table definitions as PostgreSQL reads them (pattern -> replacement)
DIALECT = {
    r"\bDOUBLE\b": "DOUBLE PRECISION",
    r"\bBLOB\b": "BYTEA",
    # schema version 2 moved comma-separated tags into run_tags: string_split is DuckDB's, and
    # PostgreSQL 15 wants a name for a subquery in FROM
    r"\bstring_split\(": "string_to_array(",
    r"IS NOT NULL\)\s+WHERE": "IS NOT NULL) AS split_tags WHERE",
}
#: rows from which an insert with a conflict rule goes through a temporary table and ``COPY``
COPY_ROWS = 64
#: the index a bulk read of series uses (made by the first refit; a file store needs none: DuckDB skips by zone maps)
SERIES_INDEX = "CREATE INDEX IF NOT EXISTS series_run_rows ON series (run_id, row_index)"
#: the advisory lock held while the tables are made or upgraded (any number both sides agree on)
SCHEMA_LOCK = 0x7474_6170   # "ttap"

# PostgreSQL type OIDs -> how a frame and an Arrow table hold them
_INTEGER_OIDS = {20: "int64", 21: "int16", 23: "int32"}
_FLOAT_OIDS = {700: "float32", 701: "float64", 1700: "float64"}
_TIMESTAMP_OIDS = {1114, 1184}
_BYTES_OIDS = {17}
_BOOL_OIDS = {16}


def _sql(statement: str) -> str:
    """``?`` parameters as psycopg's ``%s`` (a literal ``%`` doubled).

    >>> _sql("SELECT a FROM t WHERE b = ? AND c LIKE '%x'")
    "SELECT a FROM t WHERE b = %s AND c LIKE '%%x'"
    """
    return statement.replace("%", "%%").replace("?", "%s")


def _plain(value):
    """A value psycopg writes: NaN and NA as NULL, numpy scalars as Python ones."""
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and value != value:
        return None
    if hasattr(value, "item") and not isinstance(value, (bytes, str)):
        value = value.item()
        if isinstance(value, float) and value != value:
            return None
    return value


def redact(url: str) -> str:
    """The URL without its password (what messages and the pages show).

    >>> redact("postgresql://tta:secret@db.example:5432/runs")
    'postgresql://tta:***@db.example:5432/runs'
    """
    return re.sub(r"(://[^:/@]*):[^@]*@", r"\1:***@", url)


class PostgresConnection:
    """A :class:`core.library.store.Connection` over a ``psycopg`` connection in autocommit mode (transactions
    are begun and ended explicitly, as DuckDB's)."""

    def __init__(self, con) -> None:
        self.con = con

    def execute(self, sql: str, params: Sequence = ()) -> list[tuple]:
        with self.con.cursor() as cur:
            cur.execute(_sql(sql), [_plain(p) for p in params])
            return cur.fetchall() if cur.description else []

    def _fetch(self, sql: str, params: Sequence):
        with self.con.cursor() as cur:
            cur.execute(_sql(sql), [_plain(p) for p in params])
            return [(d.name, d.type_code) for d in cur.description], cur.fetchall()

    def frame(self, sql: str, params: Sequence = ()) -> pd.DataFrame:
        described, rows = self._fetch(sql, params)
        columns = list(zip(*rows)) if rows else [()] * len(described)
        out = {}
        for (name, oid), values in zip(described, columns):
            if oid in _INTEGER_OIDS:
                has_null = any(v is None for v in values)
                out[name] = pd.Series([float("nan") if v is None else v for v in values] if has_null else values,
                                      dtype="float64" if has_null else _INTEGER_OIDS[oid])
            elif oid in _FLOAT_OIDS:
                out[name] = pd.Series([float("nan") if v is None else float(v) for v in values], dtype="float64")
            elif oid in _TIMESTAMP_OIDS:
                out[name] = pd.to_datetime(pd.Series(values, dtype=object))
            else:
                out[name] = pd.Series(values, dtype=object)
        return pd.DataFrame(out, columns=[name for name, _ in described])

    def arrow(self, sql: str, params: Sequence = ()):
        import pyarrow as pa

        described, rows = self._fetch(sql, params)
        columns = list(zip(*rows)) if rows else [()] * len(described)
        types = []
        for _, oid in described:
            if oid in _INTEGER_OIDS:
                types.append(getattr(pa, _INTEGER_OIDS[oid])())
            elif oid in _FLOAT_OIDS:
                types.append(pa.float64())
            elif oid in _TIMESTAMP_OIDS:
                types.append(pa.timestamp("us"))
            elif oid in _BYTES_OIDS:
                types.append(pa.binary())
            elif oid in _BOOL_OIDS:
                types.append(pa.bool_())
            else:
                types.append(pa.string())
        arrays = [pa.array(list(values), type=t) for values, t in zip(columns, types)]
        schema = pa.schema([(name, t) for (name, _), t in zip(described, types)])
        return pa.Table.from_arrays(arrays, schema=schema)

    def read_bulk(self, sql: str, params: Sequence = ()):
        """The rows through ``COPY (query) TO STDOUT`` as CSV, parsed by Arrow: no Python object per value.

        PostgreSQL writes a float as its shortest exact text (``extra_float_digits`` 1, the default
        since version 12), so the parsed ``float64`` values are the stored ones; an unquoted empty
        field is NULL, a quoted one an empty text."""
        import pyarrow as pa
        from psycopg import ClientCursor
        from pyarrow import csv

        query = ClientCursor(self.con).mogrify(_sql(sql), [_plain(p) for p in params])
        with self.con.cursor() as cur:
            cur.execute(f"SELECT * FROM ({query}) AS bulk LIMIT 0")
            described = [(d.name, d.type_code) for d in cur.description]
            with cur.copy(f"COPY ({query}) TO STDOUT WITH (FORMAT csv, HEADER true)") as copy:
                data = b"".join(bytes(part) for part in copy)
        types = {name: pa.float64() if oid in _INTEGER_OIDS or oid in _FLOAT_OIDS else pa.string()
                 for name, oid in described}
        if not data:
            return pa.table({name: pa.array([], type=t) for name, t in types.items()})
        return csv.read_csv(pa.BufferReader(data), convert_options=csv.ConvertOptions(
            column_types=types, null_values=[""], strings_can_be_null=True, quoted_strings_can_be_null=False))

    def insert_bulk(self, table: str, rows) -> None:
        """The Arrow table as CSV (Arrow's writer: floats in their shortest exact text) through one ``COPY``."""
        import pyarrow as pa
        from pyarrow import csv

        sink = pa.BufferOutputStream()
        csv.write_csv(rows, sink, write_options=csv.WriteOptions(include_header=False, quoting_style="all_valid"))
        with self.con.cursor() as cur, cur.copy(f"COPY {table} ({', '.join(rows.column_names)}) FROM STDIN "
                                                "WITH (FORMAT csv)") as copy:
            copy.write(sink.getvalue().to_pybytes())

    def insert_frame(self, table: str, frame: pd.DataFrame, *, on_conflict: str | None = None,
                     key: Sequence[str] = ()) -> None:
        """Insert the frame's rows: ``COPY`` without a conflict rule; with one, many rows of distinct keys are
        copied into a temporary table and inserted from it by one ``INSERT ... ON CONFLICT`` (a refit's batch of
        fits), a few rows by ``executemany``."""
        columns = list(frame.columns)
        rows = list(zip(*[[_plain(v) for v in frame[c].tolist()] for c in columns])) if len(frame) else []
        if not rows:
            return
        names = ", ".join(columns)
        with self.con.cursor() as cur:
            if on_conflict is None:                   # the series of a run: COPY, one round trip
                with cur.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)
            elif len(rows) >= COPY_ROWS and not (key and frame.duplicated(list(key)).any()):
                staging = f"incoming_{table}"
                cur.execute(f"DROP TABLE IF EXISTS {staging}")
                cur.execute(f"CREATE TEMPORARY TABLE {staging} (LIKE {table})")
                cur.execute(f"SELECT {names} FROM {staging} LIMIT 0")
                whole = [d.type_code in _INTEGER_OIDS for d in cur.description]
                with cur.copy(f"COPY {staging} ({names}) FROM STDIN") as copy:
                    for row in rows:             # a whole number held as a float: as an INSERT casts it
                        copy.write_row([round(v) if w and isinstance(v, float) else v for v, w in zip(row, whole)])
                cur.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM {staging} "
                            f"{conflict_clause(columns, on_conflict, key)}")
                cur.execute(f"DROP TABLE {staging}")
            else:
                marks = ", ".join("%s" for _ in columns)
                cur.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks}) "
                                f"{conflict_clause(columns, on_conflict, key)}", rows)

    def tables(self) -> set[str]:
        return {str(r[0]) for r in self.execute(TABLES_SQL)}

    @staticmethod
    def ddl(statement: str) -> str:
        """A DuckDB table definition as PostgreSQL reads it.

        >>> PostgresConnection.ddl("CREATE TABLE t (x DOUBLE, data BLOB NOT NULL)")
        'CREATE TABLE t (x DOUBLE PRECISION, data BYTEA NOT NULL)'
        """
        for pattern, new in DIALECT.items():
            statement = re.sub(pattern, new, statement)
        return statement

    def begin(self) -> None:
        self.con.execute("BEGIN")

    def commit(self) -> None:
        self.con.execute("COMMIT")

    def rollback(self) -> None:
        if not self.con.closed:
            self.con.execute("ROLLBACK")

    def close(self) -> None:
        self.con.close()


class PostgresStore(Store):
    """The library's tables on a PostgreSQL server named by a ``postgresql://`` URL."""

    kind = "postgresql"
    shared = True

    def __init__(self, url: str, *, timeout: float | None = None) -> None:
        super().__init__(redact(url), timeout=timeout)
        self.url = url

    @classmethod
    def claims(cls, target: str) -> bool:
        return target.startswith(("postgresql://", "postgres://"))

    @property
    def errors(self) -> tuple[type[BaseException], ...]:
        import psycopg

        return (psycopg.Error,)

    def _connect(self):
        try:
            import psycopg
        except ImportError:   # pragma: no cover - psycopg is in requirements.txt
            raise LibraryError(f"{self.path}: a PostgreSQL library needs psycopg; pip install 'psycopg[binary]'.") \
                from None
        start = time.perf_counter()
        try:
            params = psycopg.conninfo.conninfo_to_dict(self.url)
            params["options"] = f"{params.get('options', '')} -c lock_timeout={int(self.timeout * 1000)}".strip()
            params["connect_timeout"] = max(1, int(self.timeout))
            con = psycopg.connect(**params, autocommit=True)
        except psycopg.ProgrammingError as exc:
            raise LibraryError(f"{self.path}: expected a PostgreSQL URL (postgresql://USER@HOST:PORT/DATABASE); "
                               f"{' '.join(str(exc).split())[:200]}.") from None
        except psycopg.OperationalError as exc:
            text = " ".join(str(exc).split())[:300]
            if "timeout" in text.lower():
                raise LibraryBusyError(f"{self.path}: expected to reach the library's server within "
                                       f"{self.timeout:g} s; {text}. Try again.") from None
            raise LibraryError(f"{self.path}: expected a PostgreSQL server to connect to; {text}. Check the URL "
                               "(TTA_LIBRARY_DB or --db) and that the server is running.") from None
        self.longest_wait_s = max(self.longest_wait_s, time.perf_counter() - start)
        return con

    @contextlib.contextmanager
    def _session(self, *, create: bool) -> Iterator[PostgresConnection]:
        con = self._connect()
        try:
            yield PostgresConnection(con)
        finally:
            con.close()

    def worker_target(self) -> str | None:
        return self.url

    def prepare_bulk_read(self) -> None:
        """The index on ``series (run_id, row_index)``: without it each chunk's read scans every series row.
        Made once (it holds off writers of series while it is built: about a minute for 60 million rows)."""
        import psycopg

        with self.connect(create=True) as con:
            if con.execute("SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND "
                           "indexname = 'series_run_rows'"):
                return
            try:
                con.execute(SERIES_INDEX)
            except psycopg.Error as exc:         # not the tables' owner: the refit still runs, reading slower
                why = " ".join(str(exc).split())[:200]
                warnings.warn(f"{self.path}: could not add the index series_run_rows ({why}); each chunk of the "
                              f"refit reads the whole series table. The tables' owner can add it: {SERIES_INDEX}.",
                              stacklevel=2)

    def _schema_guard(self, con: PostgresConnection) -> None:
        con.execute("SELECT pg_advisory_xact_lock(?)", [SCHEMA_LOCK])

    def exists(self) -> bool:
        with self._session(create=False) as con:
            return "schema_version" in con.tables()

    def compact(self) -> tuple[int, int]:
        """``VACUUM`` the library's tables (the server gives removed rows' space back to new rows): the tables'
        size before and after."""
        if not self.exists():
            return 0, 0

        def size(con) -> int:
            return int(sum(con.execute("SELECT pg_total_relation_size(?::regclass)", [t])[0][0]
                           for t in ALL_TABLES))

        with self.connect(create=True) as con:
            before = size(con)
            for table in ALL_TABLES:
                con.execute(f"VACUUM {table}")
            after = size(con)
        return before, after
