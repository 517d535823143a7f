"""Measurement 4 of issue 12: the MLPerf v3.0 ResNet-50 logs, prior × first half of the evaluations.

The 26 built-in MLLOG logs (``data/mlperf_v3.0_resnet50``: seeds 0 and 1 of 13 systems, read with
``core.logs.mllog``; one NVIDIA run was aborted and is not scored).  For every run that passed
75.9 %:

* observed: its first half of evaluations (``floor(k/2)`` of ``k``; evaluations come every 4
  epochs), cut by ``forecast_epoch_at_target(n_epochs_seen=...)``;
* prior: ``core.prediction.prior_for_run`` over the runs of the *other systems* (both seeds of
  the run's own system left out): the product's choice between the batch-scaling fit
  ``E(B) = E_min·(1 + B/B_noise)`` at the run's global batch and the log-mean of the others'
  epochs, by leave-one-run-out over those runs;  the batch-ignored log-mean is printed beside it;
* extrapolation: family auto, with the learning-rate schedule the log declares (``poly:END:POWER``
  from its LARS optimiser events, ``RunMeta.schedule``; the warm-up is not modelled);
* posterior: ``combine`` (precision weighting, conditioned on the observed epochs);
* actual: the epoch of the first evaluation above 0.759 (``core.runs.find_target_crossing``).

Prints the runs and the median |error| / 80 %-interval coverage of each prediction.

Usage: ``python bench/mlperf_prior.py [SET]`` (SET: ``mlperf``, the default, or ``mnist1d_batch``, the
built-in MNIST-1D ResNet-14 runs at seven batches with their set's target; 15 s on 2 cores; deterministic).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.datasets import BATCH_RUN_SETS, batch_run_files  # noqa: E402 (after the path set-up)
from core.logs import read_log_file  # noqa: E402
from core.prediction import FitCache, forecast_epoch_at_target, prior_for_run, prior_from_other_runs  # noqa: E402
from core.prediction.combined import posterior_cells, prior_cells  # noqa: E402
from core.runs import find_target_crossing  # noqa: E402
from core.targets import accuracy_target  # noqa: E402


def system_of(source: str, key: str) -> str:
    """The runs left out of a run's prior: both seeds of an MLPerf system (its folder); itself otherwise."""
    return source.rsplit("/", 1)[0] if key == "mlperf" else source


def main(key: str = "mlperf") -> None:
    t0 = time.perf_counter()
    target = BATCH_RUN_SETS[key].target_acc
    logs = [read_log_file(p, source=n) for n, p in batch_run_files(key)]
    crossing = {lg.source: find_target_crossing(lg, target) for lg in logs}
    cache, rows = FitCache(), []
    for log in logs:
        c = crossing[log.source]
        if not c.reached:
            continue
        others = [o for o in logs if system_of(o.source, key) != system_of(log.source, key)]
        evals = log.frame["epoch"].dropna().to_numpy()
        n = int(evals[len(evals) // 2 - 1])                           # the first half of the evaluations
        prior = prior_for_run(log, others, target=accuracy_target(target))
        done = [crossing[o.source].epoch - 0.5 for o in others if crossing[o.source].reached]
        flat = prior_from_other_runs(done)
        f = forecast_epoch_at_target(log, others, n_epochs_seen=n, target=accuracy_target(target), prior=prior,
                                     schedule="auto", cache=cache)
        p, post = f.prediction, f.posterior
        ext = p.epoch if p.status == "predicted" else None
        product = prior_cells(prior, c.epoch, True)
        batch_ignored = {k.replace("prior", "flat"): v for k, v in prior_cells(flat, c.epoch, True).items()}
        rows.append({"run": log.source, "batch": log.meta.global_batch, "observed": n, "actual": c.epoch,
                     **product, **batch_ignored,
                     "extrapolated": ext, "extrap_low": p.epoch_low if ext else None,
                     "extrap_high": p.epoch_high if ext else None, "extrap_status": p.status,
                     **posterior_cells(post, c.epoch, True), "schedule": f.schedule.spec() if f.schedule else ""})
    t = pd.DataFrame(rows)
    shown = ["run", "batch", "observed", "actual", "prior_source", "prior_epoch", "prior_low", "prior_high",
             "flat_epoch", "extrapolated", "extrap_status", "posterior_epoch", "posterior_low", "posterior_high",
             "schedule"]
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(t[shown].round(1).to_string(index=False))
    print(f"\nprior chosen: {t['prior_source'].value_counts().to_dict()}")
    print(f"\nWhole epochs (the epoch during which the run passes {target:g}), as core.prediction.backtest "
          "scores them.")
    print("\n| prediction | median abs error | mean abs error | 80 % coverage | answered |\n|---|---|---|---|---|")
    for what, mid, lo, hi in (("prior (product: batch-scaling fit or log-mean, by leave-one-run-out)",
                               "prior_epoch", "prior_low", "prior_high"),
                              ("log-mean of the other systems (batch ignored)", "flat_epoch", "flat_low",
                               "flat_high"),
                              ("extrapolation (first half of the evaluations)", "extrapolated", "extrap_low",
                               "extrap_high"),
                              ("posterior (product prior × extrapolation)", "posterior_epoch", "posterior_low",
                               "posterior_high")):
        ok = t[mid].notna()
        actual = t.loc[ok, "actual"].astype(float)
        err = 100 * (t.loc[ok, mid].astype(float) - actual) / actual
        cov = (t.loc[ok, lo].astype(float) <= actual) & (actual <= t.loc[ok, hi].astype(float))
        print(f"| {what} | {np.median(np.abs(err)):.1f} % | {np.mean(np.abs(err)):.1f} % | {100 * cov.mean():.0f} % "
              f"| {int(ok.sum())} of {len(t)} |" if ok.any() else f"| {what} | – | – | – | 0 of {len(t)} |")
    print(f"\n(measured in {time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main(*sys.argv[1:2])
