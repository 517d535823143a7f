"""Time to target when the global batch follows the workers: scaling rules, goodput, the best (w, M).

With a batch-scaling model (:mod:`core.batch`: steps to target ``S(M)``) and a speed
model that takes the batch (``f(p, w, M)``: Optimus's Eq. 4 has ``θ0·M/w``; Pollux's compute
time is linear in the local batch ``M/w``), the time to target of ``w`` workers and ``p``
parameter servers is

    T(p, w) = S(M(w)) / f(p, w, M(w))        seconds (steps ÷ steps per second)

under a **scaling rule** for ``M(w)``:

* ``fixed``: one global batch ``M`` for every ``w`` (strong scaling; each worker does
  ``M/w``): the steps stay ``S(M)``, only the speed changes, as on the plain plan;
* ``per-worker``: a fixed per-worker batch ``m``, ``M = w·m`` (weak scaling, what teams
  usually do): more workers, a larger batch, more samples to target;
* ``best``: for each ``(p, w)`` the global batch ``M = w·m`` (integer ``m``) within
  ``[batch_min, batch_max]`` with the shortest time, which is the largest **goodput**
  (throughput × statistical efficiency, Pollux's objective: ``T = E_min / goodput``).

Intervals carry both fits: the steps' interval of the batch model (``S_low, S_high``) and
the speed model's time band (leave-one-out misses, :mod:`core.speed.select`), their
half-widths added in quadrature in log space (the two errors taken as independent).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.batch import BatchScaling, anchored_batch_scaling
from core.defaults import SECONDS_PER_HOUR
from core.errors import InputError
from core.plan.grid import DEFAULT_MAX_WORKERS, DEFAULT_PS, configuration_cost, plan_grid, with_time_and_cost
from core.plan.steps import StepsEstimate
from core.validation import check_option, check_scalar

#: the scaling rules, for pages and ``--help``
SCALING_RULES: dict[str, str] = {
    "fixed": "fixed global batch M: every w splits the same M (steps stay S(M))",
    "per-worker": "fixed per-worker batch m: M = w·m grows with the workers, and so do the samples to target",
    "best": "for each w the global batch with the largest goodput (shortest time) within the bounds",
}
TIME_RULE_LATEX = r"T(p, w) = \frac{S\big(M(w)\big)}{f\big(p, w, M(w)\big)}"
#: candidate per-worker batches tried per w by the "best" rule (geometrically spaced, as Pollux's 50)
BEST_CANDIDATES = 64
BATCH_GRID_COLUMNS: tuple[str, ...] = (
    "mode", "p", "w", "global_batch", "steps", "steps_per_s", "samples_per_s", "efficiency", "goodput",
    "time_s", "time_h", "cost", "time_unit",
)


@dataclass(frozen=True)
class ScalingRule:
    """How the global batch ``M`` follows the number of workers ``w`` (``SCALING_RULES``).

    Examples
    --------
    >>> ScalingRule("per-worker", per_worker_batch=64).batches([1, 4]).tolist()
    [64.0, 256.0]
    >>> ScalingRule("fixed", global_batch=512).label
    'fixed global batch M = 512'
    >>> ScalingRule("best", batch_min=64, batch_max=4096).label
    'best M per w in [64, 4,096]'
    """

    rule: str
    global_batch: float | None = None
    per_worker_batch: float | None = None
    batch_min: float | None = None
    batch_max: float | None = None

    def __post_init__(self) -> None:
        check_option(self.rule, "scaling rule", SCALING_RULES)
        need = {"fixed": ("global_batch",), "per-worker": ("per_worker_batch",),
                "best": ("batch_min", "batch_max")}[self.rule]
        for name in need:
            check_scalar(getattr(self, name), f"scaling rule {self.rule!r}: {name}", float, min_val=0,
                         include_boundaries="neither", fix="Give samples per step")
        if self.rule == "best" and self.batch_min > self.batch_max:
            raise InputError(f"scaling rule 'best': expected batch_min <= batch_max; got {self.batch_min:g} > "
                             f"{self.batch_max:g}. Swap the bounds.")

    @property
    def label(self) -> str:
        """A short description for chart titles (fixed text for a given rule and values)."""
        if self.rule == "fixed":
            return f"fixed global batch M = {self.global_batch:,.0f}"
        if self.rule == "per-worker":
            return f"per-worker batch m = {self.per_worker_batch:,.0f} (M = w·m)"
        return f"best M per w in [{self.batch_min:,.0f}, {self.batch_max:,.0f}]"

    def batches(self, workers) -> np.ndarray:
        """``M(w)`` of the fixed rules (the "best" rule has no formula: see :func:`batch_plan_grid`)."""
        w = np.asarray(workers, dtype=float)
        if self.rule == "fixed":
            return np.full(w.shape, float(self.global_batch))
        if self.rule == "per-worker":
            return w * float(self.per_worker_batch)
        raise InputError("scaling rule 'best': the batch depends on the speed model; use batch_plan_grid.")


def _counts(values, name: str, minimum: int) -> np.ndarray:
    try:
        out = np.array(sorted({int(v) for v in values}))
        exact = all(float(v) == int(v) for v in values)
    except (TypeError, ValueError):
        out, exact = np.array([], dtype=int), False
    if out.size == 0 or not exact or out[0] < minimum:
        raise InputError(f"batch_plan_grid: expected {name} as integers >= {minimum}; got {values!r}.")
    return out


def _candidates(rule: ScalingRule, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(worker, global batch) pairs to evaluate: one per w for the fixed rules, a range for "best"."""
    if rule.rule != "best":
        return w.astype(float), rule.batches(w)
    ws, ms = [], []
    for k in w:
        lo, hi = max(1, math.ceil(rule.batch_min / k)), math.floor(rule.batch_max / k)
        if hi < lo:
            continue
        m = np.unique(np.round(np.geomspace(lo, hi, BEST_CANDIDATES)))
        ws.append(np.full(m.size, float(k)))
        ms.append(k * m)
    if not ws:
        raise InputError(f"scaling rule 'best': expected some w with at least one sample per worker within "
                         f"[{rule.batch_min:g}, {rule.batch_max:g}]; got none. Raise batch_max or plan fewer workers.")
    return np.concatenate(ws), np.concatenate(ms)


def _band(steps: np.ndarray, batch: BatchScaling, m: np.ndarray, time_band) -> tuple[np.ndarray, np.ndarray] | None:
    """Factors (low, high) on the time from the steps interval and the speed band, in quadrature of logs."""
    steps_band = batch.steps_interval(m)
    if steps_band is None and time_band is None:
        return None
    lo2 = np.zeros_like(steps)
    hi2 = np.zeros_like(steps)
    if steps_band is not None:
        low, high = (np.asarray(v, dtype=float) for v in steps_band)
        with np.errstate(divide="ignore"):
            lo2 += np.log(steps / np.maximum(low, 1e-300)) ** 2
        hi2 += np.log(high / steps) ** 2
    if time_band is not None:
        lo2 += math.log(min(time_band[0], 1.0)) ** 2
        hi2 += math.log(max(time_band[1], 1.0)) ** 2
    return np.exp(-np.sqrt(lo2)), np.exp(np.sqrt(hi2))


def batch_plan_grid(speed, batch: BatchScaling, rule: ScalingRule, *, ps: Sequence[int] | None = None,
                    workers: Sequence[int] = range(1, DEFAULT_MAX_WORKERS + 1), price_worker: float = 1.0,
                    price_ps: float = 1.0) -> pd.DataFrame:
    """Time and cost to target for every (p, w) when steps depend on the batch and the batch on the rule.

    Parameters
    ----------
    speed : FittedSpeed
        ``steps_per_s_at(p, w, M)`` gives the speed at each batch.
    batch : BatchScaling
        Steps to target ``S(M)`` (and its interval).
    rule : ScalingRule
    ps : sequence of int or None
        Parameter-server counts; None: (2, 4), or (0,) for an all-reduce model.
    workers : sequence of int, default=range(1, 65)
    price_worker, price_ps : float, default=1.0

    Returns
    -------
    DataFrame
        ``BATCH_GRID_COLUMNS`` (one row per (p, w); ``efficiency = E_min/E(M)``, ``goodput``
        in ``E_min``-equivalent samples per second), plus ``steps_low, steps_high`` when the
        batch model has an interval and ``time_s_low, time_s_high, time_h_low, time_h_high,
        cost_low, cost_high`` when either fit has one.  Like ``plan_grid``, times are in the
        speed model's unit and hours and cost are NaN for paper units.

    Examples
    --------
    An all-reduce model with ``1/f = 0.001·M/w + 0.05 + 0.002·w`` s and ``E_min = 1e5``,
    ``B_noise = 1000``: at w = 4 with 64 samples per worker, ``M = 256``,
    ``S = 1e5·(1 + 256/1000)/256 = 490.6`` steps, ``1/f = 0.064 + 0.05 + 0.008 = 0.122`` s, so
    ``T = 59.86`` s.

    >>> from core.batch import typed_batch_scaling
    >>> from core.speed.optimus import SpeedModel
    >>> speed = SpeedModel("allreduce", (0.001, 0.05, 0.002))
    >>> g = batch_plan_grid(speed, typed_batch_scaling(1e5, 1000), ScalingRule("per-worker", per_worker_batch=64),
    ...                     workers=[1, 4])
    >>> g[["w", "global_batch", "steps", "time_s"]].round(2).values.tolist()   # w = 1: 1662.5 · 0.116 s
    [[1.0, 64.0, 1662.5, 192.85], [4.0, 256.0, 490.62, 59.86]]
    """
    where = "batch_plan_grid"
    pw = check_scalar(price_worker, f"{where}: price_worker", float, min_val=0)
    pp = check_scalar(price_ps, f"{where}: price_ps", float, min_val=0)
    allreduce = speed.mode == "allreduce"
    p_values = _counts((0,) if ps is None and allreduce else (ps or DEFAULT_PS), "ps", 0 if allreduce else 1)
    if allreduce and p_values.tolist() != [0]:
        raise InputError(f"{where}: expected ps = (0,) for an all-reduce model; got {tuple(ps)!r}. Leave ps out.")
    w_values = _counts(workers, "workers", 1)
    w_cand, m_cand = _candidates(rule, w_values)
    P = np.repeat(p_values, w_cand.size).astype(float)
    W, M = np.tile(w_cand, p_values.size), np.tile(m_cand, p_values.size)
    f = np.asarray(speed.steps_per_s_at(P, W, M), dtype=float)
    steps = np.asarray(batch.steps(M), dtype=float)
    grid = pd.DataFrame({"mode": speed.mode, "p": P.astype(int), "w": W.astype(int), "global_batch": M,
                         "steps": steps, "steps_per_s": f, "samples_per_s": f * M,
                         "efficiency": batch.efficiency(M), "time_s": steps / f})
    grid["goodput"] = grid["samples_per_s"] * grid["efficiency"]
    if rule.rule == "best":   # the shortest time per (p, w); ties: the smaller batch
        grid = grid.sort_values(["p", "w", "time_s", "global_batch"], kind="mergesort")
        grid = grid.groupby(["p", "w"], sort=True).head(1).reset_index(drop=True)
    seconds = speed.time_unit == "s"
    grid = with_time_and_cost(grid, speed.time_unit, price_worker=pw, price_ps=pp)
    out = grid[list(BATCH_GRID_COLUMNS)].copy()
    m = out["global_batch"].to_numpy(dtype=float)
    steps_band = batch.steps_interval(m)
    if steps_band is not None:
        out["steps_low"], out["steps_high"] = steps_band
    band = _band(out["steps"].to_numpy(dtype=float), batch, m, getattr(speed, "time_band", None))
    if band is not None:
        for tag, factor in zip(("low", "high"), band):
            out[f"time_s_{tag}"] = out["time_s"] * factor
        for tag in ("low", "high"):
            out[f"time_h_{tag}"] = out[f"time_s_{tag}"] / SECONDS_PER_HOUR if seconds else np.nan
        for tag in ("low", "high"):
            out[f"cost_{tag}"] = configuration_cost(out[f"time_s_{tag}"].to_numpy(), out["p"].to_numpy(),
                                                    out["w"].to_numpy(), price_worker=pw, price_ps=pp) \
                if seconds else np.nan
    return out.sort_values(["p", "w"], kind="mergesort").reset_index(drop=True)


def best_configuration(grid: pd.DataFrame) -> pd.Series:
    """The fastest row of a batch grid over every (p, w, M) (ties: fewer devices, then the smaller batch).

    >>> g = pd.DataFrame({"p": [0, 0, 0], "w": [2, 4, 8], "global_batch": [128, 256, 512],
    ...                   "time_s": [30.0, 20.0, 20.0]})
    >>> [int(v) for v in best_configuration(g)[["w", "global_batch"]]]
    [4, 256]
    """
    if len(grid) == 0:
        raise InputError("best_configuration: expected a non-empty grid; got 0 rows. Build it with batch_plan_grid.")
    order = grid.assign(_n=grid["p"] + grid["w"]).sort_values(["time_s", "_n", "global_batch"], kind="mergesort")
    return order.drop(columns="_n").iloc[0]


#: columns of :func:`goodput_curves`
GOODPUT_COLUMNS: tuple[str, ...] = ("label", "kind", "global_batch", "samples_per_s", "efficiency", "goodput")


def goodput_curves(batch: BatchScaling, *, speed=None, workers: Sequence[int] = (), batches=None,
                   measured: bool = True) -> pd.DataFrame:
    """Throughput, statistical efficiency and goodput against the global batch.

    Parameters
    ----------
    batch : BatchScaling
        Gives the efficiency ``E_min/E(M)`` (and the measured runs).
    speed : FittedSpeed, optional
        With ``workers``: one curve per worker count, throughput ``M·f(p, w, M)`` (``p`` = 0
        for all-reduce, else 1) at ``batches`` (default: 60 batches spaced geometrically
        over the runs' range widened ×4 both ways, at least one sample per worker).
    measured : bool, default=True
        Also one point per run whose log gives its throughput (``kind`` "measured"; each
        run on its own system).

    Returns
    -------
    DataFrame
        ``GOODPUT_COLUMNS``; ``kind`` is "model" or "measured", ``label`` "w = 8" or "runs".

    Examples
    --------
    >>> from core.batch import typed_batch_scaling
    >>> from core.speed.optimus import SpeedModel
    >>> speed = SpeedModel("allreduce", (0.001, 0.05, 0.002))
    >>> c = goodput_curves(typed_batch_scaling(1e5, 1000), speed=speed, workers=[4], batches=[256])
    >>> c[["label", "samples_per_s", "goodput"]].round(2).values.tolist()     # 256 / 0.122 s; × 1/1.256
    [['w = 4', 2098.36, 1670.67]]
    """
    parts = []
    if speed is not None and workers:
        used = [r.global_batch for r in batch.used] or [1.0]
        grid = np.asarray(batches, dtype=float) if batches is not None else \
            np.geomspace(min(used) / 4, max(used) * 4, 60)
        p = 0 if speed.mode == "allreduce" else 1
        for w in workers:
            m = grid[grid >= w]
            if m.size == 0:
                continue
            thr = m * np.asarray(speed.steps_per_s_at(p, w, m), dtype=float)
            parts.append(pd.DataFrame({"label": f"w = {w}", "kind": "model", "global_batch": m,
                                       "samples_per_s": thr}))
    if measured:
        runs = [r for r in batch.runs if r.samples_per_s]
        if runs:
            parts.append(pd.DataFrame({"label": "runs", "kind": "measured",
                                       "global_batch": [r.global_batch for r in runs],
                                       "samples_per_s": [r.samples_per_s for r in runs]}))
    if not parts:
        return pd.DataFrame(columns=list(GOODPUT_COLUMNS))
    out = pd.concat(parts, ignore_index=True)
    out["efficiency"] = batch.efficiency(out["global_batch"].to_numpy(dtype=float))
    out["goodput"] = out["samples_per_s"] * out["efficiency"]
    return out[list(GOODPUT_COLUMNS)]


def anchor_batch_of(rule: ScalingRule, speed) -> float:
    """The global batch at which steps to target were counted: the rule's fixed M, else the speed
    model's batch.  A rule that grows the batch scales the steps from there.

    Raises
    ------
    InputError
        Neither the rule nor the speed model has a global batch.

    Examples
    --------
    >>> from core.speed.optimus import SpeedModel
    >>> anchor_batch_of(ScalingRule("per-worker", per_worker_batch=64), SpeedModel("allreduce", (0.001, 0.05, 0.002),
    ...                                                                         global_batch=256))
    256.0
    """
    batch = rule.global_batch or getattr(speed, "global_batch", None)
    if not batch:
        raise InputError(f"scaling rule {rule.rule!r}: expected a global batch at which the steps to target were "
                         "counted (the rule's M or the speed model's); got none. Give the global batch M.")
    return float(batch)


def plan_with_rule(speed, steps: StepsEstimate, rule: ScalingRule, *, anchor_batch: float | None = None,
                   batch: BatchScaling | None = None, b_noise: float | None = None, ps: Sequence[int] | None = None,
                   workers: Sequence[int] = range(1, DEFAULT_MAX_WORKERS + 1), price_worker: float = 1.0,
                   price_ps: float = 1.0) -> tuple[pd.DataFrame, BatchScaling | None]:
    """The plan of a page: the plain grid when nothing varies with the batch, else the rule's grid.

    The one home of "which plan": with the ``fixed`` rule and no batch model, the steps stay
    ``steps.steps`` (:func:`core.plan.grid.plan_grid`, the speed at ``anchor_batch``).
    Otherwise steps follow ``S(M)`` from ``batch`` (a batch-scaling fit), or from a model
    anchored at ``steps`` measured at ``anchor_batch`` (by default :func:`anchor_batch_of` the rule and
    the speed model) with a typed ``b_noise`` (:func:`core.batch.anchored_batch_scaling`).

    Returns
    -------
    (DataFrame, BatchScaling or None)
        The grid (:func:`batch_plan_grid` columns when the batch varies) and the batch model used.

    Raises
    ------
    InputError
        A rule that grows the batch without a batch model or ``b_noise``.

    Examples
    --------
    >>> from core.speed.optimus import SpeedModel
    >>> from core.plan.steps import typed_steps
    >>> speed = SpeedModel("allreduce", (0.001, 0.05, 0.002), global_batch=256)
    >>> grid, model = plan_with_rule(speed, typed_steps(490.625), ScalingRule("per-worker", per_worker_batch=64),
    ...                              anchor_batch=256, b_noise=1000, workers=[4])
    >>> round(model.e_min), round(float(grid["time_s"][0]), 2)     # 490.625·256/1.256 = 1e5; 490.625·0.122
    (100000, 59.86)
    """
    if batch is None and rule.rule == "fixed":
        return plan_grid(speed.with_global_batch(rule.global_batch), steps.steps, ps=ps, workers=workers,
                         steps_interval=steps.interval, price_worker=price_worker, price_ps=price_ps), None
    if batch is None:
        if b_noise is None:
            raise InputError(f"scaling rule {rule.rule!r}: expected a batch-scaling model or a noise scale "
                             "B_noise; got neither. Type B_noise, or take the steps from a batch-scaling fit.")
        anchor = anchor_batch if anchor_batch is not None else anchor_batch_of(rule, speed)
        batch = anchored_batch_scaling(steps.steps, anchor, b_noise)
    return batch_plan_grid(speed, batch, rule, ps=ps, workers=workers, price_worker=price_worker,
                           price_ps=price_ps), batch
