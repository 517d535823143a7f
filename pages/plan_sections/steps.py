"""Plan page, steps to target: from a loaded run, the Calibrate page's prediction, a number typed in
or a batch-scaling fit (``core.plan.steps``).

A section of ``pages/plan.py``: widgets, cached calls into ``core`` and rendering only.
"""

from __future__ import annotations

import streamlit as st

from core.batch import BatchScaling
from core.datasets import BATCH_RUN_SETS
from core.errors import InputError, PlannerError
from core.plan import (
    StepsEstimate,
    default_run,
    measured_step_time,
    run_methods,
    steps_from_batch_scaling,
    steps_from_run,
    steps_sources,
    typed_steps,
)
from core.runs import RunAnalysis, widget_target
from core.targets import accuracy_target
from pages.shared.bounded import bounded_data
from pages.shared.common import (
    BATCH_SOURCES,
    CACHE,
    CALIBRATED_STEPS,
    FAMILY,
    KEPT,
    LOADED_RUNS,
    ROUTE,
    LoadedRuns,
    keep_valid_choice,
    load_batch_study,
    load_logs,
    plain,
    shared_fits,
    show_errors,
    target_text,
)
from pages.shared.state import TARGET

STEPS_SOURCE_LABELS = {"run": "a run on the Logs page", "calibrate": "the Calibrate page's prediction",
                 "typed": "a number typed in", "batch": "a batch-scaling fit (runs at several batches)"}
METHOD_LABELS = {"auto": "measured (fitted if never reached)", "fitted": "fitted curve",
                 "family": "curve family (set on Logs)"}
#: how each way of taking steps from a run reads (the posterior appears for a partial run with a prior)
RUN_METHOD_LABELS = {**METHOD_LABELS, "posterior": "posterior (other runs × its epochs)"}


@bounded_data(**CACHE)
def _run_steps(run: RunAnalysis, others: tuple[RunAnalysis, ...], method: str, loss_threshold: float | None,
               family: str, route: str) -> StepsEstimate:
    return steps_from_run(run, others, method=method, loss_threshold=loss_threshold, family=family, route=route,
                          cache=shared_fits())


def steps_section(runs: LoadedRuns, global_batch: float) -> tuple[StepsEstimate | None, BatchScaling | None]:
    """Steps to target from the chosen source and, for a batch-scaling fit, its model; None (with the reason
    shown) when there is none."""
    show_errors(runs.errors)
    handed_over = st.session_state.get(CALIBRATED_STEPS)
    sources = steps_sources(has_runs=bool(runs.analyses), has_calibration=handed_over is not None)
    keep_valid_choice("plan_steps_source", sources)
    source = st.radio("Steps to target from", sources, format_func=STEPS_SOURCE_LABELS.get, key="plan_steps_source",
                      **KEPT)
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


def chosen_run_step(runs: LoadedRuns) -> tuple[float, str] | None:
    """The measured seconds per step of the run chosen as the steps' source (``core.plan.measured_step_time``)
    and its name; None when steps come from elsewhere or the run measured none."""
    if st.session_state.get("plan_steps_source") != "run" or st.session_state.get("plan_run") is None:
        return None
    chosen = runs.get(st.session_state["plan_run"])
    step = measured_step_time(chosen.log) if chosen is not None else None
    return (step, chosen.log.source) if step else None


def _steps_from_run(runs: LoadedRuns) -> StepsEstimate:
    names = [a.log.source for a in runs.analyses]
    st.session_state.setdefault("plan_run", default_run(runs.analyses))   # a run that reached the target
    keep_valid_choice("plan_run", names)
    run = st.selectbox("Run", names, key="plan_run", help="Runs loaded on the Logs page; the page opens on the "
                       "first that reached the target.", **KEPT)
    chosen = runs.get(run)
    c = chosen.crossing
    st.caption(plain(f"{run}: ") + (f"reached {c.target.spec} at step {c.step:,.0f}" if c.reached
                             else f"never reached {c.target.spec} in its log"))
    methods = run_methods(chosen, runs.analyses)
    keep_valid_choice("plan_run_method", methods)
    family, route = st.session_state[FAMILY], st.session_state[ROUTE]
    method = st.radio("Steps from", list(methods), key="plan_run_method", horizontal=True, **KEPT,
                      format_func=RUN_METHOD_LABELS.get,
                      help="\n\n".join(f"**{RUN_METHOD_LABELS[k]}**: {v}" for k, v in methods.items())
                           + f"\n\nCurve family in use: {family} ({route} route).")
    threshold = None
    if method == "fitted" or (method == "auto" and not c.reached):
        threshold = st.number_input(
            "Loss threshold L", min_value=0.0, value=None, format="%.4g", key="plan_loss_threshold", **KEPT,
            placeholder="mean loss at target of the other runs",
            help="The fitted curve is inverted where it falls to L. Blank: the mean loss at which the "
                 "other loaded runs (same split) first passed the target; never this run's own.")
    return _run_steps(chosen, runs.analyses, method, threshold, family, route)


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
                       on_change=_on_batch_set, **KEPT,
                       help="Runs of one job at several global batches (see the Scaling page, Batch size tab); "
                            "loaded runs give their batch in the log or a -<batch> file-name suffix.")
    if key == LOADED_RUNS:        # the loaded runs: the page's target, in either direction (a loss falls to it)
        target = widget_target(st.session_state.get(TARGET), load_logs()[0])
        c2.caption(plain(f"Their target: {target_text(target)} (the page's target, above)"))
    else:
        target = accuracy_target(float(c2.number_input("Their target", min_value=0.01, max_value=0.999, step=0.005,
                                                       format="%.3f", key="plan_batch_target", **KEPT)))
    entry = BATCH_RUN_SETS.get(key)
    study, errors, _ = load_batch_study(key, target=target,
                                        samples_per_epoch=entry.samples_per_epoch if entry else None)
    if study is None or study.model is None:
        raise InputError(study.problem if study is not None else "batch scaling: expected loaded runs; got none. "
                         "Load runs on the Logs page or pick a built-in set.")
    return steps_from_batch_scaling(study.model, global_batch, label=BATCH_SOURCES[key]), study.model


def _typed_steps() -> StepsEstimate:
    steps = st.number_input("Steps to target", min_value=1.0, value=50_000.0, step=1000.0, format="%.0f",
                            key="plan_steps", **KEPT)
    c1, c2 = st.columns(2)
    low = c1.number_input("low (optional)", min_value=1.0, value=None, format="%.0f", key="plan_steps_low", **KEPT)
    high = c2.number_input("high (optional)", min_value=1.0, value=None, format="%.0f", key="plan_steps_high", **KEPT)
    return typed_steps(steps, low=low, high=high)
