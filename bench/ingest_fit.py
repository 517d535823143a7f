"""Benchmark: read and fit a course-sized corpus, the course's way against ours.

Builds, deterministically, 36 per-step logs of 350 epochs × 391 steps (the course's CIFAR-10
runs: 6 depths × 3 GPUs × train/val-sized noise levels) in the course format
(``epoch, step, loss, acc`` with spaces after commas), then times in one run:

* the course's method: ``pd.read_csv`` with defaults, strip the column names, build the
  global step, ``scipy.optimize.curve_fit`` of ``1/(b0·k+b1)+b2`` (bounds >= 0) on every
  point, one file after another;
* ours: ``core.logs.reader.read_log_file`` (validation included) and ``core.curves.fit_curve``
  (log-spaced bins, statistics on every point), one file after another; and the same
  spread over ``--jobs`` processes (``core.runs.analysis.fit_files``, what ``python -m core fit
  --jobs N`` does; the whole analysis, target detection included).

Prints the times (and, for both one-by-one methods, the time per file split into reading and fitting),
the speed-up ratios, the load average, and the largest relative difference of b0, b1, b2
between the course's fit and ours.  Usage:
``python bench/ingest_fit.py [--files 36] [--epochs 350] [--jobs 2]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import curve_fit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.curves import fit_curve, optimus_loss
from core.logs import read_log_file
from core.runs import fit_files

STEPS_PER_EPOCH = 391


def build_corpus(folder: Path, *, n_files: int, epochs: int, seed: int = 2024) -> list[Path]:
    """Write ``n_files`` deterministic course-format logs into ``folder``."""
    rng = np.random.default_rng(seed)
    gpus = ["Quadro RTX 8000", "Tesla V100-PCIE-32GB", "NVIDIA A100-PCIE-40GB"]
    depths = [18, 20, 32, 44, 56, 50]
    paths = []
    n = epochs * STEPS_PER_EPOCH
    k = np.arange(1, n + 1, dtype=float)
    epoch = np.repeat(np.arange(1, epochs + 1), STEPS_PER_EPOCH)
    step = np.tile(np.arange(1, STEPS_PER_EPOCH + 1), epochs)
    for i in range(n_files):
        depth, gpu = depths[i % len(depths)], gpus[(i // len(depths)) % len(gpus)]
        b0 = 10 ** rng.uniform(-4.0, -3.3)
        b1 = rng.uniform(0.4, 0.7)
        b2 = rng.uniform(0.0, 0.05)
        loss = optimus_loss(k, b0, b1, b2) * np.exp(rng.normal(0, 0.15, n))
        correct = rng.random(n) < np.clip(1.0 - loss, 0.05, 0.999)
        acc = pd.Series(correct.astype(float)).groupby(epoch).cumsum().to_numpy() / step
        suffix = "_val" if i >= n_files // 2 else ""
        path = folder / f"resnet{depth}_{gpu}{suffix}_{i:02d}.csv"
        frame = pd.DataFrame({"epoch": epoch, "step": step, "loss": np.round(loss, 6), "acc": np.round(acc, 6)})
        frame.to_csv(path, index=False, sep=",", float_format="%.6f")
        text = path.read_text().replace(",", ", ")
        path.write_text(text)
        paths.append(path)
    return paths


def course_method(paths: list[Path], split: dict[str, float] | None = None) -> list[np.ndarray]:
    """Default read, strip names, curve_fit on every point, sequentially.

    ``split`` (optional) gets the seconds spent reading (``"read"``: the file to ``k`` and ``y``) and fitting
    (``"fit"``), summed over the files."""
    out = []
    split = {} if split is None else split
    for p in paths:
        t0 = time.perf_counter()
        df = pd.read_csv(p)
        df.columns = [c.strip() for c in df.columns]
        spe = int(df["step"].max())
        k = (df["epoch"].to_numpy() - 1) * spe + df["step"].to_numpy()
        y = df["loss"].to_numpy()
        t1 = time.perf_counter()
        popt, _ = curve_fit(optimus_loss, k, y, p0=(1e-3, 1.0, 0.9 * y.min()), bounds=(0, np.inf))
        out.append(popt)
        split["read"] = split.get("read", 0.0) + t1 - t0
        split["fit"] = split.get("fit", 0.0) + time.perf_counter() - t1
    return out


def our_method(paths: list[Path], split: dict[str, float] | None = None) -> list[np.ndarray]:
    """``read_log_file`` then ``fit_curve``, sequentially; ``split`` as in :func:`course_method`."""
    out = []
    split = {} if split is None else split
    for p in paths:
        t0 = time.perf_counter()
        log = read_log_file(p)
        k, y = log.frame["global_step"].to_numpy(), log.frame["loss"].to_numpy()
        t1 = time.perf_counter()
        fit = fit_curve(k, y, name=p.name)
        out.append(np.array(fit.values))
        split["read"] = split.get("read", 0.0) + t1 - t0
        split["fit"] = split.get("fit", 0.0) + time.perf_counter() - t1
    return out


def _split_line(split: dict[str, float], n_files: int) -> str:
    total = split["read"] + split["fit"]
    return (f"      per file: read {split['read'] / n_files * 1e3:6.1f} ms ({split['read'] / total:4.0%}), "
            f"fit {split['fit'] / n_files * 1e3:6.1f} ms ({split['fit'] / total:4.0%})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=36, help="logs in the corpus (default 36; 6 for a quick run)")
    ap.add_argument("--epochs", type=int, default=350, help="epochs of 391 steps per log (default 350)")
    ap.add_argument("--jobs", type=int, default=2, help="processes of the whole analysis (default 2)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        paths = build_corpus(Path(tmp), n_files=args.files, epochs=args.epochs)
        rows = args.epochs * STEPS_PER_EPOCH
        size = sum(p.stat().st_size for p in paths) / 2**20
        print(f"corpus: {len(paths)} logs x {rows:,} rows ({size:.0f} MB), built in {time.perf_counter() - t0:.1f} s")
        our_method(paths[:1])  # warm imports and caches for both
        split_ours: dict[str, float] = {}
        split_course: dict[str, float] = {}
        t0 = time.perf_counter()
        ours = our_method(paths, split_ours)
        t_ours = time.perf_counter() - t0
        t0 = time.perf_counter()
        table, _ = fit_files(paths, jobs=args.jobs)
        t_jobs = time.perf_counter() - t0
        t0 = time.perf_counter()
        course = course_method(paths, split_course)
        t_course = time.perf_counter() - t0
    rel = max(float(np.max(np.abs(o - c) / np.maximum(np.abs(c), 1e-12) * (np.abs(c) > 1e-6)))
              for o, c in zip(ours, course))
    print(f"course method (read_csv + curve_fit on every point): {t_course:7.2f} s")
    print(_split_line(split_course, len(paths)))
    print(f"ours (read_log + binned fit_curve), one by one:      {t_ours:7.2f} s   speed-up {t_course / t_ours:5.1f}x")
    print(_split_line(split_ours, len(paths)))
    print(f"ours, whole analysis on {args.jobs} processes:              {t_jobs:7.2f} s   "
          f"speed-up {t_course / t_jobs:5.1f}x")
    print(f"load average (1, 5, 15 min) at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"largest relative parameter difference: {rel * 100:.3f} % (b2 below 1e-6 compared in absolute terms)")


if __name__ == "__main__":
    main()
