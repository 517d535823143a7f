"""Backup and exchange: a library (or a filtered part) as a folder of Parquet files, and back; compaction.

An export is a new folder holding one Parquet file per table (``runs``, ``run_tags``,
``series``, ``fits``; ``speed_tables`` too when nothing is filtered out) and
``manifest.json``: the format name, the schema version, the filter, and each file's rows and
SHA-256.  An import checks the manifest, every file's checksum and the export's size (from the
Parquet footers, before anything is decoded) first, then adds each run whose content the
library lacks (with its tags and fits), each in its own transaction, as a new run: ids are
the library's own; a ZIP of an export folder (the Library page's download) is unpacked within
bounds first (:mod:`core.library.archive`).  A run's hash is recomputed from the rows stored, never read from the
export.  Runs already there are left as they are.

``compact`` (``python -m core library vacuum``) purges the runs removed longer ago than the
keeping period, then gives the space back (``Store.compact``: the DuckDB file rewritten, the
PostgreSQL tables vacuumed).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from core.errors import InputError
from core.library.archive import MANIFEST, MAX_IMPORT_BYTES, MAX_MANIFEST_BYTES, is_zip, unpacked_export
from core.library.filters import RunFilter
from core.library.fits import FIT_COLUMNS
from core.library.library import AddReport, AddResult, Library, PendingRun, Progress, check_tags
from core.library.records import data_hash, log_from_rows
from core.library.schema import SCHEMA_VERSION, TABLES

EXPORT_FORMAT = "tta-planner-library-export"
#: the most rows (all tables together) one import reads (and ``MAX_IMPORT_BYTES`` uncompressed): about 2 M rows
#: of series (1,700 course-sized runs) take some 0.5 GB while they are checked; a larger export is imported in parts
MAX_IMPORT_ROWS = 2_000_000


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
    selected = f"SELECT run_id FROM runs r WHERE r.deleted_at IS NULL AND {where}"
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
            arrow = con.arrow(query, args)
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


def _bounded(directory: Path, manifest: dict) -> None:
    """Refuse an export larger than an import may be, from the Parquet footers alone (nothing is decoded yet):
    at most ``MAX_IMPORT_ROWS`` rows and ``MAX_IMPORT_BYTES`` bytes once uncompressed, in all its tables."""
    import pyarrow.parquet as pq

    rows = size = 0
    for entry in manifest["tables"].values():
        path = directory / entry["file"]
        try:
            meta = pq.ParquetFile(path).metadata
        except Exception as exc:   # noqa: BLE001 - pyarrow raises several kinds for a file that is not Parquet
            raise InputError(f"{path}: expected a Parquet file as an export writes it; cannot read it "
                             f"({' '.join(str(exc).split())[:160]}). Export again.") from None
        if meta.num_rows != entry.get("rows"):
            raise InputError(f"{path}: expected {entry.get('rows')} rows as the manifest says; the file holds "
                             f"{meta.num_rows}. Export again.")
        rows += meta.num_rows
        size += sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    if rows > MAX_IMPORT_ROWS or size > MAX_IMPORT_BYTES:
        raise InputError(f"{directory}: expected an export of at most {MAX_IMPORT_ROWS:,} rows and "
                         f"{MAX_IMPORT_BYTES // 2**20:,} MB uncompressed; got {rows:,} rows and "
                         f"{size / 2**20:,.0f} MB. "
                         "Export it in parts (library export --filter ...) and import each.")


def _frames(directory: Path, manifest: dict) -> dict[str, pd.DataFrame]:
    frames = {}
    for table, entry in manifest["tables"].items():
        path = directory / entry["file"]
        try:
            frame = pd.read_parquet(path)
        except Exception as exc:   # noqa: BLE001 - pyarrow's and pandas' many kinds of failure on a damaged file
            raise InputError(f"{path}: expected a Parquet file as an export writes it; cannot read it "
                             f"({' '.join(str(exc).split())[:160]}). Export again.") from None
        if len(frame) != entry.get("rows"):
            raise InputError(f"{path}: expected {entry.get('rows')} rows as the manifest says; got {len(frame)}. "
                             "Export again.")
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


#: the columns an export's tables must have (more are ignored)
_NEEDED = {"runs": ("run_id", "source", "split", "fmt", "granularity", "roles", "columns", "flags"),
           "series": ("run_id", "row_index", "global_step", "epoch", "loss", "acc", "time_s", "lr"),
           "run_tags": ("run_id", "tag"), "fits": FIT_COLUMNS,
           "speed_tables": ("name", "data")}


def _check_columns(directory: Path, frames: dict[str, pd.DataFrame]) -> None:
    for table, frame in frames.items():
        missing = [c for c in _NEEDED.get(table, ()) if c not in frame.columns]
        if missing:
            raise InputError(f"{directory / f'{table}.parquet'}: expected the columns {', '.join(_NEEDED[table])}; "
                             f"{', '.join(missing)} missing. Export again with this planner.")
        if table in ("runs", "series", "run_tags", "fits") and len(frame):
            ids = pd.to_numeric(frame["run_id"], errors="coerce")
            if ids.isna().any() or (ids != ids.round()).any():
                raise InputError(f"{directory / f'{table}.parquet'}: expected whole-number run ids; got "
                                 f"{frame['run_id'][ids.isna() | (ids != ids.round())].iloc[0]!r}. Export again.")


def _fits_of(frame: pd.DataFrame) -> pd.DataFrame:
    """A run's fits as the ``fits`` table holds them, checked (``ValueError`` when one cannot be)."""
    out = pd.DataFrame({"family": frame["family"].astype(str), "criterion": frame["criterion"].astype(str),
                        "target_acc": pd.to_numeric(frame["target_acc"], errors="raise").astype(float)})
    for column in ("params", "stderr"):
        values = []
        for text in frame[column]:
            parsed = json.loads(text)
            if not isinstance(parsed, dict) or not all(v is None or isinstance(v, (int, float))
                                                       for v in parsed.values()):
                raise ValueError(f"{column}: expected a JSON object of numbers; got {str(text)[:60]!r}")
            values.append(json.dumps(parsed))
        out[column] = values
    flags = frame["flags"]
    if not all(isinstance(f, str) for f in flags):
        raise ValueError("flags: expected text")
    out["flags"] = list(flags)
    for column in ("r2", "step_to_target", "loss_at_target"):
        out[column] = pd.to_numeric(frame[column], errors="raise").astype(float).to_numpy()
    out["epoch_to_target"] = pd.array(pd.to_numeric(frame["epoch_to_target"], errors="raise"), dtype="Int64")
    out["fitted_at"] = pd.to_datetime(frame["fitted_at"], errors="raise").to_numpy()
    if not out["target_acc"].between(0, 1).all():
        raise ValueError("target_acc: expected values in [0, 1]")
    if out.duplicated(["family", "target_acc", "criterion"]).any():
        raise ValueError("two fits under one family, target and criterion")
    return out.reset_index(drop=True)


def import_library(library: Library, directory: str | Path, *, progress: Progress | None = None) -> AddReport:
    """Merge an export (its folder, or a ZIP of it: the Library page's download) into ``library`` by content: new
    runs added (with tags and fits), others left.

    A ZIP is unpacked within bounds first (:func:`core.library.archive.unpacked_export`: member paths inside the
    archive, at most ``MAX_IMPORT_BYTES`` unpacked), then read as a folder; every message names the ZIP.
    """
    path = Path(directory)
    if not path.is_file():
        return _import_folder(library, path, label=str(path), progress=progress)
    if not is_zip(path):
        raise InputError(f"{path}: expected an export folder or the ZIP of one (the Library page's Export); got "
                         "a file that is not a ZIP.")
    with unpacked_export(path) as folder:
        try:
            return _import_folder(library, folder, label=str(path), progress=progress)
        except InputError as exc:
            raise InputError(str(exc).replace(str(folder), str(path))) from None


def _import_folder(library: Library, directory: Path, *, label: str, progress: Progress | None) -> AddReport:
    """Merge the export folder ``directory`` (``label`` names it in the audit and the notes).

    Every run's hash is computed from the rows about to be stored (``records.data_hash``), never
    taken from the export, so an export cannot pass other data off as a run the library has or
    will get.  An export over the bounds (``MAX_IMPORT_ROWS``, ``MAX_IMPORT_BYTES``) is refused
    from its Parquet footers before anything is decoded; a damaged one with one message.  Each run
    is added whole (its row, series, tags and fits in one transaction) or refused with a message
    while the others are added.
    """
    manifest = read_manifest(directory)
    _bounded(directory, manifest)
    frames = _frames(directory, manifest)
    try:
        frames = _upgraded(frames)
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"{directory / 'runs.parquet'}: expected the runs of an export of schema version "
                         f"{manifest['schema_version']}; cannot read them ({' '.join(str(exc).split())[:120]}). "
                         "Export again.") from None
    _check_columns(directory, frames)
    runs = frames["runs"]
    series_by_run = {int(k): g for k, g in frames["series"].groupby("run_id", sort=False)}
    tags = frames.get("run_tags", pd.DataFrame(columns=["run_id", "tag"]))
    tags_by_run = {int(k): tuple(g["tag"].astype(str)) for k, g in tags.groupby("run_id", sort=False)}
    fits = frames.get("fits", pd.DataFrame(columns=list(FIT_COLUMNS)))
    fits_by_run = {int(k): g for k, g in fits.groupby("run_id", sort=False)}
    known = library.known_hashes()
    empty_series = frames["series"].iloc[0:0]

    def items():
        for row in runs.to_dict("records"):
            old = int(row["run_id"])
            source = str(row["source"])[:500]
            try:
                log = log_from_rows(row, series_by_run.get(old, empty_series))
                digest = data_hash(log)
            except Exception as exc:   # noqa: BLE001 - any malformed value of an untrusted export: run refused
                yield (source, f"{source}: expected a run as the planner exports it; it cannot be rebuilt "
                               f"({' '.join(str(exc).split())[:160]}). Nothing of it was added.")
                continue
            if digest in known:
                yield AddResult(source, known[digest], False)
                continue
            try:
                run_tags = check_tags(tags_by_run.get(old, ()))
                run_fits = _fits_of(fits_by_run[old]) if old in fits_by_run else None
                n_params = None if pd.isna(row.get("n_params")) else int(row["n_params"])
            except Exception as exc:   # noqa: BLE001 - as above
                yield (source, f"{source}: expected tags and fits as the planner exports them; "
                               f"{' '.join(str(exc).split())[:160]}. Nothing of the run was added.")
                continue
            dataset = None if pd.isna(row.get("dataset")) else str(row["dataset"])
            yield PendingRun(log, digest, dataset, run_tags, n_params, run_fits)

    report = library.add_runs(items(), total=len(runs), progress=progress, action="import", note=label)
    speed = frames.get("speed_tables")
    notes = ()
    if speed is not None and len(speed):
        notes = _import_speed(library, speed)
    return replace(report, notes=report.notes + notes + (f"read {label} ({manifest['filter']}, exported "
                                                         f"{manifest.get('created', '?')})",))


def _import_speed(library: Library, speed: pd.DataFrame) -> tuple[str, ...]:
    """Speed tables the library lacks, each checked as ``add --speed`` checks a file and hashed from its bytes."""
    from core.library.speed import add_speed_table

    notes = []
    for row in speed.to_dict("records"):
        name = str(row["name"])[:200]
        try:
            add_speed_table(library, name, bytes(row["data"]))
        except (InputError, ValueError, TypeError) as exc:
            notes.append(f"speed table {name} not imported: {' '.join(str(exc).split())[:200]}")
    return tuple(notes)


@dataclass(frozen=True)
class CompactSummary:
    """The store's size before and after compaction, in bytes, and the removed runs purged for good."""

    path: str
    bytes_before: int
    bytes_after: int
    purged: tuple[int, ...] = ()


def compact(library: Library, *, keep_days: float | None = None) -> CompactSummary:
    """Purge the runs removed more than ``keep_days`` ago (:meth:`Library.purge`), then give the space back
    (the DuckDB file rewritten, PostgreSQL's tables vacuumed: ``Store.compact``)."""
    store = library.store
    if store.memory or not store.exists():
        return CompactSummary(store.path, 0, 0)
    purged = library.purge(keep_days)
    before, after = store.compact()
    return CompactSummary(store.path, before, after, tuple(purged))
