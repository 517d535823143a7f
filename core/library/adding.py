"""What adding runs takes and gives, and the write of one run.

A :class:`PendingRun` is a run read and waiting to be written; :class:`AddResult` says what
became of it and :class:`AddReport` of many. :func:`insert_run` writes one run in its own
transaction (added, found present, or restored), :func:`write_audit` one line of the audit
table. :class:`~core.library.library.Library` batches these under the store's lock.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pandas as pd

from core.errors import InputError
from core.library.records import run_row, series_frame
from core.logs import RunLog

#: ``progress(done, total, label)``: called after each run; return False to stop after the current one
Progress = Callable[[int, int, str], "bool | None"]
#: a batch of runs read before the library is locked to write them (the lock is held only to write)
BATCH_RUNS = 64
BATCH_ROWS = 400_000
BATCH_SECONDS = 1.0
#: what a tag may be: short text without commas (a FILTER separates terms with them) or control characters
MAX_TAG_LENGTH = 64
_BAD_TAG = re.compile(r"[,\x00-\x1f\x7f]")


def check_tags(tags: Iterable[str]) -> tuple[str, ...]:
    """Tags trimmed, de-duplicated and checked (``InputError`` for a comma, a control character, > 64 characters).

    >>> check_tags([" baseline", "lr-sweep", "baseline", ""])
    ('baseline', 'lr-sweep')
    >>> check_tags(["a,b"])
    Traceback (most recent call last):
    ...
    core.errors.InputError: tag: expected text without commas or control characters, at most 64 characters; \
got 'a,b'. Give one tag per --tag.
    """
    out = []
    for tag in tags:
        tag = str(tag).strip()
        if not tag:
            continue
        if _BAD_TAG.search(tag) or len(tag) > MAX_TAG_LENGTH:
            raise InputError(f"tag: expected text without commas or control characters, at most {MAX_TAG_LENGTH} "
                             f"characters; got {tag[:80]!r}. Give one tag per --tag.")
        out.append(tag)
    return tuple(dict.fromkeys(out))


@dataclass(frozen=True)
class PendingRun:
    """A run read and ready to be written: its log, content hash, data set, tags and parameter count."""

    log: RunLog
    digest: str
    dataset: str | None = None
    tags: tuple[str, ...] = ()
    n_params: int | None = None
    fits: pd.DataFrame | None = None


@dataclass(frozen=True)
class AddResult:
    """What became of one run: added as ``run_id``, or already there as ``run_id``."""

    source: str
    run_id: int
    added: bool
    restored: bool = False

    @property
    def message(self) -> str:
        if self.restored:
            return f"{self.source}: restored run #{self.run_id} (it had been removed)."
        if self.added:
            return f"{self.source}: added as run #{self.run_id}."
        return f"{self.source}: already in the library as run #{self.run_id} (same content); nothing added."


@dataclass(frozen=True)
class AddReport:
    """The results of an import, the files refused (``(source, message)``), and whether it was stopped."""

    results: tuple[AddResult, ...] = ()
    errors: tuple[tuple[str, str], ...] = ()
    cancelled: bool = False
    notes: tuple[str, ...] = field(default=())

    @property
    def n_added(self) -> int:
        return sum(r.added for r in self.results)

    @property
    def n_present(self) -> int:
        return sum(not r.added for r in self.results)

    def summary(self) -> str:
        """One sentence: added, already present, refused, stopped."""
        parts = [f"{self.n_added} run(s) added", f"{self.n_present} already in the library"]
        if self.errors:
            parts.append(f"{len(self.errors)} file(s) refused")
        text = ", ".join(parts) + "."
        if self.cancelled:
            text += " Stopped before the end: every run written is complete; the rest were not added."
        return text


def utc_now() -> datetime:
    """Now in UTC, without a time zone (how the library stores times)."""
    return datetime.now(UTC).replace(tzinfo=None)


def write_audit(con, actor: str, action: str, run_ids: Iterable[int], detail: str = "") -> None:
    """One line of the audit table (the caller's transaction): when, what, which runs, who."""
    ids = ",".join(str(int(i)) for i in run_ids)
    con.execute("INSERT INTO audit (happened_at, action, run_ids, detail, actor) VALUES (?, ?, ?, ?, ?)",
                [utc_now(), action, ids[:100_000], detail[:2000], actor])


def insert_run(con, item: PendingRun, *, actor: str) -> AddResult:
    """One run in one transaction: added, found present (by content or data hash), or restored when it was
    removed and not yet purged.  A run that fails to be written (its fits, say) is not added at all."""
    con.begin()
    try:
        row = run_row(item.log, digest=item.digest, dataset=item.dataset, n_params=item.n_params)
        found = con.execute("SELECT run_id, deleted_at FROM runs WHERE content_hash = ? OR data_hash = ? "
                            "ORDER BY run_id", [item.digest, row["data_hash"]])
        if found and found[0][1] is not None:           # removed, still kept: adding it again restores it
            run_id = int(found[0][0])
            con.execute("UPDATE runs SET deleted_at = NULL WHERE run_id = ?", [run_id])
            write_audit(con, actor, "restore", [run_id], f"added again as {item.log.source}")
            con.commit()
            return AddResult(item.log.source, run_id, True, restored=True)
        if found:
            con.rollback()
            return AddResult(item.log.source, int(found[0][0]), False)
        row["added_at"] = utc_now()
        names = list(row)
        inserted = con.execute(f"INSERT INTO runs ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)}) "
                               "ON CONFLICT DO NOTHING RETURNING run_id", [row[n] for n in names])
        if not inserted:                                  # another writer added it meanwhile
            con.rollback()
            again = con.execute("SELECT run_id FROM runs WHERE content_hash = ? OR data_hash = ?",
                                [item.digest, row["data_hash"]])
            return AddResult(item.log.source, int(again[0][0]) if again else 0, False)
        run_id = int(inserted[0][0])
        incoming = series_frame(item.log)
        incoming.insert(0, "run_id", run_id)
        con.insert_frame("series", incoming)
        for tag in item.tags:
            con.execute("INSERT INTO run_tags VALUES (?, ?)", [run_id, tag])
        if item.fits is not None and len(item.fits):
            con.insert_frame("fits", item.fits.assign(run_id=run_id), on_conflict="ignore")
    except BaseException:
        con.rollback()
        raise
    con.commit()
    return AddResult(item.log.source, run_id, True)


def _first_match(found: list[tuple], digest: str, data: str) -> tuple | None:
    """The row (run_id, deleted_at, content_hash, data_hash) of the lowest run id with either hash, as
    :func:`insert_run` picks it (``ORDER BY run_id``)."""
    hits = [r for r in found if r[2] == digest or r[3] == data]
    return min(hits, key=lambda r: int(r[0])) if hits else None


def insert_runs(con, items: list[PendingRun], *, actor: str) -> list[AddResult]:
    """Many runs in one transaction, what :func:`insert_run` does for each: added, found present (by content or
    data hash, in the library or earlier in ``items``), or restored.  One statement looks the hashes up, one
    adds the ``runs`` rows, one each the series, tags and fits of every new run.  Any failure undoes the whole
    batch (the caller may then write the runs one at a time, so that a bad run is refused alone)."""
    rows = [run_row(i.log, digest=i.digest, dataset=i.dataset, n_params=i.n_params) for i in items]
    hashes = sorted({h for item, row in zip(items, rows) for h in (item.digest, row["data_hash"])})
    con.begin()
    try:
        marks = ", ".join("?" for _ in hashes)
        found = con.execute(f"SELECT run_id, deleted_at, content_hash, data_hash FROM runs WHERE content_hash IN "
                            f"({marks}) OR data_hash IN ({marks})", [*hashes, *hashes])
        results: list[AddResult | None] = [None] * len(items)
        fresh: dict[str, int] = {}                       # a hash of a run new in this batch -> its index
        new: list[int] = []
        for k, (item, row) in enumerate(zip(items, rows)):
            hit = _first_match(found, item.digest, row["data_hash"])
            if hit is not None and hit[1] is not None and all(r.run_id != int(hit[0]) for r in results if r):
                run_id = int(hit[0])
                con.execute("UPDATE runs SET deleted_at = NULL WHERE run_id = ?", [run_id])
                write_audit(con, actor, "restore", [run_id], f"added again as {item.log.source}")
                results[k] = AddResult(item.log.source, run_id, True, restored=True)
            elif hit is not None:
                results[k] = AddResult(item.log.source, int(hit[0]), False)
            elif item.digest in fresh or row["data_hash"] in fresh:
                continue                                 # a copy of a run earlier in the batch: resolved below
            else:
                fresh[item.digest] = fresh[row["data_hash"]] = k
                new.append(k)
        ids: dict[str, int] = {}
        if new:
            now = utc_now()
            names = [*rows[new[0]], "added_at"]
            values = [v for k in new for v in (*rows[k].values(), now)]
            one = f"({', '.join('?' for _ in names)})"
            inserted = con.execute(f"INSERT INTO runs ({', '.join(names)}) VALUES {', '.join([one] * len(new))} "
                                   "ON CONFLICT DO NOTHING RETURNING run_id, content_hash", values)
            ids = {str(h): int(i) for i, h in inserted}
        added = [k for k in new if items[k].digest in ids]
        for k in new:
            if k not in added:                           # another writer added it meanwhile
                again = con.execute("SELECT run_id FROM runs WHERE content_hash = ? OR data_hash = ?",
                                    [items[k].digest, rows[k]["data_hash"]])
                results[k] = AddResult(items[k].log.source, int(again[0][0]) if again else 0, False)
        for k in added:
            results[k] = AddResult(items[k].log.source, ids[items[k].digest], True)
        for k, item in enumerate(items):                 # copies of a run earlier in the batch
            if results[k] is None:
                first = results[fresh.get(item.digest, fresh.get(rows[k]["data_hash"]))]
                results[k] = AddResult(item.log.source, first.run_id, False)
        if added:
            series = [series_frame(items[k].log) for k in added]
            for k, frame in zip(added, series):
                frame.insert(0, "run_id", ids[items[k].digest])
            con.insert_frame("series", pd.concat(series, ignore_index=True))
            tags = [(ids[items[k].digest], t) for k in added for t in items[k].tags]
            if tags:
                con.insert_frame("run_tags", pd.DataFrame(tags, columns=["run_id", "tag"]))
            fits = [items[k].fits.assign(run_id=ids[items[k].digest]) for k in added
                    if items[k].fits is not None and len(items[k].fits)]
            if fits:
                con.insert_frame("fits", pd.concat(fits, ignore_index=True), on_conflict="ignore")
    except BaseException:
        con.rollback()
        raise
    con.commit()
    return [r for r in results if r is not None]
