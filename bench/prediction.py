"""Measurement: how well the epoch at target is predicted from the first part of real logs.

Backtests (``core.prediction.backtest.backtest_logs``) the built-in MNIST-1D logs
(``data/logs``, train and val, target 0.92 and more) and the Pollux CIFAR-10 / ImageNet
validation traces (``data/pollux_traces``, fixed per-job targets, and targets relative to each
trace's final accuracy) for three methods:

* ``optimus, own``: the Optimus family's own extrapolation (no drift correction): the
  mission's default model;
* ``optimus, corrected``: Optimus with the drift correction learned inside the observed epochs;
* ``auto, corrected``: the family chosen inside the observed epochs, drift-corrected.

Prints Markdown tables (docs/prediction.md quotes them): per data set, target and method, the
number of scored cases (and how many of them were predicted "never"), the median absolute error
of the predicted epoch and the 80 % interval coverage, with the interval calibrated on the
other runs (``runs``) and on each run alone (``self``), for the accuracy route and the loss
route; first observing 50 % of the epochs, then pooled over observed fractions 0.3–0.7 (more
cases, clearly labelled).

Usage: ``python bench/prediction.py [--quick]`` (``--quick``: the headline targets only).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.logs import read_log_file  # noqa: E402 (after the path set-up)
from core.prediction import FitCache, backtest_logs  # noqa: E402
from core.targets import accuracy_target  # noqa: E402

FRACTIONS = (0.3, 0.4, 0.5, 0.6, 0.7)
SCOPES = {"0.5": lambda t: t[t["observed_fraction"] == 0.5], "0.3-0.7": lambda t: t}
METHODS = (("optimus, own", "optimus", False), ("optimus, corrected", "optimus", True),
           ("auto, corrected", "auto", True))
#: data set -> targets as (label, backtest_logs keywords); the first is the headline one
TARGETS = {
    "built-in": (("0.92", dict(target=accuracy_target(0.92))), ("0.90", dict(target=accuracy_target(0.90))),
                 ("0.94", dict(target=accuracy_target(0.94)))),
    "cifar10": (("0.94", dict(target=accuracy_target(0.94))), ("0.93", dict(target=accuracy_target(0.93))),
                ("0.99×final", dict(target_rel=0.99)), ("0.9×final", dict(target_rel=0.9))),
    "imagenet": (("0.75", dict(target=accuracy_target(0.75))), ("0.72", dict(target=accuracy_target(0.72))),
                 ("0.99×final", dict(target_rel=0.99)), ("0.9×final", dict(target_rel=0.9))),
}


def load(name: str):
    if name == "built-in":
        return [read_log_file(p) for p in sorted((ROOT / "data" / "logs").glob("*.csv"))]
    folder = ROOT / "data" / "pollux_traces" / name
    return [read_log_file(p, source=f"{name}/{p.name}") for p in sorted(folder.glob("validation-*.csv"))]


def stats(table: pd.DataFrame, sfx: str) -> tuple[int, int, float, float]:
    """(scored cases predicted, of which "never", median |error| %, coverage)."""
    scored = table[table["status"] == "scored"]
    err = pd.to_numeric(scored[f"error_pct{sfx}"], errors="coerce").dropna()
    cov = scored[f"covered{sfx}"].dropna().astype(bool)
    return (len(err), int(np.isinf(err).sum()), float(np.median(np.abs(err))) if len(err) else np.nan,
            float(cov.mean()) if len(cov) else np.nan)


def _row(tables: dict, pick, **labels) -> dict:
    row = dict(labels)
    for route, sfx in (("acc", ""), ("loss", "_via_loss")):
        n, never, med, cov_runs = stats(pick(tables["runs"]), sfx)
        cov_self = stats(pick(tables["self"]), sfx)[3]
        row.update({f"{route} n": n, f"{route} never": never, f"{route} median |err| %": med,
                    f"{route} cov runs": cov_runs, f"{route} cov self": cov_self})
    return row


def measure(quick: bool) -> pd.DataFrame:
    rows, headline = [], {}
    for data, targets in TARGETS.items():
        logs = load(data)
        for target, target_kwargs in targets[:1] if quick else targets:
            cache = FitCache()
            for label, family, correct in METHODS:
                t0 = time.perf_counter()
                tables = {cal: backtest_logs(logs, fractions=FRACTIONS, family=family, correct=correct,
                                             calibration=cal, cache=cache, **target_kwargs)
                          for cal in ("runs", "self")}
                for scope, pick in SCOPES.items():
                    rows.append(_row(tables, pick, data=data, target=target, method=label, observed=scope))
                if target == targets[0][0]:
                    headline.setdefault(label, []).append(tables)
                print(f"# {data} {target} {label}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    for label, parts in headline.items():  # the three data sets together, headline targets
        tables = {cal: pd.concat([p[cal] for p in parts], ignore_index=True) for cal in ("runs", "self")}
        for scope, pick in SCOPES.items():
            rows.append(_row(tables, pick, data="all three", target="headline", method=label, observed=scope))
    return pd.DataFrame(rows)


def markdown(frame: pd.DataFrame) -> str:
    def cell(v, pct=False):
        if isinstance(v, (int, np.integer)):
            return str(v)
        if isinstance(v, float):
            if np.isnan(v):
                return "–"
            if np.isinf(v):
                return "∞"
            return f"{100 * v:.0f} %" if pct else f"{v:.1f}"
        return str(v)
    cols = list(frame.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in frame.iterrows():
        lines.append("| " + " | ".join(cell(r[c], pct="cov" in c) for c in cols) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="headline targets only")
    args = parser.parse_args()
    frame = measure(args.quick)
    for scope, title in (("0.5", "Observing 50 % of the epochs"),
                         ("0.3-0.7", "Pooled over observed fractions 0.3, 0.4, 0.5, 0.6, 0.7")):
        print(f"\n### {title}\n")
        print(markdown(frame[frame["observed"] == scope].drop(columns="observed")))


if __name__ == "__main__":
    main()
