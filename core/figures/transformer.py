"""Charts of the transformer step-time model (``core.transformer.step_table`` rows): the step split into
compute, exposed communication and pipeline bubble per GPU count, and the memory per GPU against the
device's usable memory.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from core.figures.style import TARGET_LINE, base_layout, color, empty_figure, escaped

#: the parts of a step, as (column of the step table, trace name), stacked in this order
STEP_PARTS: tuple[tuple[str, str], ...] = (("compute_s", "compute"), ("comm_exposed_s", "communication (exposed)"),
                                           ("bubble_s", "pipeline bubble"))
USABLE_MEMORY = "usable memory"


@escaped
def step_split_figure(rows: pd.DataFrame, *, title: str = "Step time split per GPU count") -> go.Figure:
    """Stacked bars per GPU count: compute, exposed communication and bubble (seconds); they add up to
    ``step_s``.  The strategy of each count is in the hover text.

    >>> rows = pd.DataFrame({"gpus": [8, 16], "compute_s": [1.0, 0.5], "comm_exposed_s": [0.1, 0.2],
    ...                      "bubble_s": [0.0, 0.05], "strategy": ["dp=8", "dp=16"]})
    >>> fig = step_split_figure(rows)
    >>> [t.name for t in fig.data], fig.layout.barmode, list(fig.data[1].y)
    (['compute', 'communication (exposed)', 'pipeline bubble'], 'stack', [0.1, 0.2])
    """
    if rows.empty:
        return empty_figure(title, "No GPU count has a strategy that fits.")
    fig = go.Figure()
    x = [str(g) for g in rows["gpus"]]
    for i, (column, name) in enumerate(STEP_PARTS):
        fig.add_trace(go.Bar(x=x, y=rows[column].astype(float).tolist(), name=name, marker_color=color(i),
                             hovertext=rows["strategy"].astype(str).tolist() if "strategy" in rows else None,
                             hovertemplate=f"{name}: %{{y:.4g}} s<br>%{{hovertext}}<extra></extra>"))
    fig.update_layout(barmode="stack")
    fig.update_xaxes(type="category")
    return base_layout(fig, title=title, x_title="GPUs", y_title="seconds per step")


@escaped
def memory_figure(rows: pd.DataFrame, *, title: str = "Memory per GPU") -> go.Figure:
    """Bars of the memory each GPU holds (GB) and a dashed line at the device's usable memory.

    >>> rows = pd.DataFrame({"gpus": [8], "memory_gb_per_gpu": [50.0], "memory_usable_gb": [72.0]})
    >>> [t.name for t in memory_figure(rows).data]
    ['memory per GPU', 'usable memory']
    """
    if rows.empty:
        return empty_figure(title, "No GPU count has a strategy that fits.")
    x = [str(g) for g in rows["gpus"]]
    fig = go.Figure(go.Bar(x=x, y=rows["memory_gb_per_gpu"].astype(float).tolist(), name="memory per GPU",
                           marker_color=color(0), hovertemplate="%{y:.1f} GB<extra></extra>"))
    fig.add_trace(go.Scatter(x=x, y=rows["memory_usable_gb"].astype(float).tolist(), name=USABLE_MEMORY,
                             mode="lines+markers", line=TARGET_LINE))
    fig.update_xaxes(type="category")
    return base_layout(fig, title=title, x_title="GPUs", y_title="GB per GPU")
