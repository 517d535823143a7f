"""Logs: training logs → fitted loss curves, where each run passed its target, and a prediction
of the epoch at target from the first epochs.

Section functions, called in order from the page block at the end; every number comes from
``core`` (``core.runs``, ``core.prediction``) through cached wrappers.  The charts a user looks at
first come first; the prediction (backtests) runs after them, in its tab.  The Prediction tab's
sections (``pages.logs_sections.prediction`` and ``.progress``) are imported only when that tab is
open: they alone need ``core.prediction`` (scipy.stats and scikit-learn through the priors), about a
third of the page's imports, which a first visit then does not wait for.
"""

from __future__ import annotations

import streamlit as st

from core.curves import OPTIMUS
from core.logs import MAX_LOG_BYTES, readable_formats, reader_labels, upload_types
from core.runs import CRITERIA, FIT_TABLE_COLUMNS, criterion_text, given_target
from core.targets import Target
from pages.logs_sections.answer import OVERLAYS, charts_section, headline_section
from pages.logs_sections.runs import edit_section, save_section
from pages.shared.common import (
    UPLOAD_REFUSALS,
    LoadedRuns,
    detail_tabs,
    guarded,
    hand_over_to_app,
    load_logs,
    load_runs,
    page_setup,
    plain,
    show_errors,
    sync_uploads,
    table_download,
    target_input,
    uploader_key,
)
from pages.shared.uploads import UPLOAD_NOTES

#: what the uploader reads (core.logs.READERS: the format is told from the content)
LOG_FORMATS_TEXT = f"Reads {readable_formats()}."
CRITERION_LABELS = {"epoch": "epoch-level (default)", "first-row": "first row (course)"}
#: the details below the answer, one tab open at a time: the fits and report; the prediction from the first epochs
DETAIL_TABS = ("Fitted runs", "Prediction")


# ---------------------------------------------------------------- sections
def upload_section() -> None:
    st.file_uploader(f"Training logs: {reader_labels()}", type=upload_types(), accept_multiple_files=True,
                     key=uploader_key(), on_change=sync_uploads,
                     help=f"{LOG_FORMATS_TEXT} The format is told from the content, not the name. Up to "
                          f"{MAX_LOG_BYTES // 2**20} MB per file. Nothing uploaded is executed. Remove a file with "
                          "the ✕ on its chip. Files of one name are told apart; the same file twice is one run.")


def options_section() -> tuple[Target, str, bool, bool]:
    """Target, criterion and axis options: ``(target, criterion, log_x, log_y)``."""
    c1, c2, c3 = st.columns([3, 2, 2])
    with c1:
        target = target_input(load_logs()[0], key="logs_target_acc")
    criterion = c2.radio("Target reached at", options=list(CRITERIA), key="logs_criterion",
                         format_func=CRITERION_LABELS.get, horizontal=True,
                         help=plain("\n\n".join(criterion_text(c, target) for c in CRITERIA)))
    log_x = c3.toggle("log step axis", key="logs_log_x")     # stacked: side by side, their labels were cut
    log_y = c3.toggle("log loss axis", key="logs_log_y")
    return target, criterion, log_x, log_y


def fits_section(runs: LoadedRuns, criterion: str, target: Target) -> None:
    st.caption(f"Criterion in use: {plain(criterion_text(criterion, target))}. Loss model: {OPTIMUS.formula}, "
               "all b ≥ 0; "
               "standard errors assume independent residuals (a lower bound for per-step losses).")
    table = runs.table
    st.subheader(f"Fitted runs ({len(table)})")
    shown = [c for c in FIT_TABLE_COLUMNS if c != "file"]
    st.dataframe(table.set_index("file")[shown], key="logs_table", width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.4g") for c in
                                ("b0", "b1", "b2", "b0_se", "b1_se", "b2_se", "r2", "loss_at_target")})
    table_download(table, key="logs_table_csv", file_name="fits.csv")


def fit_report_section(runs: LoadedRuns, view: str) -> None:
    if view in OVERLAYS:
        return
    a = runs.get(view)
    with st.expander("Fit report", expanded=True):
        st.code(a.fit.report() if a.fit else "No loss curve fitted: " + "; ".join(a.flags), language=None)


# ---------------------------------------------------------------- page
@guarded("The Logs page")
def main() -> None:
    hand_over_to_app()           # before the uploader: a deep link run on its own goes through app.py
    st.title("Logs")
    st.caption(f"Training logs → fitted loss curves and the progress to a target (an accuracy that climbs, a "
               f"loss or log-perplexity that falls). {LOG_FORMATS_TEXT} Files stay loaded across pages.")
    answer = st.container()      # the answer first: how many runs reached the target, and their curves
    upload_section()
    page_setup()  # after the uploader, so the sidebar lists the files just stored
    show_errors((None, m) for m in st.session_state.get(UPLOAD_REFUSALS, []))
    for note in st.session_state.get(UPLOAD_NOTES, []):    # files of one name told apart, the same file once
        st.info(plain(note), icon=":material/info:")
    target, criterion, log_x, log_y = options_section()
    runs = load_runs(target=given_target(target), criterion=criterion)
    show_errors(runs.errors)
    if not runs.analyses:
        st.info("No runs loaded: upload logs above or choose built-in runs in the sidebar.")
        st.stop()
    with answer:
        headline_section(runs)
        view = charts_section(runs, target=target, log_x=log_x, log_y=log_y)
    tabs = detail_tabs(DETAIL_TABS, key="logs_details")     # only the open tab is computed
    with tabs["Fitted runs"]:
        if tabs["Fitted runs"].open:
            fits_section(runs, criterion, target)
            fit_report_section(runs, view)
    with tabs["Prediction"]:
        if tabs["Prediction"].open:
            # imported here only: these sections need core.prediction (see the module docstring)
            from pages.logs_sections.prediction import forecast_section

            forecast_section(runs, target=target, preferred=None if view in OVERLAYS else view)
    edit_section(runs)
    save_section()


main()
