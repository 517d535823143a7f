"""Print the batch-scaling figures quoted in README.md and docs/scaling.md (issue 11, measures 1 and 2).

1. Pollux CIFAR-10 (target 0.93) and ImageNet (0.74): fit E(B) = E_min·(1 + B/B_noise) on the
   three smallest global batches, predict the samples to target at the others; error per batch
   and MAPE per job.
2. MLPerf Training v3.0 ResNet-50: fit on the runs with a global batch <= 16,384, predict the
   epochs to 75.9 % at the larger batches (20,480 and 32,256), against the epochs measured in
   the MLLOG logs of data/mlperf_v3.0_resnet50 in this run (the mean over the runs there that
   reached the target; the aborted run is left out).

Also the built-in MNIST-1D runs (all seven fitted), and, as a check the batch fit's design
never looked at (issue 23), the same runs fitted up to batch 256 and predicted at 512 and
1,024, with the extrapolation flag and whether the 80 % interval holds the run.
Usage: ``python bench/batch_scaling.py``.
Everything is computed from data/ in this run; nothing is timed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.batch import batch_study, fit_batch_scaling
from core.datasets import BATCH_RUN_SETS, batch_run_files
from core.logs import read_log_files
from core.targets import accuracy_target


def _runs(key: str, target: float):
    entry = BATCH_RUN_SETS[key]
    read = read_log_files([(n, p.read_bytes()) for n, p in batch_run_files(key)])
    study = batch_study(read.logs, target=accuracy_target(target), noise=read.noise,
                        samples_per_epoch=entry.samples_per_epoch)
    return study


def pollux(key: str, target: float) -> float:
    study = _runs(key, target)
    runs = sorted((r for r in study.runs if r.reached), key=lambda r: r.global_batch)
    model = fit_batch_scaling(runs[:3], samples_per_epoch=BATCH_RUN_SETS[key].samples_per_epoch)
    print(f"\n{BATCH_RUN_SETS[key].label}, target {target}: fit on batches "
          f"{', '.join(f'{r.global_batch:,.0f}' for r in runs[:3])}")
    print(f"  {model.summary()}")
    print("  | global batch | measured samples | predicted | 80 % interval | error |")
    errors = []
    for r in runs[3:]:
        pred = model.samples(r.global_batch)
        low, high = model.samples_interval(r.global_batch)
        err = pred / r.samples_to_target - 1
        errors.append(abs(err))
        print(f"  | {r.global_batch:,.0f} | {r.samples_to_target:,.0f} | {pred:,.0f} | {low:,.0f} to {high:,.0f} "
              f"| {err:+.1%} |")
    mape = 100 * float(np.mean(errors))
    print(f"  MAPE {mape:.1f} % on {len(errors)} batches (goal <= 15 %)")
    return mape


def mlperf() -> None:
    study = _runs("mlperf", 0.759)
    fit_on = [r for r in study.runs if r.global_batch <= 16384]
    model = fit_batch_scaling(fit_on)
    left = [f"{r.source} ({r.note})" for r in study.runs if not r.reached]
    print(f"\nMLPerf v3.0 ResNet-50, target 0.759: fit on {len(model.used)} runs with a global batch <= 16,384 "
          f"({', '.join(f'{b:,.0f}' for b in sorted({r.global_batch for r in model.used}))}); left out: "
          f"{'; '.join(left) or 'none'}")
    print(f"  {model.summary()}")
    print("  | global batch | measured epochs (runs) | predicted | 80 % interval | region | error |")
    for batch in sorted({r.global_batch for r in study.runs if r.reached and r.global_batch > 16384}):
        # measured here: epochs to 75.9 % of every run at this batch that reached it (MLLOG eval_accuracy, epoch_num)
        done = [r.epochs_to_target for r in study.runs if r.reached and r.global_batch == batch]
        measured = float(np.mean(done))
        pred = model.epochs(batch)
        low, high = (v / model.samples_per_epoch for v in model.samples_interval(batch))
        print(f"  | {batch:,.0f} | {measured:g} ({len(done)}) | {pred:.1f} | {low:.1f} to {high:.1f} | "
              f"{model.region(batch)} | {pred / measured - 1:+.1%} |")


def mnist1d() -> None:
    study = _runs("mnist1d_batch", 0.92)
    print(f"\n{BATCH_RUN_SETS['mnist1d_batch'].label}, target 0.92: {study.model.summary()}")
    for r in sorted(study.model.used, key=lambda r: r.global_batch):
        print(f"  batch {r.global_batch:>5,.0f}: {r.samples_to_target:>7,.0f} samples ({r.epochs_to_target:.2f} "
              f"epochs), model {study.model.samples(r.global_batch):,.0f}")


def mnist1d_held_out() -> None:
    """A check nothing was tuned on: fit the MNIST-1D runs up to batch 256, predict 512 and 1,024."""
    study = _runs("mnist1d_batch", 0.92)
    small = [r for r in study.runs if r.reached and r.global_batch <= 256]
    model = fit_batch_scaling(small)
    print(f"\nMNIST-1D, fit on batches 16 to 256 only: {model.summary()}")
    print("  | global batch | measured samples | predicted | 80 % interval | region | error | covered |")
    for r in sorted((r for r in study.runs if r.reached and r.global_batch > 256), key=lambda r: r.global_batch):
        pred = model.samples(r.global_batch)
        low, high = model.samples_interval(r.global_batch)
        print(f"  | {r.global_batch:,.0f} | {r.samples_to_target:,.0f} | {pred:,.0f} | {low:,.0f} to {high:,.0f} | "
              f"{model.region(r.global_batch)} | {pred / r.samples_to_target - 1:+.1%} | "
              f"{'yes' if low <= r.samples_to_target <= high else 'no'} |")


def main() -> None:
    pollux("pollux_cifar10", 0.93)
    pollux("pollux_imagenet", 0.74)
    mlperf()
    mnist1d()
    mnist1d_held_out()


if __name__ == "__main__":
    main()
