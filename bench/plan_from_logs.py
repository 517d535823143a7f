"""``plan --from-logs`` against measured MLPerf times (issue 18, measure 5).

* Llama 3.1 8B on GB200 (MLPerf Training v5.1, NVIDIA tyche): 8, 72 and 512 GPUs; fit on two sizes, plan the
  third at its own global batch, compare with the measured time to train (``run_stop − run_start``).
* Llama 3.1 405B on H100 (v5.0, NVIDIA eos-dfw): 512, 2,048 and 8,192 GPUs (plus 2,432 and 2,560 where a
  leave-one-out has them), the same way.

``core.plan.plan_from_logs`` is what the CLI runs. Reads ``../shared/reference`` (a benchmark may).
Usage: ``python bench/plan_from_logs.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.logs import read_log_file
from core.plan import plan_from_logs

SHARED = Path(__file__).resolve().parents[2] / "shared" / "reference" / "mlperf_v5_llm"


def study(label: str, folders: list[Path]) -> None:
    logs = [read_log_file(p, source=str(p)) for f in folders for p in sorted(f.glob("result_*.txt"))]
    sizes = sorted({lg.meta.n_devices for lg in logs})
    print(f"\n{label}: GPU counts {sizes}")
    print("| planned | fitted on | global batch | planned time | measured (median of runs) | error |")
    print("|---|---|---|---|---|---|")
    errors = []
    for held in sizes:
        train = [lg for lg in logs if lg.meta.n_devices != held]
        test = [lg for lg in logs if lg.meta.n_devices == held]
        batch = test[0].meta.global_batch
        plan = plan_from_logs(train, [held], global_batch=batch)
        t = float(plan.table["time_s"].iloc[0])
        measured = float(np.median([lg.meta.run_time_s for lg in test]))
        errors.append(t / measured - 1)
        others = sorted({lg.meta.n_devices for lg in train})
        print(f"| {held:,} | {', '.join(f'{s:,}' for s in others)} | {batch:,} | {t / 60:.1f} min | "
              f"{measured / 60:.1f} min | {100 * errors[-1]:+.1f} % |")
    print(f"median |error| {100 * np.median(np.abs(errors)):.1f} %")


def main() -> None:
    root8 = SHARED / "mlperf_v5.1" / "llama31_8b"
    study("Llama 3.1 8B, GB200 (v5.1)", [root8 / f"NVIDIA__tyche_ngpu{n}_ngc25.09_nemo" for n in (8, 72, 512)])
    root405 = SHARED / "mlperf_v5.0" / "llama31_405b"
    study("Llama 3.1 405B, H100 (v5.0)", [root405 / f"NVIDIA__eos-dfw_n{n}_ngc25.01_nemo" for n in (64, 256, 1024)])


if __name__ == "__main__":
    main()
