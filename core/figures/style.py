"""Styling constants shared by every figure builder (one place, like plotly's PxDefaults)."""

from __future__ import annotations

import plotly.graph_objects as go

#: qualitative colour sequence: Okabe–Ito (colour-blind friendly) then Paul Tol's muted
#: scheme, so a dozen overlaid runs keep distinct colours
COLORS: tuple[str, ...] = (
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
    "#882255", "#44AA99", "#999933", "#AA4499", "#332288", "#DDCC77", "#117733", "#88CCEE",
)
TEMPLATE = "plotly_white"
FONT_FAMILY = "Inter, Segoe UI, Helvetica, Arial, sans-serif"
HEIGHT = 440
TARGET_LINE = dict(color="#D55E00", dash="dash", width=1.5)


def color(i: int) -> str:
    """The i-th colour of the shared sequence (cycles)."""
    return COLORS[i % len(COLORS)]


def base_layout(fig: go.Figure, *, title: str, x_title: str, y_title: str) -> go.Figure:
    """Apply the shared template, fonts, title and axis titles (with units) to ``fig``."""
    fig.update_layout(
        template=TEMPLATE,
        title=dict(text=title, x=0.01, xanchor="left"),
        font=dict(family=FONT_FAMILY, size=13),
        height=HEIGHT,
        margin=dict(l=60, r=20, t=60, b=50),
        legend=dict(orientation="v", yanchor="top", y=1.0, xanchor="left", x=1.01,
                    font=dict(size=11)),
        hovermode="closest",
    )
    fig.update_xaxes(title_text=x_title)
    fig.update_yaxes(title_text=y_title)
    return fig


def empty_figure(title: str, note: str) -> go.Figure:
    """A titled figure with a note instead of data (degenerate input never raises)."""
    fig = go.Figure()
    base_layout(fig, title=title, x_title="", y_title="")
    fig.add_annotation(text=note, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper",
                       font=dict(size=14, color="#555"))
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return fig
