"""Benchmark: refitting many runs (issue 20) — the batched numpy Optimus fit against the per-run ``curve_fit``
loop, and the Dask engine (a ``LocalCluster`` of two worker processes) against the local engine.

Runs are made, deterministically (``numpy.random.default_rng([2026, i])``), from the built-in logs
that have a loss curve (the 12 MNIST-1D course logs, 384 to 1,512 points) and, when ``../shared``
is there, the NanoGPT speedrun logs (LLM-sized): each variant is a base log with its loss
multiplied by ``1 + 0.02·N(0, 1)`` noise and its steps stretched by a factor in [0.5, 2], so no
two fits are alike.  In one run:

* **fits alone** (runs in memory): ``core.runs.fit_run`` (``curve_fit``, one run at a time) on
  ``--baseline`` runs against ``core.library.refit.fit_runs_batched`` on ``--n`` runs in chunks of
  500; ms per run and the ratio, the largest parameter difference between the two on the baseline
  runs, and the extrapolation to 100,000 runs;
* **refit through the library**: ``--library-n`` runs added to a library in a temporary folder,
  then ``refit_library`` with the local engine and with ``--engine dask`` (two worker processes,
  the same chunks): wall time per run (loading, fitting, storing) and the ratio;
* **Dask overhead per task**: 200 no-op tasks submitted to the same cluster, the round trip each.

Timings are wall-clock on whatever else the machine runs (the load average is printed).
Usage: ``python bench/refit.py [--n 10000] [--baseline 300] [--library-n 1000]``.  Not used by the tests.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import time
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.reference import SHARED  # noqa: E402
from core.datasets import BUILTIN_LOG_SETS, builtin_log_files  # noqa: E402
from core.errors import LogFormatError  # noqa: E402
from core.library import Library, PendingRun  # noqa: E402
from core.library.refit import DEFAULT_CHUNK, fit_runs_batched, max_relative_difference, refit_library  # noqa: E402
from core.logs import read_log_file  # noqa: E402
from core.runs.analysis import fit_run  # noqa: E402


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--baseline", type=int, default=300)
    parser.add_argument("--library-n", type=int, default=1000)
    args = parser.parse_args()
    bases = base_logs()
    print(f"{len(bases)} base logs with a loss curve ({sum(b.n_points for b in bases) / len(bases):.0f} points on "
          f"average); load average {load()} on {os.cpu_count()} cores")
    runs = variants(bases, max(args.n, args.baseline))

    warnings.simplefilter("ignore")
    t = time.perf_counter()
    ref = [fit_run(log) for log in runs[:args.baseline]]
    per_run = (time.perf_counter() - t) / args.baseline
    t = time.perf_counter()
    got, slow = [], 0
    for i in range(0, args.n, DEFAULT_CHUNK):
        fits, s = fit_runs_batched(runs[i:i + DEFAULT_CHUNK])
        got += fits
        slow += s
    batched = (time.perf_counter() - t) / args.n
    worst = max((max_relative_difference(a.fit.params, b.fit.params) for a, b in zip(ref, got)
                 if a.fit is not None and b.fit is not None and not a.fit.degenerate), default=0.0)
    print(f"fits alone: per-run curve_fit {per_run * 1000:.2f} ms/run ({args.baseline} runs), batched "
          f"{batched * 1000:.2f} ms/run ({args.n} runs, {slow} fitted one by one): {per_run / batched:.1f}x faster; "
          f"largest parameter difference on the baseline runs (non-degenerate) {worst:.1e}")
    print(f"  extrapolated to 100,000 runs: batched {batched * 1e5 / 60:.1f} min, per-run {per_run * 1e5 / 60:.1f} min "
          f"(load average {load()})")

    with tempfile.TemporaryDirectory() as folder:
        lib = Library(Path(folder) / "lib.duckdb")
        pending = [PendingRun(log, hashlib.sha256(log.source.encode()).hexdigest(), None, (), None)
                   for log in runs[:args.library_n]]
        t = time.perf_counter()
        lib.add_runs(pending)
        print(f"library of {args.library_n} runs made in {time.perf_counter() - t:.1f} s")
        local = refit_library(lib, chunk=DEFAULT_CHUNK // 2)
        print(f"refit through the library, local: {local.seconds / local.n_fitted * 1000:.2f} ms/run "
              f"({local.n_fitted} runs, {local.n_chunks} chunks, {local.seconds:.1f} s; load average {load()})")
        dask = refit_library(lib, engine="dask", n_workers=2, chunk=DEFAULT_CHUNK // 2)
        print(f"refit through the library, dask (LocalCluster, 2 worker processes): "
              f"{dask.seconds / dask.n_fitted * 1000:.2f} ms/run including the cluster's start "
              f"({dask.seconds:.1f} s): {local.seconds / dask.seconds:.2f}x the local engine's speed")
        per_local = local.seconds / local.n_fitted
        print(f"  extrapolated to 100,000 runs through the library: local {per_local * 1e5 / 60:.1f} min, "
              f"dask {dask.seconds / dask.n_fitted * 1e5 / 60:.1f} min")

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


if __name__ == "__main__":
    main()
