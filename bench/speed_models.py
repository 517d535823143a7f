"""Print the speed-model MAPE on every Pollux scalability.csv: Optimus, Pollux, auto (issue 11, measure 3).

For each of the six traces in data/pollux_traces/*/scalability.csv: the Optimus all-reduce
model (NNLS) and the planner's Pollux model (core.speed.pollux: Pollux's equations plus
a node term, fitted on the step time), each with its in-sample MAPE and its leave-one-out
MAPE (every point predicted by a fit without it), the family ``auto`` keeps, and, for
reference, Pollux's model exactly as petuum/adaptdl fits it (no node term; RMSE of log step
time plus RMSE of log compute time, ``step_time − sync_time``; one start; numeric
gradients), in-sample. Usage: ``python bench/speed_models.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import minimize

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.datasets import builtin_speed_tables
from core.speed import fit_speed


def adaptdl_exact_mape(table: pd.DataFrame) -> float:
    """petuum/adaptdl ``fit_perf_params`` (de25dcc) on a scalability.csv: MAPE of the speeds, in %."""
    n = table["num_nodes"].to_numpy(float)
    k = table["num_replicas"].to_numpy(float)
    m = table["local_bsz"].to_numpy(float)
    step = table["step_time"].to_numpy(float)
    compute = step - table["sync_time"].to_numpy(float)

    def predict(x):
        a_c, b_c, a_n, b_n, a_r, b_r, gamma = x
        t_c = a_c + b_c * m
        t_n = np.select([n > 1, k > 1], [a_n, a_r], 1e-8) + np.select([n > 1, k > 1], [b_n, b_r], 1e-8) \
            * np.maximum(k - 2, 1e-8)
        return t_c, np.log(t_c ** gamma + t_n ** gamma) / gamma

    def objective(x):
        t_c, log_t = predict(x)
        err = np.sqrt(np.mean((np.log(t_c) - np.log(compute)) ** 2)) + np.sqrt(np.mean((log_t - np.log(step)) ** 2))
        return err + 1e-3 * (x[6] - 1) ** 2 + 1e-2 * ((x[3] / x[2]) ** 2 + (x[5] / x[4]) ** 2)

    x0 = np.array([1e-1, 1e-2] * 3 + [1.0 + 1e-3])
    lower, upper = np.array([1e-8, 1e-8] * 3 + [1.0]), np.array([np.inf, np.inf] * 3 + [10.0])
    if not ((n == 1) & (k > 1)).any():          # no single-node multi-replica rows: α_r, β_r pinned
        x0[4:6] = lower[4:6]
        upper[4:6] = lower[4:6]
    with np.errstate(all="ignore"):
        res = minimize(objective, x0, method="L-BFGS-B", bounds=list(zip(lower, upper)))
    _, log_t = predict(res.x)
    return float(np.mean(np.abs(np.exp(-log_t) - 1 / step) * step) * 100)


def main() -> None:
    print("| trace | points | Optimus MAPE (LOO) | Pollux MAPE (LOO) | auto: chosen, LOO MAPE | "
          "Pollux as in adaptdl, MAPE |")
    print("|---|---|---|---|---|---|")
    worst = 0.0
    for name, path in builtin_speed_tables():
        raw = pd.read_csv(path)
        fit = fit_speed(raw, family="auto", source=name)
        rows = fit.table().set_index("family")
        o, p = rows.loc["optimus"], rows.loc["pollux"]
        worst = max(worst, fit.model.loo_mape_pct)
        print(f"| {name} | {int(o.n_points)} | {o.mape_pct:.2f} % ({o.loo_mape_pct:.2f} %) | "
              f"{p.mape_pct:.2f} % ({p.loo_mape_pct:.2f} %) | {fit.chosen}, {fit.model.loo_mape_pct:.2f} % | "
              f"{adaptdl_exact_mape(raw):.2f} % |")
    print(f"\nauto: largest leave-one-out MAPE over the six traces {worst:.2f} % (goal <= 10 %)")


if __name__ == "__main__":
    main()
