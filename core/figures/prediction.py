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

With a prior, a posterior or a schedule (``forecast_epoch_at_target``'s), five more follow:

8. ``prior``: the prior's interval as a vertical band (epochs);
9. ``posterior``: the posterior's interval as a vertical band;
10. ``prior epoch`` and 11. ``posterior epoch``: markers on the target line with their intervals;
12. ``schedule``: a dashed vertical line between the epochs where the learning rate changes
    (each drop, or the end of a decay).

So the three answers share one chart: the extrapolation as the band around its curve, the
prior and the posterior as bands across the epoch axis.

``prediction_convergence_figure`` traces: ``interval`` (polygon), ``predicted``,
``actual`` (horizontal line) and ``epochs seen`` (the diagonal a prediction cannot be
below); with prior and posterior columns (``convergence_of_prediction(..., prior=...)``) also
``prior interval``, ``prior``, ``posterior interval``, ``posterior`` and ``schedule``.
Infinite interval ends ("may never get there") are drawn at the top of the axis.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core.figures.style import COLORS, TARGET_LINE, base_layout, empty_figure, esc, escaped
from core.logs import RunLog
from core.prediction import Posterior, Prior, Schedule, TargetPrediction, prediction_curves
from core.runs import epoch_summary

BAND_FILL = "rgba(0, 114, 178, 0.18)"
PRIOR_COLOR, PRIOR_FILL = "#CC79A7", "rgba(204, 121, 167, 0.16)"
POSTERIOR_COLOR, POSTERIOR_FILL = "#009E73", "rgba(0, 158, 115, 0.22)"
SCHEDULE_LINE = dict(color="#555555", width=1, dash="dash")
UNSEEN_COLOR = "#888888"
#: how far past the last epoch of interest the curves are drawn
X_MARGIN = 1.25


def _finite_max(*values) -> float:
    vals = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    return max(vals) if vals else 1.0


@escaped
def prediction_band_figure(log: RunLog, prediction: TargetPrediction, *, actual_epoch: int | None = None,
                           n_curve_points: int = 300, prior: Prior | None = None, posterior: Posterior | None = None,
                           schedule: Schedule | None = None) -> go.Figure:
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
    prior, posterior, schedule : optional
        ``Forecast.prior``, ``Forecast.posterior``, ``Forecast.schedule``: drawn as traces 8-12
        when any is given (module docstring).
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
    highs = [prediction.epoch_high, prior.high if prior is not None and prior.available else None,
             posterior.epoch_high if posterior is not None else None]
    highs = [h for h in highs if h and math.isfinite(h) and h < 4 * last]
    x_max = X_MARGIN * _finite_max(last, prediction.epoch, *highs,
                                   posterior.epoch if posterior is not None else None)
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
    if prior is not None or posterior is not None or schedule is not None:
        y_lo, y_hi = float(table[column].min()), float(max(table[column].max(), y_target or 0))
        for trace in _three_way_traces(prior, posterior, schedule, y_target, (y_lo, y_hi), x_max):
            fig.add_trace(trace)
    what = "accuracy" if prediction.route == "accuracy" else "loss (epoch mean)"
    title = (f"{log.label}: target from the first {n} epochs ({prediction.family}, "
             f"{prediction.route} route)")
    base_layout(fig, title=title, x_title="epoch", y_title=what)
    fig.update_xaxes(range=[0, x_max])
    return fig


def _x_band(lo: float | None, hi: float | None, y_range: tuple[float, float], x_max: float, *, name: str,
            fill: str) -> go.Scatter:
    """A vertical band from epoch ``lo`` to ``hi`` (``hi`` capped at ``x_max``; empty without ``lo``)."""
    if lo is None or hi is None or not math.isfinite(lo):
        return go.Scatter(x=[], y=[], mode="lines", name=name)
    hi = min(hi, x_max) if math.isfinite(hi) else x_max
    y0, y1 = y_range
    return go.Scatter(x=[lo, hi, hi, lo, lo], y=[y0, y0, y1, y1, y0], mode="lines", fill="toself", fillcolor=fill,
                      line=dict(width=0), name=name, hoverinfo="skip")


def _point(epoch: float | None, lo: float | None, hi: float | None, y: float | None, x_max: float, *, name: str,
           color: str, symbol: str, level: float) -> go.Scatter:
    if epoch is None or y is None or not math.isfinite(epoch):
        return go.Scatter(x=[], y=[], mode="markers", name=name)
    top = hi if hi is not None and math.isfinite(hi) else x_max
    low = lo if lo is not None else epoch
    shown_hi = "never" if hi is None or not math.isfinite(hi) else f"{hi:g}"
    return go.Scatter(x=[epoch], y=[y], mode="markers", name=name, marker=dict(color=color, size=11, symbol=symbol),
                      error_x=dict(type="data", symmetric=False, array=[max(top - epoch, 0.0)],
                                   arrayminus=[max(epoch - low, 0.0)], thickness=2, width=6, color=color),
                      hovertemplate=(f"{esc(name)} {epoch:g}<br>{level:.0%} interval {low:g} – {shown_hi}"
                                     "<extra></extra>"))


def _three_way_traces(prior, posterior, schedule, y_target, y_range, x_max) -> list[go.Scatter]:
    """Traces 8-12: prior band, posterior band, their markers, the schedule's lines."""
    p_lo = p_hi = p_mid = None
    if prior is not None and prior.available:
        lo, hi = prior.interval()
        p_lo, p_hi, p_mid = (lo if lo > 0 else 0.5), hi, prior.epoch
    q = posterior if posterior is not None and posterior.available else None
    level = prior.level if prior is not None else (posterior.level if posterior is not None else 0.8)
    xs: list = []
    for d in (schedule.markers() if schedule is not None else ()):
        xs += [d + 0.5, d + 0.5, None]
    return [_x_band(p_lo, p_hi, y_range, x_max, name="prior", fill=PRIOR_FILL),
            _x_band(q.epoch_low if q else None, q.epoch_high if q else None, y_range, x_max, name="posterior",
                    fill=POSTERIOR_FILL),
            _point(p_mid, p_lo, p_hi, y_target, x_max, name="prior epoch", color=PRIOR_COLOR, symbol="square",
                   level=level),
            _point(q.epoch if q else None, q.epoch_low if q else None, q.epoch_high if q else None, y_target, x_max,
                   name="posterior epoch", color=POSTERIOR_COLOR, symbol="star", level=level),
            go.Scatter(x=xs, y=[y_range[0], y_range[1], None] * (len(xs) // 3), mode="lines", name="schedule",
                       line=SCHEDULE_LINE, hoverinfo="skip")]


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


@escaped
def prediction_convergence_figure(frame: pd.DataFrame) -> go.Figure:
    """Predicted epoch (with its interval) against the number of epochs seen.

    ``frame`` is ``core.prediction.tables.convergence_of_prediction``'s output.
    """
    if frame is None or frame.empty:
        return empty_figure("Prediction against epochs seen", "No prediction to show.")
    x = frame["epochs_seen"].to_numpy(dtype=float)
    pred = frame["epoch_pred"].to_numpy(dtype=float)
    low = frame["epoch_low"].to_numpy(dtype=float)
    high = frame["epoch_high"].to_numpy(dtype=float)
    actual = frame["epoch_actual"].dropna()
    extra = [v for c in ("posterior_high", "prior_high") if c in frame for v in frame[c].to_numpy(dtype=float)]
    top = 1.2 * _finite_max(*pred, *high, *extra, *(actual.tolist()), x.max() + 1)

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
    if "posterior_epoch" in frame:
        for what, color, fill in (("prior", PRIOR_COLOR, PRIOR_FILL), ("posterior", POSTERIOR_COLOR, POSTERIOR_FILL)):
            mid, lo, hi = (frame[f"{what}_{c}"].to_numpy(dtype=float) for c in ("epoch", "low", "high"))
            ok = ~np.isnan(lo) & ~np.isnan(hi)
            fig.add_trace(go.Scatter(x=np.concatenate([x[ok], x[ok][::-1]]),
                                     y=np.concatenate([cap(lo[ok]), cap(hi[ok])[::-1]]), mode="lines",
                                     fill="toself", fillcolor=fill, line=dict(width=0), name=f"{what} interval",
                                     hoverinfo="skip"))
            fig.add_trace(go.Scatter(x=x, y=cap(mid), mode="lines+markers", name=what,
                                     line=dict(color=color, width=2)))
        drops = frame["schedule_change"].dropna().unique() if "schedule_change" in frame else []
        xs = [v for d in drops for v in (d + 0.5, d + 0.5, None)]
        fig.add_trace(go.Scatter(x=xs, y=[0, top, None] * len(drops), mode="lines", name="schedule",
                                 line=SCHEDULE_LINE, hoverinfo="skip"))
    base_layout(fig, title="Predicted epoch at target against epochs seen",
                x_title="epochs seen", y_title="epoch at target")
    fig.update_yaxes(range=[0, top * 1.02])
    return fig
