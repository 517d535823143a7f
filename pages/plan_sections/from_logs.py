"""Plan page, the plan straight from MLPerf / language-model logs: each log's GPU count, global batch, step time
and samples to target give time to target against GPUs.  The step time on ``w`` GPUs comes from the transformer
speed model calibrated on the logs' measured steps, on the logs' device or another (``core.plan.plan_on_device``,
the default for a known language-model benchmark), or from a fit to the logs' step times alone
(``core.plan.plan_from_logs``).

A section of ``pages/plan.py``: widgets, cached calls into ``core`` and rendering only.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.errors import PlannerError
from core.figures.plan import tta_vs_workers_figure
from core.logs import RunLog
from core.plan import (
    DevicePlan,
    LogPlan,
    default_device_for,
    fastest_configuration,
    measured_configurations,
    plan_from_logs,
    plan_on_device,
)
from core.targets import Target
from core.transformer import ACCELERATORS
from pages.shared.common import CACHE, SHARED, chart, plain, table_download

#: the GPU counts planned: powers of two and the counts the logs measured
_BASE_WORKERS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)


@st.cache_resource(**SHARED)
def _measured(logs: tuple[RunLog, ...], target: Target | None) -> pd.DataFrame:
    return measured_configurations(list(logs), target)[0]


@st.cache_data(**CACHE)
def _plan(logs: tuple[RunLog, ...], workers: tuple[int, ...], global_batch: float, target: Target | None,
          price: float) -> LogPlan:
    return plan_from_logs(list(logs), workers, global_batch=global_batch, target=target, price_worker=price)


@st.cache_resource(**SHARED)
def _default_device(logs: tuple[RunLog, ...], target: Target | None) -> str | None:
    return default_device_for(list(logs), target)


@st.cache_data(**CACHE)
def _plan_on_device(logs: tuple[RunLog, ...], device: str, workers: tuple[int, ...], global_batch: float,
                    target: Target | None, price: float) -> DevicePlan:
    return plan_on_device(list(logs), None, device, workers, global_batch=global_batch, target=target,
                          price_worker=price)


#: the speed choice that plans from the logs' own step times (every other choice is a device of the transformer model)
MEASURED = "measured"


def can_plan_from_logs(logs, target: Target | None) -> bool:
    """Whether some loaded run has a GPU count, a global batch, a step time and its target reached."""
    return not _measured(tuple(logs), target).empty


def from_logs_section(logs, target: Target | None, answer) -> None:
    """Time to target against GPUs from the logs' own step times and samples to target."""
    logs = tuple(logs)
    measured = _measured(logs, target)
    batches = sorted({float(b) for b in measured["global_batch"]})
    default = _default_device(logs, target)
    c1, c2, c3 = st.columns(3)
    batch = c1.selectbox("Global batch M (kept for every GPU count)", batches, index=len(batches) - 1,
                         key="plan_logs_batch", format_func=lambda b: f"{b:g}")
    choices = [default, *(d for d in ACCELERATORS if d != default), MEASURED] if default else [MEASURED]
    speed = c2.selectbox("Step time on w GPUs", choices, key="plan_logs_speed",
                         format_func=lambda d: "the logs' step times, fitted (no model)" if d == MEASURED
                         else f"transformer model on {d}" + (" (the logs' device)" if d == default else ""),
                         help="The transformer model is calibrated on the logs' measured steps and transfers them "
                              "to other GPU counts and devices; the fit uses the measured step times alone.")
    price = c3.number_input("Price per GPU-hour", min_value=0.0, value=1.0, step=0.5, key="plan_logs_price")
    workers = tuple(sorted({*_BASE_WORKERS, *(int(w) for w in measured["w"])}))
    try:
        if speed == MEASURED:
            plan = _plan(logs, workers, float(batch), target, float(price))
            how = "the logs' step times, fitted"
        else:
            plan = _plan_on_device(logs, speed, workers, float(batch), target, float(price))
            how = f"the transformer model on {speed}"
    except PlannerError as err:
        answer.error(plain(str(err)), icon=":material/error:")
        return
    table = plan.table
    best = fastest_configuration(table)
    with answer:
        m1, m2 = st.columns(2)
        m1.metric("Fastest GPU count planned", f"{int(best['w']):,}", help="Among the counts planned.")
        m2.metric("Its time to target", f"{best['time_h']:.2f} h ({best['time_s']:,.0f} s)",
                  help=f"Interval {best['time_h_low']:.2f}–{best['time_h_high']:.2f} h (the samples to "
                       "target's range between the logs, times the speed model's leave-one-out band).")
        chart(tta_vs_workers_figure, table,
              subtitle=f"from {len(measured)} measured log(s), global batch {batch:g}, step time from {how}",
              key="plan_logs_chart", file_stem="time_to_target_from_logs")
    st.markdown("#### Measured configurations")
    st.dataframe(measured, key="plan_logs_measured", hide_index=True)
    with st.expander(f"What this plan rests on ({len(plan.flags)} notes: sources, logs left out, calibration)",
                     icon=":material/info:"):
        for flag in plan.flags:
            st.caption(plain(flag))
    st.dataframe(table, key="plan_logs_table", hide_index=True)
    table_download(table, key="plan_logs_csv", file_name="plan_from_logs.csv")
