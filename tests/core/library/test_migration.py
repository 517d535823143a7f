"""A library file made by the first version (schema 1) is upgraded in place, its runs intact."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from core.errors import LibraryError
from core.library import Library
from core.library.schema import MIGRATIONS, SCHEMA_VERSION, apply_migrations, current_version
from core.library.stores import open_store
from core.logs import read_log
from tests.core.library.helpers import course_csv


def _raw(db):
    """A connection to the store as it is: no tables made or upgraded (what an older planner would see)."""
    return open_store(db)._session(create=True)


def _columns(con, table: str) -> list[str]:
    return [r[0] for r in con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = ? "
                                      "AND table_schema = current_schema()", [table])]


def _version_1_file(db) -> None:
    """What the first release wrote: its tables (migration 1 only) and one run with tags in a text column."""
    log = read_log(course_csv(), "resnet20_Tesla V100.csv")
    with _raw(db) as con:
        con.begin()
        apply_migrations(con, start=0, stop=1)
        con.execute("""INSERT INTO runs (content_hash, source, model, depth, gpu, split, dataset, tags, fmt,
                       granularity, steps_per_epoch, roles, columns, flags, n_points, n_epochs, best_acc, final_loss,
                       added_at)
                       VALUES ('abc123', 'resnet20_Tesla V100.csv', 'resnet20', 20, 'Tesla V100', 'train', 'cifar10',
                       'baseline, v100 ,', 'course', 'step', 10, ?, ?, '[]', 60, 6, 0.96, 0.2, ?)""",
                    [json.dumps(log.roles.to_dict()), json.dumps(list(log.columns)), datetime(2026, 1, 1)])
        frame = log.frame.drop(columns=["lr"]).reset_index(names="row_index")
        frame.insert(0, "run_id", 1)
        con.insert_frame("series", frame)
        con.commit()


def test_a_version_1_file_is_upgraded_in_place_and_keeps_its_run(db):
    _version_1_file(db)
    with _raw(db) as con:
        assert current_version(con) == 1
        assert "lr" not in _columns(con, "series")

    lib = Library(db)
    assert lib.schema_version() == SCHEMA_VERSION == 6
    table = lib.runs()
    assert table["tags"].tolist() == ["baseline,v100"]          # split on commas, trimmed, empty dropped
    assert lib.runs("tag=v100")["run_id"].tolist() == [1]
    log = lib.get(1)
    original = read_log(course_csv(), "resnet20_Tesla V100.csv")
    assert log.frame["loss"].tolist() == original.frame["loss"].tolist()
    assert log.frame["lr"].isna().all()                          # the column the upgrade added
    assert log.meta.status is None and log.meta.model == "resnet20"
    with _raw(db) as con:
        versions = [r[0] for r in con.execute("SELECT version FROM schema_version ORDER BY version")]
        columns = _columns(con, "runs")
        tables = con.tables()
    assert versions == [1, 2, 3, 4, 5, 6] and "tags" not in columns and "throughput" in columns
    assert "schedule" in columns
    assert {"seq_len", "metrics", "target", "extra_columns", "steps"} <= set(columns)       # version 4
    assert {"deleted_at", "data_hash"} <= set(columns) and "audit" in tables                # version 5
    assert "lr_schedule" in columns                                                         # version 6
    assert log.meta.schedule is None and log.meta.lr_schedule is None


def test_an_upgraded_file_takes_new_runs_after_the_old_ones(db):
    _version_1_file(db)
    lib = Library(db)
    data = course_csv(seed=7)
    result = lib.add(read_log(data, "resnet32_Tesla V100.csv"), data=data, tags=["new"])
    assert result.added and result.run_id == 2
    assert lib.runs()["source"].tolist() == ["resnet20_Tesla V100.csv", "resnet32_Tesla V100.csv"]
    assert lib.remove([1]) == [1] and lib.restore([1]) == [1]      # the old run is soft-deleted like any other


def test_a_failing_migration_leaves_the_file_at_its_version(db, monkeypatch):
    _version_1_file(db)
    monkeypatch.setitem(MIGRATIONS, 2, MIGRATIONS[2][:3] + ("ALTER TABLE no_such_table ADD COLUMN x INTEGER",))
    with pytest.raises(LibraryError, match="from schema version 1 to 6 failed .*left at version 1"):
        Library(db).runs()
    with _raw(db) as con:
        assert current_version(con) == 1                              # the half-run upgrade was rolled back
        assert "lr" not in _columns(con, "series")


def test_an_older_library_copied_without_its_lock_file_is_upgraded_not_refused(db, store_kind):
    from pathlib import Path

    _version_1_file(db)
    if store_kind == "duckdb":
        Path(f"{db}.lock").unlink()                   # a file copied from another machine: read-only check first
    assert Library(db).runs()["source"].tolist() == ["resnet20_Tesla V100.csv"]
    assert Library(db).schema_version() == SCHEMA_VERSION
