"""Logs: training logs → fitted Optimus loss curves, target crossing, charts, downloads."""

from __future__ import annotations

import streamlit as st

from core.curves import OPTIMUS
from core.figures.logs import accuracy_figure, loss_curve_figure
from core.logs import MAX_LOG_BYTES, ROLES
from core.runs import FIT_TABLE_COLUMNS, select_runs
from core.targets import CRITERIA
from pages.shared.common import (EDITS, add_uploads, chart, load_runs, page_setup, read_uploaded,
                                 show_errors, table_download, target_slider)

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
