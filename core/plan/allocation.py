"""Greedy allocation of a budget: add the worker or server that buys the most time per dollar, step by
step (Optimus), compared with the exhaustive optimum on small budgets.

Times and costs come from :mod:`core.plan.grid` (:func:`~core.plan.grid.time_to_target_s`,
:func:`~core.plan.grid.configuration_cost`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from core.defaults import SECONDS_PER_HOUR
from core.plan.grid import configuration_cost, positive_number, time_to_target_s
from core.speed import FittedSpeed
from core.validation import check_scalar

#: the largest budget of tasks :func:`greedy_allocation` takes
MAX_BUDGET = 4096


@dataclass(frozen=True)
class Configuration:
    """One configuration and its time to target and cost (``time_s`` in the model's unit)."""

    p: int
    w: int
    time_s: float
    cost: float


@dataclass(frozen=True)
class AllocationStep(Configuration):
    """A configuration on the greedy path and what was added to reach it ("start", "worker" or "ps")."""

    added: str = "start"


@dataclass(frozen=True)
class Allocation:
    """Optimus's greedy allocation of a task budget to one job, beside the exhaustive optimum.

    Attributes
    ----------
    mode : str
    budget : int
        Largest total number of tasks ``p + w``.
    time_unit : str
        Unit of ``time_s`` ("s" or "paper units").
    path : tuple of AllocationStep
        Every configuration the greedy visits, from the start.
    stop_reason : str
        "budget spent" or "no gain" (adding a task would not shorten the time).
    optimum : Configuration
        The fastest configuration with ``p + w <= budget`` (ties: fewer tasks, then fewer PS).
    gap_pct : float
        ``100 · (greedy time / optimum time − 1)``, >= 0.
    """

    mode: str
    budget: int
    time_unit: str
    path: tuple[AllocationStep, ...]
    stop_reason: str
    optimum: Configuration
    gap_pct: float

    @property
    def greedy(self) -> AllocationStep:
        """Where the greedy path ends."""
        return self.path[-1]

    def path_frame(self) -> pd.DataFrame:
        """The path as a frame: ``step, added, p, w, time_s, time_h, cost``."""
        frame = pd.DataFrame([(s.added, s.p, s.w, s.time_s, s.cost) for s in self.path],
                             columns=["added", "p", "w", "time_s", "cost"])
        frame.insert(0, "step", range(len(frame)))
        frame.insert(5, "time_h", frame["time_s"] / SECONDS_PER_HOUR)
        return frame

    def to_dict(self) -> dict[str, Any]:
        """Plain Python types only."""
        o, g = self.optimum, self.greedy
        return {"mode": self.mode, "budget": self.budget, "time_unit": self.time_unit,
                "stop_reason": self.stop_reason, "greedy_p": g.p, "greedy_w": g.w,
                "greedy_time_s": g.time_s, "greedy_cost": g.cost, "optimum_p": o.p, "optimum_w": o.w,
                "optimum_time_s": o.time_s, "optimum_cost": o.cost, "gap_pct": self.gap_pct,
                "path": [[s.added, s.p, s.w, s.time_s, s.cost] for s in self.path]}


def greedy_allocation(model: FittedSpeed, steps_to_target: float, *, budget: int,
                      price_worker: float = 1.0, price_ps: float = 1.0) -> Allocation:
    """Optimus's marginal-gain allocation for one job, and the exhaustive optimum.

    Start with 1 worker and 1 PS (1 worker for an all-reduce model); while ``p + w <
    budget``, add whichever of one worker or one PS shortens the time to target most
    (ties: the worker); stop when the best gain is not positive or the budget is spent.

    Parameters
    ----------
    model : FittedSpeed
    steps_to_target : float
        > 0; scales every time alike, so the path does not depend on it.
    budget : int
        Largest ``p + w``: >= 2 (>= 1 for "allreduce"), at most 4096.
    price_worker, price_ps : float, default=1.0
        For the cost of each configuration on the path.

    Returns
    -------
    Allocation

    Examples
    --------
    Paper sync θ, M = 128, budget 6, time per step ``130.56/w + 2.78 + 4.92·w/p + 0.02·p``
    paper units: from (p=1, w=1) at 138.28, a worker gives 77.92 and a PS 135.84: add the
    worker; then (1, 3) 61.08 beats (2, 2) 73.02; then (2, 3) 53.72 beats (1, 4) 55.12;
    then (2, 4) 45.30 beats (3, 3) 51.28, and the budget is spent. No (p, w) with
    ``p + w <= 6`` is faster than (2, 4), so the gap is 0.

    >>> from core.speed.optimus import paper_speed_model
    >>> a = greedy_allocation(paper_speed_model("sync"), 1, budget=6)
    >>> [(s.added, s.p, s.w) for s in a.path]
    [('start', 1, 1), ('worker', 1, 2), ('worker', 1, 3), ('ps', 2, 3), ('worker', 2, 4)]
    >>> a.stop_reason, (a.optimum.p, a.optimum.w), a.gap_pct
    ('budget spent', (2, 4), 0.0)
    """
    where = "greedy_allocation"
    steps = positive_number(steps_to_target, "steps_to_target", where)
    prices = dict(price_worker=positive_number(price_worker, "price_worker", where, allow_zero=True),
                  price_ps=positive_number(price_ps, "price_ps", where, allow_zero=True))
    has_ps = model.mode != "allreduce"
    low = 2 if has_ps else 1
    budget = check_scalar(budget, f"{where}: budget", int, min_val=low, max_val=MAX_BUDGET,
                          fix="Give the number of tasks (p + w) the job may use")

    def step(added: str, p: int, w: int) -> AllocationStep:
        t = float(time_to_target_s(steps, model, p, w))
        cost = configuration_cost(t, p, w, **prices) if model.time_unit == "s" else math.nan
        return AllocationStep(p, w, t, cost, added)

    path = [step("start", 1 if has_ps else 0, 1)]
    stop = "budget spent"
    while path[-1].p + path[-1].w < budget:
        here = path[-1]
        options = [step("worker", here.p, here.w + 1)] + ([step("ps", here.p + 1, here.w)] if has_ps else [])
        best = min(options, key=lambda o: o.time_s)      # first (the worker) wins ties
        if here.time_s - best.time_s <= 0:
            stop = "no gain"
            break
        path.append(best)
    optimum = _exhaustive(model, steps, budget, has_ps, prices)
    gap = 100.0 * (path[-1].time_s / optimum.time_s - 1.0)
    return Allocation(mode=model.mode, budget=int(budget), time_unit=model.time_unit,
                      path=tuple(path), stop_reason=stop, optimum=optimum, gap_pct=max(gap, 0.0))


def _exhaustive(model, steps, budget, has_ps, prices) -> Configuration:
    """Fastest (p, w) with p + w <= budget; ties: fewer tasks, then fewer PS."""
    if has_ps:
        P, W = (a.ravel() for a in np.meshgrid(np.arange(1, budget), np.arange(1, budget)))
        keep = P + W <= budget
        P, W = P[keep], W[keep]
    else:
        W = np.arange(1, budget + 1)
        P = np.zeros_like(W)
    t = steps / np.asarray(model.steps_per_s(P, W), dtype=float)
    i = int(np.lexsort((P, P + W, t))[0])
    cost = configuration_cost(t[i], P[i], W[i], **prices) if model.time_unit == "s" else math.nan
    return Configuration(int(P[i]), int(W[i]), float(t[i]), cost)
