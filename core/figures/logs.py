"""Figures of the Logs page: loss and accuracy against the global step.

Trace order per run is fixed: ``measured`` (thinned raw points), ``smoothed`` (means over
log-spaced bins of steps, so the early bend is not blurred), ``fitted`` (the fitted curve;
absent when the run has no fit).  With several runs the smoothed line is named by the run's
label alone (``resnet20 · V100``) and is the run's one legend entry (clicking it hides the
whole run); the other traces are prefixed by the label (``resnet20 · V100 · fitted``) and
kept out of the legend.  The accuracy figure names its per-run lines the same way (the
``measured`` line carries the legend entry) and ends with the ``target`` line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from core.curves import bin_log_spaced
from core.figures.style import TARGET_LINE, base_layout, color, dash_of, empty_figure, escaped, log_axis
from core.runs import RunAnalysis, thin_indices
from core.targets import Target, require_accuracy

#: raw points drawn per run at most (SVG: fast to draw in any browser, GPU or not; the thinning is
#: log-spaced, so the early bend keeps every point)
MAX_DISPLAY_POINTS = 1000
#: log-spaced bins of the smoothed line
SMOOTH_BINS = 150


def _name(analysis: RunAnalysis, what: str, many: bool, *, legend: bool = False) -> str:
    if not many:
        return what
    return analysis.log.label if legend else f"{analysis.log.label} · {what}"


@escaped
def loss_curve_figure(analyses: Sequence[RunAnalysis], *, log_x: bool = False, log_y: bool = False,
                      max_points: int = MAX_DISPLAY_POINTS, show_measured: bool = True,
                      step_scale: Mapping[str, float] | None = None) -> go.Figure:
    """Loss against global step: thinned points, a moving average and the fitted curve.

    Parameters
    ----------
    analyses : sequence of RunAnalysis
        Runs to draw (overlaid); runs without a loss column are skipped.
    log_x, log_y : bool
        Logarithmic axes.
    max_points : int
        Raw points drawn per run at most (log-spaced thinning keeps the early bend).
    step_scale : mapping of file to float, optional
        Per log, the factor that puts its steps on its training run's axis
        (:func:`core.runs.step_scales`: a validation log counts fewer steps per epoch).
    """
    runs = [a for a in analyses if a.log.has_loss]
    scale = step_scale or {}
    if not runs:
        return empty_figure("Loss", "No run with a loss column to show.")
    many = len(runs) > 1
    fig = go.Figure()
    for i, a in enumerate(runs):
        frame = a.log.frame[a.log.frame["loss"].notna()]
        k = frame["global_step"].to_numpy()
        y = frame["loss"].to_numpy()
        f = scale.get(a.log.source, 1.0)
        idx = thin_indices(len(k), max_points)
        c, dash = color(i), dash_of(i)
        group = a.log.source
        if show_measured:
            fig.add_trace(go.Scatter(x=k[idx] * f, y=y[idx], mode="markers", name=_name(a, "measured", many),
                                     legendgroup=group, showlegend=not many,
                                     marker=dict(color=c, size=3, opacity=0.35)))
        sk, sy, _ = bin_log_spaced(k, y, max_points=SMOOTH_BINS)
        fig.add_trace(go.Scatter(x=sk * f, y=sy, mode="lines", name=_name(a, "smoothed", many, legend=True),
                                 legendgroup=group, line=dict(color=c, width=1.5, dash=dash)))
        if a.fit is not None:
            kk = np.geomspace(max(k.min(), 1.0), k.max(), 400) if log_x else np.linspace(k.min(), k.max(), 400)
            fig.add_trace(go.Scatter(x=kk * f, y=a.fit.predict(kk), mode="lines", name=_name(a, "fitted", many),
                                     legendgroup=group, showlegend=not many,
                                     line=dict(color=c, width=2.5, dash="dash")))
    base_layout(fig, title="Loss against global step" + (" (dashed: fitted curves)" if many else ""),
                x_title="global step k", y_title="loss")
    for axis, log in (("x", log_x), ("y", log_y)):
        if log:
            log_axis(fig, axis)
        else:
            fig.layout[f"{axis}axis"].type = "linear"
    return fig


@escaped
def accuracy_figure(analyses: Sequence[RunAnalysis], *, target: Target, log_x: bool = False,
                    max_points: int = MAX_DISPLAY_POINTS, step_scale: Mapping[str, float] | None = None
                    ) -> go.Figure:
    """Accuracy against global step with the target line and where each run passed it.

    Per run: ``measured`` (thinned points or the per-epoch trace) and ``reached`` (a marker
    at the crossing, when reached); last trace: ``target``.  ``step_scale`` as in
    :func:`loss_curve_figure`.  ``target`` is an accuracy (``acc>=A``); another metric is refused.
    """
    acc = require_accuracy(target, "the accuracy figure")
    runs = [a for a in analyses if a.log.has_acc]
    scale = step_scale or {}
    if not runs:
        return empty_figure("Accuracy", "No run with an accuracy column to show.")
    many = len(runs) > 1
    fig = go.Figure()
    k_max = 1.0
    for i, a in enumerate(runs):
        frame = a.log.frame[a.log.frame["acc"].notna()]
        f = scale.get(a.log.source, 1.0)
        k = frame["global_step"].to_numpy() * f
        y = frame["acc"].to_numpy()
        k_max = max(k_max, float(k.max()))
        idx = thin_indices(len(k), max_points)
        c = color(i)
        mode = "lines+markers" if a.log.granularity == "epoch" else "lines"
        fig.add_trace(go.Scatter(x=k[idx], y=y[idx], mode=mode, name=_name(a, "measured", many, legend=True),
                                 legendgroup=a.log.source, line=dict(color=c, width=1, dash=dash_of(i)),
                                 marker=dict(size=4)))
        cr = a.crossing
        if cr.reached:
            fig.add_trace(go.Scatter(x=[cr.step * f], y=[cr.acc], mode="markers", name=_name(a, "reached", many),
                                     legendgroup=a.log.source, showlegend=not many,
                                     marker=dict(color=c, size=11, symbol="star", line=dict(color="#222", width=1)),
                                     hovertemplate=f"epoch {cr.epoch}, step %{{x:.0f}}<extra></extra>"))
    fig.add_trace(go.Scatter(x=[0, k_max], y=[acc, acc], mode="lines", name="target",
                             line=TARGET_LINE, hoverinfo="skip"))
    base_layout(fig, title=f"Accuracy against global step (target {acc:.0%})",
                x_title="global step k", y_title="accuracy")
    if log_x:
        log_axis(fig, "x")
    else:
        fig.update_xaxes(type="linear")
    return fig
