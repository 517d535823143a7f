"""Plan page, the plan straight from MLPerf / language-model logs (``core.plan.plan_from_logs``): each log's GPU
count, global batch, step time and samples to target give time to target against GPUs.

A section of ``pages/plan.py``: widgets, cached calls into ``core`` and rendering only.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.errors import PlannerError
from core.figures.plan import tta_vs_workers_figure
from core.logs import RunLog
from core.plan import LogPlan, measured_configurations, plan_from_logs
from core.targets import Target
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


def can_plan_from_logs(logs, target: Target | None) -> bool:
    """Whether some loaded run has a GPU count, a global batch, a step time and its target reached."""
    return not _measured(tuple(logs), target).empty


def from_logs_section(logs, target: Target | None, answer) -> None:
    """Time to target against GPUs from the logs' own step times and samples to target."""
    logs = tuple(logs)
    measured = _measured(logs, target)
    batches = sorted({float(b) for b in measured["global_batch"]})
    c1, c2 = st.columns(2)
    batch = c1.selectbox("Global batch M (kept for every GPU count)", batches, index=len(batches) - 1,
                         key="plan_logs_batch", format_func=lambda b: f"{b:g}")
    price = c2.number_input("Price per GPU-hour", min_value=0.0, value=1.0, step=0.5, key="plan_logs_price")
    workers = tuple(sorted({*_BASE_WORKERS, *(int(w) for w in measured["w"])}))
    try:
        plan = _plan(logs, workers, float(batch), target, float(price))
    except PlannerError as err:
        answer.error(plain(str(err)), icon=":material/error:")
        return
    table = plan.table
    best = table.loc[table["time_s"].idxmin()]
    with answer:
        m1, m2 = st.columns(2)
        m1.metric("Fastest GPU count planned", f"{int(best['w']):,}", help="Among the counts planned.")
        m2.metric("Its time to target", f"{best['time_h']:.2f} h ({best['time_s']:,.0f} s)")
        chart(tta_vs_workers_figure, table, subtitle=f"from {len(measured)} measured log(s), global batch {batch:g}",
              key="plan_logs_chart", file_stem="time_to_target_from_logs")
    st.markdown("#### Measured configurations")
    st.dataframe(measured, key="plan_logs_measured", hide_index=True)
    for flag in plan.flags:
        st.caption(":material/info: " + plain(flag))
    st.dataframe(table, key="plan_logs_table", hide_index=True)
    table_download(table, key="plan_logs_csv", file_name="plan_from_logs.csv")
