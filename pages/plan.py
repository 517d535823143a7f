"""Plan: time and cost to the target against workers and parameter servers (Optimus speed model).

Steps to target (a run on the Logs page, the Calibrate page's prediction, or typed in)
divided by the speed ``f(p, w)`` (the paper's θ, θ fitted on a speed table, or typed in)
gives the time to target of every configuration; prices give its cost.  Section functions,
called from the page block at the end; every number comes from ``core.plan`` (and
``core.figures.plan``) through the cached wrappers below.
"""

from __future__ import annotations

import warnings

import pandas as pd
import streamlit as st

from core.batch import TUNED_NOTE, BatchScaling
from core.datasets import BATCH_RUN_SETS, builtin_speed_tables
from core.errors import FitWarning, InputError, LogFormatError, PlannerError
from core.figures.plan import time_cost_figure, tta_vs_workers_figure
from core.logs import parse_run_name
from core.paleo import DEVICES, NETWORKS, PPP_PRESETS, list_nets, load_net
from core.plan import (
    COST_LATEX,
    PAPER_GLOBAL_BATCH,
    SCALING_RULES,
    SOURCES,
    SPEED_FAMILIES,
    THETA_NAMES,
    THETA_SOURCES,
    TIME_LATEX,
    TIME_RULE_LATEX,
    Allocation,
    DeadlineChoice,
    ScalingRule,
    SpeedFit,
    SpeedModel,
    StepsEstimate,
    best_workers,
    build_speed_model,
    cheapest_config,
    display_time,
    fit_speed,
    greedy_allocation,
    has_parameter_servers,
    paleo_net_for,
    paleo_time_to_target,
    pareto_frontier,
    plan_with_rule,
    read_speed_csv,
    run_methods,
    speed_model_choices,
    steps_from_batch_scaling,
    steps_from_run,
    suggest_deadline,
    typed_steps,
)
from core.runs import RunAnalysis
from pages.shared.common import (
    BATCH_SOURCES,
    CACHE,
    CALIBRATED_STEPS,
    FAMILY,
    ROUTE,
    SHARED,
    SPEED_UPLOADS,
    LoadedRuns,
    chart,
    datasets_by_file,
    guarded,
    keep_valid_choice,
    load_batch_study,
    load_runs,
    page_setup,
    plain,
    shared_fits,
    show_errors,
    store_files,
    table_download,
    target_slider,
)
from pages.shared.transfer import TRANSFERRED_STEPS

MODE_LABELS = {"sync": "synchronous (Eq. 4)", "async": "asynchronous (Eq. 3)",
               "allreduce": "all-reduce, no PS"}
THETA_LABELS = {"paper": "the paper's θ", "table": "fitted on a speed table", "typed": "typed in (seconds)",
                "transfer": "step time from a GPU transfer"}
STEPS_SOURCES = {"run": "a run on the Logs page", "calibrate": "the Calibrate page's prediction",
                 "typed": "a number typed in", "batch": "a batch-scaling fit (runs at several batches)"}
SPEED_MODEL_LABELS = {**{name: f.label for name, f in SPEED_FAMILIES.items()},
                      "auto": "both: the smaller leave-one-out error"}
RULE_LABELS = {"fixed": "fixed global batch M", "per-worker": "fixed per-worker batch m (M = w·m)",
               "best": "best M per w (largest goodput)"}
METHOD_LABELS = {"auto": "measured (fitted if never reached)", "fitted": "fitted curve",
                 "family": "curve family (set on Logs)"}
#: starting values of the typed-in θ (seconds): the paper's θ at 0.02 s per paper unit, and
#: the all-reduce fit of Pollux's cifar10 trace (docs/plan.md)
EXAMPLE_THETA_S = {"sync": (0.0204, 0.0556, 0.0984, 0.0, 0.0004), "async": (0.0566, 0.0784, 0.0, 0.0022),
                   "allreduce": (0.000594, 0.092, 0.00207)}
#: the step time the page opens with, to turn the paper's θ into seconds (docs/plan.md: 0.02 s per paper unit)
EXAMPLE_STEP_TIME = (0.906, 2, 4)
DEFAULT_SPEED_TABLE = "cifar10/scalability.csv"
#: the worker slider's largest value
MAX_WORKERS = 256
SPEED_TABLE_HELP = ("CSV with columns `p` (optional; absent = all-reduce), `w`, a batch (`global_batch` or "
                    "`local_bsz`) and one speed (`steps_per_s`, `step_time_s`, `step_time` or "
                    "`samples_per_s`); see docs/plan.md.")
ASSUMPTIONS = (
    "**Assumptions.** Steps to target are counted at the batch size the source was measured with (the logged "
    "run's batch); this model keeps them fixed when M changes, so M only changes the speed f(p, w). In "
    "asynchronous training every worker's update counts as a step, so steps taken from a synchronous run make "
    "the asynchronous time a lower bound (stale updates learn less per step). Time = steps / f(p, w); cost "
    "= time in hours × (w × worker price + p × PS price). See docs/plan.md.")
RULE_ASSUMPTIONS = (
    "**Assumptions.** The global batch follows the scaling rule, and steps to target follow it: S(M) = "
    "E_min·(1 + M/B_noise)/M (McCandlish et al. 2018) from the batch-scaling model; time = S(M(w)) / f(p, w, M(w)); "
    "cost = time in hours × (w × worker price + p × PS price). " + TUNED_NOTE + " See docs/plan.md.")


# ---------------------------------------------------------------- cached core calls
@st.cache_data(**CACHE)
def _builtin_speed_bytes() -> dict[str, bytes]:
    return {name: path.read_bytes() for name, path in builtin_speed_tables()}


@st.cache_data(**CACHE)
def _speed_table(data: bytes, name: str) -> pd.DataFrame | LogFormatError:
    try:
        return read_speed_csv(data, source=name)
    except LogFormatError as exc:      # remembered: a bad table is read once
        return exc


@st.cache_resource(**{**SHARED, "show_spinner": "Fitting the speed families (leave-one-out) …"})
def _speed_fit(speed_model: str, mode: str, global_batch: float, table_name: str, table_data: bytes) -> SpeedFit:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitWarning)  # the model's flags say the same
        return fit_speed(_speed_table(table_data, table_name), family=speed_model, mode=mode,
                         global_batch=global_batch, source=table_name, score=None)


@st.cache_data(**CACHE)
def _rule_grid(model, estimate: StepsEstimate, rule: ScalingRule, batch: BatchScaling | None,
               b_noise: float | None, ps: tuple[int, ...] | None, max_workers: int, price_worker: float,
               price_ps: float) -> tuple[pd.DataFrame, BatchScaling | None]:
    return plan_with_rule(model, estimate, rule, anchor_batch=rule.global_batch or model.global_batch or 1.0,
                          batch=batch, b_noise=b_noise, ps=ps, workers=range(1, max_workers + 1),
                          price_worker=price_worker, price_ps=price_ps)


@st.cache_data(**CACHE)
def _model(source: str, mode: str, global_batch: float, theta: tuple[float, ...] | None,
           table_name: str | None, table_data: bytes | None,
           step_time: tuple[float, int, int] | None) -> SpeedModel:
    table = _speed_table(table_data, table_name) if table_data is not None else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitWarning)  # the model's flags say the same
        return build_speed_model(source, mode=mode, global_batch=global_batch, theta=theta, table=table,
                                 table_name=table_name or "table", step_time=step_time)


@st.cache_data(**CACHE)
def _run_steps(run: RunAnalysis, others: tuple[RunAnalysis, ...], method: str, loss_threshold: float | None,
               curve_family: str, route: str) -> StepsEstimate:
    return steps_from_run(run, others, method=method, loss_threshold=loss_threshold, family=curve_family, route=route,
                          cache=shared_fits())


@st.cache_data(**CACHE)
def _allocation(model: SpeedModel, steps: float, budget: int, price_worker: float, price_ps: float) -> Allocation:
    return greedy_allocation(model, steps, budget=budget, price_worker=price_worker, price_ps=price_ps)


@st.cache_resource(show_spinner=False, max_entries=16)
def _paleo_net(ref: str):
    return load_net(ref)


@st.cache_data(**{**CACHE, "show_spinner": "Paleo estimate …"})
def _paleo_curves(ref: str, steps: float, max_workers: int, ps: tuple[int, ...], batch: int, device: str,
                  network: str, ppp_comp: float, ppp_comm: float) -> pd.DataFrame:
    return paleo_time_to_target(_paleo_net(ref), steps, workers=range(1, max_workers + 1), ps=ps,
                                global_batch=batch, device=device, network=network, ppp_comp=ppp_comp,
                                ppp_comm=ppp_comm)


# ---------------------------------------------------------------- steps to target
def steps_section(runs: LoadedRuns, global_batch: float) -> tuple[StepsEstimate | None, BatchScaling | None]:
    """Steps to target from the chosen source and, for a batch-scaling fit, its model; None (with the reason
    shown) when there is none."""
    show_errors(runs.errors)
    handed_over = st.session_state.get(CALIBRATED_STEPS)
    sources = [s for s in STEPS_SOURCES if (s != "run" or runs.analyses) and (s != "calibrate" or handed_over)]
    keep_valid_choice("plan_steps_source", sources)
    source = st.radio("Steps to target from", sources, format_func=STEPS_SOURCES.get, key="plan_steps_source")
    batch = None
    try:
        if source == "run":
            estimate = _steps_from_run(runs)
        elif source == "calibrate":
            estimate = handed_over
        elif source == "batch":
            estimate, batch = _steps_from_batch(global_batch)
        else:
            estimate = _typed_steps()
    except PlannerError as err:
        st.error(plain(str(err)), icon=":material/error:")
        return None, None
    st.metric("Steps to target", f"{estimate.steps:,.0f}",
              help="Training steps (not epochs), at the batch size of the source.")
    st.caption(plain(estimate.note))
    for flag in estimate.flags:
        st.caption(f":material/info: {plain(flag)}")
    return estimate, batch


#: how each way of taking steps from a run reads (the posterior appears for a partial run with a prior)
RUN_METHOD_LABELS = {**METHOD_LABELS, "posterior": "posterior (other runs × its epochs)"}


def _steps_from_run(runs: LoadedRuns) -> StepsEstimate:
    names = [a.log.source for a in runs.analyses]
    keep_valid_choice("plan_run", names)
    run = st.selectbox("Run", names, key="plan_run", help="Runs loaded on the Logs page.")
    chosen = runs.get(run)
    c = chosen.crossing
    st.caption(plain(f"{run}: ") + (f"passed {c.target_acc:.2f} at step {c.step:,.0f}" if c.reached
                             else f"never passed {c.target_acc:.2f} in its log"))
    methods = run_methods(chosen, runs.analyses)
    keep_valid_choice("plan_run_method", methods)
    curve_family, route = st.session_state[FAMILY], st.session_state[ROUTE]
    method = st.radio("Steps from", list(methods), key="plan_run_method", horizontal=True,
                      format_func=RUN_METHOD_LABELS.get,
                      help="\n\n".join(f"**{RUN_METHOD_LABELS[k]}**: {v}" for k, v in methods.items())
                           + f"\n\nCurve family in use: {curve_family} ({route} route).")
    threshold = None
    if method == "fitted" or (method == "auto" and not c.reached):
        threshold = st.number_input(
            "Loss threshold L", min_value=0.0, value=None, format="%.4g", key="plan_loss_threshold",
            placeholder="mean loss at target of the other runs",
            help="The fitted curve is inverted where it falls to L. Blank: the mean loss at which the "
                 "other loaded runs (same split) first passed the target; never this run's own.")
    return _run_steps(chosen, runs.analyses, method, threshold, curve_family, route)


def _on_batch_set() -> None:
    entry = BATCH_RUN_SETS.get(st.session_state["plan_batch_set"])
    if entry is not None:
        st.session_state["plan_batch_target"] = entry.target_acc


def _steps_from_batch(global_batch: float) -> tuple[StepsEstimate, BatchScaling]:
    """Steps at the planned global batch from runs at several batches (Scaling page, Batch size tab)."""
    st.session_state.setdefault("plan_batch_set", next(iter(BATCH_RUN_SETS)))
    st.session_state.setdefault("plan_batch_target", BATCH_RUN_SETS[next(iter(BATCH_RUN_SETS))].target_acc)
    c1, c2 = st.columns([2, 1])
    key = c1.selectbox("Runs", list(BATCH_SOURCES), format_func=BATCH_SOURCES.get, key="plan_batch_set",
                       on_change=_on_batch_set, help="Runs of one job at several global batches (see the Scaling "
                                                     "page, Batch size tab); loaded runs give their batch in the "
                                                     "log or a -<batch> file-name suffix.")
    target = c2.number_input("Their target", min_value=0.01, max_value=0.999, step=0.005, format="%.3f",
                             key="plan_batch_target")
    entry = BATCH_RUN_SETS.get(key)
    study, errors, _ = load_batch_study(key, target_acc=float(target),
                                        samples_per_epoch=entry.samples_per_epoch if entry else None)
    if study is None or study.model is None:
        raise InputError(study.problem if study is not None else "batch scaling: expected loaded runs; got none. "
                         "Load runs on the Logs page or pick a built-in set.")
    return steps_from_batch_scaling(study.model, global_batch, label=BATCH_SOURCES[key]), study.model


def _typed_steps() -> StepsEstimate:
    steps = st.number_input("Steps to target", min_value=1.0, value=50_000.0, step=1000.0, format="%.0f",
                            key="plan_steps")
    c1, c2 = st.columns(2)
    low = c1.number_input("low (optional)", min_value=1.0, value=None, format="%.0f", key="plan_steps_low")
    high = c2.number_input("high (optional)", min_value=1.0, value=None, format="%.0f", key="plan_steps_high")
    return typed_steps(steps, low=low, high=high)


# ---------------------------------------------------------------- speed model
def _mode_radio(modes: tuple[str, ...]) -> str:
    keep_valid_choice("plan_mode", modes)
    return st.radio("Training", modes, format_func=MODE_LABELS.get, key="plan_mode", horizontal=True)


def speed_section(global_batch: float) -> SpeedModel | None:
    """The speed model from the chosen θ source; None (with the reason shown) when there is none."""
    source = st.radio("θ from", list(THETA_LABELS), format_func=THETA_LABELS.get, key="plan_theta_source",
                      help="\n\n".join(f"**{THETA_LABELS[k]}**: {v}" for k, v in THETA_SOURCES.items())
                      + f"\n\n**{THETA_LABELS['transfer']}**: {TRANSFER_HELP}")
    try:
        if source == "paper":
            return _paper_model(global_batch)
        if source == "table":
            return _table_model(global_batch)
        if source == "transfer":
            return _transfer_model(global_batch)
        return _typed_model(global_batch)
    except PlannerError as err:
        st.error(plain(str(err)), icon=":material/error:")
        return None


def _paper_model(global_batch: float) -> SpeedModel:
    mode = _mode_radio(("sync", "async"))
    st.session_state.setdefault("plan_calibrate", True)
    step_time = None
    if st.toggle("Calibrate to seconds", key="plan_calibrate",
                 help="Give one measured step time at some (p, w): every θ is scaled so the model's step time "
                      "there equals the measurement, and times become hours. Without it the paper's θ have no "
                      "unit: no hours, no cost."):
        c1, c2, c3 = st.columns(3)
        seconds, p0, w0 = EXAMPLE_STEP_TIME
        step = c1.number_input("step time (s)", min_value=1e-6, value=seconds, format="%.4g",
                               key="plan_cal_step_time", help="The page opens on an example; type your measurement.")
        p = c2.number_input("at p", min_value=1, value=p0, step=1, key="plan_cal_p")
        w = c3.number_input("at w", min_value=1, value=w0, step=1, key="plan_cal_w")
        step_time = (float(step), int(p), int(w))
    return _model("paper", mode, global_batch, None, None, None, step_time)


TRANSFER_HELP = ("the paper's θ scaled to the step time the Throughput page's transfer estimated for one GPU "
                 "(calibrated on your measured step), taken as the step time at the (p, w) given")


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
    device = c1.selectbox("GPU", devices, key="plan_transfer_device")
    p = c2.number_input("at p", min_value=1, value=2, step=1, key="plan_transfer_p")
    w = c3.number_input("at w", min_value=1, value=1, step=1, key="plan_transfer_w")
    step = comparison.step_time_s(device)
    st.caption(f"{comparison.workload} on {device}: {step:.4g} s per step (estimate of the Throughput page's "
               f"transfer; {TRANSFER_HELP}).")
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
    label = st.selectbox("Speed table", list(usable), key="plan_speed_table")
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
                           horizontal=True, help="\n\n".join(f"**{f.label}**: {f.description}"
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
                                           format="%.4g", step=0.001, key=f"plan_theta_{mode}_{n}")
                  for i, (n, default) in enumerate(zip(THETA_NAMES[mode], EXAMPLE_THETA_S[mode])))
    return _model("typed", mode, global_batch, theta, None, None, None)


# ---------------------------------------------------------------- cluster, Paleo, results
def cluster_section() -> tuple[int, int]:
    """The largest worker count and the global batch."""
    st.markdown("#### Cluster and prices")
    max_workers = st.slider("Largest number of workers", min_value=2, max_value=MAX_WORKERS, value=32,
                            key="plan_max_workers")
    global_batch = st.number_input("Global batch M (samples per step)", min_value=1, value=PAPER_GLOBAL_BATCH,
                                   step=1, key="plan_batch")
    return int(max_workers), int(global_batch)


def rule_section(global_batch: int, *, fitted: bool) -> tuple[ScalingRule | None, float | None]:
    """How the global batch follows the workers, and the noise scale a typed-in rule needs (None: no plan)."""
    rule = st.radio("Global batch as workers are added", list(RULE_LABELS), format_func=RULE_LABELS.get,
                    key="plan_scaling_rule",
                    help="\n\n".join(f"**{RULE_LABELS[k]}**: {v}" for k, v in SCALING_RULES.items()))
    try:
        if rule == "fixed":
            return ScalingRule("fixed", global_batch=global_batch), None
        if rule == "per-worker":
            m = st.number_input("Per-worker batch m", min_value=1, value=32, step=1, key="plan_per_worker_batch")
            chosen = ScalingRule("per-worker", per_worker_batch=m)
        else:
            c1, c2 = st.columns(2)
            low = c1.number_input("Smallest M", min_value=1, value=32, step=32, key="plan_batch_min")
            high = c2.number_input("Largest M", min_value=1, value=8192, step=1024, key="plan_batch_max")
            chosen = ScalingRule("best", batch_min=low, batch_max=high)
    except PlannerError as err:
        st.error(plain(str(err)), icon=":material/error:")
        return None, None
    if fitted:
        return chosen, None
    b_noise = st.number_input("Noise scale B_noise (samples)", min_value=1.0, value=2000.0, step=100.0,
                              format="%.0f", key="plan_b_noise",
                              help="Where a larger batch starts to cost samples: E(B) = E_min·(1 + B/B_noise). "
                                   "Measure it on the Scaling page (Batch size tab) or with python -m core "
                                   "batch-scaling, or take the steps from a batch-scaling fit.")
    st.caption(f"The steps to target are taken as measured at M = {global_batch:,} and scaled to each batch by "
               "S(M) = E_min·(1 + M/B_noise)/M.")
    return chosen, float(b_noise)


def prices_section(allreduce: bool) -> tuple[tuple[int, ...], float, float]:
    """Parameter-server counts and prices."""
    ps = st.multiselect("Parameter servers to compare", options=list(range(1, 9)), default=[2, 4],
                        key="plan_ps", disabled=allreduce,
                        help="Not used for all-reduce training (no parameter servers)." if allreduce else None)
    c1, c2 = st.columns(2)
    price_worker = c1.number_input("Price per worker-hour", min_value=0.0, value=2.5, step=0.1,
                                   format="%.2f", key="plan_price_worker")
    price_ps = c2.number_input("Price per PS-hour", min_value=0.0, value=0.5, step=0.1, format="%.2f",
                               key="plan_price_ps", disabled=allreduce)
    return tuple(sorted(ps)), float(price_worker), float(price_ps)


def paleo_section(*, steps: StepsEstimate, ps: tuple[int, ...], max_workers: int, global_batch: int,
                  seconds: bool, fixed_batch: bool = True) -> pd.DataFrame | None:
    """Paleo's estimated time to target for the same p and w (dashed curves), or None."""
    with st.expander("Paleo estimate beside Optimus", expanded=seconds, icon=":material/speed:"):
        if not fixed_batch:
            st.caption(":material/info: Paleo's estimate here keeps the global batch and the steps fixed; it is "
                       "drawn under the fixed-M rule only.")
            return None
        if not seconds:
            st.caption(":material/info: Paleo estimates seconds; the Optimus times are in paper units. "
                       "Turn on *Calibrate to seconds* to compare them.")
            return None
        on = st.toggle("Draw Paleo's analytical estimate (steps × Paleo's per-iteration time)", value=True,
                       key="plan_paleo_on")
        if not on:
            return None
        nets = [*list_nets(loadable_only=True)["specs"], *list_nets()["models"]]
        run = st.session_state.get("plan_run")
        default = paleo_net_for(parse_run_name(run).model if run else None,
                                datasets_by_file().get(run, "cifar10"))
        keep_valid_choice("plan_paleo_net", nets, default)
        c1, c2, c3 = st.columns(3)
        ref = c1.selectbox("Network", nets, index=nets.index(default) if default in nets else 0,
                           key="plan_paleo_net")
        devices = list(DEVICES)
        device = c2.selectbox("Device", devices, index=devices.index("V100"), key="plan_paleo_device")
        networks = list(NETWORKS)
        network = c3.selectbox("Interconnect", networks, index=networks.index("ethernet"), key="plan_paleo_network")
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
        try:   # computed once for the slider's whole range, cut to the workers shown
            curves = _paleo_curves(ref, float(steps.steps), MAX_WORKERS, ps, global_batch, device, network,
                                   float(ppp_comp), float(ppp_comm))
            return curves[curves["w"] <= max_workers]
        except PlannerError as err:
            st.error(plain(str(err)), icon=":material/error:")
            return None


def _fmt(x: float) -> str:
    """A number for reading: thousands separated when large, three significant digits otherwise."""
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3g}"


def theta_panel(model: SpeedModel, estimate: StepsEstimate, rule: ScalingRule | None = None) -> None:
    """The formula and θ in use, printed next to the headline chart."""
    st.markdown("**Model in use**")
    for latex in (model.formula_latex, TIME_RULE_LATEX if rule is not None else TIME_LATEX, COST_LATEX):
        st.latex(r"\small " + latex)
    unit = "s" if model.time_unit == "s" else "paper units"
    rows = "\n".join(f"| {'θ' + n.removeprefix('theta') if n.startswith('theta') else n} | {v:.4g} |"
                     for n, v in model.named_params.items())
    st.markdown(f"| {model.family} | value ({unit}) |\n|---|---|\n{rows}")
    batch = "not set" if model.global_batch is None else f"{model.global_batch:g}"
    batch_text = rule.label if rule is not None else f"M = {batch} samples per step"
    st.caption(f"{batch_text} · {MODE_LABELS[model.mode]} · steps: {SOURCES[estimate.source]}")
    if model.mape_pct is not None:
        st.caption(f"Fit: MAPE {model.mape_pct:.2f} % on {model.n_points} points.")
    with st.expander("Model report"):
        st.code(model.report(), language=None)


def headline_section(grid: pd.DataFrame, best: pd.DataFrame, model: SpeedModel, estimate: StepsEstimate,
                     paleo: pd.DataFrame | None, *, allreduce: bool, rule: ScalingRule,
                     batch: BatchScaling | None) -> None:
    """Time to target against workers for each p, the best w marked, beside the θ in use."""
    time_column, unit = display_time(grid)
    st.subheader("Time to target against workers")
    left, right = st.columns([2, 1], gap="medium")
    with left:
        chart(tta_vs_workers_figure, grid, best=best, extra=paleo,
              title=f"Time to target against workers ({estimate.label}; {rule.label})",
              steps_axis=batch is not None, key="plan_tta_chart", file_stem="time_to_target")
    with right:
        theta_panel(model, estimate, rule if batch is not None else None)
    for col, row in zip(st.columns(max(len(best), 3)), best.itertuples()):
        span = ""
        if hasattr(row, time_column + "_low"):
            level = f"{estimate.level * 100:.0f} % " if estimate.level and batch is None else ""
            span = (f" ({level}interval {_fmt(getattr(row, time_column + '_low'))} to "
                    f"{_fmt(getattr(row, time_column + '_high'))}{', both fits' if batch is not None else ''})")
        col.metric("Best w (all-reduce)" if allreduce else f"Best w for p = {row.p}", f"w = {row.w}",
                   help="The fastest number of workers (ties: fewer).")
        cost = f"; cost {_fmt(row.cost)}" if pd.notna(row.cost) else ""
        at = f" at M = {row.global_batch:,.0f}, {row.steps:,.0f} steps" if batch is not None else ""
        col.caption(f"{_fmt(getattr(row, time_column))} {unit}{at}{span}{cost}")
    st.markdown((RULE_ASSUMPTIONS if batch is not None else ASSUMPTIONS)
                + (" Fitted θ are a planning estimate good to about their MAPE on average, not per "
                   "point." if model.mape_pct is not None else ""))


@st.fragment
@guarded("Plan: cost")
def cost_section(grid: pd.DataFrame, model: SpeedModel, estimate: StepsEstimate, prices: tuple[float, float],
                 fixed_steps: bool = True) -> None:
    """The time/cost plane: the cheapest configuration under a deadline and Optimus's greedy allocation."""
    st.subheader("Time and cost")
    if model.time_unit != "s":
        st.info("Cost needs time in hours: the paper's θ have no unit. Turn on *Calibrate to seconds* (or fit θ on "
                "a speed table) to see costs, the deadline choice and the greedy allocation.",
                icon=":material/info:")
        return
    plane, choices = st.columns([2, 1], gap="medium")
    with choices:
        typed = st.number_input("Deadline (hours)", min_value=0.0, value=None, format="%.4g",
                                key="plan_deadline_hours", placeholder="auto: twice the fastest time, rounded")
        choice: DeadlineChoice = cheapest_config(grid, deadline=typed or suggest_deadline(grid))
        st.metric(f"Cheapest within {_fmt(choice.deadline)} {choice.unit}",
                  f"p = {choice.p}, w = {choice.w}" if choice.met else "none", help=choice.message)
        st.caption(choice.message)
        allocation = _greedy_section(model, estimate, prices) if fixed_steps else None
        if not fixed_steps:
            st.caption(":material/info: Optimus's greedy allocation adds workers at fixed steps to target; it is "
                       "shown when the steps do not change with the batch. The frontier covers every (w, M) here.")
    with plane:
        chart(time_cost_figure, grid, frontier=pareto_frontier(grid), choice=choice, allocation=allocation,
              key="plan_cost_chart", file_stem="time_and_cost")


def _greedy_section(model: SpeedModel, estimate: StepsEstimate, prices: tuple[float, float]) -> Allocation:
    """Optimus's greedy allocation for a task budget, beside the exhaustive optimum."""
    budget = st.number_input("Task budget p + w (greedy allocation)", min_value=2, max_value=256, value=16,
                             step=1, key="plan_budget",
                             help="Optimus's greedy: start at 1 worker + 1 PS, add whichever of a worker or a "
                                  "PS shortens the time most, until no gain or the budget is spent.")
    allocation = _allocation(model, estimate.steps, int(budget), *prices)
    g, o = allocation.greedy, allocation.optimum
    st.metric(f"Greedy allocation, {allocation.budget} tasks", f"p = {g.p}, w = {g.w}",
              delta=f"{allocation.gap_pct:.1f} % slower than the optimum" if allocation.gap_pct > 0 else "optimal",
              delta_color="inverse" if allocation.gap_pct > 0 else "off",
              delta_arrow="auto" if allocation.gap_pct > 0 else "off",
              help="Optimus's greedy allocation for one job, beside the exhaustive optimum over p + w <= budget.")
    st.caption(f"Stopped: {allocation.stop_reason}; exhaustive optimum within the budget: p = {o.p}, w = {o.w}.")
    return allocation


def table_section(grid: pd.DataFrame) -> None:
    st.subheader(f"All configurations ({len(grid)})")
    st.dataframe(grid, key="plan_table", hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.4g") for c in grid.columns
                                if c.startswith(("steps_per_s", "time_s", "time_h", "cost"))})
    table_download(grid, key="plan_table_csv", file_name="plan.csv")


# ---------------------------------------------------------------- page
@guarded("The Plan page")
def main() -> None:
    page_setup()
    st.title("Plan")
    st.caption("How long to the target, and at what cost, with w workers and p parameter servers: steps to "
               "target divided by the speed f(p, w) (Optimus, Peng et al., EuroSys 2018; or Pollux's model, OSDI "
               "2021), with the global batch fixed or growing with the workers (then the steps follow it).")
    steps_col, speed_col, cluster_col = st.columns(3, gap="large")
    with cluster_col:
        max_workers, global_batch = cluster_section()
    with speed_col:
        st.markdown("#### Speed model θ")
        model = speed_section(float(global_batch))
    allreduce = model is not None and model.mode == "allreduce"
    with cluster_col:
        ps, price_worker, price_ps = prices_section(allreduce)
    with steps_col:
        st.markdown("#### Steps to target")
        target = target_slider(key="plan_target_acc")
        estimate, fitted_batch = steps_section(load_runs(target_acc=target), float(global_batch))
    with cluster_col:
        rule, b_noise = rule_section(global_batch, fitted=fitted_batch is not None)

    if model is None or estimate is None or rule is None:
        st.info("Nothing to plan until both the steps to target and the speed model are set (see above).")
        st.stop()
    if not allreduce and not ps:
        st.info("Choose at least one number of parameter servers to compare.")
        st.stop()
    try:
        grid, batch_model = _rule_grid(model, estimate, rule, fitted_batch, b_noise, None if allreduce else ps,
                                       max_workers, price_worker, price_ps)
    except PlannerError as err:
        st.error(plain(str(err)), icon=":material/error:")
        st.stop()
    if model.time_unit == "paper units":
        st.warning("The paper's θ have no published time unit: times below are in **paper units**, comparable "
                   "with each other only, and there is no cost. Turn on *Calibrate to seconds* with one measured "
                   "step time to get hours.", icon=":material/warning:")
    paleo = paleo_section(steps=estimate, ps=() if allreduce else ps, max_workers=max_workers,
                          global_batch=global_batch, seconds=model.time_unit == "s", fixed_batch=rule.rule == "fixed")
    headline_section(grid, best_workers(grid), model, estimate, paleo, allreduce=allreduce, rule=rule,
                     batch=batch_model)
    cost_section(grid, model, estimate, (price_worker, price_ps),
                 fixed_steps=batch_model is None or rule.rule == "fixed")
    table_section(grid)


main()
