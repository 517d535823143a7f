"""Figures of the batch-size view: samples to target against the global batch, efficiency and goodput.

Pure functions: a :class:`core.batch.BatchScaling` (and the goodput table of
:func:`core.plan.goodput.goodput_curves`) in, a ``plotly.graph_objects.Figure`` out; nothing
is fitted here.  Both axes of batch figures are logarithmic (batches span orders of
magnitude).  Trace names are fixed and listed in ``*_TRACES``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.batch import TUNED_NOTE, BatchScaling
from core.figures.style import TARGET_LINE, base_layout, color, empty_figure, esc, escaped, log_axis

#: traces of :func:`batch_samples_figure`, in order (the interval only when the model has one,
#: "predicted" only with batches to predict)
SAMPLES_TRACES: tuple[str, ...] = ("interval", "fitted E(B)", "measured", "outside the fit", "predicted", "E_min",
                                   "B_noise")
#: traces of :func:`efficiency_goodput_figure`: efficiency panel, then one goodput trace per label
EFFICIENCY_TRACES: tuple[str, ...] = ("statistical efficiency", "B_noise")
_SUBPLOT_MARGIN = dict(l=60, r=20, t=80, b=110)
_SUBPLOT_LEGEND = dict(orientation="h", yanchor="top", y=-0.18, xanchor="left", x=0.0)


def _curve_batches(model: BatchScaling, extra=()) -> np.ndarray:
    known = [r.global_batch for r in model.measured] + [float(b) for b in extra]   # capped runs too: under the curve
    if math.isfinite(model.b_noise):
        known.append(model.b_noise)
    lo, hi = (min(known), max(known)) if known else (1.0, 1e4)
    return np.geomspace(max(lo / 2, 1.0), hi * 2, 120)


def _fmt(x: float) -> str:
    return "∞" if not math.isfinite(x) else f"{x:,.4g}"


@escaped
def batch_samples_figure(model: BatchScaling, *, predict=(), title: str = "Samples to target against the global batch"
                         ) -> go.Figure:
    """Measured samples to target per run, the fitted ``E(B)``, ``E_min`` and ``B_noise`` marked.

    Parameters
    ----------
    model : BatchScaling
        From :func:`core.batch.batch_scaling`.
    predict : sequence of float
        Batches to mark on the curve ("predicted").
    title : str

    Returns
    -------
    plotly.graph_objects.Figure
        Traces ``SAMPLES_TRACES`` in order: "interval" (a band: the model's interval for a
        new run, only when it has one), "fitted E(B)" (line), "measured" (one marker per run
        that reached the target and is in the fit, hover: the file), "outside the fit" (open markers: runs
        that reached the target but were kept out of the fit, a capped learning rate; hover: the file and
        why; only when there are any), "predicted" (only with ``predict``),
        "E_min" (dashed horizontal line), "B_noise" (dotted vertical line where the curve is
        twice ``E_min``; absent when ``B_noise`` is infinite).  Log x and y axes; a note under
        the plot says each run is assumed tuned for its batch.

    Examples
    --------
    >>> from core.batch import BatchRun, fit_batch_scaling
    >>> runs = [BatchRun(f"r{b}", b, True, 1e6 * (1 + b / 2000), 1e6 * (1 + b / 2000) / b) for b in (250, 1000, 4000)]
    >>> fig = batch_samples_figure(fit_batch_scaling(runs), predict=[8000])
    >>> [t.name for t in fig.data]
    ['interval', 'fitted E(B)', 'measured', 'predicted', 'E_min', 'B_noise']
    >>> list(fig.data[2].x), [round(y) for y in fig.data[2].y]      # 1e6·(1 + B/2000)
    ([250, 1000, 4000], [1125000, 1500000, 3000000])
    """
    if model is None:
        return empty_figure(title, "No batch-scaling model.")
    b = _curve_batches(model, predict)
    fig = go.Figure()
    band = model.samples_interval(b)
    if band is not None:
        fig.add_trace(go.Scatter(x=list(b) + list(b[::-1]), y=list(band[1]) + list(band[0][::-1]), fill="toself",
                                 fillcolor="rgba(0,114,178,0.15)", line=dict(width=0), mode="lines",
                                 name="interval", hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=b, y=model.samples(b), mode="lines", name="fitted E(B)",
                             line=dict(color=color(0), width=2.5),
                             hovertemplate="B = %{x:,.0f}: E = %{y:,.4g} samples<extra>fitted</extra>"))
    used = sorted(model.used, key=lambda r: r.global_batch)
    fig.add_trace(go.Scatter(x=[r.global_batch for r in used], y=[r.samples_to_target for r in used],
                             mode="markers", name="measured", text=[r.source for r in used],
                             marker=dict(size=10, color=color(1), line=dict(width=1, color="#000")),
                             hovertemplate="%{text}<br>B = %{x:,.0f}: %{y:,.4g} samples<extra></extra>"))
    out = sorted((r for r in model.measured if not r.in_fit), key=lambda r: r.global_batch)
    if out:                          # measured, shown and marked, not what E(B) was fitted to (issue 36)
        fig.add_trace(go.Scatter(x=[r.global_batch for r in out], y=[r.samples_to_target for r in out],
                                 mode="markers", name="outside the fit", text=[f"{r.source}: {r.note}" for r in out],
                                 marker=dict(size=10, symbol="circle-open", color=color(1), line=dict(width=2)),
                                 hovertemplate="%{text}<br>B = %{x:,.0f}: %{y:,.4g} samples<extra>outside the fit"
                                               "</extra>"))
    if len(predict):
        p = np.asarray(predict, dtype=float)
        fig.add_trace(go.Scatter(x=p, y=model.samples(p), mode="markers", name="predicted",
                                 marker=dict(size=11, symbol="diamond-open", color=color(3), line=dict(width=2)),
                                 hovertemplate="B = %{x:,.0f}: %{y:,.4g} samples<extra>predicted</extra>"))
    fig.add_trace(go.Scatter(x=[b[0], b[-1]], y=[model.e_min] * 2, mode="lines", name="E_min",
                             line=dict(color="#777", dash="dash", width=1.5),
                             hovertemplate=f"E_min = {_fmt(model.e_min)} samples<extra></extra>"))
    if math.isfinite(model.b_noise):
        fig.add_trace(go.Scatter(x=[model.b_noise] * 2, y=[model.e_min, 2 * model.e_min], mode="lines+text",
                                 name="B_noise", text=["", f"B_noise = {_fmt(model.b_noise)}"],
                                 textposition="top center", line=TARGET_LINE,
                                 hovertemplate=f"B_noise = {_fmt(model.b_noise)}: E = 2·E_min<extra></extra>"))
    base_layout(fig, title=title, x_title="global batch B (samples per step)", y_title="samples to target")
    log_axis(log_axis(fig, "x"), "y")
    fig.add_annotation(text=TUNED_NOTE, showarrow=False, x=0.0, y=-0.2, xref="paper", yref="paper",
                       xanchor="left", font=dict(size=11, color="#555"))
    fig.update_layout(margin=dict(b=90))
    return fig


@escaped
def efficiency_goodput_figure(model: BatchScaling, curves: pd.DataFrame | None = None, *,
                              title: str = "Statistical efficiency and goodput against the global batch") -> go.Figure:
    """Left: efficiency ``E_min/E(B) = 1/(1 + B/B_noise)``; right: goodput = throughput × efficiency.

    Parameters
    ----------
    model : BatchScaling
    curves : DataFrame or None
        :func:`core.plan.goodput.goodput_curves` of the same model: one goodput line per
        ``label`` of kind "model" (a worker count), markers for kind "measured" (runs).

    Returns
    -------
    plotly.graph_objects.Figure
        Two panels side by side, log x axes.  Traces: "statistical efficiency" and
        "B_noise" (left; the marker at efficiency 1/2, absent when ``B_noise`` is infinite),
        then one trace per label of ``curves`` in their order (right; each line's largest
        goodput marked in its hover).

    Examples
    --------
    >>> from core.batch import typed_batch_scaling
    >>> fig = efficiency_goodput_figure(typed_batch_scaling(1e5, 1000))
    >>> [t.name for t in fig.data], float(fig.data[1].y[0])
    (['statistical efficiency', 'B_noise'], 0.5)
    """
    if model is None:
        return empty_figure(title, "No batch-scaling model.")
    extra = [] if curves is None or curves.empty else list(curves["global_batch"])
    b = _curve_batches(model, extra)
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12,
                        subplot_titles=("statistical efficiency E_min / E(B)", "goodput (E_min-equivalent samples/s)"))
    fig.add_trace(go.Scatter(x=b, y=model.efficiency(b), mode="lines", name="statistical efficiency",
                             line=dict(color=color(0), width=2.5),
                             hovertemplate="B = %{x:,.0f}: efficiency %{y:.3f}<extra></extra>"), row=1, col=1)
    if math.isfinite(model.b_noise):
        fig.add_trace(go.Scatter(x=[model.b_noise], y=[0.5], mode="markers+text", name="B_noise",
                                 text=[f"B_noise = {_fmt(model.b_noise)}"], textposition="top right",
                                 marker=dict(size=11, symbol="diamond", color=TARGET_LINE["color"]),
                                 hovertemplate="B_noise: efficiency 1/2<extra></extra>"), row=1, col=1)
    if curves is not None and not curves.empty:
        for i, (label, part) in enumerate(curves.groupby("label", sort=False)):
            part = part.sort_values("global_batch")
            measured = (part["kind"] == "measured").all()
            top = part.loc[part["goodput"].idxmax()]
            fig.add_trace(go.Scatter(
                x=part["global_batch"], y=part["goodput"], mode="markers" if measured else "lines",
                name=str(label), line=dict(color=color(i + 2), width=2),
                marker=dict(size=9, color=color(i + 2), line=dict(width=1, color="#000")),
                hovertemplate=(f"{esc(label)}: B = %{{x:,.0f}}, goodput %{{y:,.4g}}/s"
                               f"<br>largest at B = {top['global_batch']:,.0f}<extra></extra>")), row=1, col=2)
    else:
        fig.add_annotation(text="no throughput: give a speed model or runs that log theirs", showarrow=False,
                           xref="x2 domain", yref="y2 domain", x=0.5, y=0.5, font=dict(color="#555"))
    base_layout(fig, title=title, x_title="global batch B", y_title="efficiency")
    log_axis(log_axis(fig, "x"), "x2")
    fig.update_yaxes(title_text="goodput (samples/s)", row=1, col=2)
    fig.update_yaxes(range=[0, 1.05], row=1, col=1)
    fig.update_layout(margin=_SUBPLOT_MARGIN, legend=_SUBPLOT_LEGEND)
    return fig
