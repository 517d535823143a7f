"""Figures of the Calibrate page.

Trace names (per GPU ``g``):

* ``parameters_vs_depth_figure``: ``"{g} · fitted"``, ``"{g} · predicted"``, ``"{g} · band"``
  (per parameter panel; the held-out architecture's fitted points are ``"{g} · held out"``);
* ``heldout_curves_figure``: ``"{g} · fitted"``, ``"{g} · predicted"``, ``"{g} · measured"``;
* ``loss_error_figure``: ``"{g}"``;
* ``epochs_to_target_figure``: ``"actual"``, then one trace per calibration ``"{method}"``;
* ``method_scores_figure``: ``"LOAO MAPE"``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.calibrate import Calibration, predicted_loss_errors
from core.curves import optimus_loss
from core.figures.style import base_layout, color, empty_figure, escaped

PARAM_LABELS = {"b0": "b0 (per step)", "b1": "b1", "b2": "b2 (loss floor)"}


def _gpu_colors(gpus: Sequence[str]) -> dict[str, str]:
    return {g: color(i) for i, g in enumerate(sorted(set(gpus)))}


@escaped
def parameters_vs_depth_figure(pred: pd.DataFrame, *, title: str = "Curve parameters against depth") -> go.Figure:
    """b0, b1, b2 against depth, one colour per GPU: fitted values, prediction and band.

    ``pred`` is ``core.calibrate.evaluate.parameter_predictions``' frame.
    """
    if pred.empty:
        return empty_figure(title, "This method predicts the step at target directly, not b0, b1, b2.")
    fig = make_subplots(rows=1, cols=3, subplot_titles=[PARAM_LABELS[p] for p in ("b0", "b1", "b2")],
                        horizontal_spacing=0.07)
    colors = _gpu_colors(pred["gpu"])
    traces, cols = [], []       # added in one call: add_trace per trace validated the whole figure 36 times
    for col, param in enumerate(("b0", "b1", "b2"), start=1):
        part = pred[pred["param"] == param]
        for g, c in colors.items():
            rows = part[part["gpu"] == g].sort_values("depth")
            first = col == 1
            band = rows.dropna(subset=["low", "high"])
            if not band.empty:
                traces.append(go.Scatter(x=list(band["depth"]) + list(band["depth"][::-1]),
                                         y=list(band["high"]) + list(band["low"][::-1]), fill="toself",
                                         fillcolor=c, opacity=0.12, line=dict(width=0), name=f"{g} · band",
                                         legendgroup=g, showlegend=first, hoverinfo="skip"))
                cols.append(col)
            traces.append(go.Scatter(x=rows["depth"], y=rows["predicted"], mode="lines+markers",
                                     name=f"{g} · predicted",
                                     legendgroup=g, showlegend=first, line=dict(color=c, dash="dash"),
                                     marker=dict(size=5, symbol="diamond"),
                                     text=rows["model"], hovertemplate="%{text}: %{y:.4g}<extra>predicted</extra>"))
            cols.append(col)
            cal = rows[~rows["holdout"]]
            traces.append(go.Scatter(x=cal["depth"], y=cal["value"], mode="markers", name=f"{g} · fitted",
                                     legendgroup=g, showlegend=first, marker=dict(color=c, size=9),
                                     text=cal["model"], hovertemplate="%{text}: %{y:.4g}<extra>fitted</extra>"))
            cols.append(col)
            held = rows[rows["holdout"]]
            if not held.empty:
                traces.append(go.Scatter(x=held["depth"], y=held["value"], mode="markers", name=f"{g} · held out",
                                         legendgroup=g, showlegend=first,
                                         marker=dict(color=c, size=12, symbol="x", line=dict(width=1)),
                                         text=held["model"], hovertemplate="%{text}: %{y:.4g}<extra>held out</extra>"))
                cols.append(col)
    fig.add_traces(traces, rows=[1] * len(traces), cols=cols)
    fig.update_layout(font_size=12, height=420, title_text=title, margin=dict(l=50, r=20, t=70, b=50))
    fig.update_xaxes(title_text="depth (layers)")
    return fig


def _grid(cal: Calibration, k_max: float | None) -> np.ndarray:
    p = cal.predictions
    top = k_max or float(np.nanmax(np.concatenate([p["step_actual"].to_numpy(float) * 1.6,
                                                    p["step_pred"].to_numpy(float) * 1.2, [1000.0]])))
    return np.linspace(1.0, top, 300)


@escaped
def heldout_curves_figure(cal: Calibration, *, measured: Mapping[str, tuple[np.ndarray, np.ndarray]] | None = None,
                          k_max: float | None = None) -> go.Figure:
    """The held-out model's predicted curve next to the curve fitted to its own log, per GPU.

    ``measured`` maps a GPU name to ``(steps, losses)`` of the raw log, when loaded.
    """
    title = f"{cal.holdout}: predicted vs fitted loss curve"
    if cal.route != "params":
        return empty_figure(title, "Direct methods predict the step at target, not a loss curve.")
    k = _grid(cal, k_max)
    fig = go.Figure()
    colors = _gpu_colors(cal.predictions["gpu"])
    for _, row in cal.predictions.iterrows():
        g, c = row["gpu"], colors[row["gpu"]]
        if measured and g in measured:
            mk, my = measured[g]
            fig.add_trace(go.Scatter(x=mk, y=my, mode="markers", name=f"{g} · measured", legendgroup=g,
                                       marker=dict(color=c, size=3, opacity=0.3)))
        fig.add_trace(go.Scatter(x=k, y=optimus_loss(k, row["b0"], row["b1"], row["b2"]), mode="lines",
                                 name=f"{g} · fitted", legendgroup=g, line=dict(color=c, width=2)))
        fig.add_trace(go.Scatter(x=k, y=optimus_loss(k, row["b0_hat"], row["b1_hat"], row["b2_hat"]), mode="lines",
                                 name=f"{g} · predicted", legendgroup=g, line=dict(color=c, width=2, dash="dash")))
    if cal.loss_threshold is not None:
        fig.add_hline(y=cal.loss_threshold, line=dict(color="#555", dash="dot", width=1),
                      annotation_text=f"L = {cal.loss_threshold:.3f}", annotation_position="top right")
    return base_layout(fig, title=title, x_title="global step k", y_title="loss")


@escaped
def loss_error_figure(cal: Calibration, *, kind: str = "relative", k_max: float | None = None) -> go.Figure:
    """Error of the predicted loss against the fitted one over steps, per GPU.

    ``kind="relative"``: ``(predicted - fitted)/fitted`` in percent; ``"absolute"``:
    ``predicted - fitted`` in loss units.
    """
    title = f"{cal.holdout}: {kind} error of the predicted loss"
    if cal.route != "params":
        return empty_figure(title, "Direct methods predict the step at target, not a loss curve.")
    errors = predicted_loss_errors(cal, _grid(cal, k_max))
    column = "rel_error_pct" if kind == "relative" else "abs_error"
    fig = go.Figure()
    colors = _gpu_colors(cal.predictions["gpu"])
    for gpu in cal.predictions["gpu"]:
        part = errors[errors["gpu"] == gpu]
        fig.add_trace(go.Scatter(x=part["step"], y=part[column], mode="lines", name=str(gpu),
                                 line=dict(color=colors[gpu])))
    fig.add_hline(y=0, line=dict(color="#888", width=1))
    return base_layout(fig, title=title, x_title="global step k",
                       y_title="relative error (%)" if kind == "relative" else "absolute error (loss)")


@escaped
def epochs_to_target_figure(cals: Sequence[Calibration], *, extrapolated: pd.DataFrame | None = None) -> go.Figure:
    """Epochs to target per GPU: actual, and each calibration's prediction with its interval.

    ``extrapolated`` (columns ``gpu, epoch, low, high, family``) adds the held-out runs' own
    logs extrapolated by a curve family, for runs whose logs end before the target (trace
    ``"extrapolated from its log"``, drawn after ``"actual"``).
    """
    cals = [c for c in cals if c is not None]
    if not cals:
        return empty_figure("Epochs to target", "No prediction.")
    base = cals[0].predictions
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=base["gpu"], y=base["epoch_actual"], mode="markers", name="actual",
                             marker=dict(color="#222", size=13, symbol="line-ew-open", line=dict(width=3))))
    if extrapolated is not None and len(extrapolated):
        e = extrapolated
        fig.add_trace(go.Scatter(
            x=e["gpu"], y=e["epoch"], mode="markers", name="extrapolated from its log",
            marker=dict(color="#555", size=11, symbol="diamond-open", line=dict(width=2)),
            error_y=dict(type="data", array=(e["high"] - e["epoch"]).to_numpy(float),
                         arrayminus=(e["epoch"] - e["low"]).to_numpy(float), visible=True),
            hovertemplate="%{x}: %{y} epochs<extra>extrapolated (" + str(e["family"].iloc[0]) + ")</extra>"))
    for i, cal in enumerate(cals):
        p = cal.predictions
        err_hi = (p["epoch_pred_high"] - p["epoch_pred"]).to_numpy(float)
        err_lo = (p["epoch_pred"] - p["epoch_pred_low"]).to_numpy(float)
        fig.add_trace(go.Scatter(x=p["gpu"], y=p["epoch_pred"], mode="markers", name=cal.method,
                                 marker=dict(color=color(i + 1), size=10),
                                 error_y=dict(type="data", array=err_hi, arrayminus=err_lo, visible=True),
                                 hovertemplate="%{x}: %{y} epochs<extra>" + cal.method + "</extra>"))
    fig.update_layout(scattermode="group")
    return base_layout(fig, title=f"{cals[0].holdout}: epochs to target, predicted ({int(cals[0].level * 100)} % "
                                  "interval) vs actual", x_title="GPU", y_title="epochs")


@escaped
def method_scores_figure(scores: pd.DataFrame, *, recommended: str | None = None,
                         competing: Sequence[str] | None = None) -> go.Figure:
    """Leave-one-architecture-out MAPE of each method: the recommended one highlighted, the methods that
    do not compete for the recommendation (``core.calibrate.competing_methods``) hatched, so the chart
    and the recommendation agree: the highlighted bar is the lowest of the plain ones."""
    rows = scores.dropna(subset=["loao_mape_pct"])
    if rows.empty:
        return empty_figure("Leave-one-architecture-out error", "Not enough architectures to score methods.")
    colors = [color(3) if m == recommended else "#9aa5b1" for m in rows["method"]]
    hatch = ["" if competing is None or m in competing else "/" for m in rows["method"]]
    fig = go.Figure(go.Bar(x=rows["method"], y=rows["loao_mape_pct"], marker_color=colors, name="LOAO MAPE",
                           marker_pattern_shape=hatch, marker_pattern_fgcolor="#ffffff",
                           text=[f"{v:.1f} %" for v in rows["loao_mape_pct"]], textposition="outside"))
    return base_layout(fig, title="Leave-one-architecture-out error of each method (calibration runs only)",
                       subtitle=None if competing is None else "highlighted: recommended; hatched: not competing",
                       x_title="method", y_title="MAPE of epochs to target (%)")
