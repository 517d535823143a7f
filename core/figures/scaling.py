"""Figures of the scaling lab: parameter-server rounds, sync vs async, measured scaling.

Pure functions: result objects or tidy frames in, ``plotly.graph_objects.Figure`` out. The
traces of each figure come in a fixed, documented order with fixed names, so tests and
pages can index ``fig.data``. Empty input gives a titled note, never an exception.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.figures.style import HEIGHT, TARGET_LINE, base_layout, color, empty_figure, esc, escaped
from core.scaling import ACTIVITIES, SERVER, AsyncSchedule, BatchSizePlan, MeasuredScaling, SyncSchedule, lr_at_step

#: trace names of :func:`ps_timeline_figure`, repeated per panel (first rounds, last round)
PS_TIMELINE_TRACES: tuple[str, ...] = ACTIVITIES
#: trace names of :func:`ps_time_vs_machines_figure`
PS_TIME_TRACES: tuple[str, ...] = ("round model", "train locally, send once", "crossover")
#: trace names of :func:`sync_async_figure`: synchronous panel, then asynchronous panel
SYNC_ASYNC_TRACES: tuple[str, ...] = (
    "compute", "wait", "aggregate", "update", "sync step completes",
    "fresh gradient", "stale gradient", "update applied",
)
#: first traces of :func:`measured_speedup_figure` and :func:`efficiency_figure`; one trace per
#: comparison group follows, named "strong, global batch 64" or "weak, 32 per GPU"
SPEEDUP_TRACES: tuple[str, ...] = ("ideal",)
EFFICIENCY_TRACES: tuple[str, ...] = ("ideal", "break-even (speed-up 1)")
#: trace names of :func:`comm_split_figure`
COMM_SPLIT_TRACES: tuple[str, ...] = ("compute (estimate)", "communication (estimate)",
                                      "measured sync time")
#: trace names of :func:`bandwidth_figure`
BANDWIDTH_TRACES: tuple[str, ...] = ("achieved (estimate)", "achieved (measured sync time)",
                                     "nominal link")

#: trace names of :func:`lr_schedule_figure`
LR_TRACES: tuple[str, ...] = ("learning rate", "end of warm-up")

_ACTIVITY_COLORS = {a: color(i) for i, a in enumerate(ACTIVITIES)}
_SYNC_COLORS = {"compute": color(1), "wait": "#BBBBBB", "aggregate": color(3),
                "update": color(2)}
_FRESH_COLOR, _STALE_COLOR = color(1), color(4)
#: subplot figures carry their legend under the x axis (the titles of the panels sit on top)
_SUBPLOT_MARGIN = dict(l=60, r=20, t=80, b=110)
_SUBPLOT_LEGEND = dict(orientation="h", yanchor="top", y=-0.16, xanchor="left", x=0.0)


# --------------------------------------------------------------------------- PS rounds

@escaped
def ps_timeline_figure(schedule: pd.DataFrame, *, title: str = "Parameter-server rounds",
                       panel_titles: tuple[str, ...] | None = None) -> go.Figure:
    """Gantt-style chart of :func:`core.scaling.ps_schedule.ps_schedule` (or ``local_schedule``).

    One row per machine (server on top), horizontal bars from ``start_s`` to ``end_s``.
    Two panels when the schedule has a ``part == "last"`` round: the first rounds on the
    left, the last round of the run on the right (its own time axis).

    Traces: :data:`PS_TIMELINE_TRACES` ("broadcast", "compute", "gather", "aggregate") for
    the first panel, then the same four for the last panel (legend shown once).

    ``panel_titles`` replaces the automatic titles ("first 2 rounds", "last round (run round
    49)"), one per panel, e.g. ``("whole run",)`` for :func:`core.scaling.ps_schedule.local_schedule`.
    """
    if schedule is None or schedule.empty:
        return empty_figure(title, "No rounds to draw.")
    parts = [p for p in ("first", "last") if (schedule["part"] == p).any()]
    machines = [SERVER] + sorted((m for m in schedule["machine"].unique() if m != SERVER),
                                 key=lambda m: int(m.split()[-1]))
    fig = make_subplots(rows=1, cols=len(parts), shared_yaxes=True, horizontal_spacing=0.04,
                        subplot_titles=(list(panel_titles) if panel_titles is not None
                                        else [_panel_title(schedule, p) for p in parts]))
    for col, part in enumerate(parts, start=1):
        frame = schedule[schedule["part"] == part]
        for activity in PS_TIMELINE_TRACES:
            bars = frame[frame["activity"] == activity]
            fig.add_trace(go.Bar(
                y=bars["machine"], x=bars["end_s"] - bars["start_s"], base=bars["start_s"],
                orientation="h", name=activity, legendgroup=activity, showlegend=col == 1,
                marker_color=_ACTIVITY_COLORS[activity],
                customdata=np.column_stack([bars["run_round"], bars["epoch"], bars["round"],
                                            bars["start_s"], bars["end_s"]]),
                hovertemplate=(f"{activity}<br>%{{y}}<br>round %{{customdata[2]}} of epoch "
                               "%{customdata[1]} (run round %{customdata[0]})<br>"
                               "%{customdata[3]:.4g} s → %{customdata[4]:.4g} s<extra></extra>"),
            ), row=1, col=col)
    base_layout(fig, title=title, x_title="time (s)", y_title="")
    fig.update_layout(barmode="overlay", bargap=0.3, margin=_SUBPLOT_MARGIN,
                      legend=_SUBPLOT_LEGEND)
    fig.update_yaxes(categoryorder="array", categoryarray=machines[::-1])
    return fig


@escaped
def ps_time_vs_machines_figure(curve: pd.DataFrame, *, crossover: int | None,
                               title: str = "Total time against worker machines"
                               ) -> go.Figure:
    """Total time of the round model and of the train-locally variant over worker counts.

    Parameters
    ----------
    curve : pandas.DataFrame
        :func:`core.scaling.ps_rounds.ps_time_vs_machines`.
    crossover : int or None
        :func:`core.scaling.ps_job.crossover_machines`; marked when it lies in the curve.

    Traces: :data:`PS_TIME_TRACES`: "round model", "train locally, send once", "crossover"
    (one marker at the crossover worker count, empty when outside the curve or None).
    """
    if curve is None or curve.empty:
        return empty_figure(title, "No worker counts to draw.")
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=curve["machines"], y=curve["total_time_s"], mode="lines+markers",
                             name=PS_TIME_TRACES[0], line_color=color(0),
                             hovertemplate="m = %{x}<br>%{y:.4g} s<extra></extra>"))
    fig.add_trace(go.Scatter(x=curve["machines"], y=curve["local_time_s"], mode="lines",
                             name=PS_TIME_TRACES[1], line=dict(color=color(2), dash="dot"),
                             hovertemplate="m = %{x}<br>%{y:.4g} s<extra></extra>"))
    at = curve[curve["machines"] == crossover] if crossover is not None else curve.iloc[0:0]
    fig.add_trace(go.Scatter(
        x=at["machines"], y=at["total_time_s"], mode="markers+text", name=PS_TIME_TRACES[2],
        marker=dict(color=TARGET_LINE["color"], size=13, symbol="diamond"),
        text=[f"m* = {crossover}"] * len(at), textposition="top right",
        hovertemplate=("crossover m* = %{x}: communication + aggregation exceed compute"
                       "<br>%{y:.4g} s<extra></extra>"),
    ))
    return base_layout(fig, title=title, x_title="worker machines m", y_title="total time (s)")


# --------------------------------------------------------------------------- sync vs async

@escaped
def sync_async_figure(sync: SyncSchedule, async_: AsyncSchedule, *,
                      title: str = "Synchronous vs asynchronous updates") -> go.Figure:
    """Both schedules on one time axis: synchronous on top, asynchronous below.

    Traces: :data:`SYNC_ASYNC_TRACES`. Top panel: "compute", "wait", "aggregate",
    "update" bars and a "sync step completes" marker at each step's end (server row).
    Bottom panel: "fresh gradient" (staleness 0) and "stale gradient" compute bars, and
    "update applied" markers at each arrival labelled ``τ=<staleness>``.
    """
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12,
                        subplot_titles=("synchronous", "asynchronous"))
    tl = sync.timeline
    for activity in SYNC_ASYNC_TRACES[:4]:
        bars = tl[tl["activity"] == activity]
        fig.add_trace(_hbar(bars, activity, _SYNC_COLORS[activity]), row=1, col=1)
    fig.add_trace(go.Scatter(
        x=list(sync.step_end_s), y=[SERVER] * len(sync.step_end_s), mode="markers",
        name=SYNC_ASYNC_TRACES[4], marker=dict(symbol="line-ns-open", size=18, color="#000"),
        hovertemplate="step completes at %{x:.4g} s<extra></extra>"), row=1, col=1)
    bars = async_.timeline
    fig.add_trace(_hbar(bars[bars["staleness"] == 0], SYNC_ASYNC_TRACES[5],
                        _FRESH_COLOR), row=2, col=1)
    fig.add_trace(_hbar(bars[bars["staleness"] > 0], SYNC_ASYNC_TRACES[6], _STALE_COLOR),
                  row=2, col=1)
    up = async_.updates
    fig.add_trace(go.Scatter(
        x=up["applied_s"], y=[f"worker {w}" for w in up["worker"]], mode="markers+text",
        name=SYNC_ASYNC_TRACES[7], text=[f"τ={s}" for s in up["staleness"]],
        textposition="middle right", marker=dict(symbol="triangle-right", size=10,
                                                 color="#000"),
        customdata=np.column_stack([up["update"], up["read_version"],
                                    up["applied_to_version"]]),
        hovertemplate=("update %{customdata[0]} at %{x:.4g} s: computed on version "
                       "%{customdata[1]}, applied to version %{customdata[2]}<extra></extra>"),
    ), row=2, col=1)
    base_layout(fig, title=title, x_title="time (s)", y_title="")
    fig.update_layout(barmode="overlay", bargap=0.3, margin=_SUBPLOT_MARGIN,
                      legend=_SUBPLOT_LEGEND, height=560)
    for row, frame in ((1, sync.timeline), (2, async_.timeline)):
        names = sorted({m for m in frame["machine"] if m != SERVER},
                       key=lambda m: int(m.split()[-1]))
        order = ([SERVER] if row == 1 else []) + names
        fig.update_yaxes(categoryorder="array", categoryarray=order[::-1], row=row, col=1)
    fig.update_xaxes(title_text="", row=1, col=1)
    return fig


# --------------------------------------------------------------------------- measured scaling

@escaped
def measured_speedup_figure(result: MeasuredScaling, *, title: str = "Speed-up against GPUs"
                   ) -> go.Figure:
    """Measured speed-up over GPU count, one trace per comparison group, with the ideal line.

    Traces: "ideal" (``N / N0`` from ``N0`` to the largest count), then one per group in the
    order strong before weak, by batch: "strong, global batch <G>" or "weak, <b> per GPU".
    """
    rows = result.rows
    if rows.empty:
        return empty_figure(title, "No comparison to draw.")
    n0, top = result.baseline_gpus, int(rows["gpus"].max())
    fig = go.Figure(go.Scatter(x=[n0, top], y=[1.0, top / n0], mode="lines", name="ideal",
                               line=dict(color="#555", dash="dash")))
    for i, (name, group) in enumerate(_groups(rows)):
        fig.add_trace(_group_trace(group, "speedup", name, i))
    x_title = "GPUs" if n0 == 1 else f"GPUs (baseline {n0})"
    return base_layout(fig, title=title, x_title=x_title,
                       y_title="speed-up (×)" if n0 == 1 else f"speed-up over {n0} GPUs (×)")


@escaped
def efficiency_figure(result: MeasuredScaling, *, title: str = "Parallel efficiency against GPUs"
                      ) -> go.Figure:
    """Parallel efficiency over GPU count, with the ideal (1) and break-even (N0/N) lines.

    Traces: "ideal" (efficiency 1), "break-even (speed-up 1)" (``N0 / N``: below it the run
    is slower than its baseline), then one per group named as in :func:`measured_speedup_figure`.
    """
    rows = result.rows
    if rows.empty:
        return empty_figure(title, "No comparison to draw.")
    n0, top = result.baseline_gpus, int(rows["gpus"].max())
    xs = np.arange(n0, top + 1)
    fig = go.Figure(go.Scatter(x=[n0, top], y=[1.0, 1.0], mode="lines", name="ideal",
                               line=dict(color="#555", dash="dash")))
    fig.add_trace(go.Scatter(x=xs, y=n0 / xs, mode="lines", name=EFFICIENCY_TRACES[1],
                             line=TARGET_LINE))
    for i, (name, group) in enumerate(_groups(rows)):
        fig.add_trace(_group_trace(group, "efficiency", name, i))
    return base_layout(fig, title=title, x_title="GPUs", y_title="parallel efficiency")


@escaped
def comm_split_figure(result: MeasuredScaling, *, per_epoch: bool = False,
                      title: str = "Where the time goes (estimate)") -> go.Figure:
    """Stacked bars of estimated compute and communication per compared row.

    Traces: :data:`COMM_SPLIT_TRACES`: "compute (estimate)", "communication (estimate)"
    (negative when the speed-up is super-linear: ``barmode="relative"``), "measured sync
    time" (markers; empty unless the table has ``sync_time_s``, per step only).
    """
    rows = _sorted(result.rows)
    unit = "epoch" if per_epoch else "step"
    compute = rows["compute_est_epoch_s" if per_epoch else "compute_est_s"]
    comm = rows["communication_est_epoch_s" if per_epoch else "communication_est_s"]
    if rows.empty or compute.isna().all():
        return empty_figure(title, f"No per-{unit} times to split"
                            + (" (give the dataset size)." if not rows.empty else "."))
    labels = _labels(rows)
    fig = go.Figure()
    fig.add_trace(go.Bar(x=labels, y=compute, name=COMM_SPLIT_TRACES[0], marker_color=color(0)))
    fig.add_trace(go.Bar(x=labels, y=comm, name=COMM_SPLIT_TRACES[1], marker_color=color(1)))
    sync = rows["sync_time_s"] if not per_epoch else pd.Series(np.nan, index=rows.index)
    keep = sync.notna()
    fig.add_trace(go.Scatter(x=[lab for lab, k in zip(labels, keep) if k], y=sync[keep],
                             mode="markers", name=COMM_SPLIT_TRACES[2],
                             marker=dict(color="#000", symbol="line-ew-open", size=16)))
    base_layout(fig, title=title, x_title="configuration", y_title=f"seconds per {unit}")
    fig.update_layout(barmode="relative", height=_bar_height(labels))
    return fig


@escaped
def bandwidth_figure(result: MeasuredScaling, *, title: str = "All-reduce bandwidth achieved"
                     ) -> go.Figure:
    """Achieved bandwidth (lower-bound bytes / estimated communication time) per row.

    Traces: :data:`BANDWIDTH_TRACES`: "achieved (estimate)" bars, "achieved (measured sync
    time)" bars (empty without ``sync_time_s``), "nominal link" (a flat line at
    ``link_gbps / 8`` GB/s; empty when no link was given). GB = 1e9 bytes.
    """
    rows = _sorted(result.rows)
    if rows.empty or rows["allreduce_bytes_per_step"].isna().all():
        return empty_figure(title, "Give the parameter count to compute the all-reduce bytes.")
    labels = _labels(rows)
    fig = go.Figure()
    fig.add_trace(go.Bar(x=labels, y=rows["achieved_GB_per_s"], name=BANDWIDTH_TRACES[0],
                         marker_color=color(0)))
    sync = rows["achieved_GB_per_s_sync"]
    keep = sync.notna()
    fig.add_trace(go.Bar(x=[lab for lab, k in zip(labels, keep) if k], y=sync[keep],
                         name=BANDWIDTH_TRACES[1], marker_color=color(5)))
    link = result.link_gbps
    fig.add_trace(go.Scatter(x=labels if link else [], y=[link / 8] * len(labels) if link else [],
                             mode="lines", name=BANDWIDTH_TRACES[2], line=TARGET_LINE))
    base_layout(fig, title=title, x_title="configuration", y_title="GB/s (1 GB = 1e9 bytes)")
    fig.update_layout(barmode="group", height=_bar_height(labels))
    return fig


# --------------------------------------------------------------------------- batch size

@escaped
def lr_schedule_figure(plan: BatchSizePlan, *, epochs: float | None = None,
                       title: str = "Learning rate with gradual warm-up") -> go.Figure:
    """The learning rate of :func:`core.scaling.batch_size.batch_size_plan` over steps.

    Parameters
    ----------
    plan : BatchSizePlan
    epochs : float, optional
        How far to draw, in epochs; default the warm-up plus two epochs.

    Traces: :data:`LR_TRACES`: "learning rate" (the schedule is piecewise linear, so its
    corners are drawn: step 0, the end of warm-up, the last step drawn, each from
    :func:`core.scaling.batch_size.lr_at_step`) and "end of warm-up" (one marker at
    ``warmup_steps``; empty when there is no warm-up).
    """
    epochs = plan.warmup_epochs + 2.0 if epochs is None else epochs
    last = max(int(np.ceil(epochs * plan.steps_per_epoch)), plan.warmup_steps, 1)
    corners = np.array(sorted({0, plan.warmup_steps, last}))
    fig = go.Figure(go.Scatter(
        x=corners, y=lr_at_step(plan, corners), mode="lines", name=LR_TRACES[0],
        line_color=color(0), hovertemplate="step %{x}: lr %{y:.4g}<extra></extra>"))
    warm = [plan.warmup_steps] if plan.warmup_steps else []
    fig.add_trace(go.Scatter(
        x=warm, y=[plan.lr] * len(warm), mode="markers+text", name=LR_TRACES[1],
        text=[f"{plan.warmup_steps} steps"] * len(warm), textposition="bottom right",
        marker=dict(color=TARGET_LINE["color"], size=11, symbol="diamond"),
        hovertemplate="warm-up ends at step %{x}: lr %{y:.4g}<extra></extra>"))
    base_layout(fig, title=title, x_title=f"step ({plan.steps_per_epoch} per epoch)",
                y_title="learning rate")
    fig.update_yaxes(rangemode="tozero")
    return fig


# --------------------------------------------------------------------------- private

def _panel_title(schedule: pd.DataFrame, part: str) -> str:
    rounds = sorted(schedule.loc[schedule["part"] == part, "run_round"].unique())
    if part == "last":
        return f"last round (run round {rounds[-1]})"
    return "first round" if len(rounds) == 1 else f"first {len(rounds)} rounds"


def _hbar(bars: pd.DataFrame, name: str, colour: str) -> go.Bar:
    return go.Bar(y=bars["machine"], x=bars["end_s"] - bars["start_s"], base=bars["start_s"],
                  orientation="h", name=name, marker_color=colour,
                  customdata=np.column_stack([bars["iteration"].astype(float),
                                              bars["start_s"], bars["end_s"]]),
                  hovertemplate=(f"{esc(name)}<br>%{{y}}, iteration %{{customdata[0]}}<br>"
                                 "%{customdata[1]:.4g} s → %{customdata[2]:.4g} s"
                                 "<extra></extra>"))


def _groups(rows: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    out = []
    for kind, key, fmt in (("strong", "global_batch", "strong, global batch {}"),
                           ("weak", "batch_per_gpu", "weak, {} per GPU")):
        part = rows[rows["scaling"] == kind]
        for value in sorted(part[key].unique()):
            out.append((fmt.format(int(value)), part[part[key] == value]))
    return out


def _group_trace(group: pd.DataFrame, column: str, name: str, i: int) -> go.Scatter:
    group = group.sort_values(["gpus", column])
    single = not group["gpus"].duplicated().any()
    return go.Scatter(x=group["gpus"], y=group[column], name=name,
                      mode="lines+markers" if single else "markers",
                      marker_color=color(i), line_color=color(i), text=group["config"],
                      hovertemplate=f"{esc(name)}<br>%{{text}}<br>%{{x}} GPUs: %{{y:.3g}}"
                                    "<extra></extra>")


def _sorted(rows: pd.DataFrame) -> pd.DataFrame:
    """Bars in a readable order: kind, GPUs, nodes, batch (the trace order stays fixed)."""
    return rows.sort_values(["scaling", "gpus", "nodes", "batch_per_gpu"],
                            kind="stable").reset_index(drop=True)


def _bar_height(labels: list[str]) -> int:
    """Room for the rotated configuration labels under many bars (about 6 px a character)."""
    if len(labels) <= 6:
        return HEIGHT
    return HEIGHT + min(240, 6 * max(len(lab) for lab in labels))


def _labels(rows: pd.DataFrame) -> list[str]:
    return [f"{c}, {b}/GPU ({s})" for c, b, s in
            zip(rows["config"], rows["batch_per_gpu"], rows["scaling"])]
