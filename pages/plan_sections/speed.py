"""Plan page, the speed model f(p, w): the paper's θ, θ fitted on a speed table (Optimus or Pollux),
typed in, or the step time of a GPU transfer (``core.plan``).

A section of ``pages/plan.py``: widgets, cached calls into ``core`` and rendering only.
"""

from __future__ import annotations

import warnings

import pandas as pd
import streamlit as st

from core.datasets import builtin_speed_tables
from core.errors import FitWarning, InputError, LogFormatError, PlannerError
from core.plan import EXAMPLE_STEP_TIME, EXAMPLE_THETA_S
from core.speed import (
    SPEED_FAMILIES,
    THETA_NAMES,
    THETA_SOURCES,
    SpeedFit,
    SpeedModel,
    build_speed_model,
    fit_speed,
    has_parameter_servers,
    read_speed_csv,
    speed_model_choices,
)
from pages.shared.bounded import bounded_data, bounded_resource
from pages.shared.common import (
    CACHE,
    KEPT,
    SHARED,
    SPEED_UPLOADS,
    keep_valid_choice,
    plain,
    store_files,
)
from pages.shared.transfer import TRANSFERRED_STEPS

MODE_LABELS = {"sync": "synchronous (Eq. 4)", "async": "asynchronous (Eq. 3)",
               "allreduce": "all-reduce, no PS"}
THETA_LABELS = {"paper": "the paper's θ", "table": "fitted on a speed table", "typed": "typed in (seconds)",
                "transfer": "step time from a GPU transfer"}
SPEED_MODEL_LABELS = {**{name: f.label for name, f in SPEED_FAMILIES.items()},
                      "auto": "both: the smaller leave-one-out error"}
DEFAULT_SPEED_TABLE = "cifar10/scalability.csv"
SPEED_TABLE_HELP = ("CSV with columns `p` (optional; absent = all-reduce), `w`, a batch (`global_batch` or "
                    "`local_bsz`) and one speed (`steps_per_s`, `step_time_s`, `step_time` or "
                    "`samples_per_s`); see docs/plan.md.")
#: page state: ``(speed model, measured step (s, p, w) or None)`` of the last speed section run, read by the
#: Paleo section to calibrate Paleo on the same step
SPEED_IN_USE = "plan_speed_in_use"
TRANSFER_HELP = ("the paper's θ scaled to the step time the Throughput page's transfer estimated for one GPU "
                 "(calibrated on your measured step), taken as the step time at the (p, w) given")


@st.cache_data(**CACHE)
def _builtin_speed_bytes() -> dict[str, bytes]:
    return {name: path.read_bytes() for name, path in builtin_speed_tables()}


@bounded_data(**CACHE)
def _speed_table(data: bytes, name: str) -> pd.DataFrame | LogFormatError:
    try:
        return read_speed_csv(data, source=name)
    except LogFormatError as exc:      # remembered: a bad table is read once
        return exc


@bounded_resource(**{**SHARED, "show_spinner": "Fitting the speed families (leave-one-out) …"})
def _speed_fit(speed_model: str, mode: str, global_batch: float, table_name: str, table_data: bytes) -> SpeedFit:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitWarning)  # the model's flags say the same
        return fit_speed(_speed_table(table_data, table_name), family=speed_model, mode=mode, score=None,
                         global_batch=global_batch, source=table_name)


@bounded_data(**CACHE)
def _model(source: str, mode: str, global_batch: float, theta: tuple[float, ...] | None,
           table_name: str | None, table_data: bytes | None,
           step_time: tuple[float, int, int] | None) -> SpeedModel:
    table = _speed_table(table_data, table_name) if table_data is not None else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitWarning)  # the model's flags say the same
        return build_speed_model(source, mode=mode, global_batch=global_batch, theta=theta, table=table,
                                 table_name=table_name or "table", step_time=step_time)


def _mode_radio(modes: tuple[str, ...]) -> str:
    keep_valid_choice("plan_mode", modes)
    return st.radio("Training", modes, format_func=MODE_LABELS.get, key="plan_mode", **KEPT, horizontal=True)


def speed_section(global_batch: float, measured_step: tuple[float, str] | None = None) -> SpeedModel | None:
    """The speed model from the chosen θ source; None (with the reason shown) when there is none.

    ``measured_step``: the seconds per step the run chosen for the steps measured, and its name; the
    calibration to seconds opens on it (one worker), else on the course's example step."""
    source = st.radio("θ from", list(THETA_LABELS), format_func=THETA_LABELS.get, key="plan_theta_source", **KEPT,
                      help="\n\n".join(f"**{THETA_LABELS[k]}**: {v}" for k, v in THETA_SOURCES.items())
                      + f"\n\n**{THETA_LABELS['transfer']}**: {TRANSFER_HELP}")
    st.session_state[SPEED_IN_USE] = (None, None)
    try:
        if source == "paper":
            model = _paper_model(global_batch, measured_step)
        elif source == "table":
            model = _table_model(global_batch)
        elif source == "transfer":
            model = _transfer_model(global_batch)
        else:
            model = _typed_model(global_batch)
    except PlannerError as err:
        st.error(plain(str(err)), icon=":material/error:")
        return None
    st.session_state[SPEED_IN_USE] = (model, st.session_state[SPEED_IN_USE][1])
    return model


def _paper_model(global_batch: float, measured_step: tuple[float, str] | None = None) -> SpeedModel:
    mode = _mode_radio(("sync", "async"))
    st.session_state.setdefault("plan_calibrate", True)
    step_time = None
    if st.toggle("Calibrate to seconds", key="plan_calibrate", **KEPT,
                 help="Give one measured step time at some (p, w): every θ is scaled so the model's step time "
                      "there equals the measurement, and times become hours. Without it the paper's θ have no "
                      "unit: no hours, no cost."):
        c1, c2, c3 = st.columns(3)
        seconds, p0, w0 = EXAMPLE_STEP_TIME if measured_step is None else (measured_step[0], 1, 1)
        step = c1.number_input("step time (s)", min_value=1e-6, value=seconds, format="%.4g",
                               key="plan_cal_step_time", **KEPT,
                               help="The page opens on the chosen run's measured step (the median wall-clock "
                                    "time per step in its log, one worker) where it has one, else on the course's "
                                    "example; type your measurement.")
        p = c2.number_input("at p", min_value=1, value=p0, step=1, key="plan_cal_p", **KEPT)
        w = c3.number_input("at w", min_value=1, value=w0, step=1, key="plan_cal_w", **KEPT)
        if measured_step is not None and (float(step), int(p), int(w)) == (float(measured_step[0]), 1, 1):
            st.caption(plain(f"{measured_step[1]}'s measured step: {measured_step[0]:.4g} s at p = 1, w = 1 "
                             "(median wall-clock time per step in its log)."))
        step_time = (float(step), int(p), int(w))
        st.session_state[SPEED_IN_USE] = (None, step_time)
    return _model("paper", mode, global_batch, None, None, None, step_time)


def _transfer_model(global_batch: float) -> SpeedModel:
    """The paper's θ in seconds from a step time the Throughput page transferred to another GPU."""
    comparison = st.session_state.get(TRANSFERRED_STEPS)
    if comparison is None:
        raise InputError("Step time from a GPU transfer: expected one sent from the Throughput page; got none. "
                         "On Throughput, calibrate a transfer and press *Use these step times on the Plan page*.")
    mode = _mode_radio(("sync", "async"))
    devices = [row.prediction.device for row in comparison.rows]
    keep_valid_choice("plan_transfer_device", devices)
    c1, c2, c3 = st.columns([2, 1, 1])
    device = c1.selectbox("GPU", devices, key="plan_transfer_device", **KEPT)
    p = c2.number_input("at p", min_value=1, value=2, step=1, key="plan_transfer_p", **KEPT)
    w = c3.number_input("at w", min_value=1, value=1, step=1, key="plan_transfer_w", **KEPT)
    step = comparison.step_time_s(device)
    st.caption(f"{comparison.workload} on {device}: {step:.4g} s per step (estimate of the Throughput page's "
               f"transfer; {TRANSFER_HELP}).")
    st.session_state[SPEED_IN_USE] = (None, (float(step), int(p), int(w)))
    return _model("paper", mode, global_batch, None, None, None, (float(step), int(p), int(w)))


def _table_model(global_batch: float) -> SpeedModel:
    uploaded = st.file_uploader("Upload measured speeds (CSV)", type=["csv", "txt"], accept_multiple_files=True,
                                key="plan_speed_upload", help=SPEED_TABLE_HELP)
    before = set(st.session_state.get(SPEED_UPLOADS, {}))
    new = [n for n in store_files(uploaded, state_key=SPEED_UPLOADS) if n not in before]
    usable = {}
    for name, data in st.session_state[SPEED_UPLOADS].items():
        table = _speed_table(data, name)
        if isinstance(table, LogFormatError):
            st.error(plain(str(table)), icon=":material/error:")
        else:
            usable[f"uploaded: {name}"] = (name, data)
    usable.update({f"built-in: Pollux {n}": (n, b) for n, b in _builtin_speed_bytes().items()})
    default = f"built-in: Pollux {DEFAULT_SPEED_TABLE}"
    if new and f"uploaded: {new[-1]}" in usable:
        st.session_state["plan_speed_table"] = f"uploaded: {new[-1]}"
    st.session_state.setdefault("plan_speed_table", default)
    keep_valid_choice("plan_speed_table", usable, default=default)
    label = st.selectbox("Speed table", list(usable), key="plan_speed_table", **KEPT)
    if st.session_state[SPEED_UPLOADS] and st.button("Forget uploaded tables", key="plan_forget_speed",
                                                     icon=":material/delete:"):
        st.session_state[SPEED_UPLOADS] = {}
        st.rerun()
    name, data = usable[label]
    has_ps = has_parameter_servers(_speed_table(data, name))
    mode = _mode_radio(("sync", "async") if has_ps else ("allreduce",))
    choices = speed_model_choices(has_ps)
    keep_valid_choice("plan_speed_family", choices)
    speed_model = st.radio("Speed model", choices, format_func=SPEED_MODEL_LABELS.get, key="plan_speed_family",
                           **KEPT, horizontal=True, help="\n\n".join(f"**{f.label}**: {f.description}"
                                                                     for f in SPEED_FAMILIES.values())
                           + "\n\nBoth: each is refitted without each point in turn; the one that predicts the "
                             "left-out points better is used (docs/plan.md). Pollux's model has no parameter servers.")
    fit = _speed_fit(speed_model, mode, float(global_batch), name, data)
    if not fit.scored:
        model = fit.model
        st.caption(f"{model.source}: MAPE {model.mape_pct:.2f} % of the speeds. "
                   + ("" if has_ps else "The table has no parameter servers: all-reduce model, p ignored."))
        return model
    st.caption(plain(fit.note))
    st.dataframe(fit.table(), key="plan_speed_fits", hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.2f") for c in ("mape_pct", "loo_mape_pct")})
    return fit.model


def _typed_model(global_batch: float) -> SpeedModel:
    mode = _mode_radio(("sync", "async", "allreduce"))
    cols = st.columns(3)   # two rows of at most three: each box wide enough for 0.0004
    theta = tuple(cols[i % 3].number_input(f"θ{n.removeprefix('theta')}", min_value=0.0, value=default,
                                           format="%.4g", step=0.001, key=f"plan_theta_{mode}_{n}", **KEPT)
                  for i, (n, default) in enumerate(zip(THETA_NAMES[mode], EXAMPLE_THETA_S[mode])))
    return _model("typed", mode, global_batch, theta, None, None, None)
