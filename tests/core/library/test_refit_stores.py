"""Refit end to end on both stores (issue 35): runs loaded in bulk (``core.library.refit_io.load_logs``) are the
runs ``Library.get_many`` gives, and ``refit_library`` (local engine and a real Dask ``LocalCluster``) stores, for
every run, the fit the batched engine (``fit_runs_batched``) makes from the same logs. Each test runs on a DuckDB
file and on a real PostgreSQL server (the ``db`` fixture)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from core.datasets import builtin_log_files
from core.library import Library, add_paths
from core.library.fits import FIT_COLUMNS, FIT_KEY
from core.library.refit import fit_runs_batched, refit_library, write_fits
from core.library.refit_io import load_logs
from core.runs import analyse_run
from core.targets import accuracy_target

ROOT = Path(__file__).resolve().parents[3]
#: 12 course logs, then one log of each kind whose frame has optional columns (samples, tokens, train_loss),
#: per-step figures (``runs.steps``) or its own target
FILES = [ROOT / "data" / "logs"] + [builtin_log_files(key)[0][1] for key in
                                    ("pollux", "mnist1d_batch", "mlperf", "mlperf_llama8b", "speedrun")]
N_RUNS = 17


@pytest.fixture
def library(db) -> Library:
    lib = Library(db)
    assert add_paths(lib, FILES).n_added == N_RUNS
    return lib


def _stored(lib: Library) -> dict[int, dict]:
    with lib.store.connect() as con:
        table = con.frame("SELECT * FROM fits ORDER BY run_id")
    return {int(r["run_id"]): r for r in table.to_dict("records")}


def test_bulk_load_gives_the_runs_get_many_gives(library):
    ids = [int(i) for i in library.runs()["run_id"]]
    ids = ids[::-1] + ids[:2]                 # any order, an id twice
    got, expected = load_logs(library.store, ids), library.get_many(ids)
    assert [i for i, _ in got] == ids
    with_extra = 0
    for (_, a), (_, b) in zip(got, expected):
        pd.testing.assert_frame_equal(a.frame, b.frame, check_exact=True)
        assert a.fingerprint() == b.fingerprint()
        for name in ("source", "fmt", "roles", "meta", "steps_per_epoch", "granularity", "flags", "columns",
                     "metrics", "target"):
            assert getattr(a, name) == getattr(b, name), name
        assert (a.steps is None) == (b.steps is None)
        with_extra += len(a.frame.columns) > 6
    assert with_extra >= 5                    # samples, tokens, train_loss: parsed from series.extra in bulk


def test_bulk_load_refuses_an_unknown_run(library):
    from core.errors import InputError

    with pytest.raises(InputError, match="run #999 is not there"):
        load_logs(library.store, [1, 999])


@pytest.mark.parametrize("engine", ["local", "dask"])
def test_refit_end_to_end_stores_the_fits_the_engine_makes(library, engine):
    options = {"n_workers": 2} if engine == "dask" else {}
    summary = refit_library(library, engine=engine, chunk=6, **options)
    assert (summary.n_runs, summary.n_fitted, summary.n_chunks) == (N_RUNS, N_RUNS, 3)
    stored = _stored(library)
    assert sorted(stored) == sorted(int(i) for i in library.runs()["run_id"])        # one fit per run, 17
    logs = library.get_many(sorted(stored))
    fits = []                                 # the engine on the same logs, in the same chunks of 6: equal floats
    for start in range(0, N_RUNS, 6):
        fits += fit_runs_batched([log for _, log in logs[start:start + 6]])[0]
    n_params = 0
    for (run_id, log), fitted in zip(logs, fits):
        row = stored[run_id]
        assert set(row) == set(FIT_COLUMNS)
        expected = {} if fitted.fit is None else {k: float(v) for k, v in fitted.fit.params.items()
                                                  if math.isfinite(v)}
        assert {k: v for k, v in json.loads(row["params"]).items() if v is not None} == expected, log.source
        n_params += len(expected)
        analysis = analyse_run(log, target=accuracy_target(0.92), criterion="epoch", fitted=fitted)
        assert row["flags"] == analysis.row()["flags"]
        assert row["epoch_to_target"] == (analysis.crossing.epoch if analysis.crossing.reached else None) or \
            (pd.isna(row["epoch_to_target"]) and not analysis.crossing.reached)
    assert n_params >= 3 * 12                 # the 12 course logs have a loss curve, fitted: b0, b1, b2 each


def test_a_refit_replaces_the_stored_fits_in_one_statement(library):
    refit_library(library)
    before = _stored(library)
    records = [{**row, "r2": 0.5, "flags": "changed"} for row in before.values()]
    records = [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()} for r in records]
    write_fits(library.store, records)
    after = _stored(library)
    assert len(after) == N_RUNS and {r["flags"] for r in after.values()} == {"changed"}


def test_many_fits_with_a_conflict_rule_are_replaced(library):
    """Past 64 rows PostgreSQL copies into a temporary table and inserts from it: every row replaced once."""
    ids = [int(i) for i in library.runs()["run_id"]]
    rows = [{"run_id": ids[i % N_RUNS], "family": "optimus", "target_acc": 0.5 + i / 1000, "criterion": "epoch",
             "params": "{}", "stderr": "{}", "r2": None, "flags": "first", "step_to_target": None,
             "epoch_to_target": [None, 3.0][i % 2], "loss_at_target": None, "fitted_at": pd.Timestamp("2026-01-01")}
            for i in range(100)]      # epoch_to_target: a float column (None and 3.0) for an INTEGER one
    with library.store.transaction() as con:
        con.insert_frame("fits", pd.DataFrame(rows), on_conflict="replace", key=FIT_KEY)
    rows = [{**r, "flags": "second", "r2": 0.25} for r in rows]
    with library.store.transaction() as con:
        con.insert_frame("fits", pd.DataFrame(rows), on_conflict="replace", key=FIT_KEY)
    with library.store.connect() as con:
        counts = con.execute("SELECT flags, count(*), min(r2), max(r2), count(epoch_to_target), "
                             "min(epoch_to_target), max(epoch_to_target) FROM fits GROUP BY flags")
    assert [tuple(r) for r in counts] == [("second", 100, 0.25, 0.25, 50, 3, 3)]


def test_bulk_insert_and_read_give_back_every_value(db):
    """``insert_bulk`` (Arrow into DuckDB, CSV through ``COPY`` into PostgreSQL) and ``read_bulk`` (Arrow, CSV
    through ``COPY ... TO STDOUT``) keep each float to the bit, NULL apart from an empty text, and text with
    commas and quotes."""
    import numpy as np
    import pyarrow as pa

    floats = [0.1 + 0.2, 1e-300, -2.5e300, 123456789.123456789, None, 5e-324]
    texts = ['[1.5, null]', "", 'a,"b"\nc', None, "x", "ü"]
    table = pa.table({"run_id": pa.array([999] * 6, pa.int32()), "row_index": pa.array(range(6), pa.int32()),
                      "global_step": pa.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
                      "epoch": pa.array([1, None, 3, 4, 5, 2**40]),
                      "loss": pa.array(floats, pa.float64()), "extra": pa.array(texts, pa.string())})
    with Library(db).store.transaction() as con:
        con.insert_bulk("series", table)
    with Library(db).store.connect() as con:
        got = con.read_bulk("SELECT row_index, epoch, loss, extra FROM series WHERE run_id = ? ORDER BY row_index",
                            [999])
    assert got.schema.types == [pa.float64(), pa.float64(), pa.float64(), pa.string()]
    assert got.column("row_index").to_pylist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert got.column("epoch").to_pylist() == [1.0, None, 3.0, 4.0, 5.0, float(2**40)]
    loss = got.column("loss").to_pylist()
    assert loss[4] is None and np.array(loss[:4] + loss[5:]).tobytes() == np.array(floats[:4] + floats[5:]).tobytes()
    assert got.column("extra").to_pylist() == texts


def test_a_postgresql_user_who_cannot_add_the_index_still_refits(postgres_url):
    """The first refit adds ``series_run_rows``; a role that does not own the tables gets a warning naming the
    statement, and the refit stores every fit all the same."""
    import uuid

    import psycopg

    from tests.pg_server import fresh_schema

    url = fresh_schema(postgres_url)
    owner = Library(url)
    assert add_paths(owner, [ROOT / "data" / "logs"]).n_added == 12
    role, schema = f"reader_{uuid.uuid4().hex[:8]}", url.rsplit("%3D", 1)[1]
    with psycopg.connect(postgres_url, autocommit=True) as con:
        con.execute(f"CREATE ROLE {role} LOGIN")
        con.execute(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
        con.execute(f"GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA {schema} TO {role}")
    other = Library(url.replace("postgres@", f"{role}@", 1))
    with pytest.warns(UserWarning, match="could not add the index series_run_rows .*CREATE INDEX IF NOT EXISTS"):
        summary = refit_library(other, chunk=5)
    assert summary.n_fitted == 12 and len(_stored(owner)) == 12
    refit_library(owner, chunk=5)             # the owner adds it, once
    with owner.store.connect() as con:
        assert con.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'series_run_rows' AND schemaname = ?",
                           [schema]) == [(f"CREATE INDEX series_run_rows ON {schema}.series USING btree (run_id, "
                                          "row_index)",)]
