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

The fit (:mod:`core.speed.pollux_fit`) follows Pollux's ``fit_perf_params``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.errors import InputError
from core.speed.family import FittedSpeed

PARAM_NAMES: tuple[str, ...] = ("alpha_c", "beta_c", "alpha_n", "beta_n", "delta_n", "alpha_r", "beta_r", "gamma")
FORMULA = ("T = (T_c^γ + T_n^γ)^(1/γ), T_c = α_c + β_c·M/w, T_n = α_n + β_n·(w − 2) + δ_n·(nodes − 2) "
           "(α_r + β_r·(w − 2) on one node)")
FORMULA_LATEX = (r"f = \frac{1}{\left(T_c^\gamma + T_n^\gamma\right)^{1/\gamma}},\ "
                 r"T_c = \alpha_c + \beta_c \frac{M}{w},\ T_n = \alpha_n + \beta_n (w - 2) + \delta_n (N - 2)")
NODE_NAMES = ("num_nodes", "nodes", "n_nodes")
N_PARAMS = len(PARAM_NAMES)
#: the index of each parameter in :data:`PARAM_NAMES`
A_C, B_C, A_N, B_N, D_N, A_R, B_R, GAMMA = range(N_PARAMS)


def network_time(x, nodes, replicas, *, one_replica: float = 0.0):
    """``T_n``: inter-node all-reduce time on several nodes, intra-node on one, ``one_replica`` alone."""
    extra = np.maximum(replicas - 2, 0.0)
    inter = x[A_N] + x[B_N] * extra + x[D_N] * np.maximum(nodes - 2, 0.0)
    intra = x[A_R] + x[B_R] * extra
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
    gamma = x[GAMMA]
    t_c = x[A_C] + x[B_C] * m
    t_n = network_time(x, n, k)
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
        Keyword only, as on :class:`core.speed.family.FittedSpeed` (``global_batch``: the
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
        if len(params) != N_PARAMS or not all(map(math.isfinite, params)) or min(params) < 0 \
                or params[GAMMA] < 1:
            raise InputError(f"PolluxSpeedModel: expected {N_PARAMS} finite parameters >= 0 "
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
