"""Calibrate page, how good the method is: leave-one-architecture-out of the chosen method and the
course baseline, and the nested version that chooses the method inside every fold.

A section module of ``pages/calibrate.py``: widgets, cached calls into ``core.calibrate`` and rendering only.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.calibrate import (
    PREDICTION_COLUMNS,
    Calibration,
    competing_methods,
    leave_one_architecture_out,
    loao_summary,
    nested_loao,
    nested_summary,
)
from core.figures.calibrate import method_scores_figure
from pages.shared.bounded import bounded_data
from pages.shared.common import CACHE, chart, plain, table_download


@bounded_data(**CACHE)
def _loao(key: str, _fits: pd.DataFrame, split: str, method: str, threshold: str) -> pd.DataFrame:
    return leave_one_architecture_out(_fits, split=split, method=method, threshold=threshold)


@bounded_data(**CACHE)
def _loao_summary(key: str, _fits: pd.DataFrame, split: str, methods: tuple[str, ...], threshold: str) -> pd.DataFrame:
    return pd.concat([loao_summary(_loao(key, _fits, split, m, threshold)) for m in methods], ignore_index=True)


@bounded_data(**{**CACHE, "show_spinner": "Nested leave-one-architecture-out: every architecture held out in turn, "
                                           "the method and the interval chosen on the others …"})
def _nested(key: str, _fits: pd.DataFrame, split: str, threshold: str) -> pd.DataFrame:
    return nested_loao(_fits, split=split, method="auto", threshold=threshold)


def loao_section(key: str, fits: pd.DataFrame, scores: pd.DataFrame, best: str, cal: Calibration,
                 threshold: str, *, outside: bool) -> None:
    """The methods' errors (the recommended bar highlighted, the non-competing hatched) and the chosen
    method's leave-one-architecture-out beside the course baseline's."""
    st.subheader("Leave-one-architecture-out")
    competing = competing_methods(scores, outside=outside)
    chart(method_scores_figure, scores, recommended=best, competing=tuple(competing), key="cal_scores_chart",
          file_stem="method_scores", inputs=(key, cal.split, cal.holdout, threshold, tuple(competing)))
    methods = tuple(dict.fromkeys([cal.method, "course"]))
    loao = pd.concat([_loao(key, fits, cal.split, m, threshold) for m in methods], ignore_index=True)
    summary = _loao_summary(key, fits, cal.split, methods, threshold)
    l1, l2 = st.columns([1, 2])
    l1.dataframe(summary, key="cal_loao_summary", hide_index=True,
                 column_config={"mape_pct": st.column_config.NumberColumn("MAPE (%)", format="%.1f")})
    l2.dataframe(loao, key="cal_loao_table", hide_index=True,
                 column_config={"epoch_error_pct": st.column_config.NumberColumn(format="%.1f")})
    table_download(loao, key="cal_loao_csv", file_name="leave_one_architecture_out.csv")
    st.caption("Every architecture of the chosen split is held out in turn (all architectures, this time including "
               f"{plain(cal.holdout)}) and predicted from the rest; MAPE of epochs to target, a prediction that never "
               "reaches L counted as 100 %.")
    nested_section(key, fits, cal.split, threshold)
    if len(cal.excluded):
        with st.expander(f"Runs left out ({len(cal.excluded)})"):
            st.dataframe(cal.excluded, key="cal_excluded", hide_index=True)


def nested_section(key: str, fits: pd.DataFrame, split: str, threshold: str) -> None:
    """The whole procedure scored: each architecture's interval and whether it lies inside the calibration set."""
    with st.expander("Nested leave-one-architecture-out: intervals, coverage, inside or outside",
                     icon=":material/verified:"):
        st.caption("Each architecture is held out in turn; the method (auto) and the interval are chosen on the "
                   "other architectures alone, as for the prediction above; then the held-out runs are compared "
                   "with the prediction. This is how well the page predicts an architecture it has not seen.")
        if not st.toggle("Run it", key="cal_nested_on", help="Refits every method for every architecture."):
            return
        table = _nested(key, fits, split, threshold)
        st.dataframe(nested_summary(table), key="cal_nested_summary", hide_index=True,
                     column_config={"mape_pct": st.column_config.NumberColumn("MAPE (%)", format="%.1f"),
                                    "coverage": st.column_config.NumberColumn(format="%.2f")})
        st.dataframe(table, key="cal_nested_table", hide_index=True,
                     column_config={"epoch_error_pct": st.column_config.NumberColumn(format="%.1f")})
        table_download(table, key="cal_nested_csv", file_name="nested_leave_one_architecture_out.csv")


def table_section(cal: Calibration, cal_other: Calibration | None) -> None:
    st.subheader("Prediction table")
    table = pd.concat([c.table() for c in (cal, cal_other) if c is not None], ignore_index=True)
    st.dataframe(table, key="cal_table", hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.4g") for c in PREDICTION_COLUMNS
                                if c.startswith("b") or c.endswith("pct")})
    table_download(table, key="cal_table_csv", file_name=f"{cal.holdout}_calibration.csv")
