"""Logs: training logs → fitted Optimus loss curves, target crossing, charts, downloads."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.curves import OPTIMUS
from core.figures.logs import accuracy_figure, loss_curve_figure
from core.figures.prediction import prediction_band_figure, prediction_convergence_figure
from core.logs.reader import MAX_LOG_BYTES, ROLES, RunLog
from core.prediction.backtest import inflation_from_other_runs
from core.prediction.intervals import FitCache
from core.prediction.predict import AUTO_FAMILIES, ROUTES, n_epochs, prediction_from_first_epochs, showcase_log, widen
from core.prediction.tables import convergence_of_prediction, family_scores
from core.runs.analysis import FIT_TABLE_COLUMNS, select_runs
from core.runs.targets import CRITERIA
from pages.shared.common import (
    EDITS,
    FAMILY,
    ROUTE,
    add_uploads,
    chart,
    load_runs,
    page_setup,
    read_uploaded,
    show_errors,
    table_download,
    target_slider,
)


# ---------------------------------------------------------------- cached prediction calls
# RunLogs are passed unhashed (leading underscore); their fingerprints are the cache key.
@st.cache_data(show_spinner="Backtesting every family on the loaded runs …", max_entries=32)
def _family_scores(keys: tuple[str, ...], _logs: tuple[RunLog, ...], target: float, route: str):
    return family_scores(list(_logs), fractions=(0.5,), target_acc=target, route=route)


@st.cache_data(show_spinner=False, max_entries=256)
def _prediction(key: str, _log: RunLog, others: tuple[str, ...], _logs: tuple[RunLog, ...], n: int,
                target: float, family: str, route: str):
    cache = FitCache()
    p = prediction_from_first_epochs(_log, n, target_acc=target, family=family, route=route, cache=cache)
    inflation, n_cases = inflation_from_other_runs(list(_logs), _log, n_epochs_seen=n, target_acc=target,
                                                   family=family, route=route, cache=cache)
    return (widen(p, inflation) if inflation is not None and p.status == "predicted" else p), inflation, n_cases


@st.cache_data(show_spinner="Predicting after every number of epochs …", max_entries=64)
def _convergence(key: str, _log: RunLog, target: float, family: str, route: str):
    return convergence_of_prediction(_log, target_acc=target, family=family, route=route)


def prediction_section(analyses, *, target: float, preferred: str | None) -> None:
    """Family selector, "predict from the first N epochs", and how the prediction converges."""
    st.subheader("Predict the epoch at target from the first epochs")
    logs = [a.log for a in analyses if a.log.has_acc and n_epochs(a.log) >= 4]
    if not logs:
        st.info("No loaded run has an accuracy column and at least 4 epochs.")
        return
    names = [log.source for log in logs]
    c1, c2, c3 = st.columns([2, 1, 2])
    default = preferred if preferred in names else showcase_log(logs, target).source
    run = c1.selectbox("Run", names, index=names.index(default), key="logs_pred_run",
                       format_func=lambda n: next(l.label for l in logs if l.source == n) + f"  ({n})")
    log = next(l for l in logs if l.source == run)
    routes = [r for r in ROUTES if r == "accuracy" or log.has_loss]
    route = c2.radio("Route", routes, key="logs_pred_route", horizontal=True,
                     index=routes.index(st.session_state[ROUTE]) if st.session_state[ROUTE] in routes else 0,
                     format_func={"accuracy": "accuracy curve", "loss": "via loss threshold"}.get,
                     on_change=lambda: st.session_state.__setitem__(ROUTE, st.session_state["logs_pred_route"]))
    keys = tuple(l.fingerprint() for l in logs)
    scores = _family_scores(keys, tuple(logs), target, route).set_index("family")
    options = ["auto", *AUTO_FAMILIES]

    def label(f: str) -> str:
        row = scores.loc[f]
        err = "no scored case" if not row["n_scored"] else (
            f"median error {row['median_abs_error_pct']:.0f} %, coverage {row['coverage']:.0%} "
            f"({row['n_scored']} cases at 50 % observed)")
        return f"{'auto (backtest choice)' if f == 'auto' else f} — {err}"

    family = c3.selectbox("Curve family", options, key="logs_pred_family", format_func=label,
                          index=options.index(st.session_state[FAMILY]) if st.session_state[FAMILY] in options else 0,
                          on_change=lambda: st.session_state.__setitem__(FAMILY, st.session_state["logs_pred_family"]))
    total = n_epochs(log)
    n = st.slider("Predict from the first N epochs", min_value=1, max_value=total - 1, value=max(1, total // 2),
                  key=f"logs_pred_n_{run}")
    others = tuple(l.fingerprint() for l in logs if l.source != run)
    p, inflation, n_cases = _prediction(log.fingerprint(), log, others, tuple(logs), int(n), target, family, route)
    actual = _convergence(log.fingerprint(), log, target, family, route)["epoch_actual"].iloc[0] \
        if total > 2 else None
    m1, m2, m3 = st.columns(3)
    if p.status == "predicted":
        hi = "never" if p.epoch_high == float("inf") else f"{p.epoch_high:.0f}"
        m1.metric("Predicted epoch at target", f"{p.epoch:.0f}", help=p.reason or None)
        m2.metric(f"{int(p.level * 100)} % interval", f"{p.epoch_low:.0f} – {hi}")
    else:
        m1.metric("Predicted epoch at target", p.status, help=p.reason or None)
        m2.metric(f"{int(p.level * 100)} % interval", "—")
    m3.metric("What the whole log shows", "never reached" if actual is None or pd.isna(actual) else f"epoch {actual}")
    source = (f"widened ×{inflation:.2f}, learned from {n_cases} predictions of the other loaded runs at the same "
              "observed fraction (leave-one-run-out)" if inflation is not None else
              f"from this run's own observed epochs only (only {n_cases} cases in other runs to calibrate on)")
    st.caption(f"Family used: **{p.family}** ({route} route). Interval: {p.interval_method}; {source}. "
               "The prediction sees the first N epochs only; the rest of the log is drawn for comparison.")
    chart(prediction_band_figure(log, p), key="logs_pred_chart", file_stem="prediction_from_first_epochs")
    chart(prediction_convergence_figure(_convergence(log.fingerprint(), log, target, family, route)),
          key="logs_pred_convergence_chart", file_stem="prediction_convergence")

st.title("Logs")
st.caption("Training logs → fitted loss curves. Drop CSV logs in the course format "
           "(`epoch, step, loss, acc`), PyTorch Lightning `metrics.csv`, TensorBoard or W&B "
           "scalar exports, or per-epoch metric traces. Files stay loaded across pages.")

uploaded = st.file_uploader("Training-log CSVs", type=["csv", "tsv", "txt"], accept_multiple_files=True,
                            key="logs_upload",
                            help=f"Up to {MAX_LOG_BYTES // 2**20} MB per file. Nothing uploaded is executed.")
add_uploads(uploaded)
page_setup()  # after storing the uploads, so the sidebar lists them

c1, c2, c3, c4 = st.columns([2, 2, 1, 1])
with c1:
    target = target_slider(key="logs_target_acc")
with c2:
    criterion = st.radio("Target reached at", options=list(CRITERIA), key="logs_criterion",
                         format_func=lambda c: "epoch-level (default)" if c == "epoch" else "first row (course)",
                         horizontal=True, help="\n\n".join(CRITERIA.values()))
with c3:
    log_x = st.toggle("log step axis", key="logs_log_x")
with c4:
    log_y = st.toggle("log loss axis", key="logs_log_y")

runs = load_runs(target_acc=target, criterion=criterion)
show_errors(runs.errors)
if not runs.analyses:
    st.info("No runs loaded: upload logs above or choose built-in runs in the sidebar.")
    st.stop()

st.caption(f"Criterion in use: {CRITERIA[criterion]}. Loss model: {OPTIMUS.formula}, "
           "all b ≥ 0; standard errors assume independent residuals (a lower bound for per-step losses).")

table = runs.table
st.subheader(f"Fitted runs ({len(table)})")
shown = [c for c in FIT_TABLE_COLUMNS if c != "file"]
st.dataframe(table.set_index("file")[shown], key="logs_table", width="stretch",
             column_config={c: st.column_config.NumberColumn(format="%.4g") for c in
                            ("b0", "b1", "b2", "b0_se", "b1_se", "b2_se", "r2", "loss_at_target")})
table_download(table, key="logs_table_csv", file_name="fits.csv")

labels = {a.log.source: a.log.label for a in runs.analyses}
overlays = {"__all__": "All runs overlaid", "__train__": "All train runs", "__val__": "All validation runs"}
view = st.selectbox("Show", options=list(overlays) + list(labels), key="logs_view",
                    format_func=lambda s: overlays.get(s) or f"{labels[s]}  ({s})")
shown_runs = select_runs(runs.analyses, view)

chart(loss_curve_figure(shown_runs, log_x=log_x, log_y=log_y, show_measured=len(shown_runs) <= 4),
      key="logs_loss_chart", file_stem="loss_curves")
chart(accuracy_figure(shown_runs, target_acc=target, log_x=log_x), key="logs_acc_chart",
      file_stem="accuracy")

prediction_section(runs.analyses, target=target, preferred=None if view in overlays else view)

if view not in overlays:
    a = shown_runs[0]
    with st.expander("Fit report", expanded=True):
        st.code(a.fit.report() if a.fit else "No loss curve fitted: " + "; ".join(a.flags), language=None)

with st.expander("Edit run metadata and column roles", icon=":material/edit:"):
    st.caption("Model, depth and device come from the file name `<model>_<GPU>[_val].csv`; "
               "change them here. Column roles are detected by name; override them per file.")
    name = st.selectbox("File", options=list(labels), key="logs_edit_file")
    log = read_uploaded(name)
    edit = dict(st.session_state[EDITS].get(name, {}))
    e1, e2, e3, e4, e5 = st.columns(5)
    model = e1.text_input("Model", value=log.meta.model or "", key=f"edit_model_{name}")
    depth = e2.number_input("Depth", value=log.meta.depth or 0, min_value=0, step=1, key=f"edit_depth_{name}")
    gpu = e3.text_input("Device", value=log.meta.gpu or "", key=f"edit_gpu_{name}")
    split = e4.selectbox("Split", ["train", "val"], index=0 if log.meta.split == "train" else 1,
                         key=f"edit_split_{name}")
    spe = e5.number_input("Steps per epoch", value=log.steps_per_epoch or 0, min_value=0, step=1,
                          key=f"edit_spe_{name}", help="0 = infer from the log")
    options = [None] + list(log.columns)
    role_cols = st.columns(len(ROLES))
    roles = {}
    for col, role in zip(role_cols, ROLES):
        current = getattr(log.roles, role)
        roles[role] = col.selectbox(role, options, index=options.index(current) if current in options else 0,
                                    key=f"edit_role_{role}_{name}", format_func=lambda c: "—" if c is None else c)
    if st.button("Apply", key="logs_apply_edit", icon=":material/check:"):
        new = {"model": model or None, "depth": int(depth) or None, "gpu": gpu or None}
        if split != log.meta.split:
            new["split"] = split
        if spe and spe != log.steps_per_epoch:
            new["steps_per_epoch"] = int(spe)
        if roles != log.roles.to_dict():
            new["roles"] = roles
        st.session_state[EDITS][name] = {**edit, **new}
        st.rerun()
