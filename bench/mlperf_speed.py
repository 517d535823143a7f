"""Plan 32 GPUs of the MLPerf Dell R750xa series from its 4-, 8- and 16-GPU runs (issue 11, measure 4).

The Dell ``R750xax4A100-PCIE-80GB`` submissions of MLPerf Training v3.0 (1, 2, 4 and 8 nodes of
4 A100 PCIe, two seeds each; data/mlperf_v3.0_resnet50) log their throughput. The speed
table is one row per run (GPUs, nodes, global batch, median logged throughput); both speed
families are fitted to the 4-, 8- and 16-GPU runs (``core.speed.fit_speed``, auto keeps the
smaller leave-one-out error), the steps to 75.9 % come from the batch-scaling model of the
same runs, and the plan for 32 GPUs at their global batch (3,264) is compared with the two
measured 32-GPU runs: throughput, and time from run_start to the evaluation that passed the
target. Usage: ``python bench/mlperf_speed.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.batch import batch_study
from core.datasets import DATA_DIR
from core.logs import read_log_file
from core.runs import find_target_crossing
from core.speed import fit_speed, speed_table_from_logs
from core.targets import accuracy_target

SERIES = ("R750xax4A100-PCIE-80GB", "2xR750xax4A100-PCIE-80GB", "4xR750xax4A100-PCIE-80GB",
          "8xR750xax4A100-PCIE-80GB")
TARGET = accuracy_target(0.759)


def main() -> None:
    logs = [read_log_file(DATA_DIR / "mlperf_v3.0_resnet50" / "Dell" / s / f"result_{i}.txt")
            for s in SERIES for i in (0, 1)]
    train = [log for log in logs if log.meta.n_devices < 32]
    held = [log for log in logs if log.meta.n_devices == 32]
    table, skipped = speed_table_from_logs(train)
    print("speed table (4, 8, 16 GPUs):")
    print(table.to_string(index=False))
    study = batch_study(train, target=TARGET)
    batch = held[0].meta.global_batch
    steps = float(study.model.steps(batch))
    print(f"\nsteps to {TARGET.value} at M = {batch:,}: {steps:,.0f} ({study.model.summary()})")
    measured_thr = [log.meta.throughput for log in held]
    measured_t = [find_target_crossing(log, TARGET).step for log in held]
    measured_s = [float(log.frame.loc[log.frame["global_step"] == s, "time_s"].iloc[0])
                  for log, s in zip(held, measured_t)]
    print(f"measured at 32 GPUs: throughput {', '.join(f'{t:,.0f}' for t in measured_thr)} samples/s; "
          f"time from run_start to the evaluation at target {', '.join(f'{t:,.0f}' for t in measured_s)} s")
    fit = fit_speed(table, family="auto", mode="allreduce", global_batch=batch, gpus_per_node=4,
                    source="R750xa 4-16 GPUs")
    print("\n| speed model | fit MAPE | LOO MAPE | planned throughput at 32 GPUs | vs measured | planned time "
          "(band) | vs measured time to target |")
    print("|---|---|---|---|---|---|---|")
    mean_thr = sum(measured_thr) / len(measured_thr)
    mean_t = sum(measured_s) / len(measured_s)
    for model in fit.models:
        f = float(model.steps_per_s_at(0, 32, batch))
        time_s = steps / f
        lo, hi = model.time_band or (None, None)
        band = "" if lo is None else f" ({time_s * lo:,.0f} to {time_s * hi:,.0f})"
        chosen = " (auto's choice)" if model.family == fit.chosen else ""
        print(f"| {model.family}{chosen} | {model.mape_pct:.2f} % | {model.loo_mape_pct:.2f} % | "
              f"{f * batch:,.0f} samples/s | {f * batch / mean_thr - 1:+.1%} | {time_s:,.0f} s{band} | "
              f"{time_s / mean_t - 1:+.1%} |")
    print("\nThe plan counts training steps only; the measured time also holds the evaluations (every 4 "
          "epochs) and the time from run_start to the first step.")


if __name__ == "__main__":
    main()
