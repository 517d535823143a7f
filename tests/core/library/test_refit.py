"""The batched refit (core.library.refit): the same fits as the per-run ``fit_curve``, stored chunk by chunk,
locally and on a real Dask ``LocalCluster`` of two worker processes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from core.curves.optimus import optimus_loss
from core.datasets import BUILTIN_LOG_SETS, builtin_log_files
from core.errors import InputError
from core.library import Library, add_paths, fit_library
from core.library.refit import batched_optimus, fit_runs_batched, max_relative_difference, refit_library
from core.logs import read_log, read_log_file
from core.runs.analysis import fit_run

ROOT = Path(__file__).resolve().parents[3]
LOGS = ROOT / "data" / "logs"


def _stored(lib: Library) -> dict[int, dict]:
    with lib.store.connect() as con:
        rows = con.execute("SELECT run_id, params, r2, flags, epoch_to_target FROM fits ORDER BY run_id")
    return {int(r[0]): {"params": json.loads(r[1]), "r2": r[2], "flags": r[3], "epoch": r[4]} for r in rows}


def test_batched_solver_recovers_hand_made_curves_at_once():
    k = np.arange(1, 801.0)
    truth = np.array([[2e-3, 0.5, 0.3], [1e-4, 1.0, 0.05], [5e-2, 2.0, 0.0]])
    K = np.vstack([k, k, k])
    Y = np.vstack([optimus_loss(k, *p) for p in truth])
    W = np.ones_like(K)
    W[1, 400:] = 0.0                       # the second run is half as long (padding)
    params, ok = batched_optimus(K, Y, W, np.tile([1e-3, 1.0, 0.1], (3, 1)))
    assert ok.all()
    np.testing.assert_allclose(params, truth, rtol=1e-6, atol=1e-12)


def test_batched_fits_equal_the_per_run_fits_on_every_built_in_log():
    logs = [read_log_file(path, source=name) for key in BUILTIN_LOG_SETS for name, path in builtin_log_files(key)]
    assert len(logs) >= 50
    batched, one_by_one = fit_runs_batched(logs)
    assert one_by_one < len(logs) // 4     # the batch does (almost) all of them
    compared = 0
    for log, got in zip(logs, batched):
        ref = fit_run(log)
        assert (got.fit is None) == (ref.fit is None), log.source
        assert got.problem == ref.problem
        if ref.fit is None:
            continue
        assert got.fit.rss == pytest.approx(ref.fit.rss, rel=1e-8), log.source
        if not ref.fit.degenerate:
            assert max_relative_difference(got.fit.params, ref.fit.params) < 1e-5, log.source
            assert got.fit.flags == ref.fit.flags, log.source
            for name in ref.fit.stderr:
                assert got.fit.stderr[name] == pytest.approx(ref.fit.stderr[name], rel=1e-3, abs=1e-12)
            compared += 1
    assert compared >= 10                  # the MNIST-1D logs; the traces are accuracy-only or flat


def test_a_log_the_fitter_refuses_gets_the_same_problem():
    log = read_log(b"step,loss\n1,2.0\n2,1.0\n3,0.5\n", "short.csv")     # 3 points for 3 parameters
    (got,), one_by_one = fit_runs_batched([log])
    assert got.fit is None and got.problem == fit_run(log).problem and one_by_one == 1


@pytest.fixture
def library(tmp_path) -> Library:
    lib = Library(tmp_path / "lib.duckdb")
    assert add_paths(lib, [LOGS]).n_added == 12
    return lib


def test_local_refit_stores_the_fits_fit_library_makes(library, tmp_path):
    summary = refit_library(library, chunk=5)
    assert (summary.n_runs, summary.n_fitted, summary.n_chunks) == (12, 12, 3)
    stored = _stored(library)
    assert len(stored) == 12
    other = Library(tmp_path / "other.duckdb")
    add_paths(other, [LOGS])
    fit_library(other)
    for run_id, ref in _stored(other).items():
        assert max_relative_difference(stored[run_id]["params"], ref["params"]) < 1e-5
        assert stored[run_id]["flags"] == ref["flags"] and stored[run_id]["epoch"] == ref["epoch"]


def test_refit_stopped_after_the_first_chunk_keeps_that_chunk(library):
    summary = refit_library(library, chunk=5, progress=lambda done, total, label: False)
    assert summary.cancelled and summary.n_fitted == 5
    assert sorted(_stored(library)) == [1, 2, 3, 4, 5]


def test_refit_with_a_filter_fits_only_the_matching_runs(library):
    refit_library(library, "split=val")
    assert sorted(_stored(library)) == [int(i) for i in library.runs("split=val")["run_id"]]


def test_dask_local_cluster_gives_the_local_fits(library, tmp_path):
    local = Library(tmp_path / "local.duckdb")
    add_paths(local, [LOGS])
    refit_library(local, chunk=4)
    summary = refit_library(library, engine="dask", n_workers=2, chunk=4)
    assert (summary.n_fitted, summary.n_chunks) == (12, 3) and "LocalCluster of 2" in summary.engine
    expected, got = _stored(local), _stored(library)
    assert sorted(got) == sorted(expected)
    for run_id in expected:
        assert got[run_id]["params"] == expected[run_id]["params"]


def test_an_unknown_engine_is_refused(library):
    with pytest.raises(InputError, match="expected one of local, dask; got 'spark'"):
        refit_library(library, engine="spark")


def test_cli_refit_stores_every_fit(library, capsys):
    from core.cli import main

    assert main(["library", "refit", "--chunk", "5", "--filter", "model=resnet8", "--db", library.path]) == 0
    err = capsys.readouterr().err
    assert "refitted 2 of 2 run(s) in 1 chunk(s) with local" in err
    assert sorted(_stored(library)) == [int(i) for i in library.runs("model=resnet8")["run_id"]]
