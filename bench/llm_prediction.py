"""Samples (and time) to a falling target from the first part of a run plus the other runs (issue 18, measures 2-3).

* MLPerf Training v5.1 Llama 3.1 8B (log-perplexity <= 3.3) and v5.0 Llama 2 70B LoRA (loss <= 0.925):
  leave one system out — every run of the held-out system is cut at 25 % of its evaluations, the prior
  comes from the runs of the *other* systems only, the posterior's weights from a backtest on those
  other runs (``core.prediction.progress``). Error = predicted / measured samples at target − 1.
* NanoGPT speedrun (val_loss <= 3.28): tokens and train time to target from the first 25 % and 50 %
  of each log's evaluations, the prior from (a) the other logs of the same record, (b) other records.

Reads ``../shared/reference`` (a benchmark may; the product and tests never do). Usage:
``python bench/llm_prediction.py [--quick]``.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.errors import LogFormatError
from core.logs import read_log_file
from core.prediction.progress import predict_progress, progress_to_target
from core.runs import run_target

SHARED = Path(__file__).resolve().parents[2] / "shared" / "reference"


def read_all(paths):
    logs = []
    for p in paths:
        try:
            logs.append(read_log_file(p, source=str(p)))
        except LogFormatError as exc:
            print(f"  skipped {exc}")
    return logs


def summary(name, errors, covered):
    e = np.abs(np.array(errors))
    if not len(e):
        print(f"{name}: no case")
        return
    print(f"{name}: n={len(e)}  median |error| {np.median(e):.1%}  p90 {np.quantile(e, 0.9):.1%}  "
          f"mean {e.mean():.1%}  80 % coverage {np.mean(covered):.0%}")


def leave_one_system_out(folder: Path, fraction: float, label: str) -> None:
    systems = sorted(d for d in folder.iterdir() if d.is_dir())
    runs = {d.name: read_all(sorted(d.glob("result_*.txt"))) for d in systems}
    runs = {k: [r for r in v if progress_to_target(r, run_target(r)) is not None] for k, v in runs.items()}
    errs = defaultdict(list)
    cov = defaultdict(list)
    for system, held in runs.items():
        others = [r for k, v in runs.items() if k != system for r in v]
        for log in held:
            target = run_target(log)
            truth = progress_to_target(log, target)
            f = predict_progress(log, others, target, observe=fraction)
            for name, est in (("prior", f.prior), ("extrapolation", f.extrapolation), ("posterior", f.posterior)):
                if est.available:
                    errs[name].append(est.value / truth - 1)
                    if est.low is not None and est.high is not None:
                        cov[name].append(est.low <= truth <= est.high)
    print(f"\n{label}: leave one system out, {fraction:.0%} of the evaluations observed "
          f"({sum(map(len, runs.values()))} runs, {len(runs)} systems)")
    for name in ("prior", "extrapolation", "posterior"):
        summary(f"  {name:13s}", errs[name], cov[name])


def speedrun(fractions=(0.25, 0.5)) -> None:
    folder = SHARED / "nanogpt_speedrun" / "track_1_short"
    records = {d.name: read_all(sorted(d.glob("*.txt"))) for d in sorted(folder.iterdir()) if d.is_dir()}
    records = {k: [r for r in v if progress_to_target(r, run_target(r)) is not None] for k, v in records.items()}
    print(f"\nNanoGPT speedrun: {sum(map(len, records.values()))} logs that reached 3.28, {len(records)} records")
    for fraction in fractions:
        for mode in ("same record", "other records"):
            errs, cov, t_errs = defaultdict(list), defaultdict(list), []
            for rec, logs in records.items():
                for log in logs:
                    others = [o for o in logs if o is not log] if mode == "same record" else \
                        [o for k, v in records.items() if k != rec for o in v]
                    target = run_target(log)
                    truth = progress_to_target(log, target)
                    f = predict_progress(log, others, target, observe=fraction)
                    for name, est in (("prior", f.prior), ("extrapolation", f.extrapolation),
                                      ("posterior", f.posterior)):
                        if est.available:
                            errs[name].append(est.value / truth - 1)
                            if est.low is not None and est.high is not None:
                                cov[name].append(est.low <= truth <= est.high)
                    c = log.frame
                    t_true = _time_at(log, truth)
                    if f.time_to_target_s is not None and t_true:
                        t_errs.append(f.time_to_target_s / t_true - 1)
            print(f"  {fraction:.0%} observed, prior from {mode}:")
            for name in ("prior", "extrapolation", "posterior"):
                summary(f"    tokens, {name:13s}", errs[name], cov[name])
            summary("    train time to 3.28 (posterior)", t_errs, [True] * len(t_errs))
            del c


def _time_at(log, tokens):
    f = log.frame
    if "tokens" not in f.columns or "time_s" not in f.columns:
        return None
    rows = f[(f["tokens"] >= tokens - 1e-6) & f["time_s"].notna()]
    return float(rows["time_s"].iloc[0]) if len(rows) else None


def main() -> None:
    quick = "--quick" in sys.argv
    leave_one_system_out(SHARED / "mlperf_v5_llm" / "mlperf_v5.1" / "llama31_8b", 0.25, "Llama 3.1 8B (v5.1)")
    if not quick:
        leave_one_system_out(SHARED / "mlperf_v5_llm" / "mlperf_v5.0" / "llama2_70b_lora", 0.25,
                             "Llama 2 70B LoRA (v5.0)")
        speedrun()


if __name__ == "__main__":
    main()
