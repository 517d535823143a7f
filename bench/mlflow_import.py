"""Benchmark: runs from an MLflow tracking server into the library (issue 20).

Starts ``mlflow server`` (SQLite backend, loopback, a temporary folder) unless ``--uri`` names one,
and fills one experiment, through MLflow's client, with ``--n`` runs of ``--points`` steps each
(loss, accuracy and epoch at every step: 3 × points metric values), made deterministically
(``numpy.random.default_rng([2026, i])``) from the built-in MNIST-1D logs (loss and accuracy
resampled to ``--points`` steps, with 2 % noise).  The same runs are written as course-format CSV
logs.  Then, in one run, on libraries in a temporary folder:

* **import**: ``python -m core library add mlflow:URI#EXPERIMENT`` (``add_mlflow``), per run;
* **re-import with nothing changed**: the same again (the goal: at most 5 % of the first);
* **fits**: ``fit_library`` of the MLflow runs against ``fit_library`` of the same runs added
  from the CSV files: the largest parameter difference (the goal: equal).

Usage: ``python bench/mlflow_import.py [--n 1000] [--points 1000] [--uri http://127.0.0.1:5000] [--fill sql]``.
``--fill sql`` creates and ends the runs through the client but bulk-inserts their metric rows into the
server's SQLite store (MLflow's ``metrics`` and ``latest_metrics`` tables): logging a million points
through the REST API takes hours on this machine; the import measured is the same either way.
Timings are wall-clock on whatever else the machine runs (the load average is printed).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.datasets import builtin_log_files  # noqa: E402
from core.library import Library, add_paths, fit_library  # noqa: E402
from core.library.mlflow_source import add_mlflow  # noqa: E402
from core.library.refit import max_relative_difference  # noqa: E402
from core.logs import read_log_file  # noqa: E402


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def start_server(folder: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    uri = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([str(Path(sys.executable).with_name("mlflow")), "server", "--backend-store-uri",
                             f"sqlite:///{folder / 'mlflow.db'}", "--default-artifact-root", str(folder / "art"),
                             "--host", "127.0.0.1", "--port", str(port), "--workers", "1"],
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


def insert_metrics(db: Path, bulk: list) -> None:
    """Every metric point of every run into the server's SQLite store, as ``log_batch`` would leave them: the
    ``metrics`` rows and each key's latest value in ``latest_metrics`` (MLflow's own tables)."""
    import sqlite3

    with sqlite3.connect(db, timeout=60) as con:
        rows, latest = [], {}
        for run_id, metrics in bulk:
            for m in metrics:
                rows.append((m.key, m.value, m.timestamp, m.step, 0, run_id))
                latest[(run_id, m.key)] = (m.key, m.value, m.timestamp, m.step, 0, run_id)
        con.executemany("INSERT INTO metrics (key, value, timestamp, step, is_nan, run_uuid) VALUES (?, ?, ?, ?, ?, ?)",
                        rows)
        con.executemany("INSERT INTO latest_metrics (key, value, timestamp, step, is_nan, run_uuid) "
                        "VALUES (?, ?, ?, ?, ?, ?)", list(latest.values()))


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--points", type=int, default=1000)
    parser.add_argument("--uri", default=None)
    parser.add_argument("--fill", choices=("client", "sql"), default="client",
                        help="client: every point logged through MlflowClient.log_batch (the REST API; ~3-10 s a "
                             "run here); sql: runs created and ended through the client, their metric rows "
                             "bulk-inserted into the server's own SQLite store (metrics and latest_metrics, the "
                             "tables MLflow made): setup only, the import measured is the same")
    args = parser.parse_args()
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    from mlflow import MlflowClient
    from mlflow.entities import Metric

    bases = [read_log_file(p, source=n) for n, p in builtin_log_files("mnist1d") if "_val" not in n]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        proc = None
        t = time.perf_counter()
        if args.uri is None:
            proc, uri = start_server(folder)
            print(f"mlflow server up in {time.perf_counter() - t:.0f} s (load average {load()})")
        else:
            uri = args.uri
        try:
            client = MlflowClient(uri)
            name = f"bench-{uuid.uuid4().hex[:8]}"
            experiment = client.create_experiment(name)
            csvs = folder / "csv"
            csvs.mkdir()
            t = time.perf_counter()
            bulk = []
            for i in range(args.n):
                run_name, loss, acc, epoch = make_run(i, bases, args.points)
                run = client.create_run(experiment, run_name=run_name, start_time=1_700_000_000_000)
                metrics = []
                for k in range(args.points):
                    stamp = 1_700_000_000_000 + 100 * k
                    metrics += [Metric("loss", float(loss[k]), stamp, k + 1),
                                Metric("acc", float(acc[k]), stamp, k + 1),
                                Metric("epoch", float(epoch[k]), stamp, k + 1)]
                if args.fill == "client":
                    for j in range(0, len(metrics), 1000):
                        client.log_batch(run.info.run_id, metrics=metrics[j:j + 1000])
                else:
                    bulk.append((run.info.run_id, metrics))
                client.set_terminated(run.info.run_id, end_time=1_700_003_600_000)
                lines = ["epoch,step,loss,acc"] + [f"{int(epoch[k])},{k + 1},{float(loss[k])!r},{float(acc[k])!r}"
                                                   for k in range(args.points)]
                (csvs / f"{run_name}.csv").write_text("\n".join(lines) + "\n")
            if bulk:
                if args.uri is not None:
                    raise SystemExit("--fill sql needs the bench's own server (no --uri)")
                insert_metrics(folder / "mlflow.db", bulk)
            print(f"{args.n} runs × {args.points} points logged in {time.perf_counter() - t:.0f} s "
                  f"(fill: {args.fill})")

            lib = Library(folder / "mlflow.duckdb")
            t = time.perf_counter()
            first = add_mlflow(lib, f"mlflow:{uri}#{name}")
            first_s = time.perf_counter() - t
            t = time.perf_counter()
            again = add_mlflow(lib, f"mlflow:{uri}#{name}")
            again_s = time.perf_counter() - t
            print(f"import: {first_s:.1f} s, {first_s / args.n * 1000:.0f} ms per run ({first.report.n_added} added, "
                  f"{first.n_fetched} fetched); re-import with nothing changed: {again_s:.2f} s "
                  f"({again.n_fetched} fetched) = {again_s / first_s * 100:.1f} % of the first (goal <= 5 %); "
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
            print(f"fits: {len(a)} MLflow runs against the same runs from CSV: largest parameter difference "
                  f"{worst:.1e}; epoch to target equal in {same_epochs} of {len(a)}")
        finally:
            if proc is not None:
                proc.terminate()
                proc.wait(timeout=30)


if __name__ == "__main__":
    main()
