"""Styling shared by every figure builder (one place, like plotly's PxDefaults).

The shared look is a plotly template, ``TEMPLATE`` ("planner": plotly_white with the
project's fonts, height, margins and legend), registered and made plotly's default when this
module is imported: a figure gets it when it is created (well under a millisecond), where
applying a template to each figure costs 15-25 ms, the largest part of a page's rerun.
"""

from __future__ import annotations

import plotly.graph_objects as go
import plotly.io as pio

#: qualitative colour sequence: Okabe–Ito (colour-blind friendly) then Paul Tol's muted
#: scheme, so a dozen overlaid runs keep distinct colours
COLORS: tuple[str, ...] = (
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
    "#882255", "#44AA99", "#999933", "#AA4499", "#332288", "#DDCC77", "#117733", "#88CCEE",
)
TEMPLATE = "planner"
FONT_FAMILY = "Inter, Segoe UI, Helvetica, Arial, sans-serif"
HEIGHT = 440
TARGET_LINE = dict(color="#D55E00", dash="dash", width=1.5)


def _register_template() -> None:
    template = go.layout.Template(pio.templates["plotly_white"])
    template.layout.update(
        title=dict(x=0.01, xanchor="left"),
        font=dict(family=FONT_FAMILY, size=13),
        height=HEIGHT,
        margin=dict(l=60, r=20, t=60, b=50),
        legend=dict(orientation="v", yanchor="top", y=1.0, xanchor="left", x=1.01, font=dict(size=11)),
        hovermode="closest",
    )
    pio.templates[TEMPLATE] = template
    pio.templates.default = TEMPLATE


_register_template()


def color(i: int) -> str:
    """The i-th colour of the shared sequence (cycles; :func:`dash_of` tells the cycles apart)."""
    return COLORS[i % len(COLORS)]


#: line styles of the successive cycles of COLORS: 48 runs get 48 distinct (colour, dash) pairs
DASHES: tuple[str, ...] = ("solid", "dot", "dashdot")


def dash_of(i: int) -> str:
    """The line style of the i-th trace: solid for the first 16, then dotted, then dash-dotted.

    >>> [dash_of(i) for i in (0, 15, 16, 32, 48)]
    ['solid', 'solid', 'dot', 'dashdot', 'solid']
    """
    return DASHES[(i // len(COLORS)) % len(DASHES)]


def base_layout(fig: go.Figure, *, title: str, x_title: str, y_title: str) -> go.Figure:
    """The title and axis titles (with units) of ``fig``; the rest of the look is ``TEMPLATE``.

    >>> fig = base_layout(go.Figure(), title="Loss", x_title="step", y_title="loss")
    >>> fig.layout.template.layout.height, fig.layout.title.text, fig.layout.xaxis.title.text
    (440, 'Loss', 'step')
    """
    if fig.layout.template.layout.height is None:   # made before the template was the default
        fig.update_layout(template=TEMPLATE)
    fig.update_layout(title_text=title)
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
