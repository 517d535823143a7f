"""Figures of a prediction from the first epochs of a log (Logs page, prediction panel).

``prediction_band_figure`` traces, in this order (names fixed):

0. ``band``: the interval band of the curve (a closed polygon, low then high reversed);
1. ``observed``: per-epoch accuracy (or mean loss) of the epochs the prediction saw;
2. ``unseen``: the rest of the log: what actually happened (empty when not given);
3. ``fitted``: the family's curve fitted on the observed epochs;
4. ``predicted``: the drift-corrected curve, crossing the target at the predicted epoch;
5. ``target``: the target accuracy (or the loss threshold of the loss route);
6. ``predicted epoch``: a marker on the target line with the interval as an error bar;
7. ``actual epoch``: a marker where the whole log passed the target (empty when unknown).

``prediction_convergence_figure`` traces: ``interval`` (polygon), ``predicted``,
``actual`` (horizontal line) and ``epochs seen`` (the diagonal a prediction cannot be
below).  Infinite interval ends ("may never get there") are drawn at the top of the axis.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core.figures.style import COLORS, TARGET_LINE, base_layout, empty_figure
from core.logs import RunLog
from core.prediction import TargetPrediction, prediction_curves
from core.runs import epoch_summary

BAND_FILL = "rgba(0, 114, 178, 0.18)"
UNSEEN_COLOR = "#888888"
#: how far past the last epoch of interest the curves are drawn
X_MARGIN = 1.25


def _finite_max(*values) -> float:
    vals = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    return max(vals) if vals else 1.0


def prediction_band_figure(log: RunLog, prediction: TargetPrediction, *, actual_epoch: int | None = None,
                           n_curve_points: int = 300) -> go.Figure:
    """The prediction made from the first epochs against what the whole log shows.

    Parameters
    ----------
    log : RunLog
        The whole log (its epochs after ``prediction.n_epochs_observed`` are drawn as
        ``unseen``; pass the observed part alone to draw none).
    prediction : TargetPrediction
        From ``prediction_from_first_epochs(log, n, ...)``.
    actual_epoch : int or None
        Where the whole log passed the target (``RunAnalysis.crossing.epoch`` at the same
        target), drawn when it lies after the observed epochs; None when it never did.
    n_curve_points : int, default 300
        Points of the drawn curves.
    """
    table = epoch_summary(log)
    column = "acc" if prediction.route == "accuracy" else "loss"
    table = table.dropna(subset=[column])
    if table.empty:
        return empty_figure("Prediction", f"{log.source}: no {'accuracy' if column == 'acc' else 'loss'} to show.")
    n = prediction.n_epochs_observed
    seen, unseen = table[table["epoch"] <= n], table[table["epoch"] > n]
    level = prediction.target_level
    y_target = prediction.target_acc if prediction.route == "accuracy" else level
    actual = actual_epoch if actual_epoch is not None and actual_epoch > n else None
    last = table["epoch"].max()
    high = prediction.epoch_high if prediction.epoch_high and prediction.epoch_high < 4 * last else None
    x_max = X_MARGIN * _finite_max(last, prediction.epoch, high)
    curves = prediction_curves(prediction, np.linspace(0.5, x_max, n_curve_points))
    fig = go.Figure()
    band = curves.dropna(subset=["low", "high"])
    band = band[band["epoch"] >= n]
    fig.add_trace(go.Scatter(x=np.concatenate([band["epoch"], band["epoch"][::-1]]),
                             y=np.concatenate([band["low"], band["high"][::-1]]), mode="lines",
                             fill="toself", fillcolor=BAND_FILL, line=dict(width=0), hoverinfo="skip",
                             name="band"))
    fig.add_trace(go.Scatter(x=seen["epoch"], y=seen[column], mode="lines+markers", name="observed",
                             line=dict(color=COLORS[0], width=2), marker=dict(size=5)))
    fig.add_trace(go.Scatter(x=unseen["epoch"], y=unseen[column], mode="markers", name="unseen",
                             marker=dict(color=UNSEEN_COLOR, size=5, symbol="circle-open")))
    fig.add_trace(go.Scatter(x=curves["epoch"], y=curves["fitted"], mode="lines", name="fitted",
                             line=dict(color=COLORS[0], width=1.5, dash="dot")))
    fig.add_trace(go.Scatter(x=curves["epoch"], y=curves["predicted"], mode="lines", name="predicted",
                             line=dict(color=COLORS[1], width=2.5)))
    fig.add_trace(go.Scatter(x=[0.5, x_max], y=[y_target, y_target], mode="lines", name="target",
                             line=TARGET_LINE))
    fig.add_trace(_epoch_marker(prediction, y_target, x_max))
    fig.add_trace(go.Scatter(x=[actual] if actual else [], y=[y_target] if actual else [], mode="markers",
                             name="actual epoch", marker=dict(color="#000000", size=11, symbol="x")))
    what = "accuracy" if prediction.route == "accuracy" else "loss (epoch mean)"
    title = (f"{log.label}: target from the first {n} epochs ({prediction.family}, "
             f"{prediction.route} route)")
    base_layout(fig, title=title, x_title="epoch", y_title=what)
    fig.update_xaxes(range=[0, x_max])
    return fig


def _epoch_marker(p: TargetPrediction, y: float | None, x_max: float) -> go.Scatter:
    if p.epoch is None or y is None:
        return go.Scatter(x=[], y=[], mode="markers", name="predicted epoch")
    high = p.epoch_high if p.epoch_high is not None and math.isfinite(p.epoch_high) else x_max
    low = p.epoch_low if p.epoch_low is not None else p.epoch
    return go.Scatter(x=[p.epoch], y=[y], mode="markers", name="predicted epoch",
                      marker=dict(color=COLORS[1], size=11, symbol="diamond"),
                      error_x=dict(type="data", symmetric=False, array=[high - p.epoch],
                                   arrayminus=[p.epoch - low], thickness=2, width=6),
                      hovertemplate=(f"predicted epoch {p.epoch:g}<br>{p.level:.0%} interval "
                                     f"{low:g} – {p.epoch_high:g}<extra></extra>"))


def prediction_convergence_figure(frame: pd.DataFrame) -> go.Figure:
    """Predicted epoch (with its interval) against the number of epochs seen.

    ``frame`` is ``core.prediction.backtest.convergence_of_prediction``'s output.
    """
    if frame is None or frame.empty:
        return empty_figure("Prediction against epochs seen", "No prediction to show.")
    x = frame["epochs_seen"].to_numpy(dtype=float)
    pred = frame["epoch_pred"].to_numpy(dtype=float)
    low = frame["epoch_low"].to_numpy(dtype=float)
    high = frame["epoch_high"].to_numpy(dtype=float)
    actual = frame["epoch_actual"].dropna()
    top = 1.2 * _finite_max(*pred, *high, *(actual.tolist()), x.max() + 1)

    def cap(v):
        return np.where(np.isinf(v), top, v)

    ok = ~np.isnan(low)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=np.concatenate([x[ok], x[ok][::-1]]),
                             y=np.concatenate([cap(low[ok]), cap(high[ok])[::-1]]), mode="lines",
                             fill="toself", fillcolor=BAND_FILL, line=dict(width=0), name="interval",
                             hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=x, y=cap(pred), mode="lines+markers", name="predicted",
                             line=dict(color=COLORS[1], width=2)))
    a = float(actual.iloc[0]) if len(actual) else None
    fig.add_trace(go.Scatter(x=[x.min(), x.max()] if a else [], y=[a, a] if a else [], mode="lines",
                             name="actual", line=dict(color="#000000", dash="dash", width=1.5)))
    fig.add_trace(go.Scatter(x=[x.min(), x.max()], y=[x.min(), x.max()], mode="lines", name="epochs seen",
                             line=dict(color=UNSEEN_COLOR, width=1, dash="dot")))
    base_layout(fig, title="Predicted epoch at target against epochs seen",
                x_title="epochs seen", y_title="epoch at target")
    fig.update_yaxes(range=[0, top * 1.02])
    return fig
