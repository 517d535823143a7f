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
