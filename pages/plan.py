"""Plan: time and cost to the target against workers and parameter servers (Optimus speed model).

Steps to target (a run on the Logs page, the Calibrate page's prediction, or typed in)
divided by the speed ``f(p, w)`` (the paper's θ, θ fitted on a speed table, or typed in)
gives the time to target of every configuration; prices give its cost.  Every number comes
from ``core`` (``core.plan.steps``, ``core.plan.speed``, ``core.plan.grid``, ``core.figures.plan``).
"""

from __future__ import annotations

import warnings

import pandas as pd
import streamlit as st

from core.datasets import builtin_datasets_by_file, builtin_speed_tables
from core.errors import FitWarning, LogFormatError, PlannerError
from core.figures.plan import time_cost_figure, tta_vs_workers_figure
from core.logs.naming import parse_run_name
from core.paleo import DEVICES, NETWORKS, PPP_PRESETS, list_nets, load_net
from core.plan.grid import (
    COST_LATEX,
    TIME_LATEX,
    Allocation,
    best_workers,
    cheapest_config,
    display_time,
    greedy_allocation,
    plan_grid,
    suggest_deadline,
)
from core.plan.paleo_time import paleo_net_for, paleo_time_to_target
from core.plan.speed import (
    FORMULAS_LATEX,
    PAPER_GLOBAL_BATCH,
    THETA_NAMES,
    SpeedModel,
    calibrate_time_unit,
    fit_speed_model,
    paper_speed_model,
)
from core.plan.speed_table import has_parameter_servers, read_speed_table
from core.plan.steps import (
    FAMILY_METHOD,
    RUN_METHODS,
    StepsEstimate,
    steps_from_prediction,
    steps_from_run,
    steps_from_target_prediction,
    typed_steps,
)
from core.prediction.backtest import inflation_from_other_runs
from core.prediction.intervals import FitCache
from core.prediction.predict import n_epochs, predict_epoch_at_target, widen
from pages.shared.common import (
    CALIBRATE_PREDICTION,
    FAMILY,
    ROUTE,
    SPEED_UPLOADS,
    chart,
    keep_valid_choice,
    load_runs,
    page_setup,
    show_errors,
    store_files,
    table_download,
    target_slider,
)

MODE_LABELS = {"sync": "synchronous (Eq. 4)", "async": "asynchronous (Eq. 3)",
               "allreduce": "all-reduce, no PS"}
THETA_SOURCES = {"paper": "the paper's θ (no unit)", "table": "fitted on a speed table",
                 "typed": "typed in (seconds)"}
STEPS_SOURCES = {"run": "a run on the Logs page", "calibrate": "the Calibrate page's prediction",
                 "typed": "a number typed in"}
#: starting values of the typed-in θ (seconds): the paper's θ at 0.02 s per paper unit, and
#: the all-reduce fit of Pollux's cifar10 trace (docs/plan.md)
EXAMPLE_THETA_S = {"sync": (0.0204, 0.0556, 0.0984, 0.0, 0.0004), "async": (0.0566, 0.0784, 0.0, 0.0022),
                   "allreduce": (0.000594, 0.092, 0.00207)}
DEFAULT_SPEED_TABLE = "cifar10/scalability.csv"
SPEED_TABLE_HELP = ("CSV with columns `p` (optional; absent = all-reduce), `w`, a batch (`global_batch` or "
                    "`local_bsz`) and one speed (`steps_per_s`, `step_time_s`, `step_time` or "
                    "`samples_per_s`); see docs/plan.md.")


# ---------------------------------------------------------------- cached core calls
@st.cache_data(show_spinner=False)
def _builtin_speed_bytes() -> dict[str, bytes]:
    return {name: path.read_bytes() for name, path in builtin_speed_tables()}


@st.cache_data(show_spinner=False, max_entries=256)
def _speed_table(data: bytes, name: str) -> pd.DataFrame:
    return read_speed_table(data, source=name)


@st.cache_data(show_spinner=False, max_entries=256)
def _fitted_model(data: bytes, name: str, mode: str, global_batch: float) -> SpeedModel:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitWarning)  # the model's flags say the same
        return fit_speed_model(_speed_table(data, name), mode=mode, global_batch=global_batch, source=name)


@st.cache_data(show_spinner=False, max_entries=256)
def _run_steps(table: pd.DataFrame, fit, run: str, method: str, loss_threshold: float | None) -> StepsEstimate:
    return steps_from_run(table, fit, run=run, method=method, loss_threshold=loss_threshold)


@st.cache_data(show_spinner=False, max_entries=256)
def _grid(model: SpeedModel, steps: float, interval: tuple[float, float] | None, ps: tuple[int, ...] | None,
          max_workers: int, price_worker: float, price_ps: float) -> pd.DataFrame:
    return plan_grid(model, steps, ps=ps, workers=range(1, max_workers + 1), steps_interval=interval,
                     price_worker=price_worker, price_ps=price_ps)


@st.cache_data(show_spinner=False, max_entries=256)
def _allocation(model: SpeedModel, steps: float, budget: int, price_worker: float, price_ps: float) -> Allocation:
    return greedy_allocation(model, steps, budget=budget, price_worker=price_worker, price_ps=price_ps)


@st.cache_resource(show_spinner=False)
def _paleo_net(ref: str):
    return load_net(ref)


@st.cache_data(show_spinner="Paleo estimate …", max_entries=64)
def _paleo_curves(ref: str, steps: float, max_workers: int, ps: tuple[int, ...], batch: int, device: str,
                  network: str, ppp_comp: float, ppp_comm: float) -> pd.DataFrame:
    return paleo_time_to_target(_paleo_net(ref), steps, workers=range(1, max_workers + 1), ps=ps,
                                global_batch=batch, device=device, network=network, ppp_comp=ppp_comp,
                                ppp_comm=ppp_comm)


def paleo_section(*, steps: StepsEstimate, ps: tuple[int, ...], max_workers: int, global_batch: int,
                  seconds: bool) -> pd.DataFrame | None:
    """Paleo's estimated time to target for the same p and w (dashed curves), or None."""
    with st.expander("Paleo estimate beside Optimus", expanded=True, icon=":material/speed:"):
        on = st.toggle("Draw Paleo's analytical estimate (steps × Paleo's per-iteration time)", value=True,
                       key="plan_paleo_on")
        if not on:
            return None
        nets = [*list_nets(loadable_only=True)["specs"], *list_nets()["models"]]
        run = st.session_state.get("plan_run")
        default = paleo_net_for(parse_run_name(run).model if run else None,
                                builtin_datasets_by_file().get(run, "cifar10"))
        keep_valid_choice("plan_paleo_net", nets, default)
        c1, c2, c3 = st.columns(3)
        ref = c1.selectbox("Network", nets, index=nets.index(default) if default in nets else 0,
                           key="plan_paleo_net")
        devices = list(DEVICES)
        device = c2.selectbox("Device", devices, index=devices.index("V100"), key="plan_paleo_device")
        networks = list(NETWORKS)
        network = c3.selectbox("Interconnect", networks, index=networks.index("ethernet") if "ethernet" in networks
                               else 0, key="plan_paleo_network")
        c4, c5 = st.columns(2)
        ppp_comp = c4.number_input("PPP compute", min_value=0.01, max_value=1.0, value=PPP_PRESETS["tensorflow"][0],
                                   step=0.01, key="plan_paleo_ppp_comp")
        ppp_comm = c5.number_input("PPP communication", min_value=0.01, max_value=1.0,
                                   value=PPP_PRESETS["tensorflow"][1], step=0.01, key="plan_paleo_ppp_comm")
        st.caption(f"Paleo (Qi et al., ICLR 2017, modern mode): synchronous data parallelism at M = {global_batch} "
                   "split over the workers, Paleo's parameter-server scheme with p servers (ring all-reduce "
                   "without servers), no overlap; PPP defaults are Paleo's TensorFlow values — calibrate them "
                   "on the Throughput page from a measured step time. Paleo has no per-step latency term, so "
                   "small networks come out optimistic.")
        if not seconds:
            st.caption(":material/info: Hidden while the Optimus times are in paper units.")
            return None
        try:
            return _paleo_curves(ref, float(steps.steps), int(max_workers), ps, int(global_batch), device, network,
                                 float(ppp_comp), float(ppp_comm))
        except PlannerError as err:
            st.error(str(err), icon=":material/error:")
            return None


# ---------------------------------------------------------------- input sections
def steps_section() -> StepsEstimate | None:
    """Steps to target from the chosen source; None (with the reason shown) when there is none."""
    target = target_slider(key="plan_target_acc")
    runs = load_runs(target_acc=target)
    show_errors(runs.errors)
    prediction = st.session_state.get(CALIBRATE_PREDICTION)
    sources = [s for s in STEPS_SOURCES if (s != "run" or runs.analyses) and (s != "calibrate" or prediction)]
    keep_valid_choice("plan_steps_source", sources)
    source = st.radio("Steps to target from", sources, format_func=STEPS_SOURCES.get, key="plan_steps_source")
    try:
        if source == "run":
            estimate = _steps_from_run(runs, target)
        elif source == "calibrate":
            estimate = steps_from_prediction(prediction)
        else:
            estimate = _typed_steps()
    except PlannerError as err:
        st.error(str(err), icon=":material/error:")
        return None
    st.metric("Steps to target", f"{estimate.steps:,.0f}",
              help="Training steps (not epochs), at the batch size of the source.")
    st.caption(estimate.note)
    for flag in estimate.flags:
        st.caption(f":material/info: {flag}")
    return estimate


@st.cache_data(show_spinner="Extrapolating the run with its curve family …", max_entries=64)
def _family_steps(key: str, _log, others: tuple[str, ...], _logs: tuple, target: float, family: str,
                  route: str) -> StepsEstimate:
    cache = FitCache()
    p = predict_epoch_at_target(_log, target_acc=target, family=family, route=route, cache=cache)
    inflation, _ = inflation_from_other_runs(list(_logs), _log, n_epochs_seen=n_epochs(_log), target_acc=target,
                                             family=family, route=route, cache=cache)
    if inflation is not None and p.status == "predicted":
        p = widen(p, inflation)
    return steps_from_target_prediction(p, steps_per_epoch=_log.steps_per_epoch, label=_log.source)


def _steps_from_run(runs, target: float) -> StepsEstimate:
    analyses = {a.log.source: a for a in runs.analyses}
    status = {name: (f"reached at step {a.crossing.step:,.0f}" if a.crossing.reached else "never reached")
              for name, a in analyses.items()}
    keep_valid_choice("plan_run", analyses)
    run = st.selectbox("Run", list(analyses), key="plan_run", format_func=lambda n: f"{n}  ({status[n]})",
                       help=f"Runs loaded on the Logs page, at target accuracy {target:.2f}.")
    chosen = analyses[run]
    methods = dict(RUN_METHODS)
    if not chosen.crossing.reached and chosen.log.has_acc:
        methods[FAMILY_METHOD[0]] = FAMILY_METHOD[1]
    keep_valid_choice("plan_run_method", methods)
    family, route = st.session_state[FAMILY], st.session_state[ROUTE]
    method = st.radio("Steps from", list(methods), key="plan_run_method", horizontal=True,
                      format_func={"auto": "measured (fitted if never reached)", "fitted": "fitted curve",
                                   "family": f"curve family ({family}, set on Logs)"}.get,
                      help="\n\n".join(f"**{k}**: {v}" for k, v in methods.items()))
    if method == FAMILY_METHOD[0]:
        logs = tuple(a.log for a in runs.analyses if a.log.has_acc)
        return _family_steps(chosen.log.fingerprint(), chosen.log, tuple(l.fingerprint() for l in logs), logs,
                             target, family, route)
    threshold = None
    if method == "fitted" or not chosen.crossing.reached:
        threshold = st.number_input(
            "Loss threshold L", min_value=0.0, value=None, format="%.4g", key="plan_loss_threshold",
            placeholder="mean loss at target of the other runs",
            help="The fitted curve is inverted where it falls to L. Blank: the mean loss at which the "
                 "other loaded runs (same split) first passed the target; never this run's own.")
    return _run_steps(runs.table, chosen.fit, run, method, threshold)


def _typed_steps() -> StepsEstimate:
    steps = st.number_input("Steps to target", min_value=1.0, value=50_000.0, step=1000.0, format="%.0f",
                            key="plan_steps")
    c1, c2 = st.columns(2)
    low = c1.number_input("low (optional)", min_value=1.0, value=None, format="%.0f", key="plan_steps_low")
    high = c2.number_input("high (optional)", min_value=1.0, value=None, format="%.0f", key="plan_steps_high")
    return typed_steps(steps, low=low, high=high)


def _mode_radio(modes: tuple[str, ...]) -> str:
    key = "plan_mode"
    keep_valid_choice(key, modes)
    return st.radio("Training", modes, format_func=MODE_LABELS.get, key=key, horizontal=True)


def speed_section(global_batch: float) -> SpeedModel | None:
    """The speed model from the chosen θ source; None (with the reason shown) when there is none."""
    source = st.radio("θ from", list(THETA_SOURCES), format_func=THETA_SOURCES.get, key="plan_theta_source")
    try:
        if source == "paper":
            return _paper_model(global_batch)
        if source == "table":
            return _table_model(global_batch)
        return _typed_model(global_batch)
    except PlannerError as err:
        st.error(str(err), icon=":material/error:")
        return None


def _paper_model(global_batch: float) -> SpeedModel:
    model = paper_speed_model(_mode_radio(("sync", "async")), global_batch=global_batch)
    if st.toggle("Calibrate to seconds", key="plan_calibrate",
                 help="Give one measured step time at some (p, w): every θ is scaled so the model's "
                      "step time there equals the measurement, and times become hours."):
        c1, c2, c3 = st.columns(3)
        step_time = c1.number_input("step time (s)", min_value=1e-6, value=0.906, format="%.4g",
                                    key="plan_cal_step_time")
        p = c2.number_input("at p", min_value=1, value=2, step=1, key="plan_cal_p")
        w = c3.number_input("at w", min_value=1, value=4, step=1, key="plan_cal_w")
        model = calibrate_time_unit(model, float(step_time), int(p), int(w))
    return model


def _table_model(global_batch: float) -> SpeedModel | None:
    uploaded = st.file_uploader("Upload measured speeds (CSV)", type=["csv", "txt"], accept_multiple_files=True,
                                key="plan_speed_upload", help=SPEED_TABLE_HELP)
    before = set(st.session_state.get(SPEED_UPLOADS, {}))
    new = [n for n in store_files(uploaded, state_key=SPEED_UPLOADS) if n not in before]
    tables = {f"uploaded: {n}": (n, b) for n, b in st.session_state[SPEED_UPLOADS].items()}
    usable = {}
    for label, (name, data) in tables.items():
        try:
            _speed_table(data, name)
            usable[label] = (name, data)
        except LogFormatError as err:
            st.error(str(err), icon=":material/error:")
    usable.update({f"built-in: Pollux {n}": (n, b) for n, b in _builtin_speed_bytes().items()})
    default = f"built-in: Pollux {DEFAULT_SPEED_TABLE}"
    if new and f"uploaded: {new[-1]}" in usable:
        st.session_state["plan_speed_table"] = f"uploaded: {new[-1]}"
    st.session_state.setdefault("plan_speed_table", default)
    keep_valid_choice("plan_speed_table", usable, default=default)
    label = st.selectbox("Speed table", list(usable), key="plan_speed_table")
    if tables and st.button("Forget uploaded tables", key="plan_forget_speed", icon=":material/delete:"):
        st.session_state[SPEED_UPLOADS] = {}
        st.rerun()
    name, data = usable[label]
    modes = ("sync", "async") if has_parameter_servers(_speed_table(data, name)) else ("allreduce",)
    model = _fitted_model(data, name, _mode_radio(modes), float(global_batch))
    st.caption(f"NNLS fit on {model.n_points} measured points: MAPE {model.mape_pct:.2f} % of the speeds. "
               + ("The table has no parameter servers: all-reduce model, p ignored." if modes == ("allreduce",)
                  else ""))
    return model


def _typed_model(global_batch: float) -> SpeedModel:
    mode = _mode_radio(("sync", "async", "allreduce"))
    names = THETA_NAMES[mode]
    cols = st.columns(3)   # two rows of at most three: each box wide enough for 0.0004
    theta = tuple(cols[i % 3].number_input(f"θ{n.removeprefix('theta')}", min_value=0.0, value=default,
                                           format="%.4g", step=0.001, key=f"plan_theta_{mode}_{n}")
                  for i, (n, default) in enumerate(zip(names, EXAMPLE_THETA_S[mode])))
    return SpeedModel(mode, theta, global_batch=global_batch, time_unit="s", source="typed in")


def _fmt(x: float) -> str:
    """A number for reading: thousands separated when large, three significant digits otherwise."""
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3g}"


def theta_panel(model: SpeedModel, estimate: StepsEstimate) -> None:
    """The formula and θ in use, printed next to the headline chart."""
    st.markdown("**Model in use**")
    for latex in (FORMULAS_LATEX[model.mode], TIME_LATEX, COST_LATEX):
        st.latex(r"\small " + latex)
    unit = "s" if model.time_unit == "s" else "paper units"
    rows = "\n".join(f"| θ{n.removeprefix('theta')} | {v:.4g} |" for n, v in model.params.items())
    st.markdown(f"| θ | value ({unit}) |\n|---|---|\n{rows}")
    batch = "not set" if model.global_batch is None else f"{model.global_batch:g}"
    st.caption(f"M = {batch} samples per step · {MODE_LABELS[model.mode]} · steps: {estimate.source}")
    if model.mape_pct is not None:
        st.caption(f"Fit: MAPE {model.mape_pct:.2f} % on {model.n_points} points.")
    with st.expander("Model report"):
        st.code(model.report(), language=None)


# ---------------------------------------------------------------- page
page_setup()
st.title("Plan")
st.caption("How long to the target, and at what cost, with w workers and p parameter servers: steps to "
           "target divided by the Optimus speed f(p, w) (Peng et al., EuroSys 2018).")

steps_col, speed_col, cluster_col = st.columns(3, gap="large")
with cluster_col:
    st.markdown("#### Cluster and prices")
    max_workers = st.slider("Largest number of workers", min_value=2, max_value=256, value=32,
                            key="plan_max_workers")
    global_batch = st.number_input("Global batch M (samples per step)", min_value=1, value=PAPER_GLOBAL_BATCH,
                                   step=1, key="plan_batch")
with speed_col:
    st.markdown("#### Speed model θ")
    model = speed_section(float(global_batch))
with cluster_col:
    allreduce = model is not None and model.mode == "allreduce"
    ps = st.multiselect("Parameter servers to compare", options=list(range(1, 9)), default=[2, 4],
                        key="plan_ps", disabled=allreduce,
                        help="Not used for all-reduce training (no parameter servers)." if allreduce else None)
    c1, c2 = st.columns(2)
    price_worker = c1.number_input("Price per worker-hour", min_value=0.0, value=2.5, step=0.1,
                                   format="%.2f", key="plan_price_worker")
    price_ps = c2.number_input("Price per PS-hour", min_value=0.0, value=0.5, step=0.1, format="%.2f",
                               key="plan_price_ps", disabled=allreduce)
with steps_col:
    st.markdown("#### Steps to target")
    estimate = steps_section()

if model is None or estimate is None:
    st.info("Nothing to plan until both the steps to target and the speed model are set (see above).")
    st.stop()
if not allreduce and not ps:
    st.info("Choose at least one number of parameter servers to compare.")
    st.stop()

grid = _grid(model, estimate.steps, estimate.interval, None if allreduce else tuple(sorted(ps)),
             int(max_workers), float(price_worker), float(price_ps))
time_column, unit = display_time(grid)
if model.time_unit == "paper units":
    st.warning("The paper's θ have no published time unit: times below are in **paper units**, comparable "
               "with each other only. Turn on *Calibrate to seconds* with one measured step time to get hours.",
               icon=":material/warning:")

paleo = paleo_section(steps=estimate, ps=() if allreduce else tuple(sorted(ps)), max_workers=int(max_workers),
                      global_batch=int(global_batch), seconds=model.time_unit == "s")
st.subheader("Time to target against workers")
left, right = st.columns([2, 1], gap="medium")
with left:
    chart(tta_vs_workers_figure(grid, extra=paleo,
                                title=f"Time to target against workers ({estimate.label})"),
          key="plan_tta_chart", file_stem="time_to_target")
with right:
    theta_panel(model, estimate)

best = best_workers(grid)
for col, row in zip(st.columns(max(len(best), 3)), best.itertuples()):
    span = ""
    if estimate.interval:
        level = f"{estimate.level:.0%} " if estimate.level else ""
        span = (f" ({level}interval {_fmt(getattr(row, time_column + '_low'))} to "
                f"{_fmt(getattr(row, time_column + '_high'))})")
    col.metric("Best w (all-reduce)" if allreduce else f"Best w for p = {row.p}", f"w = {row.w}",
               help="The fastest number of workers (ties: fewer).")
    col.caption(f"{_fmt(getattr(row, time_column))} {unit}{span}; cost {_fmt(row.cost)}")

st.markdown(
    "**Assumptions.** Steps to target are counted at the batch size the source was measured with "
    "(the logged run's batch); this model keeps them fixed when M changes, so M only changes the speed "
    "f(p, w). In asynchronous training every worker's update counts as a step, so steps taken from a "
    "synchronous run make the asynchronous time a lower bound (stale updates learn less per step). "
    "Time = steps / f(p, w); cost = time in hours × (w × worker price + p × PS price). "
    + ("Fitted θ are a planning estimate good to about their MAPE on average, not per point. "
       if model.mape_pct is not None else "")
    + "See docs/plan.md.")

st.subheader("Time and cost")
plane, choices = st.columns([2, 1], gap="medium")
with choices:
    deadline_key = "plan_deadline_paper" if unit == "paper units" else "plan_deadline_hours"
    typed_deadline = st.number_input(f"Deadline ({unit})", min_value=0.0, value=None, format="%.4g",
                                     key=deadline_key, placeholder="auto: twice the fastest time, rounded")
    deadline = typed_deadline or suggest_deadline(grid)
    budget = st.number_input("Task budget p + w (greedy allocation)", min_value=2, max_value=256, value=16,
                             step=1, key="plan_budget",
                             help="Optimus's greedy: start at 1 worker + 1 PS, add whichever of a worker or "
                                  "a PS shortens the time most, until no gain or the budget is spent.")
    choice = cheapest_config(grid, deadline=deadline)
    allocation = _allocation(model, estimate.steps, int(budget), float(price_worker), float(price_ps))
    st.metric(f"Cheapest within {_fmt(deadline)} {unit}",
              f"p = {choice.p}, w = {choice.w}" if choice.met else "none", help=choice.message)
    st.caption(choice.message)
    gp, gw, _, _ = allocation.greedy
    op, ow, _, _ = allocation.optimum
    st.metric(f"Greedy allocation, {allocation.budget} tasks", f"p = {gp}, w = {gw}",
              delta=f"{allocation.gap_pct:.1f} % slower than the optimum" if allocation.gap_pct > 0 else "optimal",
              delta_color="inverse" if allocation.gap_pct > 0 else "off", delta_arrow="auto" if allocation.gap_pct > 0 else "off",
              help="Optimus's greedy allocation for one job, beside the exhaustive optimum over p + w <= budget.")
    st.caption(f"Stopped: {allocation.stop_reason}; exhaustive optimum within the budget: p = {op}, w = {ow}.")
with plane:
    chart(time_cost_figure(grid, deadline=deadline, allocation=allocation), key="plan_cost_chart",
          file_stem="time_and_cost")

st.subheader(f"All configurations ({len(grid)})")
st.dataframe(grid, key="plan_table", hide_index=True, width="stretch",
             column_config={c: st.column_config.NumberColumn(format="%.4g") for c in grid.columns
                            if c.startswith(("steps_per_s", "time_s", "time_h", "cost"))})
table_download(grid, key="plan_table_csv", file_name="plan.csv")
