"""Figures of Paleo estimates: throughput and speed-up over workers, per-layer breakdown.

Trace names are fixed so pages and tests can index ``fig.data``:

* :func:`throughput_figure`: one trace per scheme, named as the scheme
  (``"TreeAllReduce"``, ``"RingAllReduce"``, ``"ParameterServer_p2"`` ...), in the result's
  scheme order, then :data:`NAIVE_BOUND`;
* :func:`paleo_speedup_figure`: one trace per scheme, then :data:`LINEAR`;
* :func:`layer_breakdown_figure`: :data:`COMPUTE` then :data:`MEMORY` (stacked bars of
  forward + backward time of the slowest layers, slowest on top).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from core.figures.style import base_layout, color, empty_figure
from core.paleo.results import PaleoScaling

NAIVE_BOUND = "naive peak bound"
LINEAR = "linear speed-up"
COMPUTE = "compute"
MEMORY = "memory"


def _schemes(result: PaleoScaling, schemes: Sequence[str] | None) -> tuple[str, ...]:
    if schemes is None:
        return result.schemes
    return tuple(s for s in schemes if s in result.schemes)


def _title(result: PaleoScaling, what: str) -> str:
    mode = "Paleo-compatible" if result.paleo_compatible else "modern"
    return (f"{what}: {result.net} on {result.device}, {result.network}, "
            f"{result.scaling} scaling, batch {result.batch_size} ({mode})")


def _worker_axis(fig: go.Figure, workers: list[int], log_x: bool) -> None:
    fig.update_xaxes(tickvals=workers, type="log" if log_x else "linear")


def throughput_figure(result: PaleoScaling, *, schemes: Sequence[str] | None = None,
                      show_bound: bool = True, log_x: bool = False) -> go.Figure:
    """Images per second against workers, one line per communication scheme.

    Parameters
    ----------
    result : PaleoScaling
    schemes : sequence of str, optional
        Subset (in this order) of ``result.schemes``; default all.
    show_bound : bool, default=True
        Add the naive bound ``n · peak FLOP/s / FLOPs per image`` (dashed).
    log_x : bool, default=False
        Logarithmic worker axis (1, 2, 4, ... evenly spaced), ticks at the worker counts.

    Examples
    --------
    >>> from core.paleo import load_net, simulate
    >>> res = simulate(load_net("alex_v2"), device="K80", paleo_compatible=True)
    >>> [t.name for t in throughput_figure(res, schemes=["TreeAllReduce"]).data]
    ['TreeAllReduce', 'naive peak bound']
    """
    chosen = _schemes(result, schemes)
    x = list(result.workers)
    fig = go.Figure()
    for i, scheme in enumerate(chosen):
        fig.add_trace(go.Scatter(x=x, y=list(result.throughput(scheme)), name=scheme,
                                 mode="lines+markers", line=dict(color=color(i))))
    if show_bound:
        fig.add_trace(go.Scatter(x=x, y=list(result.naive_peak()), name=NAIVE_BOUND,
                                 mode="lines", line=dict(color="#555", dash="dash")))
    base_layout(fig, title=_title(result, "Throughput"), x_title="workers",
                y_title="throughput (images/s)")
    _worker_axis(fig, x, log_x)
    return fig


def paleo_speedup_figure(result: PaleoScaling, *, schemes: Sequence[str] | None = None,
                   log_x: bool = False) -> go.Figure:
    """Speed-up over one worker against workers, one line per scheme, plus linear speed-up.

    ``log_x`` gives a logarithmic worker axis, as in :func:`throughput_figure`.

    Examples
    --------
    >>> from core.paleo import load_net, simulate
    >>> res = simulate(load_net("alex_v2"), device="K80", paleo_compatible=True)
    >>> fig = paleo_speedup_figure(res)
    >>> fig.data[-1].name, list(fig.data[-1].y)
    ('linear speed-up', [1, 2, 4, 8])
    """
    chosen = _schemes(result, schemes)
    x = list(result.workers)
    fig = go.Figure()
    for i, scheme in enumerate(chosen):
        fig.add_trace(go.Scatter(x=x, y=list(result.speedup(scheme)), name=scheme,
                                 mode="lines+markers", line=dict(color=color(i))))
    fig.add_trace(go.Scatter(x=x, y=x, name=LINEAR, mode="lines",
                             line=dict(color="#555", dash="dot")))
    base_layout(fig, title=_title(result, "Speed-up"), x_title="workers",
                y_title="speed-up over 1 worker (×)")
    _worker_axis(fig, x, log_x)
    return fig


def layer_breakdown_figure(frame: pd.DataFrame, *, top: int = 15, title: str | None = None
                           ) -> go.Figure:
    """Stacked horizontal bars of compute and memory time of the ``top`` slowest layers.

    Parameters
    ----------
    frame : pandas.DataFrame
        From :func:`core.paleo.layer_breakdown`.
    top : int, default=15
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure
        Traces ``"compute"`` and ``"memory"`` (forward + backward, ms); layers that cost
        nothing are left out; an empty table gives a titled note.

    Examples
    --------
    >>> from core.paleo import layer_breakdown, load_net
    >>> df = layer_breakdown(load_net("alex_v2"), device="K80", paleo_compatible=True)
    >>> fig = layer_breakdown_figure(df, top=3)
    >>> [t.name for t in fig.data], list(fig.data[0].y)      # slowest last, drawn on top
    (['compute', 'memory'], ['conv4', 'conv2', 'fc6'])
    """
    title = title or f"Slowest {top} layers: forward + backward time per iteration"
    costly = frame[frame["total_ms"] > 0] if len(frame) else frame
    if costly.empty:
        return empty_figure(title, "no layer with a cost")
    rows = costly.nlargest(top, "total_ms").iloc[::-1]
    comp = rows["fwd_comp_ms"] + rows["bwd_comp_ms"]
    mem = rows["fwd_mem_ms"] + rows["bwd_mem_ms"]
    fig = go.Figure([
        go.Bar(y=list(rows["layer"]), x=list(comp), name=COMPUTE, orientation="h",
               marker_color=color(0)),
        go.Bar(y=list(rows["layer"]), x=list(mem), name=MEMORY, orientation="h",
               marker_color=color(1)),
    ])
    base_layout(fig, title=title, x_title="time per iteration (ms)", y_title="layer")
    fig.update_layout(barmode="stack")
    return fig
