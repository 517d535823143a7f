"""Plan page, the plan straight from MLPerf / language-model logs: each log's GPU count, global batch, step time
and samples to target give time to target against GPUs, by the same call as ``python -m core plan --from-logs``
(``core.plan.plan_from_logs``: the speed family chosen by leave-one-size-out unless one is picked, the samples
from the logs, a batch-scaling fit or MLCommons' reference points).  The headline answers what a team decides
(``core.plan.plan_decisions``): the time at the count chosen, the efficiency knee, the cheapest count that meets
a deadline.

A section of ``pages/plan.py``: widgets, cached calls into ``core`` and rendering only.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.errors import PlannerError
from core.figures.plan import tta_vs_workers_figure
from core.logs import RunLog
from core.plan import (
    LogPlan,
    default_device_for,
    duration_text,
    knee_value,
    log_speed_choices,
    measured_configurations,
    plan_decisions,
    plan_from_logs,
)
from core.speed import SPEED_FAMILIES
from core.targets import Target
from core.transformer import ACCELERATORS
from pages.shared.bounded import bounded_data, bounded_resource
from pages.shared.common import CACHE, SHARED, chart, plain, table_download

#: the GPU counts planned: powers of two and the counts the logs measured
_BASE_WORKERS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)
#: the device choice that keeps the logs' own device
SAME_DEVICE = ""


@bounded_resource(**SHARED)
def _measured(logs: tuple[RunLog, ...], target: Target | None) -> pd.DataFrame:
    return measured_configurations(list(logs), target)[0]


@bounded_resource(**SHARED)
def _default_device(logs: tuple[RunLog, ...], target: Target | None) -> str | None:
    return default_device_for(list(logs), target)


@bounded_data(**CACHE)
def _plan(logs: tuple[RunLog, ...], workers: tuple[int, ...], global_batch: float, target: Target | None,
          price: float, model: str, device: str | None) -> LogPlan:
    return plan_from_logs(list(logs), workers, global_batch=global_batch, target=target, price_worker=price,
                          model=model, device=device)


def can_plan_from_logs(logs, target: Target | None) -> bool:
    """Whether some loaded run has a GPU count, a global batch, a step time and its target reached."""
    return not _measured(tuple(logs), target).empty


def _model_label(name: str) -> str:
    if name == "auto":
        return "auto: chosen by leave-one-size-out (as the CLI)"
    family = SPEED_FAMILIES[name]
    return f"{family.label}: {family.formulas.get('allreduce', family.description)}"


def from_logs_section(logs, target: Target | None, answer) -> None:
    """Time to target against GPUs from the logs, the decisions first."""
    logs = tuple(logs)
    measured = _measured(logs, target)
    batches = sorted({float(b) for b in measured["global_batch"]})
    own = _default_device(logs, target)
    workers = tuple(sorted({*_BASE_WORKERS, *(int(w) for w in measured["w"])}))
    c1, c2, c3 = st.columns(3)
    batch = c1.selectbox("Global batch M (kept for every GPU count)", batches, index=len(batches) - 1,
                         key="plan_logs_batch", format_func=lambda b: f"{b:g}")
    devices = [SAME_DEVICE, *(d for d in ACCELERATORS if d != own)]
    device = c3.selectbox("Device", devices, key="plan_logs_device",
                          format_func=lambda d: f"the logs' own ({own or 'unknown'})" if d == SAME_DEVICE
                          else f"{d} (the transformer model transfers the logs' step)")
    choices = log_speed_choices(device or None)                # on another device: core's one family
    model = c2.selectbox("Step time on w GPUs", choices, key="plan_logs_model", format_func=_model_label,
                         disabled=len(choices) == 1,
                         help="On another device the transformer model plans (the one family that knows devices). "
                              if device else "A speed family fitted to the logs' measured steps. auto compares them "
                              "by leaving one GPU count out and predicting it, when the logs measured three or more.")
    d1, d2, d3 = st.columns(3)
    chosen_w = d1.selectbox("GPU count you plan on", workers, index=workers.index(int(measured["w"].max())),
                            key="plan_logs_w", format_func=lambda w: f"{w:,}")
    deadline = d2.number_input("Deadline (hours; 0 = none)", min_value=0.0, value=0.0, step=0.25,
                               key="plan_logs_deadline")
    price = d3.number_input("Price per GPU-hour", min_value=0.0, value=1.0, step=0.5, key="plan_logs_price")
    try:
        plan = _plan(logs, workers, float(batch), target, float(price), model, device or None)
        decisions = plan_decisions(plan.table, w=int(chosen_w), deadline_h=float(deadline) or None)
    except PlannerError as err:
        answer.error(plain(str(err)), icon=":material/error:")
        return
    table = plan.table
    used = plan.speed.chosen
    with answer:
        m1, m2, m3 = st.columns(3)
        c = decisions.chosen
        m1.metric(f"Time to target on {c.w:,} GPUs", duration_text(c.time_s), help=plain(c.text))
        m1.caption(plain(f"80 % interval {duration_text(c.time_low)}–{duration_text(c.time_high)}"))
        k = decisions.knee
        m2.metric("Efficiency knee", knee_value(k, table), help=plain(k.text))
        m2.caption(plain(k.text))
        if decisions.deadline is None:
            m3.metric("Cheapest count meeting a deadline", "no deadline set")
            m3.caption("Set a deadline below.")
        else:
            dl = decisions.deadline
            m3.metric(f"Cheapest count within {deadline:g} h", f"{dl.w:,} GPUs" if dl.found else "none",
                      help=plain(dl.text))
            m3.caption(plain(dl.text))
        where = table["device"].iloc[0] or "the logs' device"
        chart(tta_vs_workers_figure, table,
              subtitle=f"{len(measured)} measured log(s), global batch {batch:g}, step time: {used} "
                       f"({SPEED_FAMILIES[used].label}) on {where}",
              key="plan_logs_chart", file_stem="time_to_target_from_logs")
    st.markdown("#### Measured configurations")
    st.dataframe(measured, key="plan_logs_measured", hide_index=True)
    if not plan.speed.scores.empty:
        st.markdown("#### Speed families, leave one GPU count out")
        st.dataframe(plan.speed.scores, key="plan_logs_scores", hide_index=True)
    with st.expander(f"What this plan rests on ({len(plan.flags)} notes: speed model, samples, logs left out)",
                     icon=":material/info:"):
        for flag in plan.flags:
            st.caption(plain(flag))
    st.dataframe(table, key="plan_logs_table", hide_index=True)
    table_download(table, key="plan_logs_csv", file_name="plan_from_logs.csv")
