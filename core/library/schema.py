"""The library's tables and the migrations that make them, one numbered step per schema version.

A new file is made by running every step from 1; a file made by an older version is upgraded
in place, in one transaction, by the steps it lacks (``schema_version`` records each step
applied).  A step, once released, is never edited: a change of the tables is a new step.

Version 1 (the first release)
    ``runs`` (one row per run: where it came from, its content hash, the metadata the file
    name gave, its tags as one comma-separated text, a summary: points, epochs, best
    accuracy, final loss), ``series`` (the tidy per-step or per-epoch rows: global step,
    epoch, loss, accuracy, seconds), ``fits`` (one fitted curve per run, family, target and
    criterion), ``speed_tables`` (measured-speed CSVs, stored as given).
Version 2
    The learning rate joins the series (``series.lr``: the logs' ``lr`` role); tags move to
    their own table ``run_tags`` (one row per run and tag, so that a filter by tag is a join,
    and a tag may hold a comma); the metadata MLPerf's MLLOG logs carry (samples per epoch,
    run status, system, nodes, devices, throughput) get columns.
Version 3
    The learning-rate schedule a log declares (``runs.schedule``: MLLOG's optimiser events as a
    ``core.prediction`` schedule spec such as ``poly:37:2``), used by the forecasts across drops.
Version 4
    What the language-model readers learn: the new ``RunMeta`` fields (``seq_len``,
    ``run_time_s``, ``accelerator``, ``max_steps``, ``warmup_steps``, ``decay_steps``,
    ``step_time_s``) as columns of ``runs``; the log's metric names (``runs.metrics``), its own
    target (``runs.target``), the names of the frame's optional columns (``runs.extra_columns``:
    ``samples``, ``tokens``, ``train_loss``, ...) and its per-step figures (``runs.steps``), all
    JSON text; the optional columns' values per row (``series.extra``, a JSON list in the order of
    ``runs.extra_columns``).  Additive: a file of version 3 keeps every row, with these empty.
Version 5
    Soft deletion (``runs.deleted_at``: a removed run stays restorable until ``vacuum`` purges
    it past the keeping period), the hash of the data as stored (``runs.data_hash``, unique:
    an import is matched by what it stores, never by the hash an export claims), and the
    ``audit`` table (every add, import, removal, restore and purge: when, what, who).

Version 6
    The planned learning-rate schedule a log declares in optimiser steps (``runs.lr_schedule``: a
    ``core.schedules`` spec such as ``wsd:total=1670,decay_start=835,decay_end=1630,final=10%``, from a
    NanoGPT speedrun's script or an MLLOG log's optimiser keys), which the forecasts through the schedule read.
    Additive: a file of version 5 keeps every row, with it empty.

The statements are written as DuckDB reads them; a store reading another dialect translates the
few that differ (``Connection.ddl``: types, one DuckDB-only function in version 2).
"""

from __future__ import annotations

from datetime import UTC, datetime

#: the version this code writes; a file of a later version is refused (``LibraryError``)
SCHEMA_VERSION = 6

#: version -> the SQL statements that take a file from the version before to it
MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        "CREATE TABLE schema_version (version INTEGER NOT NULL, applied_at TIMESTAMP NOT NULL, note VARCHAR)",
        "CREATE SEQUENCE run_ids START 1",
        "CREATE SEQUENCE speed_table_ids START 1",
        """CREATE TABLE runs (
            run_id INTEGER PRIMARY KEY DEFAULT nextval('run_ids'),
            content_hash VARCHAR NOT NULL UNIQUE,
            source VARCHAR NOT NULL,
            model VARCHAR, depth INTEGER, n_params BIGINT, gpu VARCHAR, split VARCHAR NOT NULL,
            global_batch BIGINT, dataset VARCHAR, tags VARCHAR,
            fmt VARCHAR NOT NULL, granularity VARCHAR NOT NULL, steps_per_epoch INTEGER,
            roles VARCHAR NOT NULL, columns VARCHAR NOT NULL, flags VARCHAR NOT NULL,
            n_points BIGINT NOT NULL, n_epochs INTEGER, best_acc DOUBLE, final_loss DOUBLE,
            added_at TIMESTAMP NOT NULL)""",
        """CREATE TABLE series (
            run_id INTEGER NOT NULL, row_index INTEGER NOT NULL, global_step DOUBLE NOT NULL,
            epoch BIGINT, loss DOUBLE, acc DOUBLE, time_s DOUBLE)""",
        """CREATE TABLE fits (
            run_id INTEGER NOT NULL, family VARCHAR NOT NULL, target_acc DOUBLE NOT NULL,
            criterion VARCHAR NOT NULL, params VARCHAR NOT NULL, stderr VARCHAR NOT NULL, r2 DOUBLE,
            flags VARCHAR NOT NULL, step_to_target DOUBLE, epoch_to_target INTEGER, loss_at_target DOUBLE,
            fitted_at TIMESTAMP NOT NULL,
            PRIMARY KEY (run_id, family, target_acc, criterion))""",
        """CREATE TABLE speed_tables (
            table_id INTEGER PRIMARY KEY DEFAULT nextval('speed_table_ids'),
            content_hash VARCHAR NOT NULL UNIQUE, name VARCHAR NOT NULL, data BLOB NOT NULL,
            n_rows BIGINT NOT NULL, added_at TIMESTAMP NOT NULL)""",
    ),
    2: (
        "ALTER TABLE series ADD COLUMN lr DOUBLE",
        "CREATE TABLE run_tags (run_id INTEGER NOT NULL, tag VARCHAR NOT NULL, PRIMARY KEY (run_id, tag))",
        """INSERT INTO run_tags
           SELECT DISTINCT run_id, trim(t) FROM (
               SELECT run_id, unnest(string_split(tags, ',')) AS t FROM runs WHERE tags IS NOT NULL)
           WHERE trim(t) <> ''""",
        "ALTER TABLE runs DROP COLUMN tags",
        "ALTER TABLE runs ADD COLUMN samples_per_epoch BIGINT",
        "ALTER TABLE runs ADD COLUMN status VARCHAR",
        "ALTER TABLE runs ADD COLUMN system VARCHAR",
        "ALTER TABLE runs ADD COLUMN n_nodes INTEGER",
        "ALTER TABLE runs ADD COLUMN n_devices INTEGER",
        "ALTER TABLE runs ADD COLUMN throughput DOUBLE",
    ),
    3: (
        "ALTER TABLE runs ADD COLUMN schedule VARCHAR",
    ),
    4: (
        "ALTER TABLE runs ADD COLUMN seq_len BIGINT",
        "ALTER TABLE runs ADD COLUMN run_time_s DOUBLE",
        "ALTER TABLE runs ADD COLUMN accelerator VARCHAR",
        "ALTER TABLE runs ADD COLUMN max_steps BIGINT",
        "ALTER TABLE runs ADD COLUMN warmup_steps DOUBLE",
        "ALTER TABLE runs ADD COLUMN decay_steps DOUBLE",
        "ALTER TABLE runs ADD COLUMN step_time_s DOUBLE",
        "ALTER TABLE runs ADD COLUMN metrics VARCHAR",
        "ALTER TABLE runs ADD COLUMN target VARCHAR",
        "ALTER TABLE runs ADD COLUMN extra_columns VARCHAR",
        "ALTER TABLE runs ADD COLUMN steps VARCHAR",
        "ALTER TABLE series ADD COLUMN extra VARCHAR",
    ),
    5: (
        "ALTER TABLE runs ADD COLUMN deleted_at TIMESTAMP",
        "ALTER TABLE runs ADD COLUMN data_hash VARCHAR",
        "CREATE UNIQUE INDEX runs_data_hash ON runs (data_hash)",
        "CREATE SEQUENCE audit_ids START 1",
        """CREATE TABLE audit (
            event_id BIGINT PRIMARY KEY DEFAULT nextval('audit_ids'), happened_at TIMESTAMP NOT NULL,
            action VARCHAR NOT NULL, run_ids VARCHAR, detail VARCHAR, actor VARCHAR)""",
    ),
    6: (
        "ALTER TABLE runs ADD COLUMN lr_schedule VARCHAR",
    ),
}
NOTES = {1: "first release", 2: "series.lr, run_tags, MLLOG metadata", 3: "runs.schedule",
         4: "language-model logs: metrics, target, samples/tokens columns, new metadata",
         5: "soft deletion, runs.data_hash, audit", 6: "runs.lr_schedule"}

#: the tables an export writes and an import reads, in that order
TABLES = ("runs", "run_tags", "series", "fits", "speed_tables")
#: every table of the current version
ALL_TABLES = (*TABLES, "audit", "schema_version")


def current_version(con) -> int:
    """The schema version of an open database (0: an empty file, no tables yet); ``con`` a store's
    ``Connection``."""
    if "schema_version" not in con.tables():
        return 0
    version = con.execute("SELECT max(version) FROM schema_version")[0][0]
    return int(version or 0)


def apply_migrations(con, *, start: int, stop: int = SCHEMA_VERSION) -> None:
    """Run the steps ``start + 1 .. stop`` on ``con`` (the caller holds a transaction)."""
    for version in range(start + 1, stop + 1):
        for statement in MIGRATIONS[version]:
            con.execute(con.ddl(statement))
        con.execute("INSERT INTO schema_version VALUES (?, ?, ?)",
                    [version, datetime.now(UTC).replace(tzinfo=None), NOTES[version]])
