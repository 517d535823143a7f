"""Batched library writes (issue 35, the MLflow import's write path): ``add_runs(batched=True)`` writes a batch of
runs in one transaction (``core.library.adding.insert_runs``) and leaves the library the one-run-at-a-time path
leaves: the same runs with the same ids, series, tags, fits and audit lines; copies found by content or data
hash (in the library or earlier in the batch); removed runs restored; a run that cannot be written refused
alone, nothing of it stored.  Each test runs on DuckDB and on a real PostgreSQL server (the ``db`` fixture)."""

from __future__ import annotations

import pandas as pd

from core.library import Library, PendingRun, content_hash
from core.logs import read_log
from tests.core.library.helpers import course_csv


def pending(seed: int, *, name: str | None = None, tags=("mlflow",), fits=None) -> PendingRun:
    data = course_csv(seed=seed)
    return PendingRun(read_log(data, name or f"run{seed}_V100.csv"), content_hash(data), "cifar10",
                      (*tags, f"mlflow-run:{seed}"), 270_000, fits)


def batch() -> list[PendingRun]:
    """New runs, a run twice, and run 1's data under another content hash: 6 items, 4 runs."""
    items = [pending(i) for i in range(4)]
    return [*items, items[2], PendingRun(items[1].log, "another-hash", "cifar10", ("other",), 270_000)]


def fits_of(run: int) -> pd.DataFrame:
    return pd.DataFrame({"family": ["power_law"], "target_acc": [0.8], "criterion": ["rmse"],
                         "params": [f'{{"b0": {0.01 * run}}}'], "stderr": ["{}"], "r2": [0.99], "flags": ["[]"],
                         "step_to_target": [100.0 * run], "epoch_to_target": [run], "loss_at_target": [0.3],
                         "fitted_at": [pd.Timestamp("2026-01-01")]})


def state(lib: Library) -> dict:
    """Everything an add writes, but the times it was written."""
    with lib.store.connect() as con:
        runs = con.frame("SELECT * FROM runs ORDER BY run_id").drop(columns=["added_at"])
        series = con.frame("SELECT * FROM series ORDER BY run_id, row_index")
        tags = con.frame("SELECT * FROM run_tags ORDER BY run_id, tag")
        audit = con.frame("SELECT action, run_ids, detail FROM audit ORDER BY happened_at, action")
    return {"runs": runs, "series": series, "tags": tags, "audit": audit}


def test_a_batch_leaves_the_library_the_run_by_run_path_leaves(make_db):
    one, many = Library(make_db("one")), Library(make_db("many"))
    first = [pending(10), pending(11)]
    for lib in (one, many):
        lib.add_runs(first)
        lib.remove([2])                               # run 11 removed: adding it again restores it
    a = one.add_runs([*batch(), pending(11), pending(10)])
    b = many.add_runs([*batch(), pending(11), pending(10)], batched=True)
    assert [(r.source, r.run_id, r.added, r.restored) for r in b.results] == \
        [(r.source, r.run_id, r.added, r.restored) for r in a.results]
    assert [(r.run_id, r.added, r.restored) for r in b.results] == [
        (3, True, False), (4, True, False), (5, True, False), (6, True, False),   # runs 0 to 3
        (5, False, False), (4, False, False),                                      # run 2 again; run 1's data
        (2, True, True), (1, False, False)]                                        # restored; present
    x, y = state(one), state(many)
    for name in x:
        pd.testing.assert_frame_equal(y[name], x[name], check_exact=True, obj=name)
    assert len(y["series"]) == 6 * 60 and y["runs"]["source"].tolist()[2:] == [f"run{i}_V100.csv" for i in range(4)]
    assert y["audit"]["action"].tolist().count("restore") == 1


def test_fits_are_written_with_their_runs(db):
    lib = Library(db)
    report = lib.add_runs([pending(i, fits=fits_of(i)) for i in (1, 2, 3)], batched=True)
    assert report.n_added == 3
    with lib.store.connect() as con:
        stored = con.frame("SELECT run_id, params, step_to_target FROM fits ORDER BY run_id")
    assert stored["run_id"].tolist() == [1, 2, 3]
    assert stored["step_to_target"].tolist() == [100.0, 200.0, 300.0]
    assert stored["params"].tolist() == ['{"b0": 0.01}', '{"b0": 0.02}', '{"b0": 0.03}']


def test_a_run_that_cannot_be_written_is_refused_alone_and_nothing_of_it_stays(db):
    lib = Library(db)
    bad = pending(2, fits=fits_of(2).assign(params=[None]))          # fits.params is NOT NULL
    report = lib.add_runs([pending(1), bad, pending(3)], batched=True)
    assert [r.source for r in report.results] == ["run1_V100.csv", "run3_V100.csv"]     # ids: the sequence
    assert [r.run_id for r in report.results] == [int(i) for i in lib.runs()["run_id"]]  # moved on (rolled back)
    assert [s for s, _ in report.errors] == ["run2_V100.csv"]
    assert "nothing of it was added" in report.errors[0][1]
    table = lib.runs()
    assert table["source"].tolist() == ["run1_V100.csv", "run3_V100.csv"]
    assert lib.counts()["series"] == int(table["n_points"].sum()) == 120


def test_stopping_a_batched_import_keeps_whole_runs_and_reports_every_run_written(db):
    lib = Library(db)
    report = lib.add_runs([pending(i) for i in range(5)], batched=True,
                          progress=lambda done, total, label: done < 2)
    table = lib.runs()
    assert report.cancelled
    assert sorted(r.run_id for r in report.results) == sorted(int(i) for i in table["run_id"])  # none unreported
    assert lib.counts()["series"] == int(table["n_points"].sum()) == 60 * len(table)
