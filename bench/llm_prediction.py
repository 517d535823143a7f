"""Samples (and time) to a falling target from the first part of a run plus the other runs (issue 18, measures 2-3).

* MLPerf Training v5.1 Llama 3.1 8B (log-perplexity <= 3.3) and v5.0 Llama 2 70B LoRA (loss <= 0.925):
  **leave one system out** — every run of the held-out system is cut at 25 % (and, for LoRA, 50 %) of its
  evaluations; the prior comes from the runs of the *other* systems only, the posterior's weights and
  interval from a backtest on those other runs (``core.prediction.predict_progress``, exactly as
  ``python -m core predict`` runs it). Error = predicted / measured samples at target − 1.
* NanoGPT speedrun track 1 (val_loss <= 3.28): tokens and train time to target from the first 25 % and
  50 % of each log's evaluations, the prior from (a) the other logs of the same record, (b) the logs of
  the other records. Time = the posterior's tokens × the observed seconds per token (``time_to_target_s``);
  truth = the log's own ``train_time`` at its first evaluation at 3.28.

Every prediction of one workload shares one ``core.prediction.ProgressCache``: each run's progress to
target and the extrapolation of its cut evaluations are computed once, however many held-out runs backtest
it (without it a leave-one-out over 88 LoRA runs finds each crossing ~88² times). The answers are the
same with or without the cache; the baseline of the timing is the same predictions without it, for the
first held-out Llama 8B system, measured in the same run.

Reads ``../shared/reference`` (a benchmark may; the product and tests never do). Usage:
``python bench/llm_prediction.py [--quick]`` (``--quick``: Llama 8B only).
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.reference import SHARED, require_shared
from core.errors import LogFormatError
from core.logs import read_log_file
from core.prediction import ProgressCache, evaluation_points, predict_progress, progress_to_target
from core.runs import find_target_crossing
from core.targets import target_for

SOURCES = ("prior", "extrapolation", "posterior")


def read_groups(folder: Path, pattern: str) -> dict[str, list]:
    """The logs under each sub-folder of ``folder`` (a system, a record), read once; only those that reached
    their own target (the truth) are kept."""
    groups = {}
    for d in sorted(p for p in folder.iterdir() if p.is_dir() and p.name != "systems"):
        logs = []
        for path in sorted(d.glob(pattern)):
            try:
                log = read_log_file(path, source=str(path.relative_to(folder)))
            except LogFormatError as exc:
                print(f"  skipped {exc}")
                continue
            if progress_to_target(log, target_for(log)) is not None:
                logs.append(log)
        if logs:
            groups[d.name] = logs
    return groups


def case(log, others, fraction: float, cache: ProgressCache | None) -> dict:
    """One prediction against the log's own truth: per source the error and whether the interval covers."""
    target = target_for(log)
    truth = progress_to_target(log, target)
    f = predict_progress(log, others, target, observe=fraction, cache=cache)
    row = {"file": log.source, "truth": truth, "method": f.method, "n_observed": f.n_observed}
    for name, est in zip(SOURCES, (f.prior, f.extrapolation, f.posterior)):
        row[f"{name}_error"] = est.value / truth - 1 if est.available else None
        row[f"{name}_covered"] = (est.low <= truth <= est.high) if est.available and est.low is not None \
            and est.high is not None else None
    t_true = find_target_crossing(log, target, criterion="first-row").time_s
    spu = f.seconds_per_unit
    if f.time_to_target_s is not None and t_true:
        row["time_error"] = f.time_to_target_s / t_true - 1
        row["time_covered"] = f.posterior.low * spu <= t_true <= f.posterior.high * spu
    return row


def stats(rows: list[dict], name: str) -> tuple[int, str]:
    """``(n, "median | p90 | mean | 80 % coverage")`` of one source's errors over the cases."""
    e = np.abs([r[f"{name}_error"] for r in rows if r.get(f"{name}_error") is not None])
    cov = [r[f"{name}_covered"] for r in rows if r.get(f"{name}_covered") is not None]
    if not len(e):
        return 0, "no answer"
    cover = f"{np.mean(cov):.0%}" if cov else "—"
    return len(e), f"{np.median(e):6.1%} | {np.quantile(e, 0.9):6.1%} | {e.mean():7.1%} | {cover:>4}"


def print_table(title: str, blocks: list[tuple[str, list[dict]]], names=SOURCES) -> None:
    print(f"\n{title}")
    print(f"  {'case':34s} {'source':14s} {'n':>3s}   median |    p90 |    mean | 80 % covered")
    for label, rows in blocks:
        for name in names:
            n, text = stats(rows, name)
            print(f"  {label:34s} {name:14s} {n:3d}   {text}")
        methods = defaultdict(int)
        for r in rows:
            methods[r["method"]] += 1
        print(f"  {'':34s} posterior used: " + ", ".join(f"{k} {v}" for k, v in sorted(methods.items())))


def leave_one_system_out(groups: dict[str, list], fraction: float, cache: ProgressCache | None,
                         systems: list[str] | None = None) -> list[dict]:
    rows = []
    for system in systems or list(groups):
        others = [r for k, v in groups.items() if k != system for r in v]
        rows += [case(log, others, fraction, cache) for log in groups[system]]
    return rows


def mlperf(folder: Path, label: str, fractions: tuple[float, ...], *, timing_baseline: bool = False) -> None:
    t0 = time.perf_counter()
    groups = read_groups(folder, "result_*.txt")
    n_runs = sum(map(len, groups.values()))
    read_s = time.perf_counter() - t0
    evals = sorted({len(find_evals(log)) for v in groups.values() for log in v})
    if timing_baseline:       # the same predictions for one held-out system, without and with a cache
        first = [next(iter(groups))]
        t = time.perf_counter()
        plain = leave_one_system_out(groups, fractions[0], None, first)
        plain_s = time.perf_counter() - t
        t = time.perf_counter()
        cached = leave_one_system_out(groups, fractions[0], ProgressCache(), first)
        cached_s = time.perf_counter() - t
        same = all(a == b for a, b in zip(plain, cached))
        print(f"\n{label}: timing, held-out system {first[0]} ({len(plain)} runs): without a cache {plain_s:.1f} s, "
              f"with one {cached_s:.1f} s: {plain_s / cached_s:.1f}× faster; same answers: {same}")
    cache = ProgressCache()
    blocks = []
    t = time.perf_counter()
    for fraction in fractions:
        blocks.append((f"{fraction:.0%} of the evaluations observed",
                       leave_one_system_out(groups, fraction, cache)))
    print_table(f"{label}: leave one system out ({n_runs} runs that reached the target, {len(groups)} systems; "
                f"evaluations per run {evals[0]}–{evals[-1]}; read {read_s:.0f} s, predicted "
                f"{time.perf_counter() - t:.0f} s)", blocks)


def find_evals(log) -> np.ndarray:
    return evaluation_points(log, target_for(log))[0]


def speedrun(fractions=(0.25, 0.5)) -> None:
    t0 = time.perf_counter()
    records = read_groups(SHARED / "nanogpt_speedrun" / "track_1_short", "*.txt")
    n_logs = sum(map(len, records.values()))
    several = {k: v for k, v in records.items() if len(v) >= 2}
    cache = ProgressCache()
    blocks = []
    for fraction in fractions:
        same = [case(log, [o for o in logs if o is not log], fraction, cache)
                for logs in several.values() for log in logs]
        other = [case(log, [o for k, v in records.items() if k != rec for o in v], fraction, cache)
                 for rec, logs in records.items() for log in logs]
        blocks += [(f"{fraction:.0%} seen, prior: same record", same), (f"{fraction:.0%} seen, prior: other records",
                                                                      other)]
    print_table(f"NanoGPT speedrun track 1, tokens to val_loss 3.28 ({n_logs} logs that reached it, {len(records)} "
                f"records; same record: the {sum(map(len, several.values()))} logs of the {len(several)} records "
                f"with two or more; {time.perf_counter() - t0:.0f} s)", blocks)
    print_table("NanoGPT speedrun track 1, train time to val_loss 3.28 (posterior tokens × the observed s/token)",
                blocks, names=("time",))


def main() -> None:
    require_shared("mlperf_v5_llm", bench="bench/llm_prediction.py")
    quick = "--quick" in sys.argv
    start = time.perf_counter()
    mlperf(SHARED / "mlperf_v5_llm" / "mlperf_v5.1" / "llama31_8b", "Llama 3.1 8B (v5.1)", (0.25,),
           timing_baseline=True)
    if not quick:
        mlperf(SHARED / "mlperf_v5_llm" / "mlperf_v5.0" / "llama2_70b_lora", "Llama 2 70B LoRA (v5.0)", (0.25, 0.5))
        speedrun()
    print(f"\ntotal {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
