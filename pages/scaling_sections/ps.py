"""Scaling page, parameter-server rounds: one server, m workers, the rounds of a job and where
communication outgrows compute (``core.scaling.ps_rounds``).

A section of ``pages/scaling.py``: widgets, cached calls into ``core`` and rendering only.
"""

from __future__ import annotations

import streamlit as st

from core.errors import PlannerError
from core.figures.scaling import (
    ps_time_vs_machines_figure,
    ps_timeline_figure,
)
from core.scaling import (
    LOCAL_TRAINING_NOTE,
    ROUND_MODE_TEXT,
    ROUND_MODES,
    PSJob,
    PSStudy,
    ps_study,
)
from pages.shared.bounded import bounded_data
from pages.shared.common import (
    chart,
    guarded,
    plain,
    table_download,
)

#: the rounds radio's options, the round the result's last_round_* describe, and how per-epoch figures read
ROUND_LABELS = {"per-epoch": "new round each epoch", "continuous": "rounds run across epochs"}
LAST_ROUND = {"per-epoch": "the last round of an epoch", "continuous": "the last round of the run"}
PER_EPOCH_NOTE = {"per-epoch": "", "continuous": " on average"}



def secs(x: float) -> str:
    return f"{x:,.6g} s"



def _count(x: int | float) -> str:
    """A count as it is, an average (continuous rounds per epoch) to two decimals."""
    return f"{x:,}" if isinstance(x, int) else f"{x:,.2f}"


@bounded_data(show_spinner=False)
def _ps(n_samples: int, batch: int, epochs: int, machines: int, broadcast_s: float,
        compute_s: float, gather_s: float, aggregate_s: float, batch_kind: str, rounds: str,
        first_rounds: int) -> PSStudy:
    job = PSJob(n_samples, batch=batch, epochs=epochs, machines=machines, broadcast_s=broadcast_s,
                compute_s=compute_s, gather_s=gather_s, aggregate_s=aggregate_s,
                batch_kind=batch_kind, rounds=rounds)
    return ps_study(job, first_rounds=first_rounds)


@st.fragment
@guarded("Scaling: ps")
def ps_section() -> None:
    answer = st.container()      # the answer first (rounds, total time, crossover), the inputs below it
    st.markdown("One server, *m* worker machines. A round: the server broadcasts the model, each "
                "worker computes one minibatch and sends its update back, the server aggregates "
                "the updates one after the other: **broadcast + compute + gather + k × aggregate** "
                "(the last round of an epoch, or of the run, may have fewer workers *k*).")
    c = st.columns([2, 2, 2, 1, 2, 2])
    n_samples = c[0].number_input("Dataset size (samples)", min_value=1, value=50_000, step=1000,
                                  key="scaling_ps_samples")
    batch_kind = c[1].radio("Batch is", options=["per_worker", "global"], key="scaling_ps_batch_kind",
                            format_func={"per_worker": "per worker", "global": "global (per round)"}.get,
                            help="Per worker: each worker's minibatch, compute time fixed as m "
                                 "changes (weak scaling). Global: samples per round over all "
                                 "workers; compute time is for one worker's share B/m and scales "
                                 "with it when m changes (strong scaling).")
    batch = c[2].number_input("Batch (samples)", min_value=1, value=128, step=1, key="scaling_ps_batch")
    epochs = c[3].number_input("Epochs", min_value=1, value=1, step=1, key="scaling_ps_epochs")
    rounds = c[4].radio("At an epoch boundary", options=list(ROUND_MODES), key="scaling_ps_rounds",
                        format_func=ROUND_LABELS.get,
                        help="; ".join(f"{ROUND_LABELS[mode]}: {text}" for mode, text in ROUND_MODE_TEXT.items())
                             + ". They differ when the workers do not divide an epoch's minibatches.")
    machines = c[5].number_input("Worker machines m", min_value=1, max_value=1024, value=8, step=1,
                                 key="scaling_ps_machines")
    c = st.columns(5)
    broadcast = c[0].number_input("Broadcast (s)", min_value=0.0, value=0.02, step=0.01, format="%.4f",
                                  key="scaling_ps_broadcast", help="Server → workers: the model.")
    compute = c[1].number_input("Compute per minibatch (s)", min_value=0.0001, value=0.1, step=0.01,
                                format="%.4f", key="scaling_ps_compute",
                                help="One worker's time for its minibatch (its share of the global "
                                     "batch at this m when the batch is global).")
    gather = c[2].number_input("Gather (s)", min_value=0.0, value=0.02, step=0.01, format="%.4f",
                               key="scaling_ps_gather", help="A worker → server: its update.")
    aggregate = c[3].number_input("Aggregate per update (s)", min_value=0.0, value=0.005, step=0.001,
                                  format="%.4f", key="scaling_ps_aggregate",
                                  help="Server time to fold in one worker's update (serial).")
    first = c[4].slider("First rounds drawn", min_value=1, max_value=5, value=2, key="scaling_ps_first_rounds")
    ps_inputs = (int(n_samples), int(batch), int(epochs), int(machines), float(broadcast), float(compute),
                 float(gather), float(aggregate), batch_kind, rounds, int(first))
    try:
        study = _ps(*ps_inputs)
    except PlannerError as err:
        answer.error(plain(str(err)), icon=":material/error:")
        return
    r, schedule, curve, local, local_sched = (study.rounds, study.schedule, study.time_vs_machines, study.local,
                                              study.local_schedule)
    with answer:
        for flag in r.flags:
            st.warning(plain(flag), icon=":material/warning:")

        last_round = LAST_ROUND[r.rounds]
        m1, m2, m3, m4 = st.columns(4)
        m1.metric("Rounds", f"{r.total_rounds:,}",
                  help=f"{_count(r.rounds_per_epoch)} per epoch{PER_EPOCH_NOTE[r.rounds]} over "
                       f"{r.minibatches_per_epoch:,} minibatches; {last_round} has {r.last_round_workers} "
                       f"of {int(machines)} workers.")
        m2.metric("Total time", secs(r.total_time_s))
        m3.metric("Crossover m*", "none" if r.crossover_machines is None else f"{r.crossover_machines:,}",
                  help="The smallest worker count at which broadcast + gather + m × aggregate exceeds a "
                       "round's compute (solved in closed form, exact on the decimals given).")
        m4.metric("Train locally, send once", secs(local.total_time_s))
        st.caption(f"Per round: {secs(r.round_time_s)} with all {int(machines)} workers, "
                   f"{secs(r.last_round_time_s)} for {last_round} "
                   f"({r.last_round_workers} workers); {_count(r.rounds_per_epoch)} rounds and "
                   f"{secs(r.epoch_time_s)} an epoch{PER_EPOCH_NOTE[r.rounds]}; "
                   f"per-worker batch {r.per_worker_batch:g}. "
                   f"Total = compute {secs(r.compute_time_s)} + communication "
                   f"{secs(r.communication_time_s)} + aggregation {secs(r.aggregation_time_s)}.")
        if r.crossover_machines is None:
            st.caption("No crossover: aggregation takes no time and broadcast + gather stay below "
                       "the compute time, so communication never outweighs computation.")
        else:
            st.caption(f"From m = {r.crossover_machines:,} workers on, communication and aggregation "
                       "(broadcast + gather + m × aggregate) take longer than the compute of a round: "
                       "the server's serial aggregation dominates and each extra worker saves less.")

    chart(ps_timeline_figure, schedule, title="Parameter-server rounds: the first rounds and the last",
          key="scaling_ps_timeline_chart", file_stem="ps_timeline", inputs=ps_inputs)
    chart(ps_time_vs_machines_figure, curve, crossover=r.crossover_machines,
          key="scaling_ps_time_chart", file_stem="ps_time_vs_machines", inputs=ps_inputs)
    with st.expander("Total time for each worker count (table)"):
        st.dataframe(curve, key="scaling_ps_curve_table", hide_index=True, width="stretch")
        table_download(curve, key="scaling_ps_curve_csv", file_name="ps_time_vs_machines.csv")
        table_download(schedule, key="scaling_ps_schedule_csv", file_name="ps_schedule.csv",
                       label="Timeline (CSV)")

    st.markdown("#### Train locally, then send the model back once")
    l1, l2, l3 = st.columns(3)
    l1.metric("Local training, total", secs(local.total_time_s))
    l2.metric("Round model, total", secs(local.rounds_total_time_s))
    l3.metric("Minibatches on the busiest worker", f"{local.local_minibatches:,}")
    st.caption(f"Receive the model once ({secs(local.communication_time_s)} of broadcast + gather "
               f"in all), compute {secs(local.compute_time_s)}, aggregate "
               f"{local.workers_used} models ({secs(local.aggregation_time_s)}). "
               + LOCAL_TRAINING_NOTE)
    chart(ps_timeline_figure, local_sched, title="Train locally, send the model back once",
          panel_titles=("the whole run",), key="scaling_local_timeline_chart", file_stem="local_timeline",
          inputs=ps_inputs)
