"""Forecasts through the learning-rate schedule (issue 32): how far they land from what the runs logged.

Measures, each against today's forecast (``core.prediction.predict_progress``: a power law in the run's
progress, the other runs' crossings as prior, a backtest-weighted posterior) **measured in the same run**:

1. **Shared schedule curves** (``data/llm/lr_schedule_loss_curves``: 25M and 100M-parameter models under nine
   schedules, copied from the shared reference): every run, leave it out, seen to 25 %, 50 % and 75 % of its
   steps; the other runs from **the same size** (8), or from **the other size only** (9). Target: the loss the
   run logged at 90 % of its steps. Errors of the answer ``predict`` prints (``forecast_progress``: its route,
   its posterior, ``metric_at_end``): steps to target (first logged evaluation at target), loss at the
   schedule's end (the run's last logged loss), both relative; coverage of the 80 % intervals, pooled; and the
   law's own crossing alone, for comparison.
2. **What if**: each size's ``constant_24000`` seen to half its steps, forecast under the WSD schedules that share
   its first 20,000 steps (exponential and linear cool-down to step 24,000) given as plans; against those runs'
   logged final loss. Decay terms from the other size only, and from the same size without the two WSD runs.
3. **NanoGPT speedrun** (``../shared/reference/nanogpt_speedrun``): tokens and train time to 3.28 from the first
   25 % of each log, the other runs from the other records, or from the same record's other logs.
4. **MLPerf Llama 3.1 8B** (``../shared/reference/mlperf_v5_llm``): samples to log-perplexity 3.3 from 25 % of a
   run, leave one system out; the baseline is today's posterior.
5. **The schedule verb** on the 100M ``constant_24000`` seen to half its steps, for the loss ``wsd_20000_24000``
   reached: the cool-downs it proposes against the WSD run's 24,000 steps.

Reads ``../shared/reference`` for 3 and 4 only (a benchmark may; the product and tests never do); 1, 2 and 5
read the project's own copy. Usage: ``python bench/lr_schedule.py [--only 1,2,5] [--family multi-power]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.llm_prediction import read_groups
from bench.reference import SHARED, require_shared
from core.logs import read_log_file
from core.prediction import (
    ProgressCache,
    ScheduleFitCache,
    forecast_progress,
    forecast_through_schedule,
    predict_progress,
)
from core.targets import Target

ROOT = Path(__file__).resolve().parents[1]
CURVES = ROOT / "data" / "llm" / "lr_schedule_loss_curves"
SIZES = ("25", "100")
FRACTIONS = (0.25, 0.5, 0.75)
#: print every case (--table)
TABLE = [False]


def read_size(size: str) -> list:
    return [read_log_file(p, source=f"csv_{size}/{p.name}") for p in sorted((CURVES / f"csv_{size}").glob("*.csv"))]


def target_at_90(log) -> tuple[Target, float]:
    """The loss the run logged at 90 % of its steps, and the first step it was at or below it."""
    f = log.frame
    steps, loss = f["global_step"].to_numpy(float), f["loss"].to_numpy(float)
    i = int(np.argmin(np.abs(steps - 0.9 * steps[-1])))
    value = float(loss[i])
    return Target("loss", "<=", value), float(steps[np.flatnonzero(loss <= value)[0]])


def rel(a, b) -> float:
    if a is None or not math.isfinite(a):
        return math.inf
    return a / b - 1


def inside(lo, hi, truth) -> bool:
    lo = -math.inf if lo is None else lo
    hi = math.inf if hi is None else hi
    return lo <= truth <= hi


def shared_curves(family: str) -> pd.DataFrame:
    logs = {s: read_size(s) for s in SIZES}
    rows = []
    cache, pcache = ScheduleFitCache(), ProgressCache()
    for size in SIZES:
        other_size = next(s for s in SIZES if s != size)
        for log in logs[size]:
            target, truth_steps = target_at_90(log)
            truth_end = float(log.frame["loss"].iloc[-1])
            for mode, others in (("same size", [o for o in logs[size] if o is not log]),
                                 ("other size", logs[other_size])):
                for frac in FRACTIONS:
                    t0 = time.perf_counter()
                    # what `predict` prints: the route it takes, the posterior (the forecast through the schedule
                    # combined with the other runs' crossings where a backtest trusts them), metric_at_end
                    answer = forecast_progress(log, others, target, observe=frac, family=family, cache=pcache,
                                               schedule_cache=cache)
                    dt = time.perf_counter() - t0
                    f, post = answer.schedule, answer.progress.posterior
                    row = {"size": size, "run": log.source.split("/")[-1][:-4], "mode": mode, "fraction": frac,
                           "route": answer.route,
                           "steps_err": rel(post.value, truth_steps),
                           "steps_in": inside(post.low, post.high, truth_steps),
                           "law_steps_err": rel(f.progress_to_target, truth_steps) if f else math.inf,
                           "law_in": inside(f.steps_low, f.steps_high, truth_steps) if f else False,
                           "prior_err": (rel(answer.progress.prior.value, truth_steps)
                                         if answer.progress.prior.available else math.nan),
                           "prior_weight": answer.progress.prior_weight,
                           "end_err": rel(f.metric_at_end, truth_end) if f else math.inf,
                           "end_in": inside(f.metric_at_end_low, f.metric_at_end_high, truth_end) if f else False,
                           "k": next((n for n in ("alpha", "A", "L0")
                                      if f and "this run" in f.param_sources.get(n, "")), ""), "seconds": dt}
                    if mode == "same size":      # today's forecast, the baseline, in the same run
                        b = predict_progress(log, others, target, observe=frac, cache=pcache)
                        row["baseline_steps_err"] = rel(b.posterior.value, truth_steps)
                    rows.append(row)
    return pd.DataFrame(rows)


def summarise_shared(df: pd.DataFrame) -> None:
    print("\n1. Shared schedule curves, leave one run out (18 runs × 3 fractions per row)")
    print(f"{'others':<11} {'steps med':>9} {'max':>8} {'not reached':>11} {'loss@end med':>12} {'max':>7} "
          f"{'steps cov':>9} {'end cov':>8}")
    print("routes: " + ", ".join(f"{k} {v}" for k, v in df["route"].value_counts().items()))
    for mode, g in df.groupby("mode", sort=False):
        s, e = g["steps_err"].abs(), g["end_err"].abs()
        print(f"  {mode}: the law alone (its own crossing, no prior): steps median "
              f"{g['law_steps_err'].abs().median():.1%}, not reached {int(np.isinf(g['law_steps_err']).sum())}")
        print(f"{mode:<11} {s.median():>9.1%} {s.max():>8.1%} {int(np.isinf(s).sum()):>11d} {e.median():>12.2%} "
              f"{e.max():>7.2%} {g['steps_in'].mean():>9.0%} {g['end_in'].mean():>8.0%}")
        for frac, h in g.groupby("fraction"):
            s2, e2 = h["steps_err"].abs(), h["end_err"].abs()
            print(f"  at {frac:.0%}: steps median {s2.median():.1%} (not reached {int(np.isinf(s2).sum())}), "
                  f"loss at end median {e2.median():.2%} max {e2.max():.2%}; coverage steps "
                  f"{h['steps_in'].mean():.0%}, end {h['end_in'].mean():.0%}")
    b = df["baseline_steps_err"].dropna().abs()
    if len(b):
        print(f"baseline (today's predict, same size): steps median {b.median():.1%}, max {b.max():.1%}; at 50 %: "
              f"median {df[df.fraction == 0.5]['baseline_steps_err'].dropna().abs().median():.1%}")
    print(f"seconds per forecast: median {df['seconds'].median():.2f}, max {df['seconds'].max():.1f}")


def what_if(family: str) -> None:
    """2. The constant run of each size seen to half its steps, forecast under the two WSD plans."""
    from core.prediction import what_if as replan
    from core.schedules import log_schedule
    logs = {s: {lg.source.split("/")[-1][:-4]: lg for lg in read_size(s)} for s in SIZES}
    print("\n2. What if: constant_24000 seen to 50 %, forecast under the WSD plans that share its first 20,000 steps")
    print(f"{'size':>4} {'others':<30} {'plan':<18} {'forecast':>9} {'logged':>8} {'error':>7}  80 % band")
    errors = []
    for size in SIZES:
        run = logs[size]["constant_24000"]
        other_size = next(s for s in SIZES if s != size)
        for what, others in (("other size", list(logs[other_size].values())),
                             ("same size without the two WSD", [lg for n, lg in logs[size].items()
                                                                if n not in ("wsd_20000_24000", "wsdld_20000_24000")])):
            base = forecast_through_schedule(run, others, Target("loss", "<=", 1.0), observe=0.5, family=family)
            for plan_run in ("wsd_20000_24000", "wsdld_20000_24000"):
                wsd = logs[size][plan_run]
                f = replan(base, log_schedule(wsd))
                logged = float(wsd.frame["loss"].iloc[-1])
                err = f.metric_at_end / logged - 1
                errors.append(abs(err))
                print(f"{size:>4} {what:<30} {plan_run:<18} {f.metric_at_end:>9.4f} {logged:>8.4f} {err:>+7.2%}  "
                      f"{f.metric_at_end_low:.4f}-{f.metric_at_end_high:.4f}")
    print(f"median |error| {np.median(errors):.2%}, max {np.max(errors):.2%} (goal: within 0.5 %)")


def speedrun(family: str) -> None:
    """3. NanoGPT speedrun: tokens and time to 3.28 from the first 25 % of each log."""
    records = read_groups(SHARED / "nanogpt_speedrun" / "track_1_short", "*.txt")
    several = {k: v for k, v in records.items() if len(v) >= 2}
    rows = []
    pcache, scache = ProgressCache(), ScheduleFitCache()
    for mode in ("other records", "same record"):
        for rec, logs in (records if mode == "other records" else several).items():
            for log in logs:
                others = ([o for k, v in records.items() if k != rec for o in v] if mode == "other records"
                          else [o for o in logs if o is not log])
                rows.append(_llm_case(log, others, 0.25, mode, family, pcache, scache))
    _print_llm("3. NanoGPT speedrun track 1, tokens and train time to val_loss 3.28 from 25 % of each log", rows,
               goal="goal: tokens <= 5 %, time <= 10 %", table=TABLE[0])


def mlperf(family: str) -> None:
    """4. MLPerf Llama 3.1 8B: samples to 3.3 from 25 % of a run, leave one system out."""
    groups = read_groups(SHARED / "mlperf_v5_llm" / "mlperf_v5.1" / "llama31_8b", "result_*.txt")
    rows = []
    pcache, scache = ProgressCache(), ScheduleFitCache()
    for system, logs in groups.items():
        others = [o for k, v in groups.items() if k != system for o in v]
        for log in logs:
            rows.append(_llm_case(log, others, 0.25, "other systems", family, pcache, scache))
    _print_llm("4. MLPerf v5.1 Llama 3.1 8B, samples to log-perplexity 3.3 from 25 % of each run, leave one system "
               "out", rows, goal="goal: beat today's posterior by a third", table=TABLE[0])


def _llm_case(log, others, fraction: float, mode: str, family: str, pcache, scache) -> dict:
    from core.prediction import forecast_progress, progress_to_target
    from core.runs import find_target_crossing
    from core.targets import target_for
    target = target_for(log)
    truth = progress_to_target(log, target)
    t_true = find_target_crossing(log, target, criterion="first-row").time_s
    row = {"file": log.source, "mode": mode}
    t0 = time.perf_counter()
    try:
        answer = forecast_progress(log, others, target, observe=fraction, family=family, cache=pcache,
                                   schedule_cache=scache)
        f, s = answer.progress, answer.schedule
        row.update(route=answer.route, err=rel(f.posterior.value, truth),
                   covered=inside(f.posterior.low, f.posterior.high, truth),
                   time_err=rel(f.time_to_target_s, t_true) if t_true else math.nan,
                   # the two sources the posterior combines, each alone
                   law_err=rel(s.progress_to_target, truth) if s is not None else math.nan,
                   law_in=inside(s.progress_low, s.progress_high, truth) if s is not None else False,
                   prior_err=rel(f.prior.value, truth) if f.prior.available else math.nan,
                   prior_weight=f.prior_weight)
    except ValueError as exc:
        row.update(route=f"refused: {exc}", err=math.inf, covered=False, time_err=math.inf)
    row["seconds"] = time.perf_counter() - t0
    # today's, the baseline: the power law as it answered before issue 32, past a declared schedule's end too
    b = predict_progress(log.with_meta(max_steps=None), others, target, observe=fraction, cache=pcache)
    row["baseline_err"] = rel(b.posterior.value, truth)
    # today's answer moved to the run's first evaluation at or after it (what the schedule route does): how much of
    # the gain is that alone
    from core.prediction.schedule_runs import schedule_run
    try:
        run = schedule_run(log, target)
    except ValueError:                     # no plan: the power-law route, nothing to put on a grid
        run = None
    snapped = run.next_evaluation(b.posterior.value, after=run.cut_step(fraction)) \
        if run is not None and b.posterior.available else b.posterior.value
    row["baseline_snapped_err"] = rel(snapped, truth)
    row["baseline_time_err"] = rel(b.time_to_target_s, t_true) if t_true else math.nan
    return row


def _print_llm(title: str, rows: list[dict], *, goal: str, table: bool = False) -> None:
    df = pd.DataFrame(rows)
    if table:
        with pd.option_context("display.width", 200, "display.max_rows", 500, "display.max_colwidth", 60):
            print(df.drop(columns=["route"]).round(4).to_string())
    print(f"\n{title} ({goal})")
    print(f"{'others':<16} {'n':>3} {'median':>7} {'p90':>7} {'covered':>8} {'time med':>9} | today: {'median':>7} "
          f"{'p90':>7} {'time med':>9} | today on the evaluation grid: {'median':>7} {'p90':>7}  routes")
    for mode, g in df.groupby("mode", sort=False):
        e, b = g["err"].abs(), g["baseline_err"].abs()
        te, bt = g["time_err"].abs(), g["baseline_time_err"].abs()
        routes = ", ".join(f"{k} {v}" for k, v in g["route"].str.slice(0, 40).value_counts().items())
        sn = g["baseline_snapped_err"].abs()
        print(f"{mode:<16} {len(g):>3} {e.median():>7.1%} {_p90(e):>7.1%} {g['covered'].mean():>8.0%} "
              f"{te.median():>9.1%} | {'':>5} {b.median():>7.1%} {_p90(b):>7.1%} {bt.median():>9.1%} | "
              f"{'':>29} {sn.median():>7.1%} {_p90(sn):>7.1%}  {routes}")
        if "law_err" in g:
            law, prior = g["law_err"].abs(), g["prior_err"].abs()
            print(f"{'':<16}     the forecast through the schedule alone: median {law.median():.1%}, p90 "
                  f"{_p90(law.dropna()):.1%}, covered {g['law_in'].mean():.0%}; the other runs' crossings alone: "
                  f"median {prior.median():.1%}, p90 {_p90(prior.dropna()):.1%} ({prior.notna().sum()} answered)")
    print(f"seconds per forecast: median {df['seconds'].median():.1f}, max {df['seconds'].max():.1f}")
    dump = Path(__file__).resolve().parent / ".cache" / f"lr_schedule_{title.split('.')[0]}.pkl"
    dump.parent.mkdir(exist_ok=True)
    df.to_pickle(dump)                     # each case's sources, to compare rules of combining them


def _p90(values: pd.Series) -> float:
    """The 90th percentile, an infinite error (no answer within the plan) counted as one."""
    return float(np.quantile(values.to_numpy(float), 0.9, method="higher"))


def schedule_verb(family: str) -> None:
    """5. The schedule verb on the 100M constant run seen to half its steps, for the loss the WSD run reached."""
    from core.prediction import plan_cooldown
    logs = {lg.source.split("/")[-1][:-4]: lg for lg in read_size("100")}
    wsd = logs["wsd_20000_24000"]
    value = float(wsd.frame["loss"].iloc[-1])
    others = [lg for n, lg in logs.items() if n not in ("constant_24000", "wsd_20000_24000")]
    f = forecast_through_schedule(logs["constant_24000"], others, Target("loss", "<=", value), observe=0.5,
                                  family=family)
    plan = plan_cooldown(f)
    print(f"\n5. Schedule verb: 100M constant_24000 seen to 50 %, target loss <= {value:.4f} (what wsd_20000_24000 "
          "reached at its last logged step, 23,904; its cool-down: exponential over steps 20,000-24,000); the other "
          "runs: the 100M runs but the WSD run")
    print(plan.description)
    with pd.option_context("display.width", 200):
        print(plan.table.head(8).round(4).to_string(index=False))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="1,2,3,4,5")
    parser.add_argument("--family", default="auto")
    parser.add_argument("--table", action="store_true", help="print every case")
    args = parser.parse_args(argv)            # --help works without ../shared
    require_shared("lr_schedule_loss_curves", bench="bench/lr_schedule.py")
    only = set(args.only.split(","))
    TABLE[0] = args.table
    if "1" in only:
        df = shared_curves(args.family)
        if args.table:
            with pd.option_context("display.width", 200, "display.max_rows", 500):
                print(df.round(4).to_string())
        summarise_shared(df)
        (Path(__file__).resolve().parent / ".cache").mkdir(exist_ok=True)
        df.to_pickle(Path(__file__).resolve().parent / ".cache" / "lr_schedule_1.pkl")
    if "2" in only:
        what_if(args.family)
    if "5" in only:
        schedule_verb(args.family)
    if "3" in only:
        speedrun(args.family)
    if "4" in only:
        mlperf(args.family)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
