"""Plan: time and cost to the target against workers and parameter servers (Optimus speed model).

Steps to target (a run on the Logs page, the Calibrate page's prediction, or typed in)
divided by the speed ``f(p, w)`` (the paper's θ, θ fitted on a speed table, or typed in)
gives the time to target of every configuration; prices give its cost.  Section functions,
called from the page block at the end; every number comes from ``core.plan`` (and
``core.figures.plan``) through the cached wrappers of its sections (``pages/plan_sections``): the
headline answer at the top, the steps, speed and cluster inputs below it, and the schedule of a language-model
run in progress (which cool-down reaches the target soonest) at the end.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.batch import BatchScaling
from core.errors import PlannerError
from core.plan import (
    ScalingRule,
    StepsEstimate,
    best_workers,
    plan_with_rule,
)
from core.runs import given_target
from pages.plan_sections.cluster import cluster_section, paleo_section, prices_section, rule_section
from pages.plan_sections.from_logs import can_plan_from_logs, from_logs_section
from pages.plan_sections.results import cost_section, headline_section, table_section
from pages.plan_sections.schedule import schedule_section
from pages.plan_sections.speed import speed_section
from pages.plan_sections.steps import chosen_run_step, steps_section
from pages.shared.bounded import bounded_data
from pages.shared.common import (
    CACHE,
    guarded,
    load_logs,
    load_runs,
    page_setup,
    plain,
    target_input,
    target_text,
)


@bounded_data(**CACHE)
def _rule_grid(model, estimate: StepsEstimate, rule: ScalingRule, batch: BatchScaling | None,
               b_noise: float | None, ps: tuple[int, ...] | None, max_workers: int, price_worker: float,
               price_ps: float) -> tuple[pd.DataFrame, BatchScaling | None]:
    return plan_with_rule(model, estimate, rule, batch=batch, b_noise=b_noise, ps=ps, workers=range(1, max_workers + 1),
                          price_worker=price_worker, price_ps=price_ps)


# ---------------------------------------------------------------- page
@guarded("The Plan page")
def main() -> None:
    page_setup()
    st.title("Plan")
    st.caption("Time and cost to the target with w GPUs (and p parameter servers): steps to target ÷ the speed "
               "f(p, w) of a speed model, named with the answer. The answer first; its inputs below.")
    answer = st.container()          # the headline, filled once the inputs below are read
    st.divider()
    logs = load_logs()[0]
    target = target_input(logs, key="plan_target_acc")
    body, schedule_box = st.container(), st.container()   # the plan's inputs and details, then the schedule
    with schedule_box:               # filled first: the plan below may stop the page until its inputs are set
        st.divider()
        schedule_section(logs, given_target(target))
    with body:
        _plan_body(logs, target, answer)


def _plan_body(logs, target, answer) -> None:
    """The plan: from the MLPerf / LLM logs loaded, or steps to target × a speed model."""
    if can_plan_from_logs(logs, given_target(target)):
        how = st.radio("Plan from", ["logs", "model"], key="plan_how", horizontal=True,
                       format_func={"logs": "the MLPerf / LLM logs loaded (their GPU counts and step times)",
                                    "model": "steps to target × a speed model"}.get)
        if how == "logs":
            from_logs_section(logs, given_target(target), answer)
            return
    steps_col, speed_col, cluster_col = st.columns(3, gap="large")
    with cluster_col:
        max_workers, global_batch = cluster_section()
    runs = load_runs(target=given_target(target))
    with steps_col:                  # first: the run chosen there lends its measured step to the speed model
        st.markdown("#### Steps to target")
        st.caption(plain(f"Target: {target_text(target)}"))
        estimate, fitted_batch = steps_section(runs, float(global_batch))
    with speed_col:
        st.markdown("#### Speed model θ")
        model = speed_section(float(global_batch), measured_step=chosen_run_step(runs))
    allreduce = model is not None and model.mode == "allreduce"
    with cluster_col:
        ps, price_worker, price_ps = prices_section(allreduce)
    with cluster_col:
        rule, b_noise = rule_section(global_batch, fitted=fitted_batch is not None)

    if model is None or estimate is None or rule is None:
        answer.info("Nothing to plan until both the steps to target and the speed model are set (see below).")
        st.stop()
    if not allreduce and not ps:
        answer.info("Choose at least one number of parameter servers to compare (below).")
        st.stop()
    try:
        grid, batch_model = _rule_grid(model, estimate, rule, fitted_batch, b_noise, None if allreduce else ps,
                                       max_workers, price_worker, price_ps)
    except PlannerError as err:
        answer.error(plain(str(err)), icon=":material/error:")
        st.stop()
    paleo = paleo_section(steps=estimate, ps=() if allreduce else ps, max_workers=max_workers,
                          global_batch=global_batch, seconds=model.time_unit == "s", fixed_batch=rule.rule == "fixed")
    with answer:
        if model.time_unit == "paper units":
            st.warning("The paper's θ have no published time unit: times are in **paper units**, comparable "
                       "with each other only, and there is no cost. Turn on *Calibrate to seconds* with one "
                       "measured step time to get hours.", icon=":material/warning:")
        headline_section(grid, best_workers(grid), model, estimate, paleo, allreduce=allreduce, rule=rule,
                         batch=batch_model)
    cost_section(grid, model, estimate, (price_worker, price_ps),
                 fixed_steps=batch_model is None or rule.rule == "fixed")
    table_section(grid)


main()
