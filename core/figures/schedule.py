"""Forecasts through the learning-rate schedule (``core.prediction.forecast_through_schedule``) and the cool-downs
a run could take (``core.prediction.plan_cooldown``): the loss above, the learning rate beneath, on one step axis.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.figures.style import TARGET_LINE, base_layout, color, empty_figure, escaped
from core.logs import RunLog
from core.prediction import CooldownPlan, ScheduleForecast, candidate_schedule, evaluation_table

#: the loss panel's share of the height; the learning rate's is the rest
LOSS_SHARE = 0.72
BAND_FILL = "rgba(0, 114, 178, 0.15)"


def _two_panels() -> go.Figure:
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.06,
                        row_heights=[LOSS_SHARE, 1 - LOSS_SHARE])
    fig.update_layout(height=560)
    return fig


@escaped
def schedule_forecast_figure(forecast: ScheduleForecast, log: RunLog | None = None) -> go.Figure:
    """The loss against optimiser steps through the planned schedule, the learning rate beneath.

    Traces, in order: ``band low`` and ``band high`` (the 80 % band, filled between), ``forecast`` (the loss through
    the plan), ``observed`` (the evaluations seen), ``rest of the log`` (the log's evaluations after the cut, when
    ``log`` is given), ``target``, ``reaches target`` (a marker at the forecast step, when within the plan), then in
    the lower panel ``learning rate`` (the plan) and ``observed rate`` (the plan up to the cut).

    >>> import numpy as np
    >>> from core.logs import read_log
    >>> from core.prediction import forecast_through_schedule
    >>> from core.targets import Target
    >>> rows = "".join(f"{s},{1e-3 if s < 800 else 1e-4},{2 + 3 * (s * 1e-3) ** -0.4:.6f}\\n"
    ...                for s in range(50, 1001, 50))
    >>> log = read_log(("step,lr,loss\\n" + rows).encode(), "run.csv")
    >>> f = forecast_through_schedule(log, target=Target("loss", "<=", 2.0), observe=0.5)
    >>> [t.name for t in schedule_forecast_figure(f, log).data]
    ['band low', 'band high', 'forecast', 'observed', 'rest of the log', 'target', 'learning rate', 'observed rate']
    """
    target = forecast.target
    fig = _two_panels()
    x = forecast.steps
    fig.add_scatter(x=x, y=forecast.metric_low, mode="lines", name="band low", line=dict(width=0),
                    showlegend=False, hoverinfo="skip", row=1, col=1)
    fig.add_scatter(x=x, y=forecast.metric_high, mode="lines", name="band high", line=dict(width=0),
                    fill="tonexty", fillcolor=BAND_FILL, showlegend=False, hoverinfo="skip", row=1, col=1)
    fig.add_scatter(x=x, y=forecast.metric, mode="lines", name="forecast", line=dict(color=color(0), width=2.5),
                    hovertemplate="step %{x:,.0f}<br>forecast %{y:.4g}<extra></extra>", row=1, col=1)
    fig.add_scatter(x=forecast.observed_steps, y=forecast.observed_values, mode="markers", name="observed",
                    marker=dict(color=color(7), size=5), row=1, col=1)
    if log is not None:
        try:
            _, steps, values = evaluation_table(log, target)
        except Exception:  # noqa: BLE001 - the rest of the log is only drawn for comparison
            steps = values = np.empty(0)
        rest = steps > forecast.observed_step
        fig.add_scatter(x=steps[rest], y=values[rest], mode="markers", name="rest of the log",
                        marker=dict(color="#999999", size=4, symbol="circle-open"), row=1, col=1)
    fig.add_scatter(x=[min(x[0], forecast.observed_steps[0]) if forecast.n_observed else x[0], x[-1]],
                    y=[target.value] * 2, mode="lines", name="target", line=TARGET_LINE, row=1, col=1)
    s = forecast.steps_to_target
    if s is not None and math.isfinite(s) and forecast.status == "predicted":
        fig.add_scatter(x=[s], y=[target.value], mode="markers", name="reaches target",
                        marker=dict(color=color(3), size=11, symbol="x"),
                        hovertemplate="reaches the target at step %{x:,.0f}<extra></extra>", row=1, col=1)
    grid, lr = forecast.schedule.to_rows()
    fig.add_scatter(x=grid, y=lr, mode="lines", name="learning rate", line=dict(color=color(2)), row=2, col=1)
    seen = grid <= forecast.observed_step
    fig.add_scatter(x=grid[seen], y=lr[seen], mode="lines", name="observed rate",
                    line=dict(color=color(7), width=3), row=2, col=1)
    base_layout(fig, title=f"Loss through the planned schedule: {forecast.source}", x_title="",
                y_title=target.metric,
                subtitle=f"{forecast.family} law; seen to step {forecast.observed_step:,.0f}; plan: "
                         f"{forecast.schedule.source}; band 80 %")
    fig.update_xaxes(title_text="optimiser step", row=2, col=1)
    fig.update_yaxes(title_text="learning rate" if forecast.schedule.unit == "absolute" else "rate / peak",
                     row=2, col=1)
    return fig


@escaped
def cooldown_figure(forecast: ScheduleForecast, plan: CooldownPlan, *, n_curves: int = 6) -> go.Figure:
    """Candidate cool-downs for the run: the observed loss, the forecast under the run's own plan (``own plan``),
    the ``n_curves`` best candidates (``cool-down …``; the shortest that reaches the target first, named
    ``shortest: …``), the target, and their learning rates beneath (``rate: …``).

    Traces in order: ``observed``, ``own plan``, one per candidate, ``target``, then one ``rate: …`` per candidate
    and ``own rate``.
    """
    model = forecast.model
    if model is None or plan.table.empty:
        return empty_figure("Cool-downs", "The run already reached its target: nothing to plan.")
    fig = _two_panels()
    fig.add_scatter(x=forecast.observed_steps, y=forecast.observed_values, mode="markers", name="observed",
                    marker=dict(color=color(7), size=5), row=1, col=1)
    fig.add_scatter(x=forecast.steps, y=forecast.metric, mode="lines", name="own plan",
                    line=dict(color="#999999", dash="dot"), row=1, col=1)
    chosen = plan.table.head(n_curves)
    rates = []
    for i, row in enumerate(chosen.itertuples()):
        sched = candidate_schedule(forecast.schedule, at=forecast.observed_step, total=row.total_steps,
                                   fraction=row.decay_fraction, shape=row.shape)
        x = np.linspace(forecast.observed_step, row.total_steps, 200)
        label = (f"{'shortest: ' if row.shortest else ''}cool-down {row.shape} {row.decay_fraction:.0%} of "
                 f"{row.total_steps:,.0f}")
        fig.add_scatter(x=x, y=model.curve(sched, x), mode="lines", name=label,
                        line=dict(color=color(i), width=3 if row.shortest else 1.5),
                        hovertemplate=f"{label}<br>step %{{x:,.0f}}: %{{y:.4g}}<extra></extra>", row=1, col=1)
        rates.append((label, sched, i))
    fig.add_scatter(x=[forecast.observed_steps[0], float(plan.table["total_steps"].max())],
                    y=[forecast.target.value] * 2, mode="lines", name="target", line=TARGET_LINE, row=1, col=1)
    for label, sched, i in rates:
        grid, lr = sched.to_rows(200)
        keep = grid >= forecast.observed_step
        fig.add_scatter(x=grid[keep], y=lr[keep], mode="lines", name=f"rate: {label}", showlegend=False,
                        line=dict(color=color(i), width=1.5), row=2, col=1)
    grid, lr = forecast.schedule.to_rows()
    fig.add_scatter(x=grid, y=lr, mode="lines", name="own rate", line=dict(color="#999999", dash="dot"),
                    showlegend=False, row=2, col=1)
    base_layout(fig, title=f"Cool-downs to {forecast.target.spec}: {forecast.source}", x_title="",
                y_title=forecast.target.metric, subtitle=plan.description)
    fig.update_xaxes(title_text="optimiser step", row=2, col=1)
    fig.update_yaxes(title_text="learning rate", row=2, col=1)
    return fig
