"""Scaling page, batch size: samples to target against the batch (``core.batch``, goodput)
and the linear learning-rate rule with warm-up (``core.scaling.batch_size``).

A section of ``pages/scaling.py``: widgets, cached calls into ``core`` and rendering only.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.batch import TUNED_NOTE, BatchScaling
from core.datasets import BATCH_RUN_SETS
from core.errors import PlannerError
from core.figures.batch import batch_samples_figure, efficiency_goodput_figure
from core.figures.scaling import (
    lr_schedule_figure,
)
from core.plan import goodput_curves
from core.scaling import (
    LARGE_BATCH_TEXT,
    BatchSizePlan,
    batch_size_plan,
)
from core.speed import PolluxSpeedModel, fit_pollux_speed, read_speed_csv
from core.targets import accuracy_target
from pages.shared.bounded import bounded_data
from pages.shared.common import (
    BATCH_SOURCES,
    CACHE,
    LOADED_RUNS,
    SHARED,
    chart,
    guarded,
    load_batch_study,
    load_logs,
    plain,
    show_errors,
    table_download,
    target_input,
    target_text,
)


@bounded_data(show_spinner=False)
def _batch_plan(batch: int, n_samples: int, base_batch: int, base_lr: float,
                warmup_epochs: float) -> BatchSizePlan:
    return batch_size_plan(batch, n_samples=n_samples, base_batch=base_batch, base_lr=base_lr,
                           warmup_epochs=warmup_epochs)

@st.cache_resource(**SHARED)
def _set_speed(key: str) -> PolluxSpeedModel | PlannerError:
    entry = BATCH_RUN_SETS[key]
    try:
        return fit_pollux_speed(read_speed_csv(entry.speed_table_path(), source=entry.speed_table),
                                source=entry.speed_table)
    except PlannerError as err:     # remembered: a refused table is fitted once
        return err

@bounded_data(**CACHE)
def _goodput(key: str, digest: str, target: str, samples_per_epoch: int | None, _model: BatchScaling,
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
    if source == LOADED_RUNS:
        # the loaded runs: the shared target, in whichever direction (a loss falls to it; core.batch)
        target = target_input(load_logs()[0], key="scaling_target_acc")
        c[1].caption(plain(f"Target: {target_text(target)} (below; shared with the other pages)"))
    else:
        value = c[1].number_input("Target: acc ≥", min_value=0.01, max_value=0.999, step=0.005, format="%.3f",
                                  key="scaling_batch_target", help="The run set's own accuracy target.")
        target = accuracy_target(float(value))
    samples = c[2].number_input("Samples per epoch", min_value=0, step=1000, key="scaling_batch_samples",
                                help="Turns samples into epochs; 0: from the logs (MLLOG train_samples).")
    predict = c[3].number_input("Predict at batch", min_value=0, value=0, step=1024, key="scaling_batch_predict",
                                help="0: none.")
    study, errors, digest = load_batch_study(source, target=target, samples_per_epoch=int(samples) or None)
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
    key = (source, digest, target.spec, int(samples))
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
                                if c not in ("source", "file")})
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
