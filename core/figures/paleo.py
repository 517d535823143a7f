"""Figures of Paleo estimates: throughput and speed-up over workers, per-layer breakdown.

Trace names are fixed so pages and tests can index ``fig.data``:

* :func:`throughput_figure`: one trace per scheme, named as the scheme
  (``"TreeAllReduce"``, ``"RingAllReduce"``, ``"ParameterServer_p2"`` ...), in the result's
  scheme order, then :data:`NAIVE_BOUND`;
* :func:`paleo_speedup_figure`: one trace per scheme, then :data:`LINEAR`;
* :func:`layer_breakdown_figure`: :data:`COMPUTE` then :data:`MEMORY` (stacked bars of
  forward + backward time of the slowest layers, slowest on top);
* :func:`device_comparison_figure`: :data:`ESTIMATE` (bars with the interval as error
  bars, one per device) then :data:`MEASURED` (markers on the devices calibrated on);
* :func:`profile_comparison_figure`: :data:`MEASURED`, :data:`ROOFLINE`, :data:`PALEO`
  (grouped horizontal bars of the layers that took longest when measured).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from core.figures.style import base_layout, color, empty_figure, escaped, log_axis
from core.paleo import UNATTRIBUTED, DeviceComparison, PaleoScaling, ProfileComparison

NAIVE_BOUND = "naive peak bound"
LINEAR = "linear speed-up"
COMPUTE = "compute"
MEMORY = "memory"
ESTIMATE = "estimate (interval)"
MEASURED = "measured"
ROOFLINE = "roofline, calibrated"
PALEO = "Paleo, PPP calibrated"
#: what :func:`device_comparison_figure` can draw: (row field, its interval's fields, axis title)
COMPARISON_METRICS = {
    "images_per_s": ("images_per_s", "images_per_s_low", "images_per_s_high", "images/s on one device"),
    "step_time_s": ("step_time_s", "step_low_s", "step_high_s", "time per step (s)"),
    "cost_per_epoch": ("cost_per_epoch", "cost_low", "cost_high", "cost per epoch (price units)"),
}
_METRIC_TITLES = {"images_per_s": "images/s", "step_time_s": "time per step", "cost_per_epoch": "cost per epoch"}


def _schemes(result: PaleoScaling, schemes: Sequence[str] | None) -> tuple[str, ...]:
    if schemes is None:
        return result.schemes
    return tuple(s for s in schemes if s in result.schemes)


def _title(result: PaleoScaling, what: str) -> str:
    mode = "Paleo-compatible" if result.paleo_compatible else "modern"
    return (f"{what}: {result.net} on {result.device}, {result.network}, "
            f"{result.scaling} scaling, batch {result.batch_size} ({mode})")


def _worker_axis(fig: go.Figure, workers: list[int], log_x: bool) -> None:
    if log_x:
        log_axis(fig, "x", ticks=workers)
    else:
        fig.update_xaxes(tickvals=workers, type="linear")


@escaped
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


@escaped
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


@escaped
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


@escaped
def device_comparison_figure(comparison: DeviceComparison, *, metric: str = "images_per_s") -> go.Figure:
    """One bar per device with the calibrated estimate and its interval; the measurement where there is one.

    Parameters
    ----------
    comparison : DeviceComparison
        From :func:`core.paleo.compare_devices`.
    metric : {"images_per_s", "step_time_s", "cost_per_epoch"}, default="images_per_s"
        Devices without a price have no cost bar.

    Examples
    --------
    >>> from core.paleo import Measurement, Op, Roof, Workload, calibrate_transfer, compare_devices
    >>> w = Workload("toy", "hand", (Op("c", "convolution", "conv", "forward", 0, 1e11, 0, 1e7),), 0, "hand")
    >>> slow, fast = Roof("slow", "fp16", 100, 10, 1000, "hand"), Roof("fast", "fp16", 200, 20, 1000, "hand")
    >>> cal = calibrate_transfer([Measurement(w, slow, "fp16", 10, 0.03)])
    >>> fig = device_comparison_figure(compare_devices(w, cal, [slow, fast], precision="fp16", batch_size=10))
    >>> [t.name for t in fig.data], list(fig.data[0].x), [round(y) for y in fig.data[0].y]
    (['estimate (interval)', 'measured'], ['slow', 'fast'], [333, 667])
    >>> list(fig.data[1].x), [round(y) for y in fig.data[1].y]       # measured on the slow device
    (['slow'], [333])
    """
    value, low, high, axis = COMPARISON_METRICS[metric]
    frame = comparison.to_frame()
    title = f"{comparison.workload}: {_METRIC_TITLES[metric]} on each device, calibrated on a measured step"
    frame = frame[frame[value].notna()]
    if frame.empty:
        return empty_figure(title, "no device to show" if metric != "cost_per_epoch" else "no device has a price")
    y = frame[value].astype(float)
    fig = go.Figure(go.Bar(
        x=list(frame["device"]), y=list(y), name=ESTIMATE, marker_color=color(0),
        error_y=dict(type="data", symmetric=False, array=list(frame[high].astype(float) - y),
                     arrayminus=list(y - frame[low].astype(float)), color="#333")))
    measured = frame[frame["measured_step_s"].notna()]
    scale = {"images_per_s": lambda r: r.batch_size / r.measured_step_s, "step_time_s": lambda r: r.measured_step_s,
             "cost_per_epoch": lambda r: r.cost_per_epoch * r.measured_step_s / r.step_time_s}[metric]
    fig.add_trace(go.Scatter(x=list(measured["device"]), y=[scale(r) for r in measured.itertuples()], name=MEASURED,
                             mode="markers", marker=dict(symbol="diamond", size=12, color=color(3))))
    base_layout(fig, title=title, x_title="device", y_title=axis)
    return fig


@escaped
def profile_comparison_figure(comparison: ProfileComparison, *, top: int = 15) -> go.Figure:
    """Measured forward + backward time of the ``top`` slowest layers beside both calibrated estimates.

    Examples
    --------
    >>> from core.datasets import builtin_profiles
    >>> from core.paleo import compare_profile, load_net, load_workload, read_profile
    >>> name, path = builtin_profiles()[0]
    >>> p = read_profile(path.read_bytes(), name)
    >>> fig = profile_comparison_figure(compare_profile(p, load_workload(p.net), load_net(p.net)), top=5)
    >>> [t.name for t in fig.data], len(fig.data[0].y)
    (['measured', 'roofline, calibrated', 'Paleo, PPP calibrated'], 5)
    """
    title = (f"{comparison.net} on {comparison.device_label}, batch {comparison.batch_size}: "
             f"slowest {top} layers, measured and estimated")
    frame = comparison.to_frame()
    frame = frame[frame["layer"] != UNATTRIBUTED]
    if frame.empty:
        return empty_figure(title, "no layer measured")
    rows = frame.nlargest(top, "measured_ms").iloc[::-1]
    fig = go.Figure([go.Bar(y=list(rows["layer"]), x=list(rows[col].fillna(0.0)), name=name, orientation="h",
                            marker_color=color(i)) for i, (name, col) in
                     enumerate(((MEASURED, "measured_ms"), (ROOFLINE, "roofline_ms"), (PALEO, "paleo_ms")))])
    base_layout(fig, title=title, x_title="forward + backward time per step (ms)", y_title="layer")
    fig.update_layout(barmode="group")
    return fig
