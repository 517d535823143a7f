"""Benchmark: refitting many runs (issues 20 and 35) — the batched numpy Optimus fit against the per-run
``curve_fit`` loop, and the refit end to end through the library (load, fit, store) against the engine alone,
on a DuckDB file and on PostgreSQL, with the local engine and with Dask (two worker processes).

Runs are made, deterministically (``numpy.random.default_rng([2026, i])``), from the built-in logs
that have a loss curve (the 12 MNIST-1D course logs, 384 to 1,512 points) and, when ``../shared``
is there, the NanoGPT speedrun logs (LLM-sized, read from ``../shared/reference/nanogpt_speedrun``;
without it the benchmark runs on the built-in logs alone): each variant is a base log with its loss
multiplied by ``1 + 0.02·N(0, 1)`` noise and its steps stretched, so no two fits are alike.  In one run:

* **fits alone** (runs in memory, ``--n``; ``--n 0`` skips it): ``core.runs.fit_run`` (``curve_fit``,
  one run at a time) on ``--baseline`` runs against ``core.library.refit.fit_runs_batched`` in
  chunks of 500; ms per run, the ratio, the largest parameter difference on the baseline runs;
* **refit end to end** (``--library-n`` runs, on each store of ``--stores``): the library is filled
  in bulk first (setup, timed apart: the runs' rows and their series made in numpy from the base
  logs' rows, a variant's steps multiplied by a factor in [1, 2) and its loss by the noise, written
  a chunk at a time with ``Connection.insert_bulk``: Arrow into DuckDB, ``COPY`` into PostgreSQL,
  then the index a bulk read uses and ``ANALYZE``; a bench run's ``runs`` row keeps its base's
  summary columns and gets a placeholder content and data hash).  Then ``refit_library`` with each
  engine of ``--engines`` (``dask``: a ``LocalCluster`` of two worker processes, each loading its
  own chunk; the cluster's start included): seconds, ms per run, extrapolation to 100,000 runs;
  and the **engine alone** on the first ``--engine-n`` of the same runs loaded in memory first
  (``fit_runs_batched``, chunk by chunk, then the analysis ``fit_chunk`` adds: target crossing
  and the stored record): the ratio end to end / engine alone;
* **where a chunk's time goes** (the local engine, first three chunks): bulk load, fit and
  analysis, the one write; and the paper scaling to 64 workers from those figures (loading and
  fitting spread over the workers, the write stays with the one writer);
* **Dask overhead per task** (``--engines`` with dask): 200 no-op tasks one at a time, 2,000 at once.

PostgreSQL is ``--pg-url`` (a server you started; a fresh schema is made in it), else
``$TTA_TEST_POSTGRES_URL``, else one started by ``tests/pg_server.py`` when ``pg_ctl`` exists
(stopped at the end).  Timings are wall-clock on whatever else the machine runs (the load average
is printed with each figure).  The issue's size: ``--library-n 100000`` (about 2 GB for DuckDB and
10 GB for PostgreSQL in the temporary folders); run one store and one engine per command to keep
each under a few minutes, e.g. ``--library-n 100000 --stores duckdb --engines local --n 0``.
Quick: ``--quick`` (``--n 1000 --baseline 50 --library-n 2000 --engine-n 2000``).
Usage: ``python bench/refit.py [--n 10000] [--baseline 300] [--library-n 1000] [--engine-n 10000]
[--stores duckdb,postgresql] [--engines local,dask] [--pg-url URL] [--chunk 2000] [--quick]``.
Not used by the tests.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.reference import SHARED  # noqa: E402
from core.datasets import BUILTIN_LOG_SETS, builtin_log_files  # noqa: E402
from core.errors import LogFormatError  # noqa: E402
from core.library import Library  # noqa: E402
from core.library.records import run_row, series_frame  # noqa: E402
from core.library.refit import (  # noqa: E402
    DEFAULT_CHUNK,
    fit_chunk,
    fit_runs_batched,
    max_relative_difference,
    refit_library,
    write_fits,
)
from core.library.refit_io import SERIES_SQL, load_logs  # noqa: E402
from core.logs import read_log_file  # noqa: E402
from core.runs.analysis import fit_run  # noqa: E402
from core.targets import DEFAULT_TARGET  # noqa: E402


def base_logs() -> list:
    logs = [read_log_file(p, source=n) for k in BUILTIN_LOG_SETS for n, p in builtin_log_files(k)]
    for path in sorted((SHARED / "nanogpt_speedrun").rglob("*.csv")) if SHARED.is_dir() else []:
        try:
            logs.append(read_log_file(path))
        except LogFormatError:
            pass
    return [log for log in logs if log.has_loss and log.frame["loss"].notna().sum() >= 10]


def variants(bases: list, n: int) -> list:
    out = []
    for i in range(n):
        rng = np.random.default_rng([2026, i])
        base = bases[i % len(bases)]
        frame = base.frame.copy()
        frame["loss"] = frame["loss"] * (1 + 0.02 * rng.standard_normal(len(frame))).clip(0.5, 1.5)
        frame["global_step"] = np.round(frame["global_step"] * rng.uniform(0.5, 2.0))
        frame = frame.drop_duplicates("global_step", keep="last").reset_index(drop=True)
        out.append(replace(base, frame=frame, source=f"v{i}/{base.source}"))
    return out


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def fill(lib: Library, bases: list, n: int, chunk: int = 2000) -> None:
    """``n`` runs written in bulk, ``chunk`` per transaction (see the module docstring)."""
    import pyarrow as pa

    now = pd.Timestamp.now("UTC").tz_localize(None).to_pydatetime()
    rows = [run_row(b, digest="", dataset=None, n_params=None) for b in bases]
    series = [series_frame(b) for b in bases]
    kinds = {"row_index": pa.int32(), "epoch": pa.int64(), "acc": pa.float64(), "time_s": pa.float64(),
             "lr": pa.float64(), "extra": pa.string()}
    fixed = [{c: pa.array(f[c], type=t, from_pandas=True) for c, t in kinds.items()}
             for f in series]                          # a base's columns every variant keeps, as Arrow
    for start in range(0, n, chunk):
        which = [i % len(bases) for i in range(start, min(n, start + chunk))]
        runs = []
        for i, b in zip(range(start, start + len(which)), which):
            tag = f"bench-{i:09d}"
            runs.append({**rows[b], "content_hash": tag, "data_hash": tag, "source": f"v{i}/{bases[b].source}",
                         "added_at": now})
        with lib.store.transaction() as con:
            con.insert_bulk("runs", pa.Table.from_pylist(runs))
            got = con.execute("SELECT run_id, content_hash FROM runs WHERE content_hash >= ? AND content_hash <= ?",
                              [runs[0]["content_hash"], runs[-1]["content_hash"]])
            ids = {h: int(r) for r, h in got}
            run_id, step, loss = [], [], []
            for i, (b, run) in enumerate(zip(which, runs)):
                rng = np.random.default_rng([2026, start + i])
                m = len(series[b])
                run_id.append(np.full(m, ids[run["content_hash"]], dtype=np.int32))
                step.append(series[b]["global_step"].to_numpy() * rng.uniform(1.0, 2.0))
                loss.append(series[b]["loss"].to_numpy() * (1 + 0.02 * rng.standard_normal(m)).clip(0.5, 1.5))
            columns = {"run_id": pa.array(np.concatenate(run_id)), "global_step": pa.array(np.concatenate(step)),
                       "loss": pa.array(np.concatenate(loss), from_pandas=True)}
            columns.update({c: pa.concat_arrays([fixed[b][c] for b in which]) for c in fixed[0]})
            con.insert_bulk("series", pa.table(columns))
    if lib.store.kind == "postgresql":
        lib.store.prepare_bulk_read()
        with lib.store.connect() as con:
            con.execute("ANALYZE")


def engine_alone(lib: Library, n: int, chunk: int) -> tuple[float, float]:
    """Seconds per run of ``fit_runs_batched`` alone and of ``fit_chunk`` (fit, crossing, record) on the first
    ``n`` runs, loaded in memory first (not timed)."""
    ids = [int(i) for i in lib.runs()["run_id"]][:n]
    chunks = [load_logs(lib.store, ids[i:i + chunk]) for i in range(0, len(ids), chunk)]
    t = time.perf_counter()
    for c in chunks:
        fit_runs_batched([log for _, log in c])
    engine = (time.perf_counter() - t) / len(ids)
    t = time.perf_counter()
    for c in chunks:
        fit_chunk(c, DEFAULT_TARGET, "epoch")
    return engine, (time.perf_counter() - t) / len(ids)


def chunk_parts(lib: Library, chunk: int, n_chunks: int = 3) -> tuple[float, float, float, float]:
    """Seconds of a chunk's two queries (what a DuckDB file serves to one process at a time), its whole bulk load,
    its fit and analysis, and its write (the local engine's steps), median of the first ``n_chunks``."""
    ids = [int(i) for i in lib.runs()["run_id"]]
    parts = []
    for start in range(0, min(len(ids), n_chunks * chunk), chunk):
        group = ids[start:start + chunk]
        marks = ", ".join("?" for _ in group)
        t0 = time.perf_counter()
        with lib.store.connect() as con:
            con.frame(f"SELECT * FROM runs WHERE run_id IN ({marks}) AND deleted_at IS NULL", group)
            con.read_bulk(SERIES_SQL.format(marks=marks), group)
        t1 = time.perf_counter()
        logs = load_logs(lib.store, group)
        t2 = time.perf_counter()
        records, _ = fit_chunk(logs, DEFAULT_TARGET, "epoch")
        t3 = time.perf_counter()
        write_fits(lib.store, records)
        parts.append((t1 - t0, t2 - t1, t3 - t2, time.perf_counter() - t3))
    return tuple(float(np.median([p[k] for p in parts])) for k in range(4))


def refit_on(kind: str, target: str, bases: list, args) -> None:
    lib = Library(target, timeout=600)
    t = time.perf_counter()
    fill(lib, bases, args.library_n, chunk=args.chunk)
    print(f"[{kind}] setup: library of {args.library_n:,} runs filled in bulk in {time.perf_counter() - t:.1f} s "
          f"(load average {load()})", flush=True)
    engine, analysed = engine_alone(lib, min(args.engine_n, args.library_n), args.chunk)
    print(f"[{kind}] engine alone (fit_runs_batched): {engine * 1000:.2f} ms/run; with the analysis (fit_chunk): "
          f"{analysed * 1000:.2f} ms/run ({min(args.engine_n, args.library_n):,} runs in memory; load average "
          f"{load()})", flush=True)
    for engine_name in args.engines:
        options = {"n_workers": 2} if engine_name == "dask" else {}
        got = refit_library(lib, engine=engine_name, chunk=args.chunk, **options)
        per = got.seconds / max(got.n_fitted, 1)
        print(f"[{kind}] refit end to end, {engine_name}: {got.n_fitted:,} runs in {got.seconds:.1f} s, "
              f"{per * 1000:.2f} ms/run, {1 / per:,.0f} runs/s ({got.n_chunks} chunks, {got.n_one_by_one} fitted one "
              "by one): "
              f"{per / engine:.2f}x the engine alone's time per run; 100,000 runs: {per * 1e5 / 60:.1f} min "
              f"(load average {load()})", flush=True)
    query_s, load_s, fit_s, write_s = chunk_parts(lib, args.chunk)
    print(f"[{kind}] a chunk of {args.chunk:,} runs (local, median of 3): load {load_s:.2f} s (of which the two "
          f"queries {query_s:.2f} s), fit and analysis {fit_s:.2f} s, write {write_s:.2f} s (load average {load()})")
    # serial: the one writer, and for a DuckDB file the queries too (one process at a time holds the file)
    serial = write_s + (query_s if kind == "duckdb" else 0.0)
    spread = load_s + fit_s - (query_s if kind == "duckdb" else 0.0)
    for workers in (2, 16, 64):
        rate = args.chunk / max(spread / workers, serial)
        bound = "the serial part" if serial >= spread / workers else "the workers"
        print(f"[{kind}]   on paper, {workers} workers: {rate:,.0f} runs/s, 100,000 runs in {1e5 / rate:.0f} s "
              f"({bound} bound; serial per chunk {serial:.2f} s: the write"
              f"{' and the queries' if kind == 'duckdb' else ''}; the server's reads assumed to keep up)")
    lib.store.close()


def dask_overhead() -> None:
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        client.submit(int, 0, pure=False).result()
        t = time.perf_counter()
        for i in range(200):
            client.submit(int, i, pure=False).result()
        each = (time.perf_counter() - t) / 200
        t = time.perf_counter()
        client.gather(client.map(int, range(2000), pure=False))
        many = (time.perf_counter() - t) / 2000
    print(f"dask overhead per task: {each * 1000:.1f} ms round trip one at a time, {many * 1000:.2f} ms each "
          f"when 2,000 are in flight (load average {load()})")


def fits_alone(bases: list, args) -> None:
    runs = variants(bases, max(args.n, args.baseline))
    t = time.perf_counter()
    ref = [fit_run(log) for log in runs[:args.baseline]]
    per_run = (time.perf_counter() - t) / args.baseline
    t = time.perf_counter()
    got, slow = [], 0
    for i in range(0, args.n, 500):
        fits, s = fit_runs_batched(runs[i:i + 500])
        got += fits
        slow += s
    batched = (time.perf_counter() - t) / args.n
    worst = max((max_relative_difference(a.fit.params, b.fit.params) for a, b in zip(ref, got)
                 if a.fit is not None and b.fit is not None and not a.fit.degenerate), default=0.0)
    print(f"fits alone: per-run curve_fit {per_run * 1000:.2f} ms/run ({args.baseline} runs), batched "
          f"{batched * 1000:.2f} ms/run ({args.n} runs, {slow} fitted one by one): {per_run / batched:.1f}x faster; "
          f"largest parameter difference on the baseline runs (non-degenerate) {worst:.1e}")
    print(f"  extrapolated to 100,000 runs: batched {batched * 1e5 / 60:.1f} min, per-run {per_run * 1e5 / 60:.1f} min "
          f"(load average {load()})", flush=True)


@contextlib.contextmanager
def postgres(url: str | None):
    if url:
        yield url
        return
    from tests.pg_server import server

    with server() as found:
        yield found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--baseline", type=int, default=300)
    parser.add_argument("--library-n", type=int, default=1000)
    parser.add_argument("--engine-n", type=int, default=10_000, help="runs the engine alone fits (in memory)")
    parser.add_argument("--stores", default="duckdb,postgresql", help="comma-separated: duckdb, postgresql")
    parser.add_argument("--engines", default="local,dask", help="comma-separated: local, dask")
    parser.add_argument("--pg-url", default=None, help="a PostgreSQL server's URL (a fresh schema is made)")
    parser.add_argument("--chunk", type=int, default=DEFAULT_CHUNK, help="runs per chunk")
    parser.add_argument("--quick", action="store_true", help="--n 1000 --baseline 50 --library-n 2000 --engine-n 2000")
    args = parser.parse_args()
    if args.quick:
        args.n, args.baseline, args.library_n, args.engine_n = 1000, 50, 2000, 2000
    args.stores = [s for s in args.stores.split(",") if s]
    args.engines = [e for e in args.engines.split(",") if e]
    bases = base_logs()
    print(f"{len(bases)} base logs with a loss curve ({sum(b.n_points for b in bases) / len(bases):.0f} points on "
          f"average); load average {load()} on {os.cpu_count()} cores", flush=True)
    warnings.simplefilter("ignore")
    if args.n:
        fits_alone(bases, args)
    if "duckdb" in args.stores:
        with tempfile.TemporaryDirectory() as folder:
            refit_on("duckdb", str(Path(folder) / "lib.duckdb"), bases, args)
    if "postgresql" in args.stores:
        with postgres(args.pg_url) as url:
            if url is None:
                print("[postgresql] skipped: no --pg-url, no TTA_TEST_POSTGRES_URL and no pg_ctl to start one")
            else:
                from tests.pg_server import fresh_schema

                refit_on("postgresql", fresh_schema(url), bases, args)
    if "dask" in args.engines:
        dask_overhead()


if __name__ == "__main__":
    main()
