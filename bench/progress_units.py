"""The speedrun prior across progress units (issue 34): every NanoGPT speedrun track 1 record predicted from 25 %
of its evaluations with the other records as its prior, before and after the prior converts units.

The 46 shared track 1 records count progress in samples (the 2024 records: 512 sequences of 1,024 tokens a step,
or 8 of 65,536) or in tokens (the 2025 records, which declare tokens a step). Before issue 34 the prior pooled only
runs counted in the same unit as the predicted one, so samples of 1,024 tokens were pooled with samples of 65,536,
and a run counted in samples had no prior from runs counted in tokens. Two scenarios:

* **records**: leave one record out: each log of each record is cut at ``--fraction`` (25 %) of its evaluations
  and predicted by ``core.prediction.predict_progress`` (the power law, the prior and the posterior of
  ``python -m core predict``) with every log of the *other* records as the prior and the backtest;
* **built-in**: the same logs, with the product's built-in speedrun logs as the prior
  (``data/llm/nanogpt_speedrun/track_1_short``: 4 logs of 2 records, counted in tokens; a record's own logs
  left out): the issue's reproduction, for every record.

Printed per scenario and code version: how many logs get a prior and a posterior, how many runs each prior pools
(median, min, max), how many records get a prior for every log, and the error of the progress (steps, samples or
tokens: the same ratio) and of the time to ``val_loss <= 3.28`` (the run's own logged time at its first evaluation
at 3.28; predicted: the time at the posterior's progress at the run's logged pace): median |error|, p90 and how
often the 80 % interval holds the truth. Runs that never reached 3.28 are predicted for no one but stay in the
prior (where they are left out, named).

The **before** is measured in the same run: the same script imports ``core`` from the base commit (``--base``,
default ``2cd09bd``, the branch point of issue 34), extracted with ``git archive`` into a temporary folder; each
version runs in its own process, one after the other, and the wall time of each and the load average are printed
(the machine may be shared: compare the two, not absolute times). ``--base none`` measures only this tree.

Reads ``../shared/reference/nanogpt_speedrun/track_1_short`` (a benchmark may; the product and tests never do).
``--route predict`` measures what ``python -m core predict`` prints instead (``forecast_progress``: through the
records' declared schedules, the prior there pooling only runs on the same rates).
Usage: ``python bench/progress_units.py [--quick] [--records N] [--fraction F] [--route R] [--base REV|none]``;
the full run (46 records, 94 logs, both versions) took about 2 minutes at load average 12; ``--quick`` takes
12 records, evenly spaced (about 30 s).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BUILT_IN = ROOT / "data" / "llm" / "nanogpt_speedrun" / "track_1_short"
BASE = "2cd09bd"
_POOLED = re.compile(r"median of (\d+) other runs")


# --------------------------------------------------------------------------- one code version (its own process)
def _read(folder: Path, records: int | None) -> dict[str, list]:
    from core.errors import LogFormatError
    from core.logs import read_log_file

    names = sorted(p.name for p in folder.iterdir() if p.is_dir())
    if records:
        names = names[::max(1, len(names) // records)][:records]
    groups = {}
    for name in names:
        logs = []
        for path in sorted((folder / name).glob("*.txt")):
            try:
                logs.append(read_log_file(path, source=f"{name}/{path.name}"))
            except LogFormatError as exc:
                print(f"  skipped {exc}", file=sys.stderr)
        groups[name] = logs
    return groups


def _case(log, others, fraction: float, cache, route: str = "power-law") -> dict | None:
    from core.prediction import predict_progress, progress_to_target
    from core.prediction.progress_measure import first_points, time_at_progress
    from core.prediction.progress_route import forecast_progress
    from core.targets import Target

    target = log.target if isinstance(log.target, Target) else None
    truth = progress_to_target(log, target)
    if truth is None:
        return None
    if route == "predict":     # what `python -m core predict` prints: through the declared schedule where it applies
        f = forecast_progress(log, others, target, observe=fraction, cache=cache).progress
    else:
        f = predict_progress(log, others, target, observe=fraction, cache=cache)
    m = _POOLED.search(f.prior.description or "")
    row = {"file": log.source, "record": log.source.split("/")[0], "unit": f.unit, "status": f.status,
           "pooled": int(m.group(1)) if m and f.prior.available else 0,
           "left_out": [why for _, why in getattr(f.prior, "left_out", ())]}
    for name, est in (("prior", f.prior), ("posterior", f.posterior)):
        ok = est.available
        row[f"{name}_error"] = est.value / truth - 1 if ok else None
        row[f"{name}_covered"] = bool(est.low <= truth <= est.high) if ok and est.low is not None \
            and est.high is not None else None
    t_true = time_at_progress(log, truth)
    seen = first_points(log, f.target, f.n_observed)
    if f.time_to_target_s is not None and t_true and f.posterior.available:
        lo, hi = (time_at_progress(seen, v) for v in (f.posterior.low, f.posterior.high))
        row["time_error"] = f.time_to_target_s / t_true - 1
        row["time_covered"] = bool(lo is not None and hi is not None and lo <= t_true <= hi)
    return row


def worker(args) -> None:
    """Predict every case with the ``core`` this process imported (``--code``); one JSON document on stdout."""
    from core.prediction import ProgressCache

    start = time.perf_counter()
    records = _read(Path(args.shared), args.records)
    built_in = [lg for lgs in _read(Path(args.built_in), None).values() for lg in lgs]
    read_s = time.perf_counter() - start
    out = {"read_s": read_s, "logs": sum(map(len, records.values())), "n_records": len(records)}
    cache = ProgressCache()
    for scenario in ("records", "built-in"):
        t = time.perf_counter()
        rows = []
        for rec, logs in records.items():
            if scenario == "records":
                others = [o for k, v in records.items() if k != rec for o in v]
            else:
                others = [o for o in built_in if o.source.split("/")[0] != rec]
            rows += [r for log in logs if (r := _case(log, others, args.fraction, cache, args.route)) is not None]
        out[scenario] = {"rows": rows, "seconds": time.perf_counter() - t}
    json.dump(out, sys.stdout)


# --------------------------------------------------------------------------- both versions, one table
def _stats(rows: list[dict], name: str) -> str:
    e = np.abs([r[f"{name}_error"] for r in rows if r.get(f"{name}_error") is not None])
    cov = [r[f"{name}_covered"] for r in rows if r.get(f"{name}_covered") is not None]
    if not len(e):
        return f"{name:9s}   0 answers"
    cover = f"{np.mean(cov):.0%}" if cov else "-"
    return (f"{name:9s} {len(e):3d} answers: median {np.median(e):6.1%}  p90 {np.quantile(e, 0.9):6.1%}  "
            f"80 % interval holds the truth {cover:>4s}")


def report(label: str, result: dict) -> None:
    print(f"\n== {label}: {result['logs']} logs of {result['n_records']} records read in {result['read_s']:.0f} s")
    for scenario in ("records", "built-in"):
        block = result[scenario]
        rows = block["rows"]
        asked = [r for r in rows if r["status"] != "reached"]        # a run at target in its observed part: no prior
        pooled = [r["pooled"] for r in asked]
        by_record: dict[str, list] = {}
        for r in asked:
            by_record.setdefault(r["record"], []).append(r["prior_error"] is not None)
        every = sum(all(v) for v in by_record.values())
        units = Counter(r["unit"] for r in rows)
        print(f"  {scenario}: {len(rows)} predictions ({', '.join(f'{n} in {u}' for u, n in units.items())}; "
              f"{len(rows) - len(asked)} at target in the seen part, no prior asked), {block['seconds']:.0f} s")
        print(f"    runs pooled per prior: median {np.median(pooled):.0f}, min {min(pooled)}, max {max(pooled)}; "
              f"records with a prior for every log: {every} of {len(by_record)}")
        for name in ("prior", "posterior", "time"):
            print(f"    {_stats(rows, name)}")
        for unit in units:
            part = [r for r in rows if r["unit"] == unit]
            print(f"    predicted in {unit} ({len(part)}): " + "; ".join(
                _stats(part, name).split("  80 %")[0] for name in ("prior", "posterior")))
        reasons = Counter(re.sub(r"\d[\d,.]*", "N", why) for r in rows for why in r["left_out"])
        for why, n in reasons.most_common(3):
            print(f"    left out {n:5d}×: {why}")


def _run(code: Path, args) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "--code", str(code), "--shared", args.shared,
           "--built-in", str(BUILT_IN), "--fraction", str(args.fraction), "--route", args.route]
    if args.records:
        cmd += ["--records", str(args.records)]
    env = dict(os.environ, PYTHONPATH=str(code))
    t = time.perf_counter()
    done = subprocess.run(cmd, cwd=code, env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"the worker for {code} failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout)
    result["wall_s"] = time.perf_counter() - t
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="12 records, evenly spaced (of 46)")
    parser.add_argument("--records", type=int, default=None, help="this many records, evenly spaced (default all)")
    parser.add_argument("--fraction", type=float, default=0.25, help="fraction of each log's evaluations seen")
    parser.add_argument("--route", choices=("power-law", "predict"), default="power-law",
                        help="power-law: core.prediction.predict_progress (the prior's own route); predict: what "
                             "`python -m core predict` prints (through the declared schedule where it applies; slower)")
    parser.add_argument("--base", default=BASE, help=f"the commit measured as 'before' (default {BASE}; none: skip)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--code", default=str(ROOT), help=argparse.SUPPRESS)
    parser.add_argument("--shared", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--built-in", dest="built_in", default=str(BUILT_IN), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        sys.path.insert(0, args.code)
        worker(args)
        return
    sys.path.insert(0, str(ROOT))
    from bench.reference import require_shared

    args.shared = str(require_shared("nanogpt_speedrun", "track_1_short", bench="bench/progress_units.py"))
    if args.quick and not args.records:
        args.records = 12
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; fraction seen {args.fraction:g}")
    results = []
    if args.base != "none":
        with tempfile.TemporaryDirectory(prefix="tta-base-") as tmp:
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.base, "core", "data"],
                                     capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            results.append((f"before ({args.base})", _run(Path(tmp), args)))
    results.append(("after (this tree)", _run(ROOT, args)))
    for label, result in results:
        report(label, result)
    print()
    for label, result in results:
        print(f"{label}: {result['wall_s']:.0f} s wall")
    if len(results) == 2:
        print(f"after / before wall time: {results[1][1]['wall_s'] / results[0][1]['wall_s']:.2f}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
