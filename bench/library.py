"""Benchmark: the run library with a thousand course-sized logs, and eight writers at once (issue 14).

Builds, deterministically (``numpy.random.default_rng([2026, first index])``), ``--n`` logs in the course
format of the built-in MNIST-1D logs (``epoch, step, loss, acc, time``, 24 epochs of
ceil(4000 / batch) steps: 384 to 3,000 rows, 1,512 at batch 64 like ``data/logs``), one per
folder, named ``<model>_<GPU>[_val]-<batch>.csv`` with six ResNet depths, five GPUs, four
batches and a fifth of them validation logs, each with its own noise (no two share a content
hash).  Then, in one run and on a library file in a temporary folder (never the user's):

* **import**: ``core.library.add_paths`` on the whole folder (one call, as ``python -m core
  library add DIR`` does), per log; the baseline is what the import does anyway, reading each
  file, parsing it (``core.logs.read_log``) and hashing it, one after another, so the ratio is
  the library's own cost; and the same folder again (everything already present);
* **queries**: ``Library.runs()`` of every run, a filtered query (``model=resnet20,gpu=V100``)
  and ``Library.get_many`` of 100 runs drawn at random, each the median of a few repeats,
  against parsing the same 100 CSV files again;
* **size**: the database file against the CSVs' bytes, after the import, after
  ``core.library.compact`` (``library vacuum``), and after removing the oldest tenth of the
  runs then compacting;
* **concurrency**: ``--processes`` processes (spawned; imports done before a barrier releases
  them together) each add ``--runs-per-process`` distinct logs, one ``add_paths`` call per log
  (one CLI call or browser save each), into the same library, ``--rounds`` times.  Per round:
  the runs expected, those found by content hash afterwards (runs lost, goal 0), half-written
  runs (fewer series rows than points), the longest wait for the library's lock
  (``Store.longest_wait_s``) and the longest single add, against the same adds by one process
  alone.

Timings are wall-clock on whatever else the machine runs; the ratios are measured in the same
run.  Usage: ``python bench/library.py [--n 1000] [--processes 8] [--rounds 3]
[--runs-per-process 5]``.  Not used by the tests.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import queue
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.curves import optimus_loss
from core.library import Library, RunFilter, add_paths, compact, content_hash
from core.logs import read_log
from core.tables import file_bytes

SEED = 2026
MODELS = ("resnet8", "resnet14", "resnet20", "resnet32", "resnet44", "resnet56")
GPUS = ("Tesla V100-SXM2-16GB", "NVIDIA A100-PCIE-40GB", "Quadro RTX 8000", "NVIDIA H100 80GB HBM3",
        "Intel Xeon Processor")
BATCHES = (32, 64, 128, 256)
EPOCHS = 24
TRAIN_SAMPLES, VAL_SAMPLES = 4000, 1000
QUERY = "model=resnet20,gpu=V100"
N_LOAD = 100
HALF_WRITTEN = """SELECT count(*) FROM runs r
                  WHERE r.n_points <> (SELECT count(*) FROM series s WHERE s.run_id = r.run_id)"""


# ---------------------------------------------------------------- the corpus
def course_log(rng: np.random.Generator, *, batch: int, val: bool, depth: int) -> str:
    """One log's text: Optimus-shaped loss with multiplicative noise, the running accuracy of each epoch."""
    steps = -(-(VAL_SAMPLES if val else TRAIN_SAMPLES) // batch)
    n = EPOCHS * steps
    k = np.arange(1, n + 1, dtype=float)
    epoch = np.repeat(np.arange(1, EPOCHS + 1), steps)
    step = np.tile(np.arange(1, steps + 1), EPOCHS)
    b0 = 10 ** rng.uniform(-3.2, -2.4) * (20 / depth) ** 0.3 * (64 / batch) ** 0.5
    loss = optimus_loss(k, b0, rng.uniform(0.35, 0.6), rng.uniform(0.02, 0.1)) * np.exp(rng.normal(0, 0.12, n))
    correct = rng.random(n) < np.clip(1.05 - loss, 0.05, 0.995)
    hits = np.cumsum(correct.reshape(EPOCHS, steps), axis=1).ravel()
    acc = hits / step
    seconds = np.cumsum(rng.uniform(0.01, 0.05, n))
    rows = "".join(f"{e}, {s}, {v:.6f}, {a:.6f}, {t:.3f}\n" for e, s, v, a, t in
                   zip(epoch.tolist(), step.tolist(), loss.tolist(), acc.tolist(), seconds.tolist()))
    return "epoch, step, loss, acc, time\n" + rows


def build_logs(folder: Path, n: int, *, first: int = 0, seed: int = SEED) -> list[Path]:
    """``n`` logs, ``folder/run<i>/<model>_<GPU>[_val]-<batch>.csv`` (``i`` from ``first``), deterministically."""
    rng = np.random.default_rng([seed, first])
    paths = []
    for i in range(first, first + n):
        model, gpu = MODELS[rng.integers(len(MODELS))], GPUS[rng.integers(len(GPUS))]
        batch, val = BATCHES[rng.integers(len(BATCHES))], rng.random() < 0.2
        text = course_log(rng, batch=batch, val=val, depth=int(model[6:]))
        path = folder / f"run{i:05d}" / f"{model}_{gpu}{'_val' if val else ''}-{batch}.csv"
        path.parent.mkdir(parents=True)
        path.write_text(text)
        paths.append(path)
    return paths


# ---------------------------------------------------------------- helpers
def timed(fn, repeats: int = 1):
    """``(median seconds, last result)`` of ``repeats`` calls."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def read_and_hash(paths: list[Path]) -> int:
    """What an import does before it writes: read, parse, hash; returns the rows read."""
    rows = 0
    for p in paths:
        data = file_bytes(p)
        content_hash(data)
        rows += read_log(data, p.name).n_points
    return rows


def db_bytes(lib: Library) -> int:
    path = Path(lib.path)
    wal = path.with_name(path.name + ".wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def mb(n: float) -> str:
    return f"{n / 2**20:7.1f} MB"


# ---------------------------------------------------------------- concurrency
def writer(db: str, paths: list[str], barrier, results) -> None:
    """One process: wait for the others, then add each log in its own ``add_paths`` call."""
    from core.errors import LibraryError

    lib = Library(db)
    longest_add, added, errors = 0.0, 0, []
    barrier.wait()
    for p in paths:
        t0 = time.perf_counter()
        try:
            report = add_paths(lib, [p])
            added += report.n_added
            errors += [m for _, m in report.errors]
        except LibraryError as exc:
            errors.append(str(exc))
        longest_add = max(longest_add, time.perf_counter() - t0)
    results.put({"added": added, "errors": errors, "longest_wait_s": lib.store.longest_wait_s,
                 "longest_add_s": longest_add})


def concurrent_round(db: str, groups: list[list[Path]]) -> tuple[float, list[dict]]:
    """Run one writer process per group at once; ``(seconds from release to the last result, results)``."""
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(len(groups) + 1), ctx.Queue()
    procs = [ctx.Process(target=writer, args=(db, [str(p) for p in g], barrier, results)) for g in groups]
    for p in procs:
        p.start()
    barrier.wait()
    t0 = time.perf_counter()
    out = []
    while len(out) < len(procs):   # a process that dies without a result must not hang the benchmark
        try:
            out.append(results.get(timeout=1))
        except queue.Empty:
            if not any(p.is_alive() for p in procs):
                try:
                    out.append(results.get(timeout=1))
                except queue.Empty:
                    break
    wall = time.perf_counter() - t0
    for p in procs:
        p.join(timeout=60)
    failed = [p.exitcode for p in procs if p.exitcode != 0]
    if failed:
        out.append({"added": 0, "errors": [f"{len(failed)} process(es) exited with {failed}"],
                    "longest_wait_s": 0.0, "longest_add_s": 0.0})
    return wall, out


# ---------------------------------------------------------------- main
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000, help="logs to import (default 1000)")
    ap.add_argument("--processes", type=int, default=8, help="writer processes at once (default 8)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of concurrent writers (default 3)")
    ap.add_argument("--runs-per-process", type=int, default=5, help="logs each writer adds per round (default 5)")
    args = ap.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tta-bench-library-") as tmp:
        tmp = Path(tmp)
        t0 = time.perf_counter()
        paths = build_logs(tmp / "logs", args.n)
        csv_bytes = sum(p.stat().st_size for p in paths)
        lib = Library(tmp / "library.duckdb")
        print(f"corpus: {len(paths):,} logs, {csv_bytes / 2**20:.1f} MB of CSV, built in "
              f"{time.perf_counter() - t0:.1f} s; library {lib.path}")

        # -------------------------------------------------------- import
        read_and_hash(paths[:2])   # warm imports and caches
        t_read, rows = timed(lambda: read_and_hash(paths))
        t_add, report = timed(lambda: add_paths(lib, [tmp / "logs"]))
        assert report.n_added == len(paths) and not report.errors, report.summary()
        t_again, again = timed(lambda: add_paths(lib, [tmp / "logs"]))
        assert again.n_added == 0 and again.n_present == len(paths), again.summary()
        per = 1000 / len(paths)
        print(f"\nimport ({rows:,} rows, {rows / len(paths):,.0f} per log)")
        print(f"  {'baseline: read + parse + hash each CSV':<40}{t_read:7.2f} s  {t_read * per:6.1f} ms/log")
        print(f"  {'add_paths (one call, the folder)':<40}{t_add:7.2f} s  {t_add * per:6.1f} ms/log   "
              f"{t_add / t_read:4.2f}x the baseline (library's own share {(t_add - t_read) * per:5.1f} ms/log)")
        print(f"  {'add_paths again (all present)':<40}{t_again:7.2f} s  {t_again * per:6.1f} ms/log   "
              f"{t_again / t_read:4.2f}x the baseline")

        # -------------------------------------------------------- queries
        t_list, table = timed(lib.runs, 5)
        t_filter, hits = timed(lambda: lib.runs(RunFilter.parse(QUERY)), 5)
        rng = np.random.default_rng(SEED + 1)
        ids = sorted(int(i) for i in rng.choice(table["run_id"].to_numpy(), min(N_LOAD, len(table)), replace=False))
        t_get, logs = timed(lambda: lib.get_many(ids), 3)
        by_id = dict(zip(table["run_id"].astype(int), table["source"]))
        chosen = [tmp / "logs" / by_id[i] for i in ids]
        t_parse, _ = timed(lambda: read_and_hash(chosen), 3)
        assert [log.n_points for _, log in logs] == table.set_index("run_id").loc[ids, "n_points"].tolist()
        print(f"\nqueries ({len(table):,} runs in the library; median of 5, 5, 3 and 3)")
        print(f"  {'runs(): every run':<40}{t_list * 1000:8.1f} ms")
        print(f"  {'runs(' + repr(QUERY) + ')':<40}{t_filter * 1000:8.1f} ms   ({len(hits)} runs)")
        print(f"  {f'get_many({len(ids)} runs)':<40}{t_get * 1000:8.1f} ms   "
              f"{t_get * 1000 / len(ids):5.2f} ms/run")
        print(f"  {f'baseline: parse the same {len(ids)} CSVs':<40}{t_parse * 1000:8.1f} ms   "
              f"get_many takes {t_get / t_parse:4.2f}x the baseline")

        # -------------------------------------------------------- concurrency
        print(f"\nconcurrency: {args.processes} processes x {args.runs_per_process} runs, each run its own "
              f"add_paths call, {args.rounds} rounds, into the library above")
        per_round = args.processes * args.runs_per_process
        extra = build_logs(tmp / "more", per_round * (args.rounds + 1), first=args.n)
        alone = extra[:args.runs_per_process]
        solo = []
        for p in alone:
            t, _ = timed(lambda p=p: add_paths(lib, [p]))
            solo.append(t)
        print(f"  one process alone: {len(solo)} adds, median {statistics.median(solo) * 1000:.0f} ms, "
              f"longest {max(solo) * 1000:.0f} ms; {per_round} such adds one after another "
              f"~{per_round * statistics.median(solo):.1f} s")
        expected = {content_hash(file_bytes(p)) for p in paths + alone}
        total_lost = 0
        for r in range(args.rounds):
            mine = extra[per_round * (r + 1): per_round * (r + 2)]
            groups = [mine[w::args.processes] for w in range(args.processes)]
            wall, results = concurrent_round(lib.path, groups)
            expected |= {content_hash(file_bytes(p)) for p in mine}
            present = set(lib.runs()["content_hash"])
            lost = len(expected - present)
            total_lost += lost
            with lib.store.connect() as con:
                half = con.execute(HALF_WRITTEN)[0][0]
            errors = [e for res in results for e in res["errors"]]
            wait = max(res["longest_wait_s"] for res in results)
            longest = max(res["longest_add_s"] for res in results)
            print(f"  round {r + 1}: {sum(res['added'] for res in results)}/{len(mine)} added, library "
                  f"{len(present):,} runs, runs lost {lost}, half-written {half}, refused {len(errors)}; "
                  f"longest lock wait {wait:.2f} s, longest add {longest:.2f} s "
                  f"({longest / max(solo):.1f}x alone), round {wall:.1f} s")
            for e in errors[:3]:
                print(f"    {e[:200]}")
        print(f"  runs lost over {args.rounds} rounds: {total_lost} (goal 0)")

        # -------------------------------------------------------- size
        n_runs = len(lib.runs())
        all_csv = csv_bytes + sum(p.stat().st_size for p in extra[:per_round * (args.rounds + 1)])
        size = db_bytes(lib)
        t_compact, summary = timed(lambda: compact(lib))
        table = lib.runs()
        drop = table["run_id"].iloc[:len(table) // 10].astype(int).tolist()   # the oldest tenth
        lib.remove(drop)
        removed_size = db_bytes(lib)
        t_compact2, summary2 = timed(lambda: compact(lib, keep_days=0))   # the removed runs purged now
        print(f"\nsize ({n_runs:,} runs, {all_csv / 2**20:.1f} MB of CSV)")
        print(f"  {'library file after the imports':<40}{mb(size)}   {size / all_csv:5.2f}x the CSVs")
        print(f"  {'after compact (library vacuum)':<40}{mb(summary.bytes_after)}   "
              f"{summary.bytes_after / all_csv:5.2f}x the CSVs   ({t_compact:.1f} s)")
        print(f"  {f'{len(drop)} oldest runs removed':<40}{mb(removed_size)}   (freed space kept in the file)")
        print(f"  {'compact again':<40}{mb(summary2.bytes_after)}   "
              f"{summary2.bytes_after / summary2.bytes_before:5.2f}x before   ({t_compact2:.1f} s)")
    print(f"\ntotal {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
