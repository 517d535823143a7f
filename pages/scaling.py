"""Scaling: parameter-server rounds, sync vs async updates, measured scaling, batch size (issue 6).

Every number on this page comes from the ``core.scaling`` facade (its modules ``ps_rounds``,
``sync_async``, ``table``, ``measured`` and ``batch_size``) through the small cached wrappers below;
every chart from ``core.figures.scaling``. The page only reads widgets, calls those wrappers and
renders; see docs/scaling.md for the formulas.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

import pandas as pd
import streamlit as st

from core.batch import TUNED_NOTE, BatchScaling
from core.datasets import BATCH_RUN_SETS, TRAINING_SET_SIZES
from core.errors import LogFormatError, PlannerError
from core.figures.batch import batch_samples_figure, efficiency_goodput_figure
from core.figures.scaling import (
    bandwidth_figure,
    comm_split_figure,
    efficiency_figure,
    lr_schedule_figure,
    measured_speedup_figure,
    ps_time_vs_machines_figure,
    ps_timeline_figure,
    sync_async_figure,
)
from core.plan import PolluxSpeedModel, fit_pollux_speed, goodput_curves, read_speed_csv
from core.scaling import (
    LARGE_BATCH_TEXT,
    LINK_PRESETS_GBPS,
    LOCAL_TRAINING_NOTE,
    POLLUX_DIR,
    ROUND_MODE_TEXT,
    ROUND_MODES,
    STALENESS_BOUND_SOURCES,
    STALENESS_BOUND_TEXT,
    UPDATE_COLUMNS,
    AsyncSchedule,
    BatchSizePlan,
    LocalTraining,
    MeasuredScaling,
    PSJob,
    PSRounds,
    SyncSchedule,
    async_schedule,
    batch_size_plan,
    filter_rows,
    local_schedule,
    local_then_send,
    parse_scaling_table,
    pollux_jobs,
    ps_rounds,
    ps_schedule,
    ps_time_vs_machines,
    read_pollux_trace,
    read_scaling_table,
    scaling_analysis,
    schedule_inputs,
    staleness_bound,
    sync_schedule,
)
from pages.shared.common import (
    BATCH_SOURCES,
    CACHE,
    SHARED,
    chart,
    frame_key,
    guarded,
    keep_valid_choice,
    load_batch_study,
    page_setup,
    plain,
    show_errors,
    table_download,
)

#: the worker table the sync/async section opens with (the example of tests/core/scaling/test_sync_async.py)
EXAMPLE_WORKERS = pd.DataFrame({"start_s": [0.0, 1.0, 0.5], "compute_1_s": [3.0, 1.0, 2.0],
                                "compute_2_s": [2.0, 1.0, 2.0], "compute_3_s": [None, None, None]})
#: the measured table the "edit a table" source opens with (docs/scaling.md, illustrative numbers)
EXAMPLE_TIMES = pd.DataFrame({"gpus": [1, 2, 4, 2, 4], "nodes": [1, 1, 1, 1, 2],
                              "batch_per_gpu": [128, 64, 32, 128, 128],
                              "epoch_time_s": [120.0, 70.0, 45.0, 64.0, 40.0]})
EXAMPLE_SAMPLES = TRAINING_SET_SIZES["cifar10"]
#: ResNet-18 for CIFAR-10 (10 classes), the parameter count used in docs/scaling.md
DEFAULT_PARAMS = 11_173_962
TYPED_IN = "(typed in)"
CUSTOM_LINK = "custom"
ITEMSIZES = {4: "4 bytes (float32)", 2: "2 bytes (float16 / bfloat16)", 8: "8 bytes (float64)",
             1: "1 byte (int8)"}
TRACE_FILES = {"both": "placements.csv + scalability.csv (1-GPU baseline)",
               "placements.csv": "placements.csv only", "scalability.csv": "scalability.csv only"}
SOURCES = {"builtin": "Built-in Pollux trace", "upload": "Upload a CSV", "edit": "Edit a table"}
#: the rounds radio's options, the round the result's last_round_* describe, and how per-epoch figures read
ROUND_LABELS = {"per-epoch": "new round each epoch", "continuous": "rounds run across epochs"}
LAST_ROUND = {"per-epoch": "the last round of an epoch", "continuous": "the last round of the run"}
PER_EPOCH_NOTE = {"per-epoch": "", "continuous": " on average"}
ALL = "all"
#: above this many comparisons the per-GPU batch filter starts on one batch, so bars stay legible
MAX_DEFAULT_ROWS = 40
SPEEDUP_COLUMNS = ["scaling", "config", "gpus", "nodes", "batch_per_gpu", "global_batch",
                   "baseline_gpus", "basis", "speedup", "ideal_speedup", "efficiency", "flags"]
SPLIT_COLUMNS = ["scaling", "config", "gpus", "batch_per_gpu", "step_time_s", "compute_est_s",
                 "communication_est_s", "comm_fraction", "steps_per_epoch", "epoch_time_s",
                 "compute_est_epoch_s", "communication_est_epoch_s", "allreduce_bytes_per_step",
                 "allreduce_bytes_per_epoch", "sync_time_s", "achieved_GB_per_s",
                 "achieved_GB_per_s_sync", "link_GB_per_s", "link_utilisation"]


def _secs(x: float) -> str:
    return f"{x:,.6g} s"


def _count(x: int | float) -> str:
    """A count as it is, an average (continuous rounds per epoch) to two decimals."""
    return f"{x:,}" if isinstance(x, int) else f"{x:,.2f}"


# ---------------------------------------------------------------- cached core calls
@st.cache_data(show_spinner=False, max_entries=256)
def _ps(n_samples: int, batch: int, epochs: int, machines: int, broadcast_s: float,
        compute_s: float, gather_s: float, aggregate_s: float, batch_kind: str, rounds: str,
        first_rounds: int) -> tuple[PSRounds, pd.DataFrame, pd.DataFrame, LocalTraining, pd.DataFrame]:
    job = PSJob(n_samples, batch=batch, epochs=epochs, machines=machines, broadcast_s=broadcast_s,
                compute_s=compute_s, gather_s=gather_s, aggregate_s=aggregate_s,
                batch_kind=batch_kind, rounds=rounds)
    return (ps_rounds(job), ps_schedule(job, first_rounds=first_rounds), ps_time_vs_machines(job),
            local_then_send(job), local_schedule(job))


@st.cache_data(show_spinner=False, max_entries=256)
def _schedules(workers: pd.DataFrame, aggregate_s: float, update_s: float
               ) -> tuple[SyncSchedule, AsyncSchedule]:
    starts, durations = schedule_inputs(workers)
    return (sync_schedule(starts, durations, aggregate_s=aggregate_s, update_s=update_s),
            async_schedule(starts, durations))


@st.cache_data(show_spinner=False, max_entries=64)
def _pollux_table(job: str, trace_file: str, n_samples: int | None) -> pd.DataFrame:
    if trace_file == "both":
        return read_pollux_trace(POLLUX_DIR / job, n_samples=n_samples)
    return read_scaling_table(POLLUX_DIR / job / trace_file, n_samples=n_samples)


@st.cache_data(show_spinner=False, max_entries=64)
def _parsed_table(data: bytes | pd.DataFrame, source: str, n_samples: int | None) -> pd.DataFrame:
    return parse_scaling_table(data, source=source, n_samples=n_samples)


@st.cache_data(show_spinner=False, max_entries=64)
def _analysis(table: pd.DataFrame, n_params: int, itemsize: int, link_gbps: float) -> MeasuredScaling:
    return scaling_analysis(table, n_params=n_params, itemsize=itemsize, link_gbps=link_gbps)


@st.cache_data(show_spinner=False, max_entries=64)
def _parameter_count(name: str) -> int:
    return int(_models().parameter_count(name))


@st.cache_data(show_spinner=False, max_entries=256)
def _batch_plan(batch: int, n_samples: int, base_batch: int, base_lr: float,
                warmup_epochs: float) -> BatchSizePlan:
    return batch_size_plan(batch, n_samples=n_samples, base_batch=base_batch, base_lr=base_lr,
                           warmup_epochs=warmup_epochs)


def _models() -> ModuleType | None:
    """``core.models`` (torch definitions of the course's models) when this build has it."""
    if importlib.util.find_spec("core.models") is None:
        return None
    try:
        return importlib.import_module("core.models")
    except ImportError:  # e.g. torch missing: fall back to a typed-in count
        return None


# ---------------------------------------------------------------- widget callbacks
def _on_source_or_job() -> None:
    """A new data source: its dataset size (known for cifar10 and imagenet; the example's)."""
    if st.session_state.get("scaling_source") == "builtin":
        job = st.session_state.get("scaling_job", "cifar10")
        st.session_state["scaling_n_samples"] = TRAINING_SET_SIZES.get(job, 0)
    elif st.session_state.get("scaling_source") == "edit":
        st.session_state["scaling_n_samples"] = EXAMPLE_SAMPLES


def _on_model() -> None:
    name = st.session_state.get("scaling_model", TYPED_IN)
    if name != TYPED_IN:
        st.session_state["scaling_params"] = _parameter_count(name)


def _on_params() -> None:
    st.session_state["scaling_model"] = TYPED_IN


def _on_link_preset() -> None:
    preset = st.session_state.get("scaling_link_preset")
    if preset in LINK_PRESETS_GBPS:
        st.session_state["scaling_link_gbps"] = LINK_PRESETS_GBPS[preset]


def _on_link_gbps() -> None:
    st.session_state["scaling_link_preset"] = CUSTOM_LINK


# ---------------------------------------------------------------- 1. parameter-server rounds
@st.fragment
@guarded("Scaling: ps")
def ps_section() -> None:
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
        r, schedule, curve, local, local_sched = _ps(*ps_inputs)
    except PlannerError as err:
        st.error(plain(str(err)), icon=":material/error:")
        return
    for flag in r.flags:
        st.warning(plain(flag), icon=":material/warning:")

    last_round = LAST_ROUND[r.rounds]
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Rounds", f"{r.total_rounds:,}",
              help=f"{_count(r.rounds_per_epoch)} per epoch{PER_EPOCH_NOTE[r.rounds]} over "
                   f"{r.minibatches_per_epoch:,} minibatches; {last_round} has {r.last_round_workers} "
                   f"of {int(machines)} workers.")
    m2.metric("Total time", _secs(r.total_time_s))
    m3.metric("Crossover m*", "none" if r.crossover_machines is None else f"{r.crossover_machines:,}",
              help="The smallest worker count at which broadcast + gather + m × aggregate exceeds a "
                   "round's compute (solved in closed form, exact on the decimals given).")
    m4.metric("Train locally, send once", _secs(local.total_time_s))
    st.caption(f"Per round: {_secs(r.round_time_s)} with all {int(machines)} workers, "
               f"{_secs(r.last_round_time_s)} for {last_round} "
               f"({r.last_round_workers} workers); {_count(r.rounds_per_epoch)} rounds and "
               f"{_secs(r.epoch_time_s)} an epoch{PER_EPOCH_NOTE[r.rounds]}; "
               f"per-worker batch {r.per_worker_batch:g}. "
               f"Total = compute {_secs(r.compute_time_s)} + communication "
               f"{_secs(r.communication_time_s)} + aggregation {_secs(r.aggregation_time_s)}.")
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
    l1.metric("Local training, total", _secs(local.total_time_s))
    l2.metric("Round model, total", _secs(local.rounds_total_time_s))
    l3.metric("Minibatches on the busiest worker", f"{local.local_minibatches:,}")
    st.caption(f"Receive the model once ({_secs(local.communication_time_s)} of broadcast + gather "
               f"in all), compute {_secs(local.compute_time_s)}, aggregate "
               f"{local.workers_used} models ({_secs(local.aggregation_time_s)}). "
               + LOCAL_TRAINING_NOTE)
    chart(ps_timeline_figure, local_sched, title="Train locally, send the model back once",
          panel_titles=("the whole run",), key="scaling_local_timeline_chart", file_stem="local_timeline",
          inputs=ps_inputs)


# ---------------------------------------------------------------- 2. sync vs async
@st.fragment
@guarded("Scaling: sync")
def sync_section() -> None:
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
        st.error(plain(str(err)), icon=":material/error:")
        return

    m = st.columns(5)
    m[0].metric("Sync step 1 completes", _secs(sync.step_end_s[0]))
    m[1].metric("Sync finishes", _secs(sync.finish_s))
    m[2].metric("Async finishes", _secs(async_.finish_s))
    m[3].metric("Stale gradients", f"{async_.n_stale} of {len(async_.updates)}")
    m[4].metric("Most updates missed (τ)", f"{async_.max_staleness}")
    st.caption("Synchronous steps complete at " + ", ".join(
        f"{_secs(t)} (step {i})" for i, t in enumerate(sync.step_end_s, start=1))
        + "; time each worker waited for the others: " + ", ".join(
        f"worker {i} {_secs(w)}" for i, w in enumerate(sync.wait_s, start=1)) + ".")
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


# ---------------------------------------------------------------- 3. measured scaling
def _measured_table() -> tuple[pd.DataFrame | None, str]:
    """The canonical table of the chosen source (None after showing the file's error)."""
    source = st.radio("Measured times", options=list(SOURCES), format_func=SOURCES.get, horizontal=True,
                      key="scaling_source", on_change=_on_source_or_job)
    st.session_state.setdefault("scaling_n_samples", TRAINING_SET_SIZES["cifar10"])
    c1, c2 = st.columns([3, 1])
    with c1:
        if source == "builtin":
            jobs = list(pollux_jobs())
            s1, s2 = st.columns(2)
            job = s1.selectbox("Pollux job", options=jobs, index=jobs.index("cifar10"), key="scaling_job",
                               on_change=_on_source_or_job,
                               help="Measured step times from the Pollux traces (OSDI 2021), "
                                    "data/pollux_traces/<job>/, Apache-2.0.")
            trace_file = s2.selectbox("Trace file", options=list(TRACE_FILES), format_func=TRACE_FILES.get,
                                      key="scaling_trace_file",
                                      help="scalability.csv alone has no 1-GPU rows: its baseline is "
                                           "its smallest GPU count.")
            name = f"{job}/{trace_file}"
        elif source == "upload":
            upload = st.file_uploader("Measured-times CSV", type=["csv", "txt"], key="scaling_upload",
                                      help="Columns gpus, batch_per_gpu and epoch_time_s or step_time_s "
                                           "(optional nodes, sync_time_s), or a Pollux scalability.csv / "
                                           "placements.csv. See docs/scaling.md.")
            name = upload.name if upload is not None else ""
        else:
            st.caption("Edit the cells, add or delete rows (one row per configuration; times in "
                       "seconds per epoch; upload a CSV for step times).")
            edited = st.data_editor(EXAMPLE_TIMES, key="scaling_edit_table", num_rows="dynamic",
                                    hide_index=True, width="stretch")
            name = "edited table"
    with c2:
        n_samples = st.number_input("Dataset size (samples per epoch)", min_value=0, step=1000,
                                    key="scaling_n_samples",
                                    help="Converts step times to epoch times and back (0: unknown). "
                                         "Known for cifar10 (50,000) and imagenet (1,281,167).")
    n = int(n_samples) or None
    try:
        if source == "builtin":
            return _pollux_table(job, trace_file, n), name
        if source == "upload":
            if upload is None:
                st.info("Upload a CSV of measured times to analyse it.", icon=":material/upload_file:")
                return None, name
            return _parsed_table(upload.getvalue(), name, n), name
        return _parsed_table(edited, name, n), name
    except LogFormatError as err:
        st.error(plain(str(err)), icon=":material/error:")
    except PlannerError as err:
        st.error(plain(f"{name}: {err}"), icon=":material/error:")
    return None, name


def _model_inputs() -> tuple[int, int, float]:
    """Parameter count (typed in or from core.models), itemsize and nominal link in Gbit/s."""
    st.session_state.setdefault("scaling_params", DEFAULT_PARAMS)
    st.session_state.setdefault("scaling_link_preset", "25 GbE")
    st.session_state.setdefault("scaling_link_gbps", LINK_PRESETS_GBPS["25 GbE"])
    models = _models()
    c = st.columns(5 if models is not None else 4)
    if models is not None:
        c[0].selectbox("Model", options=[TYPED_IN, *models.MODEL_NAMES], key="scaling_model",
                       on_change=_on_model, help="Fills the parameter count from core.models.")
        c = c[1:]
    n_params = c[0].number_input("Parameter count X", min_value=1, step=1, key="scaling_params",
                                 on_change=_on_params,
                                 help="Items in each all-reduce. Default: ResNet-18 for CIFAR-10 "
                                      f"({DEFAULT_PARAMS:,}).")
    itemsize = c[1].selectbox("Bytes per parameter", options=list(ITEMSIZES), format_func=ITEMSIZES.get,
                              key="scaling_itemsize")
    c[2].selectbox("Link", options=[*LINK_PRESETS_GBPS, CUSTOM_LINK], key="scaling_link_preset",
                   on_change=_on_link_preset, help="Nominal rates; pick the link between the nodes.")
    link = c[3].number_input("Link bandwidth (Gb/s)", min_value=0.001, step=1.0, key="scaling_link_gbps",
                             on_change=_on_link_gbps, help="Gigabits per second, as links are sold.")
    return int(n_params), int(itemsize), float(link)


def _filters(result: MeasuredScaling, name: str) -> MeasuredScaling:
    """Filter widgets; they start from their defaults again whenever the data set changes."""
    rows = result.rows
    batches = [ALL, *sorted(int(b) for b in rows["batch_per_gpu"].unique())]
    globals_ = [ALL, *sorted(int(b) for b in rows["global_batch"].unique())]
    many = len(filter_rows(result, fastest_only=True).rows) > MAX_DEFAULT_ROWS
    default_batch = batches[1] if many else ALL
    if st.session_state.get("scaling_filters_for") != name:
        st.session_state["scaling_filters_for"] = name
        st.session_state["scaling_filter_batch"] = default_batch
        st.session_state["scaling_filter_global"] = ALL
    keep_valid_choice("scaling_filter_batch", batches, default_batch)
    keep_valid_choice("scaling_filter_global", globals_, ALL)
    st.markdown("**Which comparisons to show**")
    c = st.columns([2, 3])
    kind = c[0].radio("Scaling", options=[ALL, "strong", "weak"], horizontal=True, key="scaling_filter_kind",
                      format_func={ALL: "both", "strong": "strong", "weak": "weak"}.get,
                      help="Strong: same global batch as the baseline. Weak: same per-GPU batch.")
    fastest = c[1].toggle("Fastest placement per GPU count", value=True, key="scaling_fastest",
                          help="For each GPU count and batch keep the placement over nodes with the "
                               "highest speed-up (a Pollux trace measures many).")
    c = st.columns(3)
    bpg = c[0].selectbox("Per-GPU batch", options=batches, key="scaling_filter_batch",
                         help=f"Starts on one batch when the data hold over {MAX_DEFAULT_ROWS} comparisons.")
    gb = c[1].selectbox("Global batch", options=globals_, key="scaling_filter_global")
    max_nodes = c[2].number_input("At most this many nodes (0: any)", min_value=0, value=0, step=1,
                                  key="scaling_filter_nodes")
    return filter_rows(result, scaling=None if kind == ALL else kind,
                       batch_per_gpu=None if bpg == ALL else bpg, global_batch=None if gb == ALL else gb,
                       max_nodes=int(max_nodes) or None, fastest_only=fastest)


@st.fragment
@guarded("Scaling: measured")
def measured_section() -> None:
    st.markdown("Measured times per GPU count and per-GPU batch → speed-up, parallel efficiency, "
                "where the time goes and how much of the network the all-reduce used. **Strong "
                "scaling**: same global batch as the baseline (the same work split over more GPUs). "
                "**Weak scaling**: same per-GPU batch (the global batch grows with the GPUs).")
    table, name = _measured_table()
    n_params, itemsize, link = _model_inputs()
    if table is None:
        return
    try:
        result = _analysis(table, n_params, itemsize, link)
    except PlannerError as err:
        text = str(err)
        st.error(plain(text if text.startswith(name) else f"{name}: {text}"), icon=":material/error:")
        return

    shown = _filters(result, name)
    m = st.columns(4)
    m[0].metric("Baseline GPUs N0", f"{result.baseline_gpus}")
    m[1].metric("Strong-scaling comparisons", f"{result.n_strong:,}")
    m[2].metric("Weak-scaling comparisons", f"{result.n_weak:,}")
    m[3].metric("Nominal link", f"{result.rows['link_GB_per_s'].iloc[0]:.4g} GB/s",
                help=f"{link:g} Gb/s ÷ 8 bits; 1 GB = 1e9 bytes.")
    st.info("\n".join(f"- {note}" for note in result.notes), icon=":material/info:")
    st.caption(f"{len(shown.rows):,} of {len(result.rows):,} comparisons shown (filters above).")
    if shown.rows.empty:
        st.warning("No comparison matches these filters.", icon=":material/filter_alt_off:")

    shown_key = (frame_key(shown.rows), shown.baseline_gpus, link)
    chart(measured_speedup_figure, shown, key="scaling_speedup_chart", file_stem="speedup", inputs=shown_key)
    chart(efficiency_figure, shown, key="scaling_efficiency_chart", file_stem="efficiency", inputs=shown_key)
    st.markdown("**Speed-up and parallel efficiency**")
    st.dataframe(shown.rows[SPEEDUP_COLUMNS], key="scaling_speedup_table", hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.4g")
                                for c in ("speedup", "ideal_speedup", "efficiency")})
    table_download(shown.rows[SPEEDUP_COLUMNS], key="scaling_speedup_csv", file_name="scaling_speedup.csv")

    per_epoch = st.toggle("Split per epoch (else per step)", key="scaling_split_per_epoch")
    chart(comm_split_figure, shown, per_epoch=per_epoch, key="scaling_split_chart", file_stem="comm_split",
          inputs=shown_key)
    st.caption("Compute and communication are **estimates**, not measurements: compute = the "
               "baseline's time per sample × the per-GPU batch (T1/N for strong scaling), "
               "communication = the rest of the measured time.")
    chart(bandwidth_figure, shown, key="scaling_bandwidth_chart", file_stem="allreduce_bandwidth", inputs=shown_key)
    st.markdown("**Where the time goes (estimate), all-reduce bytes and bandwidth achieved** "
                f"(lower bound 2·(N−1)/N · X · itemsize bytes per step; nominal link {link:g} Gb/s)")
    st.dataframe(shown.rows[SPLIT_COLUMNS], key="scaling_split_table", hide_index=True, width="stretch",
                 column_config={
                     **{c: st.column_config.NumberColumn(format="%.4g") for c in SPLIT_COLUMNS[4:]},
                     **{c: st.column_config.NumberColumn(format="compact")
                        for c in ("allreduce_bytes_per_step", "allreduce_bytes_per_epoch")},
                     "comm_fraction": st.column_config.NumberColumn(format="percent"),
                     "link_utilisation": st.column_config.NumberColumn(format="percent")})
    table_download(shown.rows[SPLIT_COLUMNS], key="scaling_split_csv", file_name="scaling_time_bandwidth.csv")


# ---------------------------------------------------------------- 4. batch size
@st.cache_resource(**SHARED)
def _set_speed(key: str) -> PolluxSpeedModel | PlannerError:
    entry = BATCH_RUN_SETS[key]
    try:
        return fit_pollux_speed(read_speed_csv(entry.speed_table_path(), source=entry.speed_table),
                                source=entry.speed_table)
    except PlannerError as err:     # remembered: a refused table is fitted once
        return err


@st.cache_data(**CACHE)
def _goodput(key: str, digest: str, target_acc: float, samples_per_epoch: int | None, _model: BatchScaling,
             _speed: PolluxSpeedModel | None, workers: tuple[int, ...]) -> pd.DataFrame:
    return goodput_curves(_model, speed=_speed, workers=workers)


def _on_batch_source() -> None:
    """A new run set: its usual target and data-set size."""
    entry = BATCH_RUN_SETS.get(st.session_state.get("scaling_batch_source"))
    if entry is not None:
        st.session_state["scaling_batch_target"] = entry.target_acc
        st.session_state["scaling_batch_samples"] = entry.samples_per_epoch or 0


def _batch_metrics(model: BatchScaling) -> None:
    def span(lo, hi) -> str:
        if lo is None or hi is None:
            return "no interval (two runs)" if model.method == "fit" else "no interval"
        what = f"{model.level:.0%} interval" if model.level else "range of the measured noise scale"
        return f"{what}: {_num(lo)} to {_num(hi)}"

    m = st.columns(4)
    m[0].metric("E_min (samples)", _num(model.e_min),
                help=f"Samples to target at a tiny batch; {span(model.e_min_low, model.e_min_high)}.")
    m[1].metric("B_noise", _num(model.b_noise), help=f"The noise scale (samples per step) where E(B) = 2·E_min; "
                                                     f"{span(model.b_noise_low, model.b_noise_high)}.")
    m[2].metric("S_min (steps)", _num(model.s_min), help="Steps to target at an infinite batch: no batch does better.")
    m[3].metric("Fit error (MAPE)", "—" if model.mape_pct is None else f"{model.mape_pct:.1f} %",
                help="Mean absolute percentage error of E(B) on the runs it was fitted to.")


def _num(x: float) -> str:
    return "∞" if x == float("inf") else (f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}")


@st.fragment
@guarded("Scaling: batch scaling")
def batch_scaling_section() -> None:
    st.markdown("Runs of one job at several global batches → samples to target against the batch, fitted by "
                "E(B) = E_min·(1 + B/B_noise) (McCandlish et al. 2018): up to the noise scale B_noise a larger "
                "batch costs few extra samples, beyond it each step buys little more than a smaller one. "
                "Statistical efficiency E_min/E(B) times throughput is the goodput Pollux maximises.")
    st.session_state.setdefault("scaling_batch_source", "mnist1d_batch")
    first = BATCH_RUN_SETS[next(iter(BATCH_RUN_SETS))]
    st.session_state.setdefault("scaling_batch_target", first.target_acc)
    st.session_state.setdefault("scaling_batch_samples", first.samples_per_epoch or 0)
    c = st.columns([3, 1, 1, 1])
    source = c[0].selectbox("Runs", options=list(BATCH_SOURCES), format_func=BATCH_SOURCES.get,
                            key="scaling_batch_source", on_change=_on_batch_source,
                            help="Built-in: MNIST-1D made here, Pollux traces, MLPerf v3.0 logs (data/README.md). "
                                 "Loaded: the sidebar's built-in sets and your uploads (each run's batch from its "
                                 "log or a -<batch> file-name suffix).")
    target = c[1].number_input("Target accuracy", min_value=0.01, max_value=0.999, step=0.005, format="%.3f",
                               key="scaling_batch_target")
    samples = c[2].number_input("Samples per epoch", min_value=0, step=1000, key="scaling_batch_samples",
                                help="Turns samples into epochs; 0: from the logs (MLLOG train_samples).")
    predict = c[3].number_input("Predict at batch", min_value=0, value=0, step=1024, key="scaling_batch_predict",
                                help="0: none.")
    study, errors, digest = load_batch_study(source, target_acc=float(target), samples_per_epoch=int(samples) or None)
    if study is None:
        st.info("No runs loaded: pick a built-in set, or load runs on the Logs page.", icon=":material/info:")
        return
    show_errors(errors + study.errors)
    for run in study.left_out:
        st.caption(":material/block: " + plain(f"{run.source}: {run.note}"))
    if study.model is None:
        st.error(plain(study.problem), icon=":material/error:")
        return
    model = study.model
    _batch_metrics(model)
    st.caption(plain(model.summary()))
    for flag in model.flags:
        st.caption(":material/info: " + plain(flag))
    st.info(TUNED_NOTE, icon=":material/tune:")
    key = (source, digest, float(target), int(samples))
    points = (float(predict),) if predict else ()
    chart(batch_samples_figure, model, predict=points, key="scaling_batch_chart", file_stem="samples_vs_batch",
          inputs=(*key, points))
    speed, workers = None, ()
    if BATCH_RUN_SETS.get(source) is not None and BATCH_RUN_SETS[source].speed_table:
        fitted = _set_speed(source)
        if isinstance(fitted, PlannerError):
            st.error(plain(str(fitted)), icon=":material/error:")
        else:
            speed = fitted
            workers = tuple(st.multiselect("Goodput at these GPU counts", options=[1, 2, 4, 8, 16, 32, 64],
                                           default=[4, 16, 64], key="scaling_batch_workers"))
            st.caption(f"Throughput from Pollux's model fitted to {BATCH_RUN_SETS[source].speed_table} "
                       f"(MAPE {speed.mape_pct:.1f} %), {speed.gpus_per_node} GPUs per node.")
    curves = _goodput(*key, model, speed, workers)
    chart(efficiency_goodput_figure, model, curves, key="scaling_goodput_chart", file_stem="efficiency_goodput",
          inputs=(*key, workers))
    shown = pd.DataFrame(model.table(points))
    st.dataframe(shown, key="scaling_batch_table", hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.4g") for c in shown.columns
                                if c not in ("source", "file", "region", "note")})
    table_download(shown, key="scaling_batch_csv", file_name="batch_scaling.csv")


@st.fragment
@guarded("Scaling: batch")
def batch_section() -> None:
    st.markdown("The linear learning-rate scaling rule with gradual warm-up (Goyal et al., 2017): "
                "for a batch k times the base batch, use k times the base learning rate, reached "
                "by a linear ramp over the first epochs.")
    c = st.columns(5)
    batch = c[0].number_input("Global batch B", min_value=1, value=1024, step=32, key="scaling_bs_batch")
    n_samples = c[1].number_input("Dataset size (samples)", min_value=1, value=50_000, step=1000,
                                  key="scaling_bs_samples")
    base_batch = c[2].number_input("Base batch B0", min_value=1, value=256, step=32, key="scaling_bs_base_batch")
    base_lr = c[3].number_input("Base learning rate η", min_value=1e-6, value=0.1, step=0.01, format="%.4f",
                                key="scaling_bs_base_lr")
    warmup = c[4].number_input("Warm-up epochs", min_value=0.0, value=5.0, step=1.0, key="scaling_bs_warmup")
    try:
        plan = _batch_plan(int(batch), int(n_samples), int(base_batch), float(base_lr), float(warmup))
    except PlannerError as err:
        st.error(plain(str(err)), icon=":material/error:")
        return
    m = st.columns(4)
    m[0].metric("Scale k = B / B0", f"{plan.scale:.4g}")
    m[1].metric("Learning rate k·η", f"{plan.lr:.4g}")
    m[2].metric("Steps per epoch", f"{plan.steps_per_epoch:,}")
    m[3].metric("Warm-up steps", f"{plan.warmup_steps:,}",
                help="No warm-up when k ≤ 1.")
    chart(lr_schedule_figure, plan, key="scaling_lr_chart", file_stem="lr_warmup",
          inputs=(int(batch), int(n_samples), int(base_batch), float(base_lr), float(warmup)))
    table_download(pd.DataFrame([plan.to_dict()]), key="scaling_bs_csv", file_name="batch_size_plan.csv")
    st.info(LARGE_BATCH_TEXT, icon=":material/info:")


# ---------------------------------------------------------------- page
@guarded("The Scaling page")
def main() -> None:
    page_setup()
    st.title("Scaling")
    st.caption("Size a parameter-server job on paper, see what asynchronous updates do, and read "
               "speed-up, efficiency, the communication share and the bandwidth used off measured "
               "times (your own or the Pollux traces). Formulas: docs/scaling.md.")
    tab_ps, tab_sync, tab_measured, tab_batch = st.tabs(
        ["Parameter-server rounds", "Sync vs async", "Measured scaling", "Batch size"])
    with tab_ps:
        ps_section()
    with tab_sync:
        sync_section()
    with tab_measured:
        measured_section()
    with tab_batch:
        batch_scaling_section()
        st.markdown("#### The linear learning-rate rule")
        batch_section()


main()
