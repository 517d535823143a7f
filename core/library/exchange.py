"""Backup and exchange: a library (or a filtered part) as a folder of Parquet files, and back; compaction.

An export is a new folder holding one Parquet file per table (``runs``, ``run_tags``,
``series``, ``fits``; ``speed_tables`` too when nothing is filtered out) and
``manifest.json``: the format name, the schema version, the filter, and each file's rows and
SHA-256.  An import checks the manifest and every file's checksum first, then adds each run
whose content hash the library lacks (with its tags and fits), each in its own transaction,
as a new run: ids are the library's own.  Runs already there are left as they are.

``compact`` (``python -m core library vacuum``) checkpoints the write-ahead log and rewrites
the file without the space that removed runs left (DuckDB reuses freed blocks but never
gives them back): the tables are copied into a new file beside it, which then replaces it
(``os.replace``, atomic), all under the library's lock.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from core.errors import InputError, LibraryError
from core.library.filters import RunFilter
from core.library.library import AddReport, AddResult, Library, PendingRun, Progress
from core.library.records import log_from_rows
from core.library.schema import SCHEMA_VERSION, TABLES

EXPORT_FORMAT = "tta-planner-library-export"
MANIFEST = "manifest.json"
#: the largest manifest read (a manifest lists a few numbers per table)
MAX_MANIFEST_BYTES = 1 << 20


@dataclass(frozen=True)
class ExportSummary:
    """What an export wrote: the folder, runs and rows per table."""

    directory: str
    n_runs: int
    rows: dict[str, int]


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(2**20):
            h.update(chunk)
    return h.hexdigest()


def export_library(library: Library, directory: str | Path, run_filter: RunFilter | str | None = None
                   ) -> ExportSummary:
    """Write the runs the filter matches (all by default) to a new folder of Parquet files and a manifest.

    Raises
    ------
    InputError
        When ``directory`` exists and is not empty (an export never overwrites).
    """
    import pyarrow.parquet as pq

    directory = Path(directory)
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise InputError(f"{directory}: expected a new or empty folder for the export; it already holds files. "
                         "Give another folder.")
    run_filter = run_filter if isinstance(run_filter, RunFilter) else RunFilter.parse(run_filter)
    where, params = run_filter.where()
    selected = f"SELECT run_id FROM runs r WHERE {where}"
    queries = {
        "runs": (f"SELECT * FROM runs WHERE run_id IN ({selected}) ORDER BY run_id", params),
        "run_tags": (f"SELECT * FROM run_tags WHERE run_id IN ({selected}) ORDER BY run_id, tag", params),
        "series": (f"SELECT * FROM series WHERE run_id IN ({selected}) ORDER BY run_id, row_index", params),
        "fits": (f"SELECT * FROM fits WHERE run_id IN ({selected}) ORDER BY run_id", params),
    }
    if run_filter.is_empty:
        queries["speed_tables"] = ("SELECT * FROM speed_tables ORDER BY table_id", [])
    directory.mkdir(parents=True, exist_ok=True)
    files = {}
    with library.store.connect(create=True) as con:
        for table, (query, args) in queries.items():
            path = directory / f"{table}.parquet"
            arrow = con.sql(query, params=args).to_arrow_table()
            pq.write_table(arrow, path, compression="zstd")
            files[table] = {"file": path.name, "rows": arrow.num_rows, "sha256": _sha256(path)}
    manifest = {"format": EXPORT_FORMAT, "schema_version": SCHEMA_VERSION, "filter": run_filter.describe(),
                "created": datetime.now(UTC).isoformat(timespec="seconds"), "tables": files}
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return ExportSummary(str(directory), files["runs"]["rows"], {t: f["rows"] for t, f in files.items()})


def export_zip(library: Library, run_filter: RunFilter | str | None = None) -> bytes:
    """An export (see :func:`export_library`) as the bytes of a ZIP file of its folder (a page's download)."""
    import tempfile
    import zipfile
    from io import BytesIO

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "library_export"
        export_library(library, folder, run_filter)
        buffer = BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:   # Parquet is compressed already
            for path in sorted(folder.iterdir()):
                archive.write(path, f"library_export/{path.name}")
    return buffer.getvalue()


def read_manifest(directory: str | Path) -> dict:
    """The export's manifest, checked: format, schema version, and every file's rows and checksum.

    Raises
    ------
    InputError
        A missing or malformed manifest, a later schema version, a file missing or changed.
    """
    directory = Path(directory)
    where = directory / MANIFEST
    try:
        if where.stat().st_size > MAX_MANIFEST_BYTES:
            raise InputError(f"{where}: expected a manifest of at most 1 MB; got a larger file.")
        manifest = json.loads(where.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{where}: expected the manifest of a library export; cannot read it ({exc}). Give the "
                         "folder `python -m core library export` wrote.") from None
    if not isinstance(manifest, dict) or manifest.get("format") != EXPORT_FORMAT:
        raise InputError(f"{where}: expected format {EXPORT_FORMAT!r}; got {str(manifest.get('format'))[:80]!r}.")
    version = manifest.get("schema_version")
    if not isinstance(version, int) or not 1 <= version <= SCHEMA_VERSION:
        raise InputError(f"{where}: expected schema version 1 to {SCHEMA_VERSION}; got {version!r} (an export of a "
                         "newer planner). Upgrade the planner.")
    tables = manifest.get("tables")
    if not isinstance(tables, dict) or not {"runs", "series"} <= set(tables):
        raise InputError(f"{where}: expected the tables runs and series in the manifest; got "
                         f"{', '.join(map(str, tables or {}))[:200] or 'none'}.")
    for table, entry in tables.items():
        if table not in TABLES or not isinstance(entry, dict) or entry.get("file") != f"{table}.parquet":
            raise InputError(f"{where}: expected tables among {', '.join(TABLES)} named <table>.parquet; got "
                             f"{str(table)[:80]!r}.")
        path = directory / entry["file"]
        if not path.is_file() or _sha256(path) != entry.get("sha256"):
            digest = str(entry.get("sha256"))[:12]
            raise InputError(f"{path}: expected the file the manifest describes (SHA-256 {digest}...); it is "
                             "missing or changed. Export again.")
    return manifest


def _frames(directory: Path, manifest: dict) -> dict[str, pd.DataFrame]:
    frames = {}
    for table, entry in manifest["tables"].items():
        frame = pd.read_parquet(directory / entry["file"])
        if len(frame) != entry.get("rows"):
            raise InputError(f"{directory / entry['file']}: expected {entry.get('rows')} rows as the manifest says; "
                             f"got {len(frame)}. Export again.")
        frames[table] = frame
    return frames


def _upgraded(frames: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The tables of an export from an older schema as the current one has them (as ``schema`` migrates a file):
    version 1 lacks ``series.lr`` and kept tags as comma-separated text in ``runs.tags``."""
    frames = dict(frames)
    if "lr" not in frames["series"]:
        frames["series"] = frames["series"].assign(lr=float("nan"))
    if "extra" not in frames["series"]:   # version 3 and before: no optional frame columns
        frames["series"] = frames["series"].assign(extra=None)
    runs = frames["runs"]
    if "tags" in runs and "run_tags" not in frames:
        pairs = [(int(r), t.strip()) for r, text in zip(runs["run_id"], runs["tags"]) if isinstance(text, str)
                 for t in text.split(",") if t.strip()]
        frames["run_tags"] = pd.DataFrame(sorted(set(pairs)), columns=["run_id", "tag"])
    return frames


def import_library(library: Library, directory: str | Path, *, progress: Progress | None = None) -> AddReport:
    """Merge an export into ``library`` by content hash: new runs added (with tags and fits), others left.

    A run of the export that cannot be rebuilt (a malformed row) is refused with a message; the
    others are added.
    """
    directory = Path(directory)
    manifest = read_manifest(directory)
    frames = _frames(directory, manifest)
    runs = frames["runs"]
    for column in ("run_id", "content_hash", "source"):
        if column not in runs:
            raise InputError(f"{directory / 'runs.parquet'}: expected a {column} column; got "
                             f"{', '.join(map(str, runs.columns))[:200]}.")
    frames = _upgraded(frames)
    series_by_run = {int(k): g for k, g in frames["series"].groupby("run_id", sort=False)}
    tags = frames.get("run_tags", pd.DataFrame(columns=["run_id", "tag"]))
    tags_by_run = {int(k): tuple(g["tag"].astype(str)) for k, g in tags.groupby("run_id", sort=False)}
    known = library.known_hashes()

    def items():
        for row in runs.to_dict("records"):
            old = int(row["run_id"])
            source = str(row["source"])
            if row["content_hash"] in known:
                yield AddResult(source, known[row["content_hash"]], False)
                continue
            try:
                log = log_from_rows(row, series_by_run.get(old, frames["series"].iloc[0:0]))
            except (KeyError, TypeError, ValueError) as exc:
                yield (source, f"{source}: expected a run as the planner exports it; it cannot be rebuilt ({exc}).")
                continue
            n_params = None if pd.isna(row.get("n_params")) else int(row["n_params"])
            dataset = None if pd.isna(row.get("dataset")) else str(row["dataset"])
            yield PendingRun(log, str(row["content_hash"]), dataset, tags_by_run.get(old, ()), n_params)

    report = library.add_runs(items(), total=len(runs), progress=progress)
    fits = frames.get("fits")
    if fits is not None and len(fits):
        new_ids = {str(h): i for h, i in library.known_hashes().items()}
        old_to_new = {int(r["run_id"]): new_ids[r["content_hash"]] for r in runs.to_dict("records")
                      if r["content_hash"] in new_ids}
        added = {r.run_id for r in report.results if r.added}
        mine = fits[fits["run_id"].map(lambda i: old_to_new.get(int(i)) in added)].copy()
        if len(mine):
            mine["run_id"] = mine["run_id"].map(lambda i: old_to_new[int(i)])
            with library.store.transaction() as con:
                con.register("incoming_fits", mine)
                try:
                    con.execute("INSERT OR IGNORE INTO fits BY NAME SELECT * FROM incoming_fits")
                finally:
                    con.unregister("incoming_fits")
    speed = frames.get("speed_tables")
    if speed is not None and len(speed):
        with library.store.transaction() as con:             # by content hash, as runs; new ids here
            con.register("incoming_speed", speed[["content_hash", "name", "data", "n_rows", "added_at"]])
            try:
                con.execute("INSERT INTO speed_tables (content_hash, name, data, n_rows, added_at) "
                            "SELECT * FROM incoming_speed WHERE content_hash NOT IN "
                            "(SELECT content_hash FROM speed_tables)")
            finally:
                con.unregister("incoming_speed")
    return replace(report, notes=report.notes + (f"read {directory} ({manifest['filter']}, exported "
                                                 f"{manifest.get('created', '?')})",))


@dataclass(frozen=True)
class CompactSummary:
    """The file's size before and after compaction, in bytes."""

    path: str
    bytes_before: int
    bytes_after: int


def _quoted(path: str) -> str:
    return "'" + path.replace("'", "''") + "'"


def compact(library: Library) -> CompactSummary:
    """Checkpoint the library and rewrite it without free space (see the module docstring)."""
    store = library.store
    if store.memory or not store.exists():
        return CompactSummary(store.path, 0, 0)
    import duckdb

    path = Path(store.path)
    fresh = path.with_name(path.name + ".compact")
    with store.connect(create=True) as con:   # holds the lock throughout; migrates an older file first
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
            for sequence, table, column in (("run_ids", "runs", "run_id"), ("speed_table_ids", "speed_tables",
                                                                              "table_id")):
                top = copier.execute(f"SELECT coalesce(max({column}), 0) FROM dst.{table}").fetchall()[0][0]
                last = copier.execute("SELECT last_value FROM duckdb_sequences() WHERE database_name = 'dst' "
                                      "AND sequence_name = ?", [sequence]).fetchall()
                value = (last[0][0] if last and last[0][0] is not None else 0) + 1   # the next id, not used up
                if value <= top:
                    raise LibraryError(f"{path}: compaction would give run ids again (next {value} <= {top}); "
                                       "the file was left as it was.")
            copier.execute("DETACH src")
            copier.execute("DETACH dst")
        except duckdb.Error as exc:
            copier.close()
            fresh.unlink(missing_ok=True)
            raise LibraryError(f"{path}: compaction failed ({' '.join(str(exc).split())[:200]}); the file was left "
                               "as it was.") from None
        except BaseException:
            copier.close()
            fresh.unlink(missing_ok=True)
            raise
        copier.close()
        os.replace(fresh, path)
        after = path.stat().st_size
    return CompactSummary(str(path), before, after)
