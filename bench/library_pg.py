"""Benchmark: library queries on PostgreSQL against the DuckDB file, at 10,000 runs (issue 20, item 4).

Builds ``--n`` deterministic course-format logs (``numpy.random.default_rng([2026, i])``: six ResNet
depths, five GPUs, four batches, a fifth of them validation logs; ``--epochs`` epochs of 10 steps,
so 100 rows each by default) and adds the same runs, through ``Library.add_runs`` (the path every
add takes), to a DuckDB file in a temporary folder and to a fresh schema of a PostgreSQL server
(``TTA_TEST_POSTGRES_URL``, else one started by ``tests/pg_server.py`` and stopped afterwards): all but
``--n-add`` of them written straight through the store interface a thousand per transaction (the tables
``add_runs`` would leave, in seconds rather than an hour on a loaded 2-core machine), the last ``--n-add``
through ``Library.add_runs`` (its time per run is reported).
Then, on each store, in the same run: every run listed (``Library.runs()``), a filtered query
(``model=resnet20,gpu=V100``) and ``Library.get_many`` of 100 runs drawn at random, each the
median of ``--repeats`` repeats; the ratio PostgreSQL / DuckDB of each (above 1: PostgreSQL is
slower).  The import time per run is printed too.

Usage: ``python bench/library_pg.py [--n 10000] [--epochs 10] [--repeats 5]``.  Timings are wall-clock
on whatever else the machine runs; the ratios are measured in one run.  Not used by the tests.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.library import BATCHES, GPUS, MODELS, SEED  # the same runs as the DuckDB benchmark
from core.library import Library, PendingRun, content_hash
from core.logs import read_log
from tests.pg_server import fresh_schema, server

QUERY = "model=resnet20,gpu=V100"


def make_log(i: int, epochs: int) -> tuple[str, bytes]:
    rng = np.random.default_rng([SEED, i])
    model, gpu, batch = MODELS[i % 6], GPUS[(i // 6) % 5], BATCHES[(i // 30) % 4]
    val = "_val" if i % 5 == 4 else ""
    k = np.arange(1, epochs * 10 + 1)
    loss = 1 / (0.01 * (1 + i % 7) * k + 0.5) + 0.05 + rng.normal(0, 0.002, k.size)
    acc = np.minimum(0.5 + 0.04 * ((k - 1) // 10 + 1) + rng.normal(0, 0.002, k.size), 0.999)
    rows = "".join(f"{(j - 1) // 10 + 1},{(j - 1) % 10 + 1},{a:.6f},{b:.5f}\n" for j, a, b in zip(k, loss, acc))
    return f"run{i:05d}/{model}_{gpu}{val}-{batch}.csv", ("epoch,step,loss,acc\n" + rows).encode()


def pending(n: int, epochs: int) -> list[PendingRun]:
    out = []
    for i in range(n):
        name, data = make_log(i, epochs)
        out.append(PendingRun(read_log(data, name), content_hash(data), tags=(f"set{i % 10}",)))
    return out


def median_time(fn, repeats: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(1000 * (time.perf_counter() - start))
    return statistics.median(times), result


def bulk_load(lib: Library, runs: list[PendingRun], *, first_id: int, chunk: int = 1000) -> None:
    """The runs' rows written straight through the store interface (``Connection.insert_frame``), ids 1..n, a
    thousand runs per transaction: the library's tables as ``add_runs`` leaves them, built in seconds (ids from
    ``first_id``: those below are the sequence's, for ``add_runs``)."""
    import pandas as pd

    from core.library.records import run_row, series_frame

    now = pd.Timestamp.now("UTC").tz_localize(None).to_pydatetime()
    for start in range(0, len(runs), chunk):
        rows, series, tags = [], [], []
        for run_id, item in enumerate(runs[start:start + chunk], start=first_id + start):
            row = run_row(item.log, digest=item.digest, dataset=item.dataset, n_params=item.n_params)
            rows.append({"run_id": run_id, **row, "added_at": now})
            series.append(series_frame(item.log).assign(run_id=run_id))
            tags += [{"run_id": run_id, "tag": t} for t in item.tags]
        with lib.store.transaction() as con:
            con.insert_frame("runs", pd.DataFrame(rows))
            con.insert_frame("series", pd.concat(series, ignore_index=True))
            con.insert_frame("run_tags", pd.DataFrame(tags))


def measure(lib: Library, runs: list[PendingRun], repeats: int, ids: list[int], n_add: int) -> dict[str, float]:
    bulk_load(lib, runs[n_add:], first_id=n_add + 1)
    start = time.perf_counter()
    report = lib.add_runs(runs[:n_add])                      # the last runs through the path every add takes
    add_s = time.perf_counter() - start
    assert report.n_added == n_add and not report.errors, report.summary()
    out = {f"add_runs, {n_add} runs (ms per run)": 1000 * add_s / n_add}
    out["list every run (ms)"], table = median_time(lambda: lib.runs(), repeats)
    assert len(table) == len(runs)
    out[f"filter {QUERY} (ms)"], hits = median_time(lambda: lib.runs(QUERY), repeats)
    out["load 100 runs, get_many (ms)"], logs = median_time(lambda: lib.get_many(ids), repeats)
    assert len(logs) == 100
    out["filtered runs"] = float(len(hits))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--n-add", type=int, default=200, help="runs added through add_runs (the rest bulk-loaded)")
    args = parser.parse_args()

    start = time.perf_counter()
    runs = pending(args.n, args.epochs)
    print(f"{args.n:,} logs of {args.epochs * 10} rows read in {time.perf_counter() - start:.1f} s", flush=True)
    ids = sorted(np.random.default_rng(SEED).choice(np.arange(1, args.n + 1), 100, replace=False).tolist())
    results = {}
    with tempfile.TemporaryDirectory() as tmp, server() as url:
        if url is None:
            raise SystemExit("PostgreSQL is not installed (apt-get install -y postgresql); set TTA_TEST_POSTGRES_URL")
        for kind, target in (("duckdb", str(Path(tmp) / "bench.duckdb")), ("postgresql", fresh_schema(url))):
            results[kind] = measure(Library(target, timeout=120), runs, args.repeats, ids, args.n_add)
            print(kind, {k: round(v, 2) for k, v in results[kind].items()}, flush=True)
    print()
    print(f"{'':34s} {'DuckDB':>10s} {'PostgreSQL':>11s} {'PG / DuckDB':>12s}")
    for key in results["duckdb"]:
        a, b = results["duckdb"][key], results["postgresql"][key]
        print(f"{key:34s} {a:10.2f} {b:11.2f} {b / a if a else float('nan'):12.2f}")


if __name__ == "__main__":
    main()
