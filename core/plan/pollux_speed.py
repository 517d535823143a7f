"""Pollux's throughput model: step time from compute linear in the local batch and an overlapped all-reduce.

Pollux (Qiao et al., OSDI 2021), as coded in petuum/adaptdl ``adaptdl/goodput.py``
(commit de25dcc, the OSDI artifact): with ``N`` nodes, ``K`` replicas (GPUs, our ``w``) and
a local batch ``m = M/K`` per replica, one synchronous step takes

    T_c = α_c + β_c · m                                              compute of one local batch
    T_n = α_n + β_n · max(K − 2, 0) + δ_n · max(N − 2, 0)    if N > 1   inter-node all-reduce
        = α_r + β_r · max(K − 2, 0)                          if N = 1, K > 1   intra-node
        = 0                                                  if K = 1
    T   = (T_c^γ + T_n^γ)^(1/γ),   γ in [1, 10]          γ = 1: no overlap; γ → ∞: max(T_c, T_n)

and the speed is ``f = 1/T`` steps per second (throughput ``M/T`` samples per second).
No gradient accumulation is planned here (Pollux's ``accum_steps = 0``), and there are no
parameter servers (all-reduce only).

**Two departures from Pollux's code, both ours:** the node term ``δ_n·max(N − 2, 0)`` (the
synchronisation grows with the nodes as well as the replicas: on Pollux's own ncf trace the
median step time at equal replicas grows from 6 to 16 nodes; Pollux's ``T_n`` sees only
whether ``N > 1``), fitted only when the table has three or more node counts above one
(otherwise ``δ_n = 0``, Pollux's model exactly); and the fit targets the step time alone,
the quantity a plan uses, where Pollux also fits the compute time AdaptDL measures.
``bench/speed_models.py`` prints the MAPE of Pollux's exact model beside this one.

The fit otherwise follows ``fit_perf_params``: it minimises the RMSE of log step time plus
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
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import minimize

from core.errors import FitError, InputError
from core.plan.speed_family import FittedSpeed, SpeedFamily
from core.plan.speed_table import normalise_speed_table

PARAM_NAMES: tuple[str, ...] = ("alpha_c", "beta_c", "alpha_n", "beta_n", "delta_n", "alpha_r", "beta_r", "gamma")
FORMULA = ("T = (T_c^γ + T_n^γ)^(1/γ), T_c = α_c + β_c·M/w, T_n = α_n + β_n·(w − 2) + δ_n·(nodes − 2) "
           "(α_r + β_r·(w − 2) on one node)")
FORMULA_LATEX = (r"f = \frac{1}{\left(T_c^\gamma + T_n^\gamma\right)^{1/\gamma}},\ "
                 r"T_c = \alpha_c + \beta_c \frac{M}{w},\ T_n = \alpha_n + \beta_n (w - 2) + \delta_n (N - 2)")
NODE_NAMES = ("num_nodes", "nodes", "n_nodes")
_N_PARAMS = len(PARAM_NAMES)
_A_C, _B_C, _A_N, _B_N, _D_N, _A_R, _B_R, _GAMMA = range(_N_PARAMS)
_START = (0.1, 0.01, 0.1, 0.01, 0.01, 0.1, 0.01, 1.001)
_LOWER = (1e-8,) * 7 + (1.0,)
_UPPER = (np.inf,) * 7 + (10.0,)
#: the starts tried: Pollux's own, then its times scaled down and γ raised (the objective has local minima)
_STARTS = tuple((*(v * 10 ** (-k / 2) for v in _START[:7]), 1.001 + k) for k in range(5))


def _network(x, nodes, replicas, *, one_replica: float = 0.0):
    extra = np.maximum(replicas - 2, 0.0)
    inter = x[_A_N] + x[_B_N] * extra + x[_D_N] * np.maximum(nodes - 2, 0.0)
    intra = x[_A_R] + x[_B_R] * extra
    return np.where(nodes > 1, inter, np.where(replicas > 1, intra, one_replica))


def pollux_step_time(params, nodes, replicas, local_batch):
    """Seconds per step ``(T_c^γ + T_n^γ)^(1/γ)`` (the module's equations).

    Examples
    --------
    ``α_c = 0.05, β_c = 0.001`` at a local batch of 100: ``T_c = 0.15``; on 2 nodes with 6
    replicas ``T_n = 0.02 + 0.005·4 = 0.04``; with ``γ = 1`` they add up, with ``γ = 10``
    the step is about the larger one.

    >>> p = (0.05, 0.001, 0.02, 0.005, 0.0, 0.01, 0.002, 1.0)
    >>> round(pollux_step_time(p, 2, 6, 100), 9)
    0.19
    >>> round(pollux_step_time(p[:7] + (10.0,), 2, 6, 100), 4)
    0.15
    >>> round(pollux_step_time(p, 1, 1, 100), 9)     # one GPU: no all-reduce
    0.15
    """
    x = tuple(float(v) for v in params)
    n, k, m = (np.asarray(v, dtype=float) for v in np.broadcast_arrays(nodes, replicas, local_batch))
    gamma = x[_GAMMA]
    t_c = x[_A_C] + x[_B_C] * m
    t_n = _network(x, n, k)
    t = (t_c ** gamma + t_n ** gamma) ** (1.0 / gamma)
    return float(t) if t.ndim == 0 else t


@dataclass(frozen=True)
class PolluxSpeedModel(FittedSpeed):
    """Pollux's throughput model with fitted parameters, planning like an all-reduce ``SpeedModel``.

    Parameters
    ----------
    params : tuple of 8 float
        ``PARAM_NAMES`` order: ``alpha_c, beta_c, alpha_n, beta_n, delta_n, alpha_r, beta_r, gamma``.
    gpus_per_node : int or None
        GPUs per node when planning ``w`` workers: ``ceil(w / gpus_per_node)`` nodes; None
        plans one GPU per node (every ``w > 1`` across ``w`` nodes).
    global_batch, source, mape_pct, n_points, flags, loo_mape_pct, time_band, level :
        Keyword only, as on :class:`core.plan.speed_family.FittedSpeed` (``global_batch``: the
        ``M`` to plan with, ``with_global_batch``).
    """

    params: tuple[float, ...]
    gpus_per_node: int | None = None

    family = "pollux"
    mode = "allreduce"
    time_unit = "s"
    formula = FORMULA
    formula_latex = FORMULA_LATEX

    def __post_init__(self) -> None:
        try:
            params = tuple(float(v) for v in self.params)
        except (TypeError, ValueError):
            params = ()
        if len(params) != _N_PARAMS or not all(map(math.isfinite, params)) or min(params) < 0 \
                or params[_GAMMA] < 1:
            raise InputError(f"PolluxSpeedModel: expected {_N_PARAMS} finite parameters >= 0 "
                             f"({', '.join(PARAM_NAMES)}) with gamma >= 1; got {self.params!r}.")
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "flags", tuple(self.flags))

    @property
    def theta(self) -> tuple[float, ...]:
        """The parameters (named ``theta`` as on the Optimus model, for pages that list them)."""
        return self.params

    @property
    def theta_names(self) -> tuple[str, ...]:
        return PARAM_NAMES

    @property
    def named_params(self) -> dict[str, float]:
        return dict(zip(PARAM_NAMES, self.params))

    def nodes(self, w):
        """Nodes that ``w`` workers span: ``ceil(w / gpus_per_node)`` (``w`` when unknown)."""
        w = np.asarray(w, dtype=float)
        return w.copy() if self.gpus_per_node is None else np.ceil(w / self.gpus_per_node)

    def steps_per_s_at(self, p, w, global_batch):
        """Steps per second of ``w`` workers at global batch ``M`` (``p`` is ignored: no PS).

        >>> m = PolluxSpeedModel((0.05, 0.001, 0.02, 0.005, 0.0, 0.01, 0.002, 1.0), gpus_per_node=4)
        >>> round(1 / m.steps_per_s_at(0, 8, 800), 9)    # 2 nodes, 8 GPUs: 0.15 + 0.02 + 0.005·6
        0.2
        """
        w_arr = np.asarray(w, dtype=float)
        if not np.all(np.isfinite(w_arr)) or np.any(w_arr < 1):
            raise InputError(f"PolluxSpeedModel.steps_per_s: expected w >= 1 workers; got {w!r}. Count workers "
                             "from 1.")
        m = np.asarray(global_batch, dtype=float)
        shape = np.broadcast_shapes(np.shape(p), w_arr.shape, m.shape)
        w_b, m_b = np.broadcast_to(w_arr, shape), np.broadcast_to(m, shape)
        f = 1.0 / np.asarray(pollux_step_time(self.params, self.nodes(w_b), w_b, m_b / w_b), dtype=float)
        return float(f) if f.ndim == 0 else f

    def steps_per_s(self, p, w):
        """Steps per second at the model's ``global_batch``."""
        return self.steps_per_s_at(p, w, self._batch())

    def samples_per_s(self, p, w):
        out = self._batch() * np.asarray(self.steps_per_s(p, w))
        return float(out) if out.ndim == 0 else out

    def scaled(self, factor: float) -> PolluxSpeedModel:
        """Every time term times ``factor``; the p-norm is homogeneous of degree 1, so γ stays."""
        return dataclasses.replace(self, params=tuple(v * factor for v in self.params[:-1]) + (self.params[-1],))

    def _batch(self) -> float:
        if self.global_batch is None:
            raise InputError("PolluxSpeedModel: expected a global batch M; got None (the fit saw several). "
                             "Call model.with_global_batch(M) first.")
        return self.global_batch

    def to_dict(self) -> dict[str, Any]:
        """Plain Python types only."""
        return {"family": self.family, "mode": self.mode, "formula": self.formula, **self.named_params,
                "global_batch": self.global_batch, "gpus_per_node": self.gpus_per_node, "time_unit": "s",
                "source": self.source, "mape_pct": self.mape_pct, "loo_mape_pct": self.loo_mape_pct,
                "n_points": self.n_points, "time_band": list(self.time_band) if self.time_band else None,
                "level": self.level, "flags": list(self.flags)}

    def report(self) -> str:
        """Fixed sections as ``SpeedModel.report``."""
        nodes = "one GPU per node" if self.gpus_per_node is None else f"{self.gpus_per_node} GPUs per node"
        batch = "not set" if self.global_batch is None else f"{self.global_batch:g}"
        lines = ["[[Model]]", "    family: pollux (Qiao et al., OSDI 2021; node term ours)", "    mode: allreduce",
                 f"    {self.formula}", f"    global batch M: {batch}", f"    planning: {nodes}",
                 "    time unit: s", f"    source: {self.source or 'typed in'}", "[[Parameters]]"]
        lines += [f"    {k} = {v:.6g}" for k, v in self.named_params.items()]
        return "\n".join(lines + self.report_tail())


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
    gamma = x[_GAMMA]
    extra_k = np.maximum(d.replicas - 2, 0.0)
    extra_n = np.maximum(d.nodes - 2, 0.0)
    inter, intra = d.nodes > 1, (d.nodes == 1) & (d.replicas > 1)
    t_c = x[_A_C] + x[_B_C] * d.local_batch
    t_n = _network(x, d.nodes, d.replicas, one_replica=1e-8)
    u, v = t_c ** gamma, t_n ** gamma
    total = u + v
    resid = np.log(total) / gamma - np.log(d.step_time)
    n = len(resid)
    rmse = float(np.sqrt(np.mean(resid ** 2)))
    a_n, a_r = x[_A_N], x[_A_R]
    loss = rmse + 1e-3 * (gamma - 1) ** 2 + 1e-2 * ((x[_B_N] / a_n) ** 2 + (x[_B_R] / a_r) ** 2
                                                    + (x[_D_N] / a_n) ** 2)
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
    grad[_GAMMA] += 2e-3 * (gamma - 1)
    grad[_B_N] += 2e-2 * x[_B_N] / a_n ** 2
    grad[_D_N] += 2e-2 * x[_D_N] / a_n ** 2
    grad[_A_N] -= 2e-2 * (x[_B_N] ** 2 + x[_D_N] ** 2) / a_n ** 3
    grad[_B_R] += 2e-2 * x[_B_R] / a_r ** 2
    grad[_A_R] -= 2e-2 * x[_B_R] ** 2 / a_r ** 3
    return loss, grad


def _pins(d: PolluxData) -> tuple[dict[int, float], list[str]]:
    """Parameters the data cannot show, pinned as Pollux pins them (index -> value), and flags."""
    pins: dict[int, float] = {}
    flags = []
    if len(np.unique(d.local_batch)) == 1:
        pins[_A_C] = float(np.mean(d.step_time)) / 2
        flags.append("one local batch only: α_c pinned to half the mean step time (Pollux's rule)")
    multi_node = bool((d.nodes > 1).any())
    if not multi_node:
        pins.update({_A_N: 1e-8, _B_N: 1e-8})
    if not (((d.nodes == 1) & (d.replicas > 1)).any()):
        pins.update({_A_R: 1e-8, _B_R: 1e-8})
    if not (d.replicas > 2).any():
        pins.update({_B_N: 1e-8, _B_R: 1e-8})
    if len(np.unique(d.nodes[d.nodes > 1])) < 3:
        pins[_D_N] = 0.0
    return pins, flags


def _minimise(d: PolluxData, starts, pins: dict[int, float]) -> tuple[np.ndarray, float]:
    lower, upper = np.array(_LOWER), np.array(_UPPER)
    for i, v in pins.items():
        lower[i] = upper[i] = v
    free = [i for i in range(_N_PARAMS) if i not in pins]
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
        x[_A_N], x[_B_N] = max(x[_A_N], 1.1 * x[_A_R]), max(x[_B_N], 1.1 * x[_B_R])
        flags.append("no multi-node rows: α_n, β_n at least 1.1 × α_r, β_r (Pollux's prior)")
    if multi_node and not one_node_multi:
        x[_A_R], x[_B_R] = x[_A_N], x[_B_N]
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
        As for :func:`core.plan.speed.fit_speed_model` (a Pollux ``scalability.csv`` reads
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


#: Pollux's speed family, as registered (:mod:`core.plan.speed_registry`)
POLLUX_SPEED = SpeedFamily(
    name="pollux", label="Pollux",
    description="Pollux (Qiao et al., OSDI 2021): compute linear in the local batch, overlapped all-reduce",
    formulas={"allreduce": FORMULA}, formulas_latex={"allreduce": FORMULA_LATEX}, fit=_fit, loo=pollux_loo)
