"""Fitting Pollux's throughput model to measured speeds: the data as arrays, Pollux's objective and
pinned parameters, L-BFGS-B from several starts, the leave-one-out refits, and the family's record
POLLUX_SPEED (registered in core.speed.registry).

The fit follows ``fit_perf_params``: it minimises the RMSE of log step time plus
Pollux's penalties ``1e-3·(γ − 1)² + 1e-2·((β_n/α_n)² + (β_r/α_r)² + (δ_n/α_n)²)`` by L-BFGS-B
from Pollux's start (α = 0.1, β = 0.01, γ = 1.001) and four scaled starts (the best is kept),
within Pollux's bounds (α, β, δ >= 1e-8; γ in [1, 10]).  Parameters the table cannot show
are pinned as Pollux pins them (``α_c`` to half the mean step time with a single local
batch; the inter-node terms without multi-node rows, the intra-node pair without
single-node multi-GPU rows; both β without ``K > 2``), and then set for planning: without
multi-node rows ``α_n >= 1.1·α_r``, ``β_n >= 1.1·β_r`` (Pollux's prior); without
single-node multi-GPU rows the intra-node pair is taken equal to the inter-node one (our
choice, flagged: conservative, where Pollux would plan a free all-reduce).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import minimize

from core.errors import FitError, InputError
from core.speed.family import SpeedFamily
from core.speed.pollux import (
    A_C,
    A_N,
    A_R,
    B_C,
    B_N,
    B_R,
    D_N,
    FORMULA,
    FORMULA_LATEX,
    GAMMA,
    N_PARAMS,
    NODE_NAMES,
    PolluxSpeedModel,
    network_time,
    pollux_step_time,
)
from core.speed.table import normalise_speed_table

_START = (0.1, 0.01, 0.1, 0.01, 0.01, 0.1, 0.01, 1.001)
_LOWER = (1e-8,) * 7 + (1.0,)
_UPPER = (np.inf,) * 7 + (10.0,)
#: the starts tried: Pollux's own, then its times scaled down and γ raised (the objective has local minima)
_STARTS = tuple((*(v * 10 ** (-k / 2) for v in _START[:7]), 1.001 + k) for k in range(5))


@dataclass(frozen=True)
class PolluxData:
    """A speed table in Pollux's terms: nodes, replicas, local batch, step time (seconds), global batch."""

    nodes: np.ndarray
    replicas: np.ndarray
    local_batch: np.ndarray
    step_time: np.ndarray
    global_batch: np.ndarray

    def subset(self, keep: np.ndarray) -> PolluxData:
        return PolluxData(*(v[keep] for v in dataclasses.astuple(self)))

    def __len__(self) -> int:
        return len(self.step_time)


def pollux_data(table: pd.DataFrame, *, global_batch: float | None = None, gpus_per_node: int | None = None,
                source: str = "table") -> tuple[PolluxData, list[str]]:
    """The table in Pollux's terms, and flags on what it lacks.

    Nodes come from a ``num_nodes`` (``nodes``) column, else ``ceil(w/gpus_per_node)``, else
    one GPU per node (flagged).

    Raises
    ------
    InputError
        Parameter servers in the table, or no global batch.
    """
    tab = normalise_speed_table(table, global_batch=global_batch, source=source)
    if (tab["p"] > 0).any():
        raise InputError(f"{source}: expected an all-reduce table (no parameter servers) for Pollux's model; got "
                         f"p >= 1 on {int((tab['p'] > 0).sum())} rows. Use the Optimus model (--model optimus).")
    if tab["global_batch"].isna().any():
        raise InputError(f"{source}: expected the global batch M of every row for Pollux's model; got none. Add a "
                         "global_batch or local_bsz column, or pass the batch (--batch M).")
    columns = {str(c).strip().lower(): c for c in table.columns}
    w = tab["w"].to_numpy(dtype=float)
    flags = []
    node_col = next((columns[n] for n in NODE_NAMES if n in columns), None)
    if node_col is not None:
        nodes = pd.to_numeric(table[node_col], errors="coerce").to_numpy(dtype=float)
        if not (np.isfinite(nodes).all() and (nodes >= 1).all()):
            raise InputError(f"{source}: expected {node_col} integers >= 1; got a missing or smaller value. "
                             "Fix or remove that row.")
    elif gpus_per_node:
        nodes = np.ceil(w / gpus_per_node)
    else:
        nodes = w.copy()
        flags.append("no node count in the table (and no GPUs per node given): one GPU per node assumed")
    m = tab["global_batch"].to_numpy(dtype=float)
    return PolluxData(nodes, w, m / w, 1.0 / tab["steps_per_s"].to_numpy(dtype=float), m), flags


def _objective(x: np.ndarray, d: PolluxData) -> tuple[float, np.ndarray]:
    """Pollux's loss (RMSE of log step time + penalties) and its gradient in ``x``."""
    gamma = x[GAMMA]
    extra_k = np.maximum(d.replicas - 2, 0.0)
    extra_n = np.maximum(d.nodes - 2, 0.0)
    inter, intra = d.nodes > 1, (d.nodes == 1) & (d.replicas > 1)
    t_c = x[A_C] + x[B_C] * d.local_batch
    t_n = network_time(x, d.nodes, d.replicas, one_replica=1e-8)
    u, v = t_c ** gamma, t_n ** gamma
    total = u + v
    resid = np.log(total) / gamma - np.log(d.step_time)
    n = len(resid)
    rmse = float(np.sqrt(np.mean(resid ** 2)))
    a_n, a_r = x[A_N], x[A_R]
    loss = rmse + 1e-3 * (gamma - 1) ** 2 + 1e-2 * ((x[B_N] / a_n) ** 2 + (x[B_R] / a_r) ** 2
                                                    + (x[D_N] / a_n) ** 2)
    w = resid / (n * rmse) if rmse > 0 else np.zeros_like(resid)      # d rmse / d resid
    d_tc = w * t_c ** (gamma - 1) / total                              # d rmse / d T_c per row
    d_tn = w * t_n ** (gamma - 1) / total
    d_gamma = w * (-np.log(total) / gamma ** 2 + (u * np.log(t_c) + v * np.log(t_n)) / (gamma * total))
    grad = np.array([
        d_tc.sum(), (d_tc * d.local_batch).sum(),
        d_tn[inter].sum(), (d_tn * extra_k)[inter].sum(), (d_tn * extra_n)[inter].sum(),
        d_tn[intra].sum(), (d_tn * extra_k)[intra].sum(),
        d_gamma.sum(),
    ])
    grad[GAMMA] += 2e-3 * (gamma - 1)
    grad[B_N] += 2e-2 * x[B_N] / a_n ** 2
    grad[D_N] += 2e-2 * x[D_N] / a_n ** 2
    grad[A_N] -= 2e-2 * (x[B_N] ** 2 + x[D_N] ** 2) / a_n ** 3
    grad[B_R] += 2e-2 * x[B_R] / a_r ** 2
    grad[A_R] -= 2e-2 * x[B_R] ** 2 / a_r ** 3
    return loss, grad


def _pins(d: PolluxData) -> tuple[dict[int, float], list[str]]:
    """Parameters the data cannot show, pinned as Pollux pins them (index -> value), and flags."""
    pins: dict[int, float] = {}
    flags = []
    if len(np.unique(d.local_batch)) == 1:
        pins[A_C] = float(np.mean(d.step_time)) / 2
        flags.append("one local batch only: α_c pinned to half the mean step time (Pollux's rule)")
    multi_node = bool((d.nodes > 1).any())
    if not multi_node:
        pins.update({A_N: 1e-8, B_N: 1e-8})
    if not (((d.nodes == 1) & (d.replicas > 1)).any()):
        pins.update({A_R: 1e-8, B_R: 1e-8})
    if not (d.replicas > 2).any():
        pins.update({B_N: 1e-8, B_R: 1e-8})
    if len(np.unique(d.nodes[d.nodes > 1])) < 3:
        pins[D_N] = 0.0
    return pins, flags


def _minimise(d: PolluxData, starts, pins: dict[int, float]) -> tuple[np.ndarray, float]:
    lower, upper = np.array(_LOWER), np.array(_UPPER)
    for i, v in pins.items():
        lower[i] = upper[i] = v
    free = [i for i in range(N_PARAMS) if i not in pins]
    best: tuple[np.ndarray, float] | None = None
    for start in starts:
        x0 = np.clip(np.array(start, dtype=float), lower, upper)

        def fun(z, x0=x0):
            x = x0.copy()
            x[free] = z
            loss, grad = _objective(x, d)
            return loss, grad[free]

        with np.errstate(all="ignore"):
            res = minimize(fun, x0[free], jac=True, method="L-BFGS-B", bounds=list(zip(lower[free], upper[free])))
        x = x0.copy()
        x[free] = res.x
        if np.all(np.isfinite(x)) and np.isfinite(res.fun) and (best is None or res.fun < best[1]):
            best = (x, float(res.fun))
    if best is None:
        raise FitError("Pollux speed fit: L-BFGS-B found no finite parameters. Check the table for outliers.")
    return best


def fit_pollux_params(d: PolluxData, *, starts=_STARTS) -> tuple[np.ndarray, list[str]]:
    """Pollux's fit on the data: the parameters ready to plan with, and flags."""
    pins, flags = _pins(d)
    x, _ = _minimise(d, starts, pins)
    multi_node = bool((d.nodes > 1).any())
    one_node_multi = bool(((d.nodes == 1) & (d.replicas > 1)).any())
    if not multi_node and one_node_multi:
        x[A_N], x[B_N] = max(x[A_N], 1.1 * x[A_R]), max(x[B_N], 1.1 * x[B_R])
        flags.append("no multi-node rows: α_n, β_n at least 1.1 × α_r, β_r (Pollux's prior)")
    if multi_node and not one_node_multi:
        x[A_R], x[B_R] = x[A_N], x[B_N]
        flags.append("no single-node multi-GPU rows: the intra-node all-reduce taken as the inter-node one "
                     "(conservative; Pollux would plan it free)")
    return x, flags


def pollux_speeds(x: np.ndarray, d: PolluxData) -> np.ndarray:
    """Predicted steps per second of every row of ``d``."""
    return 1.0 / np.asarray(pollux_step_time(x, d.nodes, d.replicas, d.local_batch), dtype=float)


def fit_pollux_speed(table: pd.DataFrame, *, global_batch: float | None = None, gpus_per_node: int | None = None,
                     source: str = "table") -> PolluxSpeedModel:
    """Fit Pollux's throughput model to a table of measured speeds.

    Parameters
    ----------
    table : DataFrame
        As for :func:`core.speed.optimus_fit.fit_speed_model` (a Pollux ``scalability.csv`` reads
        as is), all-reduce only.
    global_batch : float or None
        ``M`` for rows without one, and the planning batch; None keeps the table's M when
        it has exactly one.
    gpus_per_node : int or None
        For planning (and for tables without a node column): ``ceil(w/gpus_per_node)``
        nodes.  None: the most GPUs per node the table shows, else one.
    source : str

    Returns
    -------
    PolluxSpeedModel
        With ``mape_pct`` of the speeds and flags.

    Raises
    ------
    InputError
        Fewer than 3 points, parameter servers, no global batch.

    Examples
    --------
    Noise-free step times from known parameters are reproduced:

    >>> true = (0.02, 0.001, 0.03, 0.004, 0.0, 0.01, 0.002, 2.0)
    >>> rows = [(n, k, m) for n, k in ((1, 1), (1, 4), (2, 8), (4, 16)) for m in (32, 64, 128)]
    >>> t = [pollux_step_time(true, n, k, m) for n, k, m in rows]
    >>> tab = pd.DataFrame(rows, columns=["num_nodes", "num_replicas", "local_bsz"]).assign(step_time=t)
    >>> model = fit_pollux_speed(tab)
    >>> model.mape_pct < 1.0, model.gpus_per_node
    (True, 4)
    """
    d, flags = pollux_data(table, global_batch=global_batch, gpus_per_node=gpus_per_node, source=source)
    if len(d) < 3:
        raise InputError(f"{source}: expected at least 3 measured points for Pollux's model; got "
                         f"{len(d)}. Measure more (w, M) configurations.")
    x, more = fit_pollux_params(d)
    per_node = gpus_per_node
    if per_node is None and (d.replicas / d.nodes).max() > 1:
        per_node = int(np.ceil((d.replicas / d.nodes).max()))
    batches = sorted(set(d.global_batch))
    model_batch = global_batch if global_batch is not None else (batches[0] if len(batches) == 1 else None)
    meas = 1.0 / d.step_time
    mape = float(np.mean(np.abs(pollux_speeds(x, d) - meas) / meas) * 100)
    return PolluxSpeedModel(tuple(float(v) for v in x), global_batch=model_batch, gpus_per_node=per_node,
                            source=f"Pollux fit on {source} ({len(d)} points)", mape_pct=mape,
                            n_points=len(d), flags=tuple(flags + more))


def pollux_loo(table: pd.DataFrame, model: PolluxSpeedModel, *, mode: str = "allreduce",
               global_batch: float | None = None, gpus_per_node: int | None = None,
               source: str = "table") -> np.ndarray | None:
    """Leave-one-out predicted speeds, each refit started from the full fit's parameters (None under 4 points)."""
    d, _ = pollux_data(table, global_batch=global_batch, gpus_per_node=gpus_per_node, source=source)
    if len(d) <= 3:
        return None
    pred = np.empty(len(d))
    start = (model.params,)
    for i in range(len(d)):
        keep = np.arange(len(d)) != i
        x, _ = fit_pollux_params(d.subset(keep), starts=start)
        pred[i] = pollux_speeds(x, d.subset(~keep))[0]
    return pred


def _fit(table: pd.DataFrame, *, mode: str = "allreduce", global_batch: float | None = None,
         gpus_per_node: int | None = None, source: str = "table") -> PolluxSpeedModel:
    if mode != "allreduce":
        raise InputError(f"{source}: Pollux's model has no parameter servers; the table is fitted in "
                         f"mode {mode!r}.")
    return fit_pollux_speed(table, global_batch=global_batch, gpus_per_node=gpus_per_node, source=source)


#: Pollux's speed family, as registered (:mod:`core.speed.registry`)
POLLUX_SPEED = SpeedFamily(
    name="pollux", label="Pollux",
    description="Pollux (Qiao et al., OSDI 2021): compute linear in the local batch, overlapped all-reduce",
    formulas={"allreduce": FORMULA}, formulas_latex={"allreduce": FORMULA_LATEX}, fit=_fit, loo=pollux_loo)
