"""Calibrate page, the curves behind the prediction: b0, b1, b2 against depth, and the held-out
architecture's predicted against fitted loss curves with their errors.

A section module of ``pages/calibrate.py``: cached calls into ``core.calibrate`` and rendering only.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.calibrate import Calibration, parameter_predictions
from core.figures.calibrate import heldout_curves_figure, loss_error_figure, parameters_vs_depth_figure
from core.runs import loss_curves
from pages.shared.bounded import bounded_data
from pages.shared.common import CACHE, LoadedRuns, chart, plain


@bounded_data(**CACHE)
def _param_pred(key: str, _fits: pd.DataFrame, holdout: str, split: str, method: str) -> pd.DataFrame:
    return parameter_predictions(_fits, holdout=holdout, split=split, method=method)


def curves_section(key: str, fits: pd.DataFrame, cal: Calibration, cal_other: Calibration | None,
                   runs: LoadedRuns | None, *, inputs: tuple) -> None:
    """Curve parameters against depth, and the held-out architecture's predicted vs fitted curves."""
    st.subheader("Curve parameters against depth")
    method = cal.method if cal.route == "params" else "course"
    chart(parameters_vs_depth_figure, _param_pred(key, fits, cal.holdout, cal.split, method),
          key="cal_params_chart", file_stem="parameters_vs_depth", inputs=(key, cal.holdout, cal.split, method))
    if cal.route != "params":
        st.caption("The chosen method predicts steps directly; the chart shows the course baseline's parameters.")
    curves = cal if cal.route == "params" else cal_other
    if curves is None:
        return
    st.subheader(f"{plain(cal.holdout)}: predicted vs fitted curves ({curves.method})")
    measured = loss_curves(runs.analyses, model=cal.holdout, split=cal.split) if runs is not None else None
    runs_key = tuple(lg.fingerprint() for lg in runs.logs) if runs is not None else ()
    chart(heldout_curves_figure, curves, measured=measured, key="cal_curves_chart",
          file_stem=f"{cal.holdout}_curves", inputs=(inputs, curves.method, runs_key))
    e1, e2 = st.columns(2)
    with e1:
        chart(loss_error_figure, curves, kind="relative", key="cal_rel_err_chart",
              file_stem=f"{cal.holdout}_relative_error", inputs=(inputs, curves.method))
    with e2:
        chart(loss_error_figure, curves, kind="absolute", key="cal_abs_err_chart",
              file_stem=f"{cal.holdout}_absolute_error", inputs=(inputs, curves.method))
