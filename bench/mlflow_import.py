"""Benchmark: runs from an MLflow tracking server into the library, bulk against per-metric (issues 20, 35).

Starts ``mlflow server`` (SQLite backend, loopback, MLflow's default 4 workers; ``--workers``)
in ``--store`` (a temporary folder by default) unless ``--uri`` names one, and fills one
experiment **through MLflow's client, as a user's server would be**: ``--n`` runs of ``--points``
steps, each step logging loss, accuracy and epoch (3 x points values a run), sent with
``MlflowClient.log_batch`` 1,000 values a call from ``--threads`` threads, made
deterministically (``numpy.random.default_rng([2026, i])``) from the built-in MNIST-1D logs
(loss and accuracy resampled to ``--points`` steps, with 2 % noise).  The fill is timed apart.
A ``--store`` folder that already holds a filled server of the same size is reused: filling
1,000 x 1,000 through the client takes tens of minutes on a 2-core machine (MLflow's
``log_batch`` writes every value through SQLAlchemy), the measurement then about two.
The same runs are written as course-format CSV logs.  Then, in one run, on libraries in a
temporary folder:

* **import**: ``add_mlflow`` (``python -m core library add mlflow:URI#EXPERIMENT``) reading
  histories through the bulk route (``core.library.mlflow_bulk``): wall time, bulk requests;
* **bulk against per-metric**: the first ``--baseline-n`` runs' histories read both ways
  (``HistoryReader(bulk=True)`` against ``get_metric_history`` per run and metric), the ratio;
  and, with ``--baseline-n`` equal to ``--n``, the whole per-metric import too;
* **re-import with nothing changed**: the same import again (the goal: at most 5 % of the first);
* **where the time goes** (the same ``--baseline-n`` runs): histories read (server, transfer and JSON), RunLogs
  built (``core.logs.log_from_scalars`` against the CSV text round trip it replaced) and library writes
  (``add_runs(batched=True)``, one transaction a batch, against one transaction a run), in ms a run;
* **fits**: ``fit_library`` of the MLflow runs against ``fit_library`` of the same runs added from
  the CSV files: the largest parameter difference (the goal: equal), and the histories read
  both ways are compared value by value.

``--analyze`` runs SQLite's ``ANALYZE`` on the started server's store first, as its administrator would:
without statistics SQLite answers MLflow's history query from the primary key's index on ``key`` alone
and reads every value of that metric of every run for each request (the bench prints the query plan).
Usage: ``python bench/mlflow_import.py [--n 1000] [--points 1000] [--store DIR] [--quick]``;
``--quick`` is ``--n 60 --points 300``.  Timings are wall-clock on whatever else the machine
runs; the load average is printed with them.  Reads nothing outside the project.
"""

from __future__ import annotations

import argparse
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.datasets import builtin_log_files  # noqa: E402
from core.library import Library, add_paths, fit_library  # noqa: E402
from core.library.mlflow_bulk import HistoryReader, scalars_of  # noqa: E402
from core.library.mlflow_source import add_mlflow, list_runs  # noqa: E402
from core.library.refit import max_relative_difference  # noqa: E402
from core.logs import read_log_file  # noqa: E402


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def start_server(folder: Path, workers: int = 4) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    uri = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([str(Path(sys.executable).with_name("mlflow")), "server", "--backend-store-uri",
                             f"sqlite:///{folder / 'mlflow.db'}", "--default-artifact-root", str(folder / "art"),
                             "--host", "127.0.0.1", "--port", str(port), "--workers", str(workers)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "MLFLOW_DISABLE_TELEMETRY": "true"})
    while True:
        try:
            with urllib.request.urlopen(f"{uri}/health", timeout=2):
                return proc, uri
        except OSError:
            if proc.poll() is not None:
                raise SystemExit("mlflow server did not start") from None
            time.sleep(0.5)


def make_run(i: int, bases: list, points: int) -> tuple[str, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng([2026, i])
    base = bases[i % len(bases)]
    frame = base.frame.dropna(subset=["loss", "acc"])
    x = np.linspace(0, 1, len(frame))
    t = np.linspace(0, 1, points)
    loss = np.interp(t, x, frame["loss"].to_numpy()) * (1 + 0.02 * rng.standard_normal(points)).clip(0.5, 1.5)
    acc = np.clip(np.interp(t, x, frame["acc"].to_numpy()) * (1 + 0.02 * rng.standard_normal(points)), 0, 1)
    epoch = np.minimum(np.arange(points) // 40 + 1, 10_000)
    return f"{base.meta.model}_Tesla V100-{64 * (1 + i % 4)}-r{i}", loss, acc, epoch


def fill(client, experiment: str, n: int, points: int, threads: int, csvs: Path) -> None:
    """``n`` runs logged through the client (``log_batch``, 1,000 values a call), ``threads`` runs at a time."""
    from mlflow.entities import Metric

    bases = [read_log_file(p, source=name) for name, p in builtin_log_files("mnist1d") if "_val" not in name]

    def one(i: int) -> None:
        run_name, loss, acc, epoch = make_run(i, bases, points)
        run = client.create_run(experiment, run_name=run_name, start_time=1_700_000_000_000)
        metrics = []
        for k in range(points):
            stamp = 1_700_000_000_000 + 100 * k
            metrics += [Metric("loss", float(loss[k]), stamp, k + 1), Metric("acc", float(acc[k]), stamp, k + 1),
                        Metric("epoch", float(epoch[k]), stamp, k + 1)]
        for j in range(0, len(metrics), 1000):
            client.log_batch(run.info.run_id, metrics=metrics[j:j + 1000])
        client.set_terminated(run.info.run_id, end_time=1_700_003_600_000)
        lines = ["epoch,step,loss,acc"] + [f"{int(epoch[k])},{k + 1},{float(loss[k])!r},{float(acc[k])!r}"
                                           for k in range(points)]
        (csvs / f"{run_name}.csv").write_text("\n".join(lines) + "\n")

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(one, range(n)))


def through_csv(scalars, source: str):
    """The RunLog as it was built before issue 35's second round: the wide table written as CSV text and read back."""
    from dataclasses import replace

    from core.logs import parse_run_name, read_log, table_for_reader, wide_scalars

    table, found = table_for_reader(wide_scalars(scalars), source, None, parse_run_name(source).split)
    data = table.to_csv(index=False, float_format="%.17g", na_rep="").encode()
    return replace(read_log(data, source, roles=found), fmt="mlflow")


def client_side(folder: Path, client, runs: list, scalars: list, read_s: float) -> None:
    """Where an import's time goes, per run, for runs whose histories were read (``read_s``): building RunLogs
    (the frame path against the CSV round trip) and writing them (one transaction a batch against one a run)."""
    from core.library.mlflow_source import read_run

    items, build_s = timed(lambda: [read_run(client, r, scalars=s) for r, s in zip(runs, scalars)])
    _, csv_s = timed(lambda: [through_csv(s, item.log.source) for s, item in zip(scalars, items)])
    _, batched_s = timed(lambda: Library(folder / "batched.duckdb").add_runs(items, batched=True))
    _, single_s = timed(lambda: Library(folder / "single.duckdb").add_runs(items))
    n = max(len(runs), 1)
    print(f"where the time goes, ms a run ({n} runs): histories (server, transfer, parse) {read_s / n * 1e3:.1f}; "
          f"building RunLogs {build_s / n * 1e3:.1f} (the CSV round trip {csv_s / n * 1e3:.1f}: "
          f"{csv_s / build_s:.1f}x); library writes in batches {batched_s / n * 1e3:.1f} (one transaction a run "
          f"{single_s / n * 1e3:.1f}: {single_s / batched_s:.1f}x); load average {load()}")


def analyze(db: Path) -> None:
    """SQLite's ``ANALYZE`` on the server's store: without statistics SQLite answers MLflow's history query
    (``run_uuid IN (...) AND key = ?``) from the primary key's index on ``key`` alone, reading every value of
    that metric of every run for each request; with them it uses MLflow's own ``(run_uuid, key, step)``
    index."""
    with sqlite3.connect(db, timeout=60) as con:
        con.execute("ANALYZE")


def metric_plan(db: Path) -> str:
    """How the server's SQLite store answers a history query for one metric of some runs (its query plan)."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=60) as con:
        rows = con.execute("EXPLAIN QUERY PLAN SELECT * FROM metrics WHERE run_uuid IN ('a', 'b') AND key = 'loss'")
        return "; ".join(row[-1] for row in rows)


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1000, help="runs (default 1000)")
    parser.add_argument("--points", type=int, default=1000, help="steps a run, 3 values each (default 1000)")
    parser.add_argument("--quick", action="store_true", help="--n 60 --points 300, for iterating")
    parser.add_argument("--uri", default=None, help="a running tracking server to fill and read (default: start one)")
    parser.add_argument("--store", default=None, help="the started server's folder: filled when new, reused when "
                        "it holds a filled experiment of this size (default: a temporary folder)")
    parser.add_argument("--workers", type=int, default=4, help="the started server's workers (MLflow's default 4)")
    parser.add_argument("--threads", type=int, default=4, help="client threads filling the server (default 4)")
    parser.add_argument("--baseline-n", type=int, default=100, help="runs read per metric too, for the ratio "
                        "(default 100; equal to --n also times the whole per-metric import)")
    parser.add_argument("--analyze", action="store_true", help="run SQLite's ANALYZE on the started server's store "
                        "before the import, as its administrator would (statistics persist in the store)")
    args = parser.parse_args()
    if args.quick:
        args.n, args.points = 60, 300
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    os.environ.setdefault("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "true")
    from mlflow import MlflowClient

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        store = Path(args.store) if args.store else folder / "server"
        store.mkdir(parents=True, exist_ok=True)
        proc = None
        if args.uri is None:
            (proc, uri), up_s = timed(lambda: start_server(store, args.workers))
            print(f"mlflow server ({args.workers} workers) up in {up_s:.0f} s (load average {load()})")
        else:
            uri = args.uri
        try:
            client = MlflowClient(uri)
            name = f"bench-{args.n}x{args.points}"
            csvs = store / f"csv-{args.n}x{args.points}"
            found = client.get_experiment_by_name(name)
            if found is not None and csvs.is_dir() and len(list(csvs.glob("*.csv"))) == args.n:
                print(f"{args.n} runs x {args.points} points: reusing the filled experiment {name} in {store}")
            else:
                if found is not None:
                    client.delete_experiment(found.experiment_id)
                    name = f"{name}-{int(time.time())}"
                csvs.mkdir(exist_ok=True)
                for old in csvs.glob("*.csv"):
                    old.unlink()
                experiment = client.create_experiment(name)
                _, fill_s = timed(lambda: fill(client, experiment, args.n, args.points, args.threads, csvs))
                print(f"fill: {args.n} runs x {args.points} points (x 3 metrics) logged through MlflowClient.log_batch "
                      f"({args.threads} threads) in {fill_s:.0f} s, {fill_s / args.n:.2f} s a run; "
                      f"load average {load()}")
            source = f"mlflow:{uri}#{name}"
            if args.analyze and args.uri is None:
                _, analyze_s = timed(lambda: analyze(store / "mlflow.db"))
                print(f"ANALYZE of the server's SQLite store: {analyze_s:.1f} s (its query plan now "
                      f"{metric_plan(store / 'mlflow.db')})")
            elif args.uri is None:
                print(f"the server's SQLite store reads a metric's history with: {metric_plan(store / 'mlflow.db')}")

            lib = Library(folder / "mlflow.duckdb")
            first, first_s = timed(lambda: add_mlflow(lib, source))
            again, again_s = timed(lambda: add_mlflow(lib, source))
            print(f"import (bulk): {first_s:.1f} s for {args.n} runs x {args.points} points (goal <= 30 s at "
                  f"1,000 x 1,000), {first.n_requests} bulk requests, {first.report.n_added} added; "
                  f"note: {first.note or 'none'}; load average {load()}")
            print(f"re-import with nothing changed: {again_s:.2f} s ({again.n_fetched} fetched) = "
                  f"{again_s / first_s * 100:.1f} % of the first (goal <= 5 %)")

            runs = list_runs(client, [client.get_experiment_by_name(name).experiment_id])[:args.baseline_n]
            reader = HistoryReader(client)
            bulk, bulk_s = timed(lambda: [s for _, s in reader.scalars(runs)])
            per, per_s = timed(lambda: [scalars_of(client, r) for r in runs])
            same = sum(a.equals(b) for a, b in zip(bulk, per))
            print(f"reading the histories of {len(runs)} runs: bulk {bulk_s:.2f} s ({reader.requests} requests), "
                  f"per-metric {per_s:.2f} s ({3 * len(runs)} requests): bulk is {per_s / bulk_s:.1f}x faster; "
                  f"identical series in {same} of {len(runs)}; load average {load()}")
            client_side(folder, client, runs, bulk, bulk_s)
            if args.baseline_n >= args.n:
                slow = Library(folder / "per-metric.duckdb")
                _, slow_s = timed(lambda: add_mlflow(slow, source, bulk=False))
                print(f"import (per-metric): {slow_s:.1f} s; bulk import is {slow_s / first_s:.1f}x faster; "
                      f"load average {load()}")

            from_csv = Library(folder / "csv.duckdb")
            add_paths(from_csv, [csvs])
            a = fit_library(lib).table.set_index("model")
            b = fit_library(from_csv).table.set_index("model")
            a = {f.split(" (library")[0]: r for f, r in zip(a["file"], a.to_dict("records"))}
            b = {f.split(" (library")[0].removesuffix(".csv"): r for f, r in zip(b["file"], b.to_dict("records"))}
            worst = max(max_relative_difference({p: a[k][p] for p in ("b0", "b1", "b2")},
                                                {p: b[k][p] for p in ("b0", "b1", "b2")}) for k in a)
            same_epochs = sum(str(a[k]["epoch_to_target"]) == str(b[k]["epoch_to_target"]) for k in a)
            print(f"fits: {len(a)} MLflow runs (bulk) against the same runs from CSV: largest parameter difference "
                  f"{worst:.1e}; epoch to target equal in {same_epochs} of {len(a)}")
        finally:
            if proc is not None:
                proc.terminate()
                proc.wait(timeout=30)


if __name__ == "__main__":
    main()
