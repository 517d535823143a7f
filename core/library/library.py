"""The run library: add runs, list and filter them, load them back, tag and remove them.

Every method opens the database through :class:`core.library.store.Store` (the lock, a short
connection) and each run is written in its own transaction: a run is in the library whole or
not at all.  Runs are identified by the SHA-256 of their content (the file's bytes, or a run
directory's event files); adding content the library already holds changes nothing and says
which run holds it.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from pathlib import Path

import pandas as pd

from core.errors import InputError
from core.library.adding import (
    BATCH_ROWS,
    BATCH_RUNS,
    BATCH_SECONDS,
    AddReport,
    AddResult,
    PendingRun,
    Progress,
    check_tags,
    insert_run,
    insert_runs,
    utc_now,
    write_audit,
)
from core.library.filters import RunFilter
from core.library.records import content_hash, library_name, log_from_rows
from core.library.run_table import empty_runs, typed_runs
from core.library.settings import default_actor, keep_days_setting
from core.library.stores import open_store
from core.logs import RunLog


class Library:
    """The run library in one DuckDB file or on a PostgreSQL server (see :mod:`core.library.store`).

    Examples
    --------
    >>> from core.logs import read_log
    >>> lib = Library(":memory:")
    >>> data = b"epoch,step,loss,acc\\n1,1,2.0,0.5\\n1,2,1.5,0.6\\n2,1,1.0,0.8\\n2,2,0.8,0.95\\n"
    >>> log = read_log(data, "resnet20_Tesla V100.csv")
    >>> first = lib.add(log, data=data)
    >>> first.added, lib.add(log, data=data).message
    (True, 'resnet20_Tesla V100.csv: already in the library as run #1 (same content); nothing added.')
    >>> lib.runs()[["run_id", "model", "gpu", "n_points", "best_acc"]].to_dict("records")
    [{'run_id': 1, 'model': 'resnet20', 'gpu': 'Tesla V100', 'n_points': 4, 'best_acc': 0.95}]
    >>> lib.get(1).fingerprint() == log.fingerprint()
    True
    """

    def __init__(self, path: str | Path | None = None, *, timeout: float | None = None,
                 actor: str | None = None) -> None:
        self.store = open_store(path, timeout=timeout)
        self.actor = actor or default_actor()

    def __repr__(self) -> str:
        return f"Library({self.store.path!r})"

    @property
    def path(self) -> str:
        return self.store.path

    def exists(self) -> bool:
        return self.store.exists()

    # ------------------------------------------------------------------ writing
    def add(self, log: RunLog, *, data: bytes | None = None, digest: str | None = None, dataset: str | None = None,
            tags: Iterable[str] = (), n_params: int | None = None) -> AddResult:
        """Add one run (its content hash from ``data``, the file's bytes, or given as ``digest``)."""

        if digest is None:
            if data is None:
                raise InputError("Library.add: expected the file's bytes (data=) or its content hash (digest=); "
                                 "got neither.")
            digest = content_hash(data)
        report = self.add_runs([PendingRun(log, digest, dataset, check_tags(tags), n_params)])
        return report.results[0]

    def add_runs(self, pending: Iterable[PendingRun | AddResult | tuple[str, str]], *, total: int | None = None,
                 progress: Progress | None = None, action: str = "add", note: str = "",
                 batched: bool = False) -> AddReport:
        """Write runs as they come (each in its own transaction); ``(source, message)`` items are refusals,
        ``AddResult`` items runs found already present before they were read.

        ``pending`` is read lazily, outside the lock: a generator may read files while nothing
        is held.  Runs are written in batches (at most ``BATCH_RUNS`` runs, ``BATCH_ROWS`` rows or
        ``BATCH_SECONDS`` of reading), so the lock is taken once per batch, for writing only.
        ``progress(done, total, label)`` follows every run; when it returns False the import
        stops there, every run written complete and no other started.  ``batched`` writes each batch in
        one transaction (``adding.insert_runs``: a few statements a batch, not a few a run; a batch that fails
        is written again one run at a time): a stop then takes effect after the batch it falls in.
        """
        results: list[AddResult] = []
        errors: list[tuple[str, str]] = []
        batch: list[PendingRun] = []
        state = {"done": 0, "stop": False}
        total = total if total is not None else (len(pending) if isinstance(pending, Sequence) else 0)

        def tick(label: str) -> None:
            state["done"] += 1
            if progress is not None and progress(state["done"], max(total, state["done"]), label) is False:
                state["stop"] = True

        started, rows = time.perf_counter(), 0
        for item in pending:
            if isinstance(item, tuple):
                errors.append(item)
                tick(item[0])
            elif isinstance(item, AddResult):
                results.append(item)
                tick(item.source)
            else:
                batch.append(item)
                rows += item.log.n_points
            if state["stop"]:
                break
            if batch and (len(batch) >= BATCH_RUNS or rows >= BATCH_ROWS
                          or time.perf_counter() - started >= BATCH_SECONDS):
                self._write(batch, results, errors, tick, state, action, note, batched)
                batch, rows, started = [], 0, time.perf_counter()
                if state["stop"]:
                    break
        if batch and not state["stop"]:
            self._write(batch, results, errors, tick, state, action, note, batched)
        return AddReport(tuple(results), tuple(errors), cancelled=state["stop"])

    def _write(self, batch: list[PendingRun], results: list[AddResult], errors: list[tuple[str, str]], tick, state,
               action: str, note: str, batched: bool = False) -> None:
        added: list[AddResult] = []
        with self.store.connect(create=True) as con:
            written = None
            if batched and len(batch) > 1:
                with contextlib.suppress(*self.store.errors):
                    written = insert_runs(con, batch, actor=self.actor)
            try:
                for k, item in enumerate(batch):
                    source = item.log.source
                    try:
                        result = written[k] if written is not None else insert_run(con, item, actor=self.actor)
                    except self.store.errors as exc:
                        errors.append((source, f"{source}: expected a run the library can store; writing it failed "
                                               f"({' '.join(str(exc).split())[:200]}); nothing of it was added."))
                    else:
                        results.append(result)
                        if result.added and not result.restored:
                            added.append(result)
                    tick(source)
                    if state["stop"] and written is None:
                        return
            finally:
                if added:
                    with contextlib.suppress(*self.store.errors):
                        con.begin()
                        names = ", ".join(r.source for r in added)
                        head = f"{note}: " if note else ""
                        write_audit(con, self.actor, action, [r.run_id for r in added],
                                    f"{head}{len(added)} run(s): {names}")
                        con.commit()

    def audit(self, action: str, run_ids: Iterable[int], detail: str = "") -> None:
        """Record an event (an import, say) in the audit table in a transaction of its own."""
        with self.store.transaction() as con:
            write_audit(con, self.actor, action, run_ids, detail)

    def remove(self, run_ids: Iterable[int]) -> list[int]:
        """Remove runs: they leave every list and query at once but are kept, restorable (:meth:`restore`), until
        :meth:`purge` (``library vacuum``) deletes them past the keeping period; return the ids removed."""
        ids = sorted({int(i) for i in run_ids})
        if not ids or not self.exists():
            return []
        marks = ", ".join("?" for _ in ids)
        with self.store.transaction() as con:
            present = [int(r[0]) for r in con.execute(f"SELECT run_id FROM runs WHERE run_id IN ({marks}) AND "
                                                      "deleted_at IS NULL", ids)]
            if present:
                con.execute(f"UPDATE runs SET deleted_at = ? WHERE run_id IN ({', '.join('?' for _ in present)})",
                            [utc_now(), *present])
                write_audit(con, self.actor, "remove", present)
        return sorted(present)

    def restore(self, run_ids: Iterable[int]) -> list[int]:
        """Bring removed runs back (those not purged yet); return the ids restored."""
        ids = sorted({int(i) for i in run_ids})
        if not ids or not self.exists():
            return []
        marks = ", ".join("?" for _ in ids)
        with self.store.transaction() as con:
            found = [int(r[0]) for r in con.execute(f"SELECT run_id FROM runs WHERE run_id IN ({marks}) AND "
                                                    "deleted_at IS NOT NULL", ids)]
            if found:
                con.execute(f"UPDATE runs SET deleted_at = NULL WHERE run_id IN ({', '.join('?' for _ in found)})",
                            found)
                write_audit(con, self.actor, "restore", found)
        return sorted(found)

    def purge(self, keep_days: float | None = None, *, now: datetime | None = None) -> list[int]:
        """Delete for good the runs removed more than ``keep_days`` ago (default ``$TTA_LIBRARY_KEEP_DAYS`` or
        30; 0 purges every removed run), their series, fits and tags with them; return their ids."""
        keep_days = keep_days_setting() if keep_days is None else float(keep_days)
        if not self.exists():
            return []
        cutoff = (now or utc_now()) - timedelta(days=keep_days)
        with self.store.transaction() as con:
            ids = [int(r[0]) for r in con.execute("SELECT run_id FROM runs WHERE deleted_at IS NOT NULL AND "
                                                  "deleted_at <= ? ORDER BY run_id", [cutoff])]
            if ids:
                marks = ", ".join("?" for _ in ids)
                for table in ("series", "fits", "run_tags", "runs"):
                    con.execute(f"DELETE FROM {table} WHERE run_id IN ({marks})", ids)
                write_audit(con, self.actor, "purge", ids, f"removed more than {keep_days:g} day(s) before")
        return ids

    def removed(self) -> pd.DataFrame:
        """The removed runs not purged yet: ``run_id, source, model, gpu, split, n_points, deleted_at``."""
        with self.store.connect() as con:
            if con is None:
                return pd.DataFrame(columns=["run_id", "source", "model", "gpu", "split", "n_points", "deleted_at"])
            return con.frame("SELECT run_id, source, model, gpu, split, n_points, deleted_at FROM runs WHERE "
                             "deleted_at IS NOT NULL ORDER BY run_id")

    def history(self, limit: int | None = None) -> pd.DataFrame:
        """The audit table, latest first: ``event_id, happened_at, action, run_ids, detail, actor``."""
        columns = ["event_id", "happened_at", "action", "run_ids", "detail", "actor"]
        with self.store.connect() as con:
            if con is None:
                return pd.DataFrame(columns=columns)
            tail = f" LIMIT {int(limit)}" if limit else ""
            return con.frame(f"SELECT {', '.join(columns)} FROM audit ORDER BY event_id DESC{tail}")

    def tag(self, run_ids: Iterable[int], tags: Iterable[str], *, remove: bool = False) -> int:
        """Add (or with ``remove=True`` take away) tags on runs; return the number of runs that exist."""
        ids, tags = sorted({int(i) for i in run_ids}), check_tags(tags)
        if not ids or not tags or not self.exists():
            return 0
        marks = ", ".join("?" for _ in ids)
        with self.store.transaction() as con:
            present = [int(r[0]) for r in con.execute(f"SELECT run_id FROM runs WHERE run_id IN ({marks}) AND "
                                                      "deleted_at IS NULL", ids)]
            for run_id in present:
                for tag in tags:
                    if remove:
                        con.execute("DELETE FROM run_tags WHERE run_id = ? AND tag = ?", [run_id, tag])
                    else:
                        con.execute("INSERT INTO run_tags VALUES (?, ?) ON CONFLICT DO NOTHING", [run_id, tag])
        return len(present)

    # ------------------------------------------------------------------ reading
    def runs(self, run_filter: RunFilter | str | None = None) -> pd.DataFrame:
        """One row per run matching the filter (columns ``RUN_COLUMNS``, by id); empty when there is no file."""
        run_filter = run_filter if isinstance(run_filter, RunFilter) else RunFilter.parse(run_filter)
        where, params = run_filter.where()
        with self.store.connect() as con:
            if con is None:
                return empty_runs()
            table = con.frame(
                f"""SELECT r.*, (SELECT string_agg(tag, ',' ORDER BY tag) FROM run_tags t
                                  WHERE t.run_id = r.run_id) AS tags
                    FROM runs r WHERE r.deleted_at IS NULL AND {where} ORDER BY r.run_id""", params)
        return typed_runs(table)

    def get(self, run_id: int) -> RunLog:
        """The run with id ``run_id`` as it was added (``InputError`` when there is none)."""
        return self.get_many([run_id])[0][1]

    def get_many(self, run_ids: Iterable[int]) -> list[tuple[int, RunLog]]:
        """``(run_id, RunLog)`` for each id, in the order given; an unknown id raises ``InputError``."""
        ids = [int(i) for i in run_ids]
        if not ids:
            return []
        with self.store.connect() as con:
            if con is None:
                raise InputError(f"{self.path}: expected a library holding run #{ids[0]}; there is no library "
                                 "file yet. Add runs first (python -m core library add).")
            marks = ", ".join("?" for _ in set(ids))
            rows = con.frame(f"SELECT * FROM runs WHERE run_id IN ({marks}) AND deleted_at IS NULL",
                             sorted(set(ids)))
            series = con.frame(f"SELECT * FROM series WHERE run_id IN ({marks}) ORDER BY run_id, row_index",
                               sorted(set(ids)))
        by_id = {int(r["run_id"]): r for r in rows.to_dict("records")}
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise InputError(f"{self.path}: expected run ids in the library; run #{missing[0]} is not there. "
                             "See python -m core library list.")
        groups = {int(k): g for k, g in series.groupby("run_id", sort=False)} if len(series) else {}
        empty = series.iloc[0:0]
        return [(i, log_from_rows(by_id[i], groups.get(i, empty))) for i in ids]

    def load(self, run_filter: RunFilter | str | None = None, *, named: bool = True) -> list[RunLog]:
        """Every run the filter matches, by id; ``named``: each named ``source (library #id)`` (unique)."""
        table = self.runs(run_filter)
        logs = self.get_many(table["run_id"].tolist())
        if not named:
            return [log for _, log in logs]
        from dataclasses import replace

        return [replace(log, source=library_name(i, log.source)) for i, log in logs]

    def resolve(self, ref: str | int) -> int:
        """A run id from ``ref``: an id, a content-hash prefix (6+ hex digits), or a unique source name."""
        text = str(ref).strip()
        table = self.runs()
        if text.lstrip("#").isdigit() and int(text.lstrip("#")) in set(table["run_id"]):
            return int(text.lstrip("#"))
        if re.fullmatch(r"[0-9a-f]{6,64}", text):
            hits = table[table["content_hash"].str.startswith(text)]
            if len(hits) == 1:
                return int(hits["run_id"].iloc[0])
        hits = table[table["source"] == text]
        if len(hits) == 1:
            return int(hits["run_id"].iloc[0])
        what = f"{len(hits)} runs named so (give the id)" if len(hits) > 1 else "no such run"
        raise InputError(f"{text}: expected a run id, a content-hash prefix or a run's name; {what}. See python "
                         "-m core library list.")

    def schema_version(self) -> int:
        return self.store.schema_version()

    def known_hashes(self) -> dict[str, int]:
        """Content hash (and data hash) → run id of every run not removed (empty when there is no library)."""
        with self.store.connect() as con:
            if con is None:
                return {}
            out = {}
            for content, data, run_id in con.execute("SELECT content_hash, data_hash, run_id FROM runs WHERE "
                                                     "deleted_at IS NULL"):
                out[str(content)] = int(run_id)
                if data is not None:
                    out[str(data)] = int(run_id)
            return out

    def counts(self) -> dict[str, int]:
        """Rows per table (zeros when there is no file)."""
        from core.library.schema import TABLES

        with self.store.connect() as con:
            if con is None:
                return {t: 0 for t in TABLES}
            return {t: int(con.execute(f"SELECT count(*) FROM {t}")[0][0]) for t in TABLES}
