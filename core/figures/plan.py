"""Plan figures: time to target against workers, and the time/cost plane.

Both take the tidy grid of :func:`core.plan.grid.plan_grid`. Time is shown in hours, or in
"paper units" when the grid comes from the paper's uncalibrated θ
(:func:`core.plan.grid.display_time`). Degenerate input (an empty grid) gives a titled note,
never an exception.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core.defaults import SECONDS_PER_HOUR
from core.figures.style import TARGET_LINE, base_layout, color, empty_figure, esc, escaped, log_axis
from core.plan import Allocation, DeadlineChoice, display_time, duration_unit

TTA_TITLE = "Time to target against workers"
TIME_COST_TITLE = "Time and cost of each configuration"
EXTRA_COLUMNS = ("p", "w", "time_h", "label")


def _rgba(hex_color: str, alpha: float) -> str:
    r, g, b = (int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def _p_colors(grid: pd.DataFrame) -> dict[int, str]:
    return {int(p): color(i) for i, p in enumerate(sorted(grid["p"].unique()))}


def _note(fig: go.Figure, text: str) -> None:
    fig.add_annotation(text=text, showarrow=False, x=0.01, y=-0.22, xref="paper", yref="paper",
                       xanchor="left", font=dict(size=12, color="#555"))


@escaped
def tta_vs_workers_figure(grid: pd.DataFrame, *, best: pd.DataFrame | None = None,
                          extra: pd.DataFrame | None = None, title: str = TTA_TITLE,
                          subtitle: str | None = None, steps_axis: bool = False,
                          log_axes: bool | None = None) -> go.Figure:
    """Time to target (y) against workers (x), one smooth line per parameter-server count.

    Parameters
    ----------
    grid : DataFrame
        From :func:`core.plan.grid.plan_grid`; with ``time_h_low``/``time_h_high`` (or the
        ``time_s_*`` pair for paper units) a band is drawn around each line.
    best : DataFrame or None, default=None
        The best w per p (:func:`core.plan.grid.best_workers` of the same grid), marked.
    extra : DataFrame or None, default=None
        More curves to draw on the same axes, e.g. Paleo's estimate per p: columns
        ``p, w, time_h, label``; one dashed line per ``label`` in the colour of its p.
        Left out, with a note, when the grid is in paper units (no common unit).
    title : str, default="Time to target against workers"
    subtitle : str or None, default=None
        A smaller second line under the title (what the plan rests on: steps source, batch rule).
    steps_axis : bool, default=False
        With a grid of :func:`core.plan.goodput.batch_plan_grid` (columns ``global_batch``
        and ``steps``): the steps to target each w needs, on a second y axis at the right,
        and the batch ``M`` in every hover.
    log_axes : bool or None, default=None
        Both axes logarithmic, labelled at whole values (``core.figures.style.log_axis``); None: when the worker
        counts span a factor of 64 or more (GPU counts from 1 to thousands, where a linear axis squeezes every
        count but the first into a corner).

    Returns
    -------
    plotly.graph_objects.Figure
        Traces in this order: for each p ascending, ``"p = {p} range"`` (only with an
        interval) then ``"p = {p}"`` (lines; ``"all-reduce"`` for p = 0); then ``"best w"`` (markers with the text
        ``"w = …"``, one point per row of ``best``, when given); then one trace per ``extra``
        label, named by the label; then, with ``steps_axis``, ``"steps to target"`` (dotted,
        right axis; one ``"steps to target, p = {p}"`` per p when they differ between p).
        x axis "workers w", y axis "time to target (hours)" (or seconds or minutes when the longest time plotted
        is short: :func:`chart_time_unit`) or "time to target (paper units)". A grid with ``time_low``/``time_high``
        in seconds (``core.plan.plan_from_logs``) gets its band in the same unit.

    Examples
    --------
    >>> from core.plan.grid import best_workers, plan_grid
    >>> from core.speed.optimus import paper_speed_model
    >>> g = plan_grid(paper_speed_model("sync"), 1000, workers=range(1, 17))
    >>> fig = tta_vs_workers_figure(g, best=best_workers(g))
    >>> [t.name for t in fig.data]
    ['p = 2', 'p = 4', 'best w']
    >>> [int(w) for w in fig.data[2].x]   # 130.56/w + 2.46·w is least at w = 7; 130.56/w + 1.23·w at 10
    [7, 10]
    """
    if grid is None or len(grid) == 0:
        return empty_figure(title, "No configuration to plot.")
    if "time_low" in grid and "time_h_low" not in grid and "time_h" in grid:      # seconds -> the hours shown
        grid = grid.assign(time_h_low=grid["time_low"] / SECONDS_PER_HOUR,
                           time_h_high=grid["time_high"] / SECONDS_PER_HOUR)
    column, unit = display_time(grid)
    scale, unit = chart_time_unit(grid[column], unit)
    if scale != 1.0:          # a plan of seconds reads in seconds or minutes, not in thousandths of an hour
        grid = grid.assign(**{c: grid[c] * scale for c in (column, f"{column}_low", f"{column}_high") if c in grid})
        best = best.assign(**{column: best[column] * scale}) if best is not None and len(best) else best
        extra = extra.assign(time_h=extra["time_h"] * scale) if extra is not None and "time_h" in extra else extra
    colors = _p_colors(grid)
    fig = go.Figure()
    for p, part in grid.sort_values(["p", "w"]).groupby("p", sort=True):
        c = colors[int(p)]
        label = "all-reduce" if int(p) == 0 else f"p = {p}"
        low, high = f"{column}_low", f"{column}_high"
        if low in part and high in part:
            fig.add_trace(go.Scatter(
                x=list(part["w"]) + list(part["w"])[::-1], y=list(part[high]) + list(part[low])[::-1],
                fill="toself", fillcolor=_rgba(c, 0.18), line=dict(width=0), mode="lines",
                name=f"{label} range", hoverinfo="skip"))
        batch = steps_axis and {"global_batch", "steps"} <= set(part.columns)
        fig.add_trace(go.Scatter(
            x=part["w"], y=part[column], mode="lines", name=label,
            line=dict(color=c, width=2.5, shape="spline", smoothing=0.6),
            customdata=part[["global_batch", "steps"]] if batch else None,
            hovertemplate=f"{label}, w = %{{x}}<br>%{{y:.3g}} {unit}"
                          + ("<br>M = %{customdata[0]:,.0f}, %{customdata[1]:,.0f} steps" if batch else "")
                          + "<extra></extra>"))
    if best is not None and len(best):
        _add_best(fig, best, column, unit, colors)
    _add_extra(fig, extra, unit, colors)
    base_layout(fig, title=title, subtitle=subtitle, x_title="workers w", y_title=f"time to target ({unit})")
    if steps_axis and {"global_batch", "steps"} <= set(grid.columns):
        _add_steps(fig, grid, colors)     # after the axis titles: base_layout titles every y axis
    w = grid["w"].to_numpy(dtype=float)
    if log_axes or (log_axes is None and w.min() > 0 and w.max() / w.min() >= 64):
        log_axis(log_axis(fig, "x"), "y")        # labelled at whole values: 0.1, 0.2, 0.5, 1, 2, 5 …
    return fig


def chart_time_unit(hours: pd.Series, unit: str) -> tuple[float, str]:
    """The factor and unit a time chart reads best in: the unit of its longest time, by the headline's rule
    (:func:`core.plan.duration_unit`: seconds under two minutes, minutes under two hours, else hours; paper units
    stay as they are).

    >>> chart_time_unit(pd.Series([0.001, 0.003]), "hours"), chart_time_unit(pd.Series([0.2, 1.5]), "hours")
    ((3600.0, 'seconds'), (60.0, 'minutes'))
    >>> chart_time_unit(pd.Series([0.5, 6.0]), "hours"), chart_time_unit(pd.Series([5.0]), "paper units")
    ((1.0, 'hours'), (1.0, 'paper units'))
    >>> chart_time_unit(pd.Series([150 / 3600]), "hours")   # 150 s: the headline's "2.5 min", not seconds on the axis
    (60.0, 'minutes')
    """
    values = pd.to_numeric(hours, errors="coerce").to_numpy(dtype=float)
    values = values[np.isfinite(values)]
    if unit != "hours" or not values.size:
        return 1.0, unit
    per, name, _ = duration_unit(float(values.max()) * SECONDS_PER_HOUR)   # the headline's rule (core.plan)
    return SECONDS_PER_HOUR / per, name


def _add_steps(fig: go.Figure, grid: pd.DataFrame, colors: dict[int, str]) -> None:
    """Steps to target per w on a right-hand axis (one line, or one per p when they differ)."""
    parts = list(grid.sort_values(["p", "w"]).groupby("p", sort=True))
    same = all(np.allclose(part["steps"].to_numpy(), parts[0][1]["steps"].to_numpy())
               and len(part) == len(parts[0][1]) for _, part in parts)
    for p, part in parts[:1] if same else parts:
        name = "steps to target" if same else f"steps to target, p = {p}"
        fig.add_trace(go.Scatter(
            x=part["w"], y=part["steps"], mode="lines", name=name, yaxis="y2",
            line=dict(color="#555" if same else colors[int(p)], dash="dot", width=1.5),
            customdata=part["global_batch"],
            hovertemplate="w = %{x}: %{y:,.0f} steps at M = %{customdata:,.0f}<extra></extra>"))
    fig.update_layout(yaxis2=dict(title_text="steps to target", overlaying="y", side="right", showgrid=False,
                                  rangemode="tozero"),
                      margin=dict(r=70))


def _add_best(fig: go.Figure, best: pd.DataFrame, column: str, unit: str, colors: dict[int, str]) -> None:
    fig.add_trace(go.Scatter(
        x=best["w"], y=best[column], mode="markers+text", name="best w",
        text=[f"w = {w}" for w in best["w"]], textposition="top center",
        marker=dict(size=11, symbol="diamond", color=[colors.get(int(p), color(0)) for p in best["p"]],
                    line=dict(width=1.5, color="#000")),
        customdata=best["p"],
        hovertemplate=f"best for p = %{{customdata}}: w = %{{x}}, %{{y:.3g}} {unit}<extra></extra>"))


def _add_extra(fig: go.Figure, extra: pd.DataFrame | None, unit: str, colors: dict[int, str]) -> None:
    if extra is None or len(extra) == 0:
        return
    if unit == "paper units":
        _note(fig, "Extra curves hidden: the Optimus times are in paper units; calibrate θ first.")
        return
    missing = [c for c in EXTRA_COLUMNS if c not in extra.columns]
    if missing:
        _note(fig, f"Extra curves hidden: missing columns {', '.join(missing)}.")
        return
    for i, label in enumerate(pd.unique(extra["label"])):
        part = extra[extra["label"] == label].sort_values("w")
        p = int(part["p"].iloc[0])
        fig.add_trace(go.Scatter(
            x=part["w"], y=part["time_h"], mode="lines", name=str(label),
            line=dict(color=colors.get(p, color(len(colors) + i)), dash="dash", width=2),
            hovertemplate=f"{esc(label)}<br>w = %{{x}}, %{{y:.3g}} {unit}<extra></extra>"))


@escaped
def time_cost_figure(grid: pd.DataFrame, *, frontier: pd.DataFrame | None = None,
                     choice: DeadlineChoice | None = None, allocation: Allocation | None = None,
                     title: str = TIME_COST_TITLE) -> go.Figure:
    """Every configuration on the time/cost plane, with the Pareto frontier and choices.

    Parameters
    ----------
    grid : DataFrame
        From :func:`core.plan.grid.plan_grid`.
    frontier : DataFrame or None, default=None
        The Pareto frontier of the same grid (:func:`core.plan.grid.pareto_frontier`), drawn as a line.
    choice : DeadlineChoice or None, default=None
        :func:`core.plan.grid.cheapest_config` of the same grid: adds the deadline line and
        the cheapest configuration meeting it (or a note when none does).
    allocation : Allocation or None, default=None
        From :func:`core.plan.allocation.greedy_allocation` on the same model and prices; adds
        the greedy path and the exhaustive optimum.
    title : str, default="Time and cost of each configuration"

    Returns
    -------
    plotly.graph_objects.Figure
        Traces in this order, the optional ones only when their input is given:
        ``"p = {p}"`` (markers, one per p ascending), ``"Pareto frontier"``,
        ``"deadline"`` (vertical line), ``"cheapest under deadline"`` (absent, with a
        note saying so, when no configuration meets the deadline), ``"greedy path"``,
        ``"exhaustive optimum"``. x axis time to target (hours or paper units), y axis cost.

    Examples
    --------
    >>> from core.plan.grid import cheapest_config, pareto_frontier, plan_grid
    >>> from core.speed import paper_speed_model, scale_to_step_time
    >>> model = scale_to_step_time(paper_speed_model("sync"), 0.906, 2, 4)   # 0.906 s per step at (2, 4)
    >>> g = plan_grid(model, 10_000, workers=range(1, 17))
    >>> fig = time_cost_figure(g, frontier=pareto_frontier(g), choice=cheapest_config(g, deadline=2.0))
    >>> [t.name for t in fig.data]
    ['p = 2', 'p = 4', 'Pareto frontier', 'deadline', 'cheapest under deadline']
    """
    if grid is None or len(grid) == 0:
        return empty_figure(title, "No configuration to plot.")
    if "time_low" in grid and "time_h_low" not in grid and "time_h" in grid:      # seconds -> the hours shown
        grid = grid.assign(time_h_low=grid["time_low"] / SECONDS_PER_HOUR,
                           time_h_high=grid["time_high"] / SECONDS_PER_HOUR)
    column, unit = display_time(grid)
    colors = _p_colors(grid)
    fig = go.Figure()
    for p, part in grid.groupby("p", sort=True):
        fig.add_trace(go.Scatter(
            x=part[column], y=part["cost"], mode="markers", name=f"p = {p}",
            marker=dict(size=7, color=colors[int(p)], opacity=0.75), customdata=part["w"],
            hovertemplate=f"p = {p}, w = %{{customdata}}<br>%{{x:.3g}} {unit}, cost %{{y:.4g}}<extra></extra>"))
    if frontier is not None and len(frontier):
        _add_frontier(fig, frontier, column, unit)
    if choice is not None:
        _add_deadline(fig, grid, choice, unit)
    if allocation is not None:
        _add_allocation(fig, allocation, column, unit)
    return base_layout(fig, title=title, x_title=f"time to target ({unit})", y_title="cost")


def _add_frontier(fig: go.Figure, front: pd.DataFrame, column: str, unit: str) -> None:
    fig.add_trace(go.Scatter(
        x=front[column], y=front["cost"], mode="lines+markers", name="Pareto frontier",
        line=dict(color=color(7), width=1.5), marker=dict(size=5, color=color(7)),
        customdata=front[["p", "w"]],
        hovertemplate=(f"p = %{{customdata[0]}}, w = %{{customdata[1]}}<br>%{{x:.3g}} {unit}, "
                       "cost %{y:.4g}<extra></extra>")))


def _add_deadline(fig: go.Figure, grid: pd.DataFrame, choice: DeadlineChoice, unit: str) -> None:
    deadline = choice.deadline
    low, high = float(grid["cost"].min()), float(grid["cost"].max())
    fig.add_trace(go.Scatter(x=[deadline, deadline], y=[low, high], mode="lines", name="deadline",
                             line=TARGET_LINE, hovertemplate=f"deadline {deadline:g} {unit}<extra></extra>"))
    if not choice.met:
        _note(fig, choice.message)
        return
    fig.add_trace(go.Scatter(
        x=[choice.time], y=[choice.cost], mode="markers+text", name="cheapest under deadline",
        text=[f"p = {choice.p}, w = {choice.w}"], textposition="bottom right",
        marker=dict(size=14, symbol="star", color=color(3), line=dict(width=1, color="#000")),
        hovertemplate=choice.message + "<extra></extra>"))


def _add_allocation(fig: go.Figure, allocation: Allocation, column: str, unit: str) -> None:
    if (allocation.time_unit == "paper units") != (unit == "paper units"):
        _note(fig, "Greedy path hidden: it was computed in another time unit than the grid.")
        return
    scale = SECONDS_PER_HOUR if column == "time_h" else 1.0
    path = allocation.path_frame()
    fig.add_trace(go.Scatter(
        x=path["time_s"] / scale, y=path["cost"], mode="lines+markers", name="greedy path",
        line=dict(color=color(4), width=1.5, dash="dot"), marker=dict(size=6, color=color(4)),
        customdata=path[["p", "w", "added"]],
        hovertemplate=(f"greedy: added %{{customdata[2]}} → p = %{{customdata[0]}}, w = %{{customdata[1]}}"
                       f"<br>%{{x:.3g}} {unit}, cost %{{y:.4g}}<extra></extra>")))
    o = allocation.optimum
    p, w = o.p, o.w
    fig.add_trace(go.Scatter(
        x=[o.time_s / scale], y=[o.cost], mode="markers", name="exhaustive optimum",
        marker=dict(size=13, symbol="circle-open", color=color(2), line=dict(width=3)),
        hovertemplate=(f"exhaustive optimum for {allocation.budget} tasks: p = {p}, w = {w}"
                       f"<br>%{{x:.3g}} {unit}, cost %{{y:.4g}}<extra></extra>")))
