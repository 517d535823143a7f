"""Time and cost to target over parameter servers and workers, from an Optimus speed model.

``time_to_target = steps_to_target / f(p, w)`` (steps, not epochs; seconds when the
model's θ are in seconds), ``cost = time_h · (w · price_worker + p · price_ps)``.
On top of the grid of configurations: the best w per p, the time/cost Pareto frontier,
and the cheapest configuration that meets a deadline (Optimus's greedy allocation of a budget
is in :mod:`core.plan.allocation`).

Times are in the model's unit: seconds, or "paper units" for the paper's uncalibrated θ
(then ``time_s`` holds paper units, and ``time_h`` and ``cost`` are left empty: hours and
money need θ in seconds; :func:`display_time` picks the column a chart or a deadline should use).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from core.defaults import SECONDS_PER_HOUR
from core.errors import InputError
from core.speed import FittedSpeed
from core.validation import check_scalar

DEFAULT_PS: tuple[int, ...] = (2, 4)
DEFAULT_MAX_WORKERS = 64
#: time and cost of a configuration, in LaTeX, for pages
TIME_LATEX = r"T(p, w) = \frac{\text{steps to target}}{f(p, w)}"
COST_LATEX = r"\text{cost} = T_h \cdot (w \cdot \text{price}_\text{worker} + p \cdot \text{price}_\text{PS})"
GRID_COLUMNS: tuple[str, ...] = ("mode", "p", "w", "steps_per_s", "time_s", "time_h", "cost",
                                 "time_unit")


def positive_number(value: Any, name: str, where: str, *, allow_zero: bool = False) -> float:
    """``value`` as a float > 0 (>= 0 with ``allow_zero``), or ``InputError`` naming ``where: name``."""
    return check_scalar(value, f"{where}: {name}", float, min_val=0,
                        include_boundaries="left" if allow_zero else "neither", fix="Give a finite number")


def _counts(values: Sequence[int], name: str, where: str, minimum: int) -> tuple[int, ...]:
    try:
        out = tuple(sorted({int(v) for v in values}))
        exact = all(float(v) == int(v) for v in values)
    except (TypeError, ValueError):
        out, exact = (), False
    if not out or not exact or out[0] < minimum:
        raise InputError(f"{where}: expected {name} as integers >= {minimum}; got {values!r}. "
                         f"Give e.g. {name}=({minimum + 1}, {minimum + 3}).")
    return out


def configuration_cost(time_s, p, w, *, price_worker: float = 1.0, price_ps: float = 1.0):
    """Cost of running ``w`` workers and ``p`` parameter servers for ``time_s`` seconds.

    ``cost = time_s / 3600 · (w · price_worker + p · price_ps)``: prices are per device-hour
    (1.0 each gives device-hours).  Broadcasts over arrays.

    >>> configuration_cost(7200.0, 2, 4, price_worker=2.5, price_ps=0.5)   # 2 h · (4·2.5 + 2·0.5)
    22.0
    """
    cost = np.asarray(time_s, dtype=float) / SECONDS_PER_HOUR * (np.asarray(w) * price_worker
                                                                  + np.asarray(p) * price_ps)
    return float(cost) if cost.ndim == 0 else cost


def time_to_target_s(steps_to_target: float, model: FittedSpeed, p, w):
    """Time to reach the target: ``steps_to_target / f(p, w)``, in the model's time unit.

    Parameters
    ----------
    steps_to_target : float
        Training steps (not epochs) to the target, > 0. For asynchronous training every
        worker's update is one step (see docs/plan.md).
    model : FittedSpeed
    p, w : int or array-like
        Parameter servers and workers.

    Examples
    --------
    An all-reduce model with ``1/f = 0.001·256/8 + 0.05 + 0.002·8 = 0.098`` s per step at
    w = 8: 10 000 steps take ``10000 · 0.098 = 980`` s.

    >>> from core.speed import SpeedModel
    >>> m = SpeedModel("allreduce", (0.001, 0.05, 0.002), global_batch=256)
    >>> round(time_to_target_s(10_000, m, 0, 8), 6)
    980.0
    """
    steps = positive_number(steps_to_target, "steps_to_target", "time_to_target_s")
    f = np.asarray(model.steps_per_s(p, w), dtype=float)
    t = steps / f
    return float(t) if t.ndim == 0 else t


def with_time_and_cost(grid: pd.DataFrame, time_unit: str, *, price_worker: float = 1.0,
                       price_ps: float = 1.0) -> pd.DataFrame:
    """``grid`` (columns ``p``, ``w``, ``time_s``) with ``time_h``, ``cost`` and ``time_unit``: every plan's rows
    get their hours and cost here (NaN in paper units, which have no hours).

    >>> with_time_and_cost(pd.DataFrame({"p": [0], "w": [8], "time_s": [7200.0]}), "s", price_worker=2.5)
       p  w  time_s  time_h  cost time_unit
    0  0  8  7200.0     2.0  40.0         s
    """
    out = grid.copy()
    seconds = time_unit == "s"
    out["time_h"] = out["time_s"] / SECONDS_PER_HOUR if seconds else np.nan
    out["cost"] = configuration_cost(out["time_s"].to_numpy(dtype=float), out["p"].to_numpy(), out["w"].to_numpy(),
                                     price_worker=price_worker, price_ps=price_ps) if seconds else np.nan
    out["time_unit"] = time_unit
    return out


def plan_grid(model: FittedSpeed, steps_to_target: float, *, ps: Sequence[int] | None = None,
              workers: Sequence[int] = range(1, DEFAULT_MAX_WORKERS + 1),
              steps_interval: tuple[float, float] | None = None,
              price_worker: float = 1.0, price_ps: float = 1.0) -> pd.DataFrame:
    """Time and cost to target for every (p, w): one tidy row per configuration.

    Parameters
    ----------
    model : FittedSpeed
    steps_to_target : float
        Steps to the target, > 0.
    ps : sequence of int or None, default=None
        Parameter-server counts; None means (2, 4), or (0,) for an all-reduce model
        (which only accepts p = 0).
    workers : sequence of int, default=range(1, 65)
        Worker counts, >= 1.
    steps_interval : (float, float) or None, default=None
        ``(low, high)`` steps to target with ``low <= steps_to_target <= high``; adds the
        columns ``time_s_low, time_s_high, time_h_low, time_h_high, cost_low, cost_high``.
    price_worker, price_ps : float, default=1.0
        Price per worker-hour and per PS-hour (1.0 each gives device-hours).

    Returns
    -------
    DataFrame
        Columns ``mode, p, w, steps_per_s, time_s, time_h, cost, time_unit`` (plus the
        interval columns), sorted by p then w.  For a model in "paper units" (the paper's
        uncalibrated θ) ``time_s`` holds paper units and ``time_h`` and ``cost`` are NaN:
        hours and money need θ in seconds.

    Examples
    --------
    >>> from core.speed.optimus import paper_speed_model
    >>> g = plan_grid(paper_speed_model("sync"), 1000, ps=[2], workers=[4])
    >>> float(g.loc[0, "time_s"]), g.loc[0, "time_unit"]    # 1000 · 45.3 paper units
    (45300.0, 'paper units')
    """
    where = "plan_grid"
    steps = positive_number(steps_to_target, "steps_to_target", where)
    pw, pp = (positive_number(v, n, where, allow_zero=True)
              for v, n in ((price_worker, "price_worker"), (price_ps, "price_ps")))
    if ps is None:
        ps = (0,) if model.mode == "allreduce" else DEFAULT_PS
    p_values = _counts(ps, "ps", where, 0 if model.mode == "allreduce" else 1)
    if model.mode == "allreduce" and p_values != (0,):
        raise InputError(f"{where}: expected ps = (0,) for mode 'allreduce' (no parameter "
                         f"servers); got {tuple(ps)!r}. Leave ps out.")
    w_values = _counts(workers, "workers", where, 1)
    P, W = (a.ravel() for a in np.meshgrid(p_values, w_values, indexing="ij"))
    f = np.asarray(model.steps_per_s(P, W), dtype=float)
    grid = pd.DataFrame({"mode": model.mode, "p": P, "w": W, "steps_per_s": f,
                         "time_s": steps / f})
    grid = with_time_and_cost(grid, model.time_unit, price_worker=pw, price_ps=pp)[list(GRID_COLUMNS)]
    seconds = model.time_unit == "s"
    if steps_interval is not None:
        low, high = _interval(steps_interval, steps, where)
        for tag, n in (("low", low), ("high", high)):
            grid[f"time_s_{tag}"] = n / f
        for tag in ("low", "high"):
            grid[f"time_h_{tag}"] = grid[f"time_s_{tag}"] / SECONDS_PER_HOUR if seconds else np.nan
        for tag in ("low", "high"):
            grid[f"cost_{tag}"] = configuration_cost(grid[f"time_s_{tag}"].to_numpy(), P, W, price_worker=pw,
                                                     price_ps=pp) if seconds else np.nan
    return grid


def _interval(interval, steps: float, where: str) -> tuple[float, float]:
    try:
        low, high = (float(v) for v in interval)
    except (TypeError, ValueError):
        low = high = float("nan")
    if not (np.isfinite(low) and np.isfinite(high) and 0 < low <= steps <= high):
        raise InputError(f"{where}: expected steps_interval (low, high) with 0 < low <= "
                         f"steps_to_target = {steps:g} <= high; got {interval!r}. "
                         "Pass the interval around the point estimate.")
    return low, high


def display_time(grid: pd.DataFrame) -> tuple[str, str]:
    """The column charts and deadlines use, and its unit: ("time_h", "hours") or ("time_s", "paper units").

    >>> display_time(pd.DataFrame({"time_unit": ["paper units"]}))
    ('time_s', 'paper units')
    """
    if len(grid) and (grid["time_unit"] == "paper units").any():
        return "time_s", "paper units"
    return "time_h", "hours"


#: the unit a duration reads best in, by its length: (below this many seconds, seconds per unit, name, short name)
DURATION_UNITS = ((120.0, 1.0, "seconds", "s"), (7200.0, 60.0, "minutes", "min"), (float("inf"), 3600.0, "hours", "h"))


def duration_unit(seconds: float) -> tuple[float, str, str]:
    """``(seconds per unit, name, short name)`` a duration reads best in: seconds below two minutes, minutes below
    two hours, else hours (one rule for the headline's text and the chart's axis).

    >>> duration_unit(119.0)[1], duration_unit(120.0)[1], duration_unit(7200.0)[1]
    ('seconds', 'minutes', 'hours')
    """
    return next((per, name, short) for below, per, name, short in DURATION_UNITS if float(seconds) < below)


def duration_text(seconds: float) -> str:
    """A duration in the unit that reads best (:func:`duration_unit`).

    >>> duration_text(3.6), duration_text(754.0), duration_text(9000.0)
    ('3.6 s', '12.6 min', '2.5 h')
    """
    per, _, short = duration_unit(seconds)
    return f"{float(seconds) / per:.3g} {short}"


def time_text(seconds: float, shown: float, unit: str) -> str:
    """A time as a headline shows it: ``shown`` in the grid's display ``unit``, with the readable duration first when
    that is under a tenth of an hour (0.000999 hours reads as nothing; 3.6 s does).

    >>> time_text(3.6, 0.001, "hours"), time_text(7200.0, 2.0, "hours"), time_text(45.3, 45.3, "paper units")
    ('3.6 s (0.001 hours)', '2 hours', '45.3 paper units')
    """
    plain = f"{shown:.3g} {unit}"
    return f"{duration_text(seconds)} ({plain})" if unit == "hours" and shown < 0.1 else plain


def best_workers(grid: pd.DataFrame) -> pd.DataFrame:
    """The fastest configuration for each p (ties: the fewest workers); one row per p.

    >>> g = pd.DataFrame({"p": [2, 2, 4, 4], "w": [1, 2, 1, 2], "time_s": [5.0, 3.0, 4.0, 4.0]})
    >>> best_workers(g)[["p", "w"]].to_dict("records")
    [{'p': 2, 'w': 2}, {'p': 4, 'w': 1}]
    """
    ordered = grid.sort_values(["p", "time_s", "w"], kind="mergesort")
    return ordered.groupby("p", sort=True).head(1).reset_index(drop=True)


def pareto_frontier(grid: pd.DataFrame) -> pd.DataFrame:
    """Configurations no other beats on both time and cost, sorted by time.

    A row is kept when every faster-or-equal row costs more. Of rows with exactly the
    same time and cost, the one with the fewest devices (then fewest PS) is kept.

    Examples
    --------
    (1 h, 9), (2 h, 5), (3 h, 6) and (4 h, 2): the third is beaten by the second.

    >>> g = pd.DataFrame({"p": [1, 1, 1, 1], "w": [4, 3, 2, 1], "time_s": [3600.0, 7200, 10800, 14400],
    ...                   "cost": [9.0, 5, 6, 2]})
    >>> pareto_frontier(g)["w"].tolist()
    [4, 3, 1]
    """
    ordered = grid.assign(_n=grid["p"] + grid["w"]).sort_values(
        ["time_s", "cost", "_n", "p"], kind="mergesort")
    keep, best_cost = [], np.inf
    for index, cost in zip(ordered.index, ordered["cost"]):
        if cost < best_cost:
            keep.append(index)
            best_cost = cost
    return ordered.loc[keep].drop(columns="_n").reset_index(drop=True)


@dataclass(frozen=True)
class DeadlineChoice:
    """The cheapest configuration meeting a deadline, or why none does.

    Attributes
    ----------
    deadline : float
        In the grid's display unit (hours, or paper units).
    unit : str
        "hours" or "paper units".
    met : bool
        Whether some configuration finishes by the deadline.
    p, w : int or None
        The cheapest such configuration (ties: the faster, then fewer devices).
    time, cost : float or None
        Its time (display unit) and cost.
    fastest_p, fastest_w : int
        The fastest configuration of the grid (what comes closest when none meets it).
    fastest_time : float
    message : str
        One sentence a page can show as it is.
    """

    deadline: float
    unit: str
    met: bool
    p: int | None
    w: int | None
    time: float | None
    cost: float | None
    fastest_p: int
    fastest_w: int
    fastest_time: float
    message: str

    def to_dict(self) -> dict[str, Any]:
        """Plain Python types only."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def cheapest_config(grid: pd.DataFrame, *, deadline: float) -> DeadlineChoice:
    """The cheapest configuration of ``grid`` whose time to target is within ``deadline``.

    Parameters
    ----------
    grid : DataFrame
        From :func:`plan_grid`.
    deadline : float
        In hours (compared with ``time_h``), or in paper units (compared with ``time_s``)
        when the grid's ``time_unit`` is "paper units"; > 0.

    Returns
    -------
    DeadlineChoice
        ``met=False`` and ``p = w = None`` when no configuration meets it.

    Examples
    --------
    >>> g = pd.DataFrame({"p": [1, 1, 2], "w": [1, 2, 2], "time_s": [7200.0, 3600, 1800],
    ...                   "time_h": [2.0, 1, 0.5], "cost": [4.0, 3, 2], "time_unit": "s"})
    >>> c = cheapest_config(g, deadline=1.5)
    >>> (c.p, c.w, c.cost)
    (2, 2, 2.0)
    >>> cheapest_config(g, deadline=0.25).message
    'No configuration reaches the target within 0.25 hours; the fastest, p = 2, w = 2, takes 0.5 hours.'
    """
    deadline = positive_number(deadline, "deadline", "cheapest_config")
    if len(grid) == 0:
        raise InputError("cheapest_config: expected a non-empty plan grid; got 0 rows. "
                         "Build it with plan_grid.")
    column, unit = display_time(grid)
    fastest = grid.sort_values([column, "cost"], kind="mergesort").iloc[0]
    inside = grid[grid[column] <= deadline]
    base = dict(deadline=deadline, unit=unit, fastest_p=int(fastest["p"]),
                fastest_w=int(fastest["w"]), fastest_time=float(fastest[column]))
    if inside.empty:
        msg = (f"No configuration reaches the target within {deadline:g} {unit}; the fastest, "
               f"p = {base['fastest_p']}, w = {base['fastest_w']}, takes {base['fastest_time']:.3g} {unit}.")
        return DeadlineChoice(met=False, p=None, w=None, time=None, cost=None, message=msg, **base)
    best = inside.assign(_n=inside["p"] + inside["w"]).sort_values(
        ["cost", column, "_n"], kind="mergesort").iloc[0]
    msg = (f"Cheapest within {deadline:g} {unit}: p = {int(best['p'])}, w = {int(best['w'])}, "
           f"{float(best[column]):.3g} {unit}, cost {float(best['cost']):.4g}.")
    return DeadlineChoice(met=True, p=int(best["p"]), w=int(best["w"]), time=float(best[column]),
                          cost=float(best["cost"]), message=msg, **base)


def suggest_deadline(grid: pd.DataFrame, *, factor: float = 2.0) -> float:
    """A round default deadline: the first of 1, 2, 5 × 10^k at or above ``factor`` × the fastest time.

    In the grid's display unit (hours, or paper units; :func:`display_time`). Some
    configuration always meets it, so a page can start with a cheapest choice to show.

    Examples
    --------
    Fastest 0.37 hours: ``2 · 0.37 = 0.74``, rounded up to 1 hour.

    >>> g = pd.DataFrame({"time_s": [1332.0, 3600.0], "time_h": [0.37, 1.0], "time_unit": "s"})
    >>> suggest_deadline(g)
    1.0
    >>> suggest_deadline(g, factor=4)   # 1.48 -> 2
    2.0
    """
    factor = positive_number(factor, "factor", "suggest_deadline")
    if len(grid) == 0:
        raise InputError("suggest_deadline: expected a non-empty plan grid; got 0 rows. "
                         "Build it with plan_grid.")
    column, _ = display_time(grid)
    target = factor * float(grid[column].min())
    exponent = int(np.floor(np.log10(target)))
    for mantissa in (1, 2, 5, 10):
        value = float(f"{mantissa}e{exponent}")
        if value >= target * (1 - 1e-12):
            return value
    return float(f"1e{exponent + 1}")  # pragma: no cover (10 × 10^k always qualifies)
