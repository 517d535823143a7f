"""Scaling page, measured scaling: speed-up, efficiency, the compute/communication split and the
all-reduce bandwidth of measured times (``core.scaling.table`` and ``measured``).

A section of ``pages/scaling.py``: widgets, cached calls into ``core`` and rendering only.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

import pandas as pd
import streamlit as st

from core.datasets import TRAINING_SET_SIZES
from core.errors import LogFormatError, PlannerError
from core.figures.scaling import (
    bandwidth_figure,
    comm_split_figure,
    efficiency_figure,
    measured_speedup_figure,
)
from core.scaling import (
    DEFAULT_PARAMS,
    LINK_PRESETS_GBPS,
    POLLUX_DIR,
    MeasuredScaling,
    filter_rows,
    parse_scaling_table,
    pollux_jobs,
    read_pollux_trace,
    read_scaling_table,
    scaling_analysis,
)
from pages.shared.bounded import bounded_data
from pages.shared.common import (
    chart,
    frame_key,
    guarded,
    keep_valid_choice,
    plain,
    table_download,
)

#: the measured table the "edit a table" source opens with (docs/scaling.md, illustrative numbers)
EXAMPLE_TIMES = pd.DataFrame({"gpus": [1, 2, 4, 2, 4], "nodes": [1, 1, 1, 1, 2],
                              "batch_per_gpu": [128, 64, 32, 128, 128],
                              "epoch_time_s": [120.0, 70.0, 45.0, 64.0, 40.0]})
EXAMPLE_SAMPLES = TRAINING_SET_SIZES["cifar10"]
TYPED_IN = "(typed in)"
CUSTOM_LINK = "custom"
ITEMSIZES = {4: "4 bytes (float32)", 2: "2 bytes (float16 / bfloat16)", 8: "8 bytes (float64)",
             1: "1 byte (int8)"}
TRACE_FILES = {"both": "placements.csv + scalability.csv (1-GPU baseline)",
               "placements.csv": "placements.csv only", "scalability.csv": "scalability.csv only"}
SOURCES = {"builtin": "Built-in Pollux trace", "upload": "Upload a CSV", "edit": "Edit a table"}
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



@st.cache_data(show_spinner=False, max_entries=64)
def _pollux_table(job: str, trace_file: str, n_samples: int | None) -> pd.DataFrame:
    if trace_file == "both":
        return read_pollux_trace(POLLUX_DIR / job, n_samples=n_samples)
    return read_scaling_table(POLLUX_DIR / job / trace_file, n_samples=n_samples)

@bounded_data(show_spinner=False)
def _parsed_table(data: bytes | pd.DataFrame, source: str, n_samples: int | None) -> pd.DataFrame:
    return parse_scaling_table(data, source=source, n_samples=n_samples)

@bounded_data(show_spinner=False)
def _analysis(table: pd.DataFrame, n_params: int, itemsize: int, link_gbps: float) -> MeasuredScaling:
    return scaling_analysis(table, n_params=n_params, itemsize=itemsize, link_gbps=link_gbps)

@st.cache_data(show_spinner=False, max_entries=64)
def _parameter_count(name: str) -> int:
    return int(_models().parameter_count(name))

def _models() -> ModuleType | None:
    """``core.models`` (torch definitions of the course's models) when this build has it."""
    if importlib.util.find_spec("core.models") is None:
        return None
    try:
        return importlib.import_module("core.models")
    except ImportError:  # e.g. torch missing: fall back to a typed-in count
        return None

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
    answer = st.container()     # the answer first, above the inputs that feed it (issue 36)
    table, name = _measured_table()
    n_params, itemsize, link = _model_inputs()
    if table is None:
        return
    try:
        result = _analysis(table, n_params, itemsize, link)
    except PlannerError as err:
        text = str(err)
        answer.error(plain(text if text.startswith(name) else f"{name}: {text}"), icon=":material/error:")
        return

    shown = _filters(result, name)
    with answer:
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
