"""Scaling page, sync vs async: the schedules of a worker table, stale gradients and their bound
(``core.scaling.sync_async``).

A section of ``pages/scaling.py``: widgets, cached calls into ``core`` and rendering only.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.errors import PlannerError
from core.figures.scaling import (
    sync_async_figure,
)
from core.scaling import (
    STALENESS_BOUND_SOURCES,
    STALENESS_BOUND_TEXT,
    UPDATE_COLUMNS,
    AsyncSchedule,
    SyncSchedule,
    async_schedule,
    schedule_inputs,
    staleness_bound,
    sync_schedule,
)
from pages.scaling_sections.ps import secs
from pages.shared.bounded import bounded_data
from pages.shared.common import (
    chart,
    frame_key,
    guarded,
    plain,
    table_download,
)

#: the worker table the sync/async section opens with (the example of tests/core/scaling/test_sync_async.py)
EXAMPLE_WORKERS = pd.DataFrame({"start_s": [0.0, 1.0, 0.5], "compute_1_s": [3.0, 1.0, 2.0],
                                "compute_2_s": [2.0, 1.0, 2.0], "compute_3_s": [None, None, None]})



@bounded_data(show_spinner=False)
def _schedules(workers: pd.DataFrame, aggregate_s: float, update_s: float
               ) -> tuple[SyncSchedule, AsyncSchedule]:
    starts, durations = schedule_inputs(workers)
    return (sync_schedule(starts, durations, aggregate_s=aggregate_s, update_s=update_s),
            async_schedule(starts, durations))



@st.fragment
@guarded("Scaling: sync")
def sync_section() -> None:
    answer = st.container()      # the answer first (when each schedule finishes, the stale gradients)
    st.markdown("One row per worker: when it starts and how long each of its gradients takes "
                "(blank cells at the end of a row: fewer gradients). Synchronous: the server "
                "aggregates every gradient of a step, applies the update, and all workers start the "
                "next step together. Asynchronous: each gradient is applied the moment it arrives "
                "and its worker goes on at once with the parameters it then reads.")
    c1, c2 = st.columns([3, 1])
    with c1:
        workers = st.data_editor(
            EXAMPLE_WORKERS, key="scaling_workers", num_rows="dynamic", hide_index=True, width="stretch",
            column_config={
                "start_s": st.column_config.NumberColumn("start (s)", min_value=0.0, format="%g"),
                **{f"compute_{i}_s": st.column_config.NumberColumn(f"gradient {i} (s)", min_value=0.0,
                                                                    format="%g") for i in (1, 2, 3)}})
    with c2:
        aggregate = st.number_input("Aggregate per gradient (s)", min_value=0.0, value=0.25, step=0.05,
                                    key="scaling_sync_aggregate", help="Synchronous case only.")
        update = st.number_input("Apply the update (s)", min_value=0.0, value=0.5, step=0.05,
                                 key="scaling_sync_update", help="Synchronous case only.")
    try:
        sync, async_ = _schedules(workers, float(aggregate), float(update))
    except PlannerError as err:
        answer.error(plain(str(err)), icon=":material/error:")
        return

    m = answer.columns(5)
    m[0].metric("Sync step 1 completes", secs(sync.step_end_s[0]))
    m[1].metric("Sync finishes", secs(sync.finish_s))
    m[2].metric("Async finishes", secs(async_.finish_s))
    m[3].metric("Stale gradients", f"{async_.n_stale} of {len(async_.updates)}")
    m[4].metric("Most updates missed (τ)", f"{async_.max_staleness}")
    answer.caption("Synchronous steps complete at " + ", ".join(
        f"{secs(t)} (step {i})" for i, t in enumerate(sync.step_end_s, start=1))
        + "; time each worker waited for the others: " + ", ".join(
        f"worker {i} {secs(w)}" for i, w in enumerate(sync.wait_s, start=1)) + ".")
    chart(sync_async_figure, sync, async_, key="scaling_sync_chart", file_stem="sync_vs_async",
          inputs=(frame_key(workers), float(aggregate), float(update)))

    st.markdown("**Asynchronous updates in the order applied.** Staleness = the updates a gradient "
                "missed between reading the parameters and being applied (0: fresh).")
    st.dataframe(async_.updates, key="scaling_async_table", hide_index=True, width="stretch",
                 column_order=list(UPDATE_COLUMNS))
    table_download(async_.updates, key="scaling_async_csv", file_name="async_updates.csv")

    st.markdown("#### How far a stale gradient's parameters can be")
    st.info(STALENESS_BOUND_TEXT, icon=":material/functions:")
    b1, b2, b3 = st.columns(3)
    eta = b1.number_input("Step size η", min_value=1e-6, value=0.1, step=0.01, format="%.4f",
                          key="scaling_bound_eta")
    delta = b2.number_input("Gradient norm bound Δ", min_value=1e-6, value=1.0, step=0.1, format="%.4f",
                            key="scaling_bound_delta")
    b3.metric(f"η·τ·Δ with τ = {async_.max_staleness} (this schedule)",
              f"{staleness_bound(float(eta), async_.max_staleness, float(delta)):.4g}")
    st.caption("Sources: " + " · ".join(STALENESS_BOUND_SOURCES))
