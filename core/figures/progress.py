"""The progress forecast of one run to a target in either direction (``core.prediction.predict_progress``):
the metric against samples / tokens / steps, the target line, and the prior, extrapolation and posterior
with their intervals.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from core.figures.style import TARGET_LINE, base_layout, color, empty_figure, escaped
from core.logs import RunLog
from core.prediction import ProgressForecast, evaluation_points

#: the three answers' colours (index into the palette) and names
_SOURCES = (("prior", 2, "prior (other runs)"), ("extrapolation", 1, "extrapolation (first points)"),
            ("posterior", 0, "posterior (both)"))


@escaped
def progress_forecast_figure(log: RunLog, forecast: ProgressForecast) -> go.Figure:
    """Metric against progress: the points seen (``seen``), the rest of the log (``rest``), the target
    (``target``), and per answer a vertical line at its value with its interval shaded (traces named
    ``prior``, ``extrapolation``, ``posterior``; an answer without a value is left out).

    >>> from core.logs import read_log
    >>> from core.prediction import predict_progress
    >>> from core.targets import Target
    >>> rows = "".join(f"{s},{2.0 + 30 * (s * 100) ** -0.5:.6f}\\n" for s in range(1, 41))
    >>> log = read_log(("step,loss\\n" + rows).encode(), "llm.csv")
    >>> f = predict_progress(log, target=Target("loss", "<=", 2.5), observe=0.25)
    >>> [t.name for t in progress_forecast_figure(log, f).data][:3]
    ['seen', 'rest', 'target']
    """
    target = forecast.target
    try:
        x, y = evaluation_points(log, target)
    except Exception as exc:  # noqa: BLE001 - a figure never raises: it says why it is empty
        return empty_figure("Progress to target", str(exc))
    n = forecast.n_observed
    fig = go.Figure()
    fig.add_scatter(x=x[:n], y=y[:n], mode="lines+markers", name="seen", line=dict(color=color(0)))
    fig.add_scatter(x=x[n:], y=y[n:], mode="lines", name="rest", line=dict(color="#999999", dash="dot"))
    hi_x = float(np.nanmax(x)) if len(x) else 1.0
    for est in (forecast.prior, forecast.extrapolation, forecast.posterior):
        if est.available:
            hi_x = max(hi_x, est.high if est.high is not None and math.isfinite(est.high) else est.value)
    fig.add_scatter(x=[0, hi_x], y=[target.value] * 2, mode="lines", name="target", line=TARGET_LINE)
    lo_y, hi_y = (float(np.nanmin(y)), float(np.nanmax(y))) if len(y) else (0.0, 1.0)
    for source, i, label in _SOURCES:
        est = getattr(forecast, source)
        if not est.available:
            continue
        fig.add_scatter(x=[est.value] * 2, y=[lo_y, hi_y], mode="lines", name=source, legendgroup=source,
                        line=dict(color=color(i), width=2), hovertemplate=f"{label}: %{{x:,.4g}}<extra></extra>")
        if est.low is not None and est.high is not None and math.isfinite(est.low) and math.isfinite(est.high):
            fig.add_vrect(x0=est.low, x1=est.high, fillcolor=color(i), opacity=0.12, line_width=0)
    return base_layout(fig, title=f"Progress to {target.spec}: {log.source}", x_title=forecast.unit,
                       y_title=target.metric,
                       subtitle=f"{forecast.n_observed} points seen; {forecast.method}")
