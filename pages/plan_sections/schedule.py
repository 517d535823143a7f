"""Plan page, the schedule: for a run in progress under a planned learning-rate schedule, which cool-down
(start, length, shape) reaches a falling target soonest, forecast through the schedule
(``core.prediction.forecast_through_schedule`` and ``plan_cooldown``), and its time at a step time.

A section of ``pages/plan.py``: widgets, cached calls into ``core`` and rendering only.
"""

from __future__ import annotations

import streamlit as st

from core.datasets import BUILTIN_LOG_SETS
from core.errors import PlannerError
from core.figures.schedule import cooldown_figure
from core.logs import RunLog
from core.prediction import (
    CooldownPlan,
    ScheduleForecast,
    cooldown_candidates,
    cooldown_forecast,
    decay_fractions_between,
    default_cooldown_target,
    in_progress,
    plan_cooldown,
)
from core.schedules import COOLDOWN_SHAPES
from core.targets import Target
from pages.shared.bounded import bounded_resource
from pages.shared.common import KEPT, SHARED, builtin_set_logs, chart, plain, table_download, target_text

#: the built-in set the section shows when no loaded run has a planned schedule and a falling target
EXAMPLE_SET = "lr_schedules"
#: the run and the fraction of it the built-in example opens on (a constant-rate run: when to cool down?)
EXAMPLE_RUN = "csv_100/constant_24000.csv"
SEEN = {"all": "all of it (a run in progress)", 0.25: "its first 25 %", 0.5: "its first 50 %",
        0.75: "its first 75 %"}


@bounded_resource(**SHARED)
def _forecast(log: RunLog, others: tuple[RunLog, ...], target: Target, observe: float | None) -> ScheduleForecast:
    return cooldown_forecast(log, others, target, observe=observe)


@bounded_resource(**SHARED)
def _plan(log: RunLog, others: tuple[RunLog, ...], target: Target, observe: float | None, shapes: tuple[str, ...],
          fractions: tuple[float, float], step_time_s: float) -> CooldownPlan:
    return plan_cooldown(_forecast(log, others, target, observe), shapes=shapes,
                         decay_fractions=decay_fractions_between(*fractions), step_time_s=step_time_s)


def schedule_section(logs: list[RunLog], target: Target | None) -> None:
    """Candidate cool-downs for a run under a planned schedule (module docstring); the seconds per step default to
    the run's own pace so far (type the step time at another GPU count: the plan above gives it)."""
    st.subheader("Schedule: which cool-down reaches the target soonest")
    candidates = cooldown_candidates(logs, target)
    example = not candidates
    if example:
        st.caption(plain("For a language-model run under a planned learning-rate schedule (a log with an lr column, a "
                         "NanoGPT speedrun, an MLPerf language-model log): the warmup-stable-decay cool-downs it "
                         "could take from here, forecast through the schedule, and the shortest that reaches a loss "
                         "target. No loaded run has a planned schedule and a falling target."))
        if not st.toggle(f"Show it on the built-in example ({BUILTIN_LOG_SETS[EXAMPLE_SET][0]})",
                         key="plan_schedule_example", **KEPT):
            return
        logs = builtin_set_logs(EXAMPLE_SET)
        candidates = cooldown_candidates(logs, None)
    names = [log.source for log in candidates]
    c1, c2, c3 = st.columns([3, 2, 2])
    default = EXAMPLE_RUN if example and EXAMPLE_RUN in names else names[0]
    name = c1.selectbox("Run", names, index=names.index(default), key="plan_schedule_run", **KEPT)
    log = next(lg for lg in candidates if lg.source == name)
    others = tuple(lg for lg in logs if lg.source != name)
    suggested = default_cooldown_target(log, others, target)
    value = c2.number_input(f"Target: {suggested.metric} ≤", value=float(suggested.value), format="%.4f",
                            key=f"plan_schedule_target_{name}", help="The loss the cool-down should reach; "
                            "default: the lowest another loaded run reached.")
    seen = c3.selectbox("Seen", list(SEEN), index=0 if in_progress(log) else 2, format_func=SEEN.get,
                        key=f"plan_schedule_seen_{name}",
                        help="A run in progress is planned from all it has logged; a finished run is cut, to compare "
                             "the plan with what it did.")
    c4, c5, c6 = st.columns([3, 2, 2])
    shapes = c4.multiselect("Cool-down shapes", list(COOLDOWN_SHAPES), default=["1-sqrt", "linear", "exp"],
                            key="plan_schedule_shapes", **KEPT)
    fractions = c5.slider("Cool-down, share of the steps", 0.05, 0.5, (0.1, 0.3), 0.05,
                          key="plan_schedule_fractions", **KEPT)
    if not shapes:
        st.info("Choose at least one cool-down shape.")
        return
    chosen = Target(suggested.metric, "<=", float(value), "user")
    try:
        with st.spinner("Forecasting through the schedule and its cool-downs…"):
            forecast = _forecast(log, others, chosen, None if seen == "all" else float(seen))
            if forecast.status == "reached":
                st.info(plain(f"{name} already reached {target_text(chosen)} at step {forecast.steps_to_target:,.0f} "
                              "in the part seen: choose a lower target to plan a cool-down towards."))
                return
            pace = forecast.seconds_per_step or 1.0
            per_step = c6.number_input("Seconds per step", value=float(pace), min_value=1e-6, format="%.4g",
                                       key=f"plan_schedule_step_time_{name}",
                                       help="Default: the run's own mean step time so far (1 s when its log has "
                                            "no times). Type the step time at the GPU count you plan (the plan "
                                            "above gives it) to time the cool-downs there.")
            plan = _plan(log, others, chosen, None if seen == "all" else float(seen), tuple(shapes),
                         tuple(fractions), float(per_step))
    except PlannerError as err:
        st.error(plain(f"{name}: {err}"), icon=":material/error:")
        return
    best = plan.shortest
    m1, m2, m3 = st.columns(3)
    if best is None:
        m1.metric(f"Shortest plan reaching {target_text(chosen)} (80 %)", "none in range")
    else:
        m1.metric(f"Shortest plan reaching {target_text(chosen)} (80 %)", f"{best['total_steps']:,.0f} steps")
        m1.caption(plain(f"{best['shape']} cool-down from step {best['decay_start']:,.0f} "
                         f"({best['decay_fraction']:.0%} of the steps); P = {best['p_reach']:.0%}"))
        m2.metric("Its training time", f"{best['total_time_s'] / 3600:,.2f} h",
                  help=plain(f"{best['total_steps']:,.0f} steps × {per_step:.4g} s per step."))
        if forecast.seconds_per_step is None and per_step == 1.0:
            m2.caption("At 1 s per step: the log has no times. Type the step time beside.")
        m2.caption(plain(f"{chosen.metric} at its end: {best['metric_at_end']:.4g} "
                         f"({best['metric_at_end_low']:.4g} – {best['metric_at_end_high']:.4g})"))
    m3.metric(f"Own plan ({forecast.schedule.total_steps:,.0f} steps) ends at", f"{forecast.metric_at_end:.4g}",
              help=plain(forecast.schedule.describe()))
    m3.caption(f"80 % band {forecast.metric_at_end_low:.4g} – {forecast.metric_at_end_high:.4g}")
    chart(cooldown_figure, forecast, plan, key="plan_schedule_chart", file_stem="cooldowns",
          inputs=(log.fingerprint(), chosen.spec, seen, tuple(shapes), tuple(fractions), float(per_step)))
    st.caption(plain(f"Seen to step {forecast.observed_step:,.0f}. Parameters: {forecast.sources_text()}. "
                     f"Each candidate holds the current rate, then cools down to 10 % of it; P is the chance "
                     f"its loss at its end is at the target (the band's spread there)."))
    for flag in forecast.flags:
        st.caption(":material/info: " + plain(flag))
    st.dataframe(plan.table.head(30), key="plan_schedule_table", hide_index=True)
    table_download(plan.table, key="plan_schedule_csv", file_name="cooldowns.csv")
