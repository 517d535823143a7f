"""Step time against the per-GPU batch, fitted to the measured configurations of training logs.

Each log of a language-model benchmark (MLPerf, a speedrun) is one measured configuration: ``w`` GPUs, a
global batch ``M`` and seconds per step ``t``.  Across sizes the batch changes with the GPUs, and a step's
time is mostly a function of the work each GPU does, ``m = M/w`` samples per GPU (below one where tensor,
context or pipeline parallelism splits a sample).  Three families model it, each a registered speed family
(:mod:`core.speed.registry`):

* ``overhead``: ``t = θ0·m + θ1`` (Amdahl: compute proportional to the per-GPU batch plus a fixed cost per step;
  NNLS).  It over-predicts where sharding also shrinks the fixed cost (the optimiser step and the gradient
  all-reduce of a GPU's shard), which is what happens as tensor and pipeline parallelism grow.
* ``elastic``: ``t = θ0·m^θ1`` (constant elasticity: a straight line in log-log, ``0 <= θ1 <= 1``).  It
  under-predicts away from the fitted range where a part of the step does not shrink at all.
* ``bracket``: the geometric mean of the two, the middle of the bracket they span in ``ln t``; its band is the
  bracket itself (each side's prediction), widened to the leave-one-size-out misses when they are larger.

With one configuration every family is perfect scaling ``t ∝ m`` (flagged); with two the fits are exact.
The Optimus all-reduce row (``θ0·M/w + θ1 + θ3·w``, :mod:`core.speed.optimus`) and the transformer model
(:mod:`core.speed.transformer`) are the other candidates a plan from logs considers
(:func:`core.plan.from_logs.choose_log_speed`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy.optimize import nnls

from core.errors import InputError
from core.speed.family import FittedSpeed, SpeedFamily
from core.speed.table import normalise_speed_table

#: the families of this module, by name: their formula as text and in LaTeX
FORMULAS: dict[str, tuple[str, str]] = {
    "overhead": ("t = θ0·M/w + θ1", r"t = \theta_0 \frac{M}{w} + \theta_1"),
    "elastic": ("t = θ0·(M/w)^θ1", r"t = \theta_0 \left(\frac{M}{w}\right)^{\theta_1}"),
    "bracket": ("t = √(t_overhead · t_elastic)", r"t = \sqrt{t_{\mathrm{overhead}}\, t_{\mathrm{elastic}}}"),
}


def _per_gpu(table: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per-GPU batch ``M/w`` and seconds per step of a normalised speed table, one row per distinct ``m``."""
    m = table["global_batch"].to_numpy(dtype=float) / table["w"].to_numpy(dtype=float)
    t = 1.0 / table["steps_per_s"].to_numpy(dtype=float)
    frame = pd.DataFrame({"m": m, "t": t}).groupby("m", as_index=False)["t"].median()
    return frame["m"].to_numpy(dtype=float), frame["t"].to_numpy(dtype=float)


def fit_overhead(m: np.ndarray, t: np.ndarray) -> tuple[float, float]:
    """``(θ0, θ1)`` of ``t = θ0·m + θ1`` by NNLS on relative misses (``θ1 = 0`` with one point).

    >>> [round(v, 6) for v in fit_overhead(np.array([2.0, 0.5]), np.array([0.405, 0.17]))]   # 1.5·θ0 = 0.235
    [0.156667, 0.091667]
    """
    if m.size == 1:
        return float(t[0] / m[0]), 0.0
    a = np.column_stack([m, np.ones_like(m)]) / t[:, None]
    coef, _ = nnls(a, np.ones_like(t))
    return float(coef[0]), float(coef[1])


def fit_elastic(m: np.ndarray, t: np.ndarray) -> tuple[float, float]:
    """``(θ0, θ1)`` of ``ln t = ln θ0 + θ1·ln m`` by least squares, ``θ1`` kept in [0, 1] (1 with one point).

    >>> [round(v, 4) for v in fit_elastic(np.array([2.0, 0.5]), np.array([0.405, 0.17]))]
    [0.2624, 0.6262]
    """
    x, y = np.log(m), np.log(t)
    if m.size == 1 or np.ptp(x) == 0:
        return float(np.exp(np.mean(y - x))), 1.0
    slope = float(np.clip(np.polyfit(x, y, 1)[0], 0.0, 1.0))
    return float(np.exp(np.mean(y - slope * x))), slope


@dataclass(frozen=True, kw_only=True)
class PerGpuBatchSpeed(FittedSpeed):
    """Step time as a function of the per-GPU batch ``M/w`` (module text); ``theta`` holds both fits' parameters.

    Parameters
    ----------
    overhead : (float, float)
        ``(θ0, θ1)`` of the overhead form.
    elastic : (float, float)
        ``(θ0, θ1)`` of the elastic form.
    factor : float, default=1.0
        Every step time multiplied by it (``scaled``).
    """

    overhead: tuple[float, float]
    elastic: tuple[float, float]
    factor: float = 1.0

    family: ClassVar[str] = "bracket"
    mode: ClassVar[str] = "allreduce"
    time_unit: ClassVar[str] = "s"

    def __post_init__(self) -> None:
        object.__setattr__(self, "flags", tuple(self.flags))

    @property
    def kind(self) -> str:
        """The family's name: which of the forms (or their bracket) this model answers with."""
        return self.family

    @property
    def formula(self) -> str:
        return FORMULAS[self.kind][0]

    @property
    def formula_latex(self) -> str:
        return FORMULAS[self.kind][1]

    @property
    def named_params(self) -> dict[str, float]:
        both = {"overhead_theta0": self.overhead[0], "overhead_theta1": self.overhead[1],
                "elastic_theta0": self.elastic[0], "elastic_theta1": self.elastic[1]}
        if self.kind == "bracket":
            return both
        return {k.split("_", 1)[1]: v for k, v in both.items() if k.startswith(self.kind)}

    @property
    def theta(self) -> tuple[float, ...]:
        return tuple(self.named_params.values())

    def sides(self, w, global_batch) -> tuple[np.ndarray, np.ndarray]:
        """The overhead and the elastic forms' step times at ``(w, M)`` (the bracket's two ends)."""
        m = np.asarray(global_batch, dtype=float) / np.asarray(w, dtype=float)
        t_over = self.overhead[0] * m + self.overhead[1]
        t_el = self.elastic[0] * np.power(m, self.elastic[1])
        return self.factor * t_over, self.factor * t_el

    def step_time_at(self, w, global_batch):
        """Seconds per step of ``w`` GPUs at global batch ``M``.

        >>> models = [cls(overhead=(0.2, 0.05), elastic=(0.25, 0.5)) for cls in MODEL_CLASSES.values()]
        >>> [round(float(s.step_time_at(8, 8)), 4) for s in models]
        [0.25, 0.25, 0.25]
        >>> [round(float(s.step_time_at(16, 4)), 4) for s in models]
        [0.1, 0.125, 0.1118]
        """
        w_arr = np.asarray(w, dtype=float)
        if not np.all(np.isfinite(w_arr)) or np.any(w_arr < 1):
            raise InputError(f"{self.kind} step time: expected w >= 1 GPUs; got {w!r}.")
        over, el = self.sides(w_arr, global_batch)
        t = {"overhead": over, "elastic": el, "bracket": np.sqrt(over * el)}[self.kind]
        return float(t) if np.ndim(t) == 0 else t

    def steps_per_s_at(self, p, w, global_batch):
        t = np.asarray(self.step_time_at(w, global_batch), dtype=float)
        shape = np.broadcast_shapes(np.shape(p), t.shape)
        f = 1.0 / np.broadcast_to(t, shape)
        return float(f) if f.ndim == 0 else f

    def steps_per_s(self, p, w):
        if self.global_batch is None:
            raise InputError(f"{self.kind} step time: expected a global batch M; got None. Call "
                             "model.with_global_batch(M) first.")
        return self.steps_per_s_at(p, w, self.global_batch)

    def samples_per_s(self, p, w):
        out = float(self.global_batch or 0.0) * np.asarray(self.steps_per_s(p, w))
        return float(out) if out.ndim == 0 else out

    def scaled(self, factor: float) -> PerGpuBatchSpeed:
        return dataclasses.replace(self, factor=self.factor * float(factor))

    def to_dict(self) -> dict[str, Any]:
        return {"family": self.family, "mode": self.mode, "formula": self.formula, **self.named_params,
                "factor": self.factor, "global_batch": self.global_batch, "time_unit": "s", "source": self.source,
                "n_points": self.n_points, "flags": list(self.flags)}

    def report(self) -> str:
        lines = ["[[Model]]", f"    {self.family}: {self.formula} (seconds per step; M/w = per-GPU batch)",
                 "[[Parameters]]"] + [f"    {k}: {v:.6g}" for k, v in self.named_params.items()]
        return "\n".join(lines + self.report_tail())


@dataclass(frozen=True, kw_only=True)
class OverheadSpeed(PerGpuBatchSpeed):
    """``overhead``: ``t = θ0·M/w + θ1``."""

    family: ClassVar[str] = "overhead"


@dataclass(frozen=True, kw_only=True)
class ElasticSpeed(PerGpuBatchSpeed):
    """``elastic``: ``t = θ0·(M/w)^θ1``."""

    family: ClassVar[str] = "elastic"


#: one model class per family, so that ``model.family`` names it
MODEL_CLASSES: dict[str, type[PerGpuBatchSpeed]] = {"overhead": OverheadSpeed, "elastic": ElasticSpeed,
                                                    "bracket": PerGpuBatchSpeed}


def fit_per_gpu_batch(table: pd.DataFrame, *, kind: str, mode: str = "allreduce", global_batch: float | None = None,
                      gpus_per_node: int | None = None, source: str = "table") -> PerGpuBatchSpeed:
    """Fit both forms to a speed table and answer as ``kind`` (the ``fit`` of each family of this module).

    >>> tab = pd.DataFrame({"w": [8, 72], "global_batch": [16.0, 36.0], "step_time_s": [0.405, 0.17]})
    >>> m = fit_per_gpu_batch(tab, kind="bracket")
    >>> m.family, round(float(m.step_time_at(512, 64)), 4)
    ('bracket', 0.0891)
    """
    if mode != "allreduce":
        raise InputError(f"{kind}: expected an all-reduce table (no parameter servers); got mode {mode!r}.")
    tab = normalise_speed_table(table, global_batch=global_batch, source=source)
    if tab["global_batch"].isna().any():
        raise InputError(f"{source}: expected the global batch of every row for the {kind} step-time model; got "
                         "rows without one.")
    m, t = _per_gpu(tab)
    flags = () if m.size > 1 else ("one per-GPU batch measured: perfect scaling assumed (t ∝ M/w)",)
    cls = MODEL_CLASSES[kind]
    model = cls(overhead=fit_overhead(m, t), elastic=fit_elastic(m, t), global_batch=global_batch,
                source=f"fitted to {m.size} per-GPU batch(es) of {source}", n_points=int(len(tab)), flags=flags)
    pred = 1.0 / np.asarray(model.steps_per_s_at(0, tab["w"], tab["global_batch"]), dtype=float)
    meas = 1.0 / tab["steps_per_s"].to_numpy(dtype=float)
    return dataclasses.replace(model, mape_pct=float(100 * np.mean(np.abs(pred / meas - 1))))


def loo_per_gpu_batch(table: pd.DataFrame, model: PerGpuBatchSpeed, *, mode: str = "allreduce",
                      global_batch: float | None = None, gpus_per_node: int | None = None,
                      source: str = "table") -> np.ndarray | None:
    """Each row's speed predicted by a fit without its per-GPU batch (None with fewer than three)."""
    tab = normalise_speed_table(table, global_batch=global_batch, source=source)
    m_all = tab["global_batch"].to_numpy(dtype=float) / tab["w"].to_numpy(dtype=float)
    if np.unique(m_all).size < 3:
        return None
    out = np.empty(len(tab))
    for value in np.unique(m_all):
        held = m_all == value
        refit = fit_per_gpu_batch(tab[~held], kind=model.kind, global_batch=global_batch, source=source)
        out[held] = refit.steps_per_s_at(0, tab["w"][held], tab["global_batch"][held])
    return out


def _family(name: str, label: str, description: str) -> SpeedFamily:
    def fit(table, **options):
        return fit_per_gpu_batch(table, kind=name, **options)

    return SpeedFamily(name, label, description, {"allreduce": FORMULAS[name][0]},
                       {"allreduce": FORMULAS[name][1]}, fit, loo_per_gpu_batch, in_auto=False)


OVERHEAD_SPEED = _family("overhead", "Fixed overhead (Amdahl)",
                         "step time linear in the per-GPU batch plus a fixed cost per step (NNLS)")
ELASTIC_SPEED = _family("elastic", "Constant elasticity",
                        "step time a power of the per-GPU batch (a line in log-log)")
BRACKET_SPEED = _family("bracket", "Bracket (overhead × elastic)",
                        "the geometric mean of the fixed-overhead and the constant-elasticity fits; its band spans "
                        "both")

#: this module's families, for the registry
LOG_SPEED_FAMILIES: tuple[SpeedFamily, ...] = (OVERHEAD_SPEED, ELASTIC_SPEED, BRACKET_SPEED)


def bracket_band(model: PerGpuBatchSpeed, w, global_batch) -> tuple[float, float]:
    """Factors on the bracket's step time that reach each side of the bracket at ``(w, M)`` (low <= 1 <= high).

    >>> s = MODEL_CLASSES["bracket"](overhead=(0.2, 0.05), elastic=(0.25, 0.5))
    >>> [round(v, 4) for v in bracket_band(s, 16, 4)]
    [0.8944, 1.118]
    """
    over, el = (float(v) for v in model.sides(w, global_batch))
    mid = math.sqrt(over * el)
    return min(over, el) / mid, max(over, el) / mid
