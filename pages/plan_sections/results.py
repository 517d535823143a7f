"""Plan page, the results: the headline (time to target against workers, best w, time and cost),
the model in use, the time/cost plane with the deadline choice and the greedy allocation, the table.

A section of ``pages/plan.py``: widgets, cached calls into ``core`` and rendering only.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.batch import TUNED_NOTE, BatchScaling
from core.figures.plan import time_cost_figure, tta_vs_workers_figure
from core.plan import (
    COST_LATEX,
    SOURCES,
    TIME_LATEX,
    TIME_RULE_LATEX,
    Allocation,
    DeadlineChoice,
    ScalingRule,
    StepsEstimate,
    cheapest_config,
    display_time,
    greedy_allocation,
    pareto_frontier,
    suggest_deadline,
    time_text,
)
from core.speed import SpeedModel
from pages.plan_sections.speed import MODE_LABELS
from pages.shared.bounded import bounded_data
from pages.shared.common import (
    CACHE,
    KEPT,
    chart,
    guarded,
    table_download,
)

ASSUMPTIONS = (
    "**Assumptions.** Steps to target are counted at the batch size the source was measured with (the logged "
    "run's batch); this model keeps them fixed when M changes, so M only changes the speed f(p, w). In "
    "asynchronous training every worker's update counts as a step, so steps taken from a synchronous run make "
    "the asynchronous time a lower bound (stale updates learn less per step). Time = steps / f(p, w); cost "
    "= time in hours × (w × worker price + p × PS price). See docs/plan.md.")
RULE_ASSUMPTIONS = (
    "**Assumptions.** The global batch follows the scaling rule, and steps to target follow it: S(M) = "
    "E_min·(1 + M/B_noise)/M (McCandlish et al. 2018) from the batch-scaling model; time = S(M(w)) / f(p, w, M(w)); "
    "cost = time in hours × (w × worker price + p × PS price). " + TUNED_NOTE + " See docs/plan.md.")


@bounded_data(**CACHE)
def _allocation(model: SpeedModel, steps: float, budget: int, price_worker: float, price_ps: float) -> Allocation:
    return greedy_allocation(model, steps, budget=budget, price_worker=price_worker, price_ps=price_ps)


def _fmt(x: float) -> str:
    """A number for reading: thousands separated when large, three significant digits otherwise."""
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3g}"


def theta_panel(model: SpeedModel, estimate: StepsEstimate, rule: ScalingRule | None = None) -> None:
    """The formula and θ in use, printed under the headline chart."""
    st.markdown("**Model in use**")
    for latex in (model.formula_latex, TIME_RULE_LATEX if rule is not None else TIME_LATEX, COST_LATEX):
        st.latex(r"\small " + latex)
    unit = "s" if model.time_unit == "s" else "paper units"
    rows = "\n".join(f"| {'θ' + n.removeprefix('theta') if n.startswith('theta') else n} | {v:.4g} |"
                     for n, v in model.named_params.items())
    st.markdown(f"| {model.family} | value ({unit}) |\n|---|---|\n{rows}")
    batch = "not set" if model.global_batch is None else f"{model.global_batch:g}"
    batch_text = rule.label if rule is not None else f"M = {batch} samples per step"
    st.caption(f"{batch_text} · {MODE_LABELS[model.mode]} · steps: {SOURCES[estimate.source]}")
    if model.mape_pct is not None:
        st.caption(f"Fit: MAPE {model.mape_pct:.2f} % on {model.n_points} points.")
    st.markdown("**Model report**")
    st.code(model.report(), language=None)


def headline_section(grid: pd.DataFrame, best: pd.DataFrame, model: SpeedModel, estimate: StepsEstimate,
                     paleo: pd.DataFrame | None, *, allreduce: bool, rule: ScalingRule,
                     batch: BatchScaling | None) -> None:
    """The answer: time to target against workers for each p with the best w marked, and beside it the
    best w of each p with its time and cost.  The model in use and the assumptions follow below."""
    time_column, unit = display_time(grid)
    left, right = st.columns([5, 2], gap="medium")
    with left:
        chart(tta_vs_workers_figure, grid, best=best, extra=paleo, subtitle=f"{estimate.label}; {rule.label}",
              steps_axis=batch is not None, key="plan_tta_chart", file_stem="time_to_target")
    with right:
        for row in best.itertuples():
            span = ""
            if hasattr(row, time_column + "_low"):
                level = f"{estimate.level * 100:.0f} % " if estimate.level and batch is None else ""
                span = (f" ({level}interval {_fmt(getattr(row, time_column + '_low'))} to "
                        f"{_fmt(getattr(row, time_column + '_high'))}{', both fits' if batch is not None else ''})")
            st.metric("Best w (all-reduce)" if allreduce else f"Best w for p = {row.p}", f"w = {row.w}",
                      help="The fastest number of workers (ties: fewer).")
            cost = f"; cost {_fmt(row.cost)}" if pd.notna(row.cost) else ""
            at = f" at M = {row.global_batch:,.0f}, {row.steps:,.0f} steps" if batch is not None else ""
            st.caption(f"{time_text(row.time_s, getattr(row, time_column), unit)}{at}{span}{cost}")
    with st.expander("Model in use and assumptions", icon=":material/functions:"):
        theta_panel(model, estimate, rule if batch is not None else None)
        st.markdown((RULE_ASSUMPTIONS if batch is not None else ASSUMPTIONS)
                    + (" Fitted θ are a planning estimate good to about their MAPE on average, not per "
                       "point." if model.mape_pct is not None else ""))


@st.fragment
@guarded("Plan: cost")
def cost_section(grid: pd.DataFrame, model: SpeedModel, estimate: StepsEstimate, prices: tuple[float, float],
                 fixed_steps: bool = True) -> None:
    """The time/cost plane: the cheapest configuration under a deadline and Optimus's greedy allocation."""
    st.subheader("Time and cost")
    if model.time_unit != "s":
        st.info("Cost needs time in hours: the paper's θ have no unit. Turn on *Calibrate to seconds* (or fit θ on "
                "a speed table) to see costs, the deadline choice and the greedy allocation.",
                icon=":material/info:")
        return
    plane, choices = st.columns([2, 1], gap="medium")
    with choices:
        typed = st.number_input("Deadline (hours)", min_value=0.0, value=None, format="%.4g",
                                key="plan_deadline_hours", **KEPT, placeholder="auto: twice the fastest time, rounded")
        choice: DeadlineChoice = cheapest_config(grid, deadline=typed or suggest_deadline(grid))
        st.metric(f"Cheapest within {_fmt(choice.deadline)} {choice.unit}",
                  f"p = {choice.p}, w = {choice.w}" if choice.met else "none", help=choice.message)
        st.caption(choice.message)
        allocation = _greedy_section(model, estimate, prices) if fixed_steps else None
        if not fixed_steps:
            st.caption(":material/info: Optimus's greedy allocation adds workers at fixed steps to target; it is "
                       "shown when the steps do not change with the batch. The frontier covers every (w, M) here.")
    with plane:
        chart(time_cost_figure, grid, frontier=pareto_frontier(grid), choice=choice, allocation=allocation,
              key="plan_cost_chart", file_stem="time_and_cost")


def _greedy_section(model: SpeedModel, estimate: StepsEstimate, prices: tuple[float, float]) -> Allocation:
    """Optimus's greedy allocation for a task budget, beside the exhaustive optimum."""
    budget = st.number_input("Task budget p + w (greedy allocation)", min_value=2, max_value=256, value=16,
                             step=1, key="plan_budget", **KEPT,
                             help="Optimus's greedy: start at 1 worker + 1 PS, add whichever of a worker or a "
                                  "PS shortens the time most, until no gain or the budget is spent.")
    allocation = _allocation(model, estimate.steps, int(budget), *prices)
    g, o = allocation.greedy, allocation.optimum
    st.metric(f"Greedy allocation, {allocation.budget} tasks", f"p = {g.p}, w = {g.w}",
              delta=f"{allocation.gap_pct:.1f} % slower than the optimum" if allocation.gap_pct > 0 else "optimal",
              delta_color="inverse" if allocation.gap_pct > 0 else "off",
              delta_arrow="auto" if allocation.gap_pct > 0 else "off",
              help="Optimus's greedy allocation for one job, beside the exhaustive optimum over p + w <= budget.")
    st.caption(f"Stopped: {allocation.stop_reason}; exhaustive optimum within the budget: p = {o.p}, w = {o.w}.")
    return allocation


def table_section(grid: pd.DataFrame) -> None:
    st.subheader(f"All configurations ({len(grid)})")
    st.dataframe(grid, key="plan_table", hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.4g") for c in grid.columns
                                if c.startswith(("steps_per_s", "time_s", "time_h", "cost"))})
    table_download(grid, key="plan_table_csv", file_name="plan.csv")
