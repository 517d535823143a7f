"""Logs page, its answer at the top: how many loaded runs reached their target and which was first
(``core.runs.summarize_targets``), then the loss and accuracy curves of the chosen view.

A section of ``pages/logs.py``: widgets, cached calls into ``core`` and rendering only.
"""

from __future__ import annotations

import streamlit as st

from core.figures.logs import accuracy_figure, loss_curve_figure
from core.runs import accuracy_chart_target, not_loaded_text, select_runs, step_scales, summarize_targets
from core.targets import Target
from pages.shared.common import LoadedRuns, chart, plain

OVERLAYS = {"__all__": "All runs overlaid", "__train__": "All train runs", "__val__": "All validation runs"}


def headline_section(runs: LoadedRuns) -> None:
    """How many loaded runs reached their target, and which got there first (``core.runs.summarize_targets``)."""
    summary = summarize_targets(runs.analyses)
    m1, m2 = st.columns(2)
    m1.metric("Runs that reached the target", summary.reached_value())
    m2.metric("First to the target", summary.first_value(),
              help="Runs are ranked only against runs of the same target that count progress in the same unit "
                   "(tokens, samples, else steps: compared in seconds, else epochs); runs of different targets "
                   "or units are not ranked together, and the line below names the first of each.")
    st.caption(plain(summary.headline()))
    st.caption(plain(summary.targets_text()))
    refused = not_loaded_text([name for name, _ in runs.errors])   # nothing hidden: named at the answer too
    if refused:
        st.warning(plain(refused), icon=":material/block:")


def charts_section(runs: LoadedRuns, *, target: Target, log_x: bool, log_y: bool) -> str:
    """The loss chart of the chosen view, and the accuracy chart for an accuracy target; returns the view
    (an overlay or a file)."""
    names = [a.log.source for a in runs.analyses]
    view = st.selectbox("Show", options=list(OVERLAYS) + names, key="logs_view",
                        format_func=lambda s: OVERLAYS.get(s, s))
    shown = select_runs(runs.analyses, view)
    if view not in OVERLAYS:
        st.caption(plain(shown[0].log.label))
    fits_key = tuple((a.log.fingerprint(), a.fit.values if a.fit else None) for a in shown)  # not the target
    scales = step_scales(runs.analyses)                         # val logs on their training run's steps
    chart(loss_curve_figure, shown, log_x=log_x, log_y=log_y, show_measured=len(shown) <= 4,
          step_scale=scales, inputs=(fits_key, tuple(sorted(scales.items()))),
          key="logs_loss_chart", file_stem="loss_curves")
    accuracy = accuracy_chart_target(target)
    if accuracy is not None:       # the figure draws its line at the value (core.figures.logs.accuracy_figure)
        chart(accuracy_figure, shown, target=accuracy, log_x=log_x, step_scale=scales,
              key="logs_acc_chart", file_stem="accuracy")
    return view
