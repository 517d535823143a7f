"""Measurement 1 of issue 18: every shared MLPerf LLM log reaches its target at the logged samples, right direction.

For every ``result_*.txt`` under ``../shared/reference/mlperf_v5_llm`` (beside the repository) (Llama 3.1 8B, Llama 3.1
405B, Llama 2 70B LoRA; read with ``core.logs.read_log_file``, system descriptions included):

* ours: the log's own target (``RunLog.target``: ``target_accuracy`` with the direction
  ``mlperf-logging``'s compliance rules give), the first evaluation of
  ``RunLog.metric_series(target.metric)`` that meets it, its ``samples`` and ``time_s``;
* reference, computed here from the raw events and the package alone: the first
  ``eval_accuracy`` event whose value passes the compliance checker's own
  ``ATLEAST_ONE_CHECK`` expression (evaluated as the checker does, with ``v`` the event and
  ``s`` the run's settings), and its ``metadata.samples_count``.

A log is right when both name the same evaluation (same samples), the reader says the target
is reached, and the direction is the one the package states.  Prints one line per benchmark and
the share of logs right (goal 100 %); the ratio of our reading time to the package's parser
(``mlp_parser.parse_file``) measured in the same run.

Usage: ``python bench/llm_logs.py [FOLDER]`` (about 3 minutes on 2 shared cores, most of it the package's parser).
"""

from __future__ import annotations

import importlib.resources as resources
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.reference import SHARED, require_shared
from core.logs import benchmark_rule, read_log_file

ROOT = Path(sys.argv[1]) if len(sys.argv) > 1 else SHARED / "mlperf_v5_llm"


def compliance_check(benchmark: str, round_name: str) -> str:
    """The compliance checker's ``ATLEAST_ONE_CHECK`` on ``eval_accuracy`` for a benchmark and round."""
    folder = resources.files("mlperf_logging.compliance_checker") / f"training_{round_name}"
    for entry in yaml.safe_load((folder / f"closed_{benchmark}.yaml").read_text()):
        key = entry.get("KEY", {}) if isinstance(entry, dict) else {}
        if key.get("NAME") == "eval_accuracy" and "ATLEAST_ONE_CHECK" in key:
            return key["ATLEAST_ONE_CHECK"]
    raise KeyError(benchmark)


def reference(path: Path, round_name: str) -> tuple[str, float | None]:
    """(benchmark, samples_count of the first evaluation passing the checker's own expression)."""
    events = [json.loads(line.split(":::MLLOG", 1)[1]) for line in path.read_text(errors="replace").splitlines()
              if ":::MLLOG" in line]
    benchmark = next(e["value"] for e in events if e["key"] == "submission_benchmark")
    check = compliance_check(benchmark, round_name)
    settings = {e["key"]: e["value"] for e in events if e["key"] in ("global_batch_size", "target_accuracy")}
    for e in events:
        if e["key"] == "eval_accuracy" and eval(check, {}, {"v": e, "s": settings}):
            return benchmark, float(e["metadata"]["samples_count"])
    return benchmark, None


def main() -> int:
    if len(sys.argv) <= 1:
        require_shared("mlperf_v5_llm", bench="bench/llm_logs.py")
    files = sorted(ROOT.glob("mlperf_v*/*/*/result_*.txt"))
    if not files:
        print(f"no MLPerf LLM logs under {ROOT}")
        return 1
    per_bench: dict[str, list[bool]] = defaultdict(list)
    wrong = []
    t_ours = t_pkg = 0.0
    from mlperf_logging.compliance_checker.mlp_parser import parse_file
    for path in files:
        round_name = {"mlperf_v5.0": "5.0.0", "mlperf_v5.1": "5.1.0"}[path.parents[2].name]
        t0 = time.perf_counter()
        log = read_log_file(path)
        t_ours += time.perf_counter() - t0
        t0 = time.perf_counter()
        parse_file(str(path), ruleset=round_name)
        t_pkg += time.perf_counter() - t0
        benchmark, samples_ref = reference(path, round_name)
        target = log.target
        values = log.metric_series(target.metric)
        hit = target.first_met(values)
        samples = float(log.frame["samples"].iloc[hit]) if hit is not None else None
        ok = (hit is not None and samples == samples_ref and target.direction == benchmark_rule(benchmark)[0]
              and not log.has_acc)
        per_bench[benchmark].append(ok)
        if not ok:
            wrong.append(f"  {path.relative_to(ROOT)}: ours {target} at {samples}, reference at {samples_ref}")
    for benchmark, oks in sorted(per_bench.items()):
        print(f"{benchmark:16s} {sum(oks):4d} / {len(oks):4d} logs reach their target at the logged samples, "
              f"direction {benchmark_rule(benchmark)[0]}")
    n_ok = sum(sum(v) for v in per_bench.values())
    print(f"all             {n_ok:4d} / {len(files):4d} = {100 * n_ok / len(files):.0f} %")
    print(f"reading time: ours {t_ours:.1f} s, mlperf-logging's parser {t_pkg:.1f} s "
          f"(ratio {t_ours / t_pkg:.2f}; ours also builds the RunLog)")
    print("\n".join(wrong))
    return 0 if n_ok == len(files) else 1


if __name__ == "__main__":
    sys.exit(main())
