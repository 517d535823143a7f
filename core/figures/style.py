"""Styling shared by every figure builder (one place, like plotly's PxDefaults).

The shared look is a plotly template, ``TEMPLATE`` ("planner": plotly_white with the
project's fonts, height, margins and legend), registered and made plotly's default when this
module is imported: a figure gets it when it is created (well under a millisecond), where
applying a template to each figure costs 15-25 ms, the largest part of a page's rerun.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
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


def base_layout(fig: go.Figure, *, title: str, x_title: str, y_title: str, subtitle: str | None = None) -> go.Figure:
    """The title (and a smaller subtitle under it) and axis titles (with units) of ``fig``; the rest
    of the look is ``TEMPLATE``.  A long description belongs in ``subtitle``: a title is one line
    and a narrow chart cuts it off.

    >>> fig = base_layout(go.Figure(), title="Loss", x_title="step", y_title="loss")
    >>> fig.layout.template.layout.height, fig.layout.title.text, fig.layout.xaxis.title.text
    (440, 'Loss', 'step')
    """
    if fig.layout.template.layout.height is None:   # made before the template was the default
        fig.update_layout(template=TEMPLATE)
    fig.update_layout(title_text=title)
    if subtitle:
        fig.update_layout(title_subtitle_text=subtitle, margin_t=84)
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


# ---------------------------------------------------------------- log axes
#: at most this many labels on a log axis: beyond it 1-2-5 per decade thins to one per decade
MAX_LOG_TICKS = 12


def _decimals(value: float) -> int:
    """Decimals that write ``value``, one digit times a power of ten, in full (0 from 1 up)."""
    return max(0, -math.floor(math.log10(value) + 1e-9))


def tick_text(value: float) -> str:
    """A tick label written as a whole value (up to four significant digits): ``2,000``, ``20``, ``1.5``,
    ``0.05``; beyond 10⁷ or below 10⁻⁴ as ``1e+08``.

    >>> [tick_text(v) for v in (2000, 20, 1, 1.5, 0.5, 0.05, 1e8)]
    ['2,000', '20', '1', '1.5', '0.5', '0.05', '1e+08']
    """
    if value >= 1e7 or value < 1e-4:
        return f"{value:.0e}"
    text = f"{value:,.{max(0, 3 - math.floor(math.log10(value)))}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def whole_log_ticks(low: float, high: float, *, max_ticks: int = MAX_LOG_TICKS) -> tuple[list[float], list[str]]:
    """Tick values and labels for a log axis over ``[low, high]``: whole values 1, 2 and 5 times each power of ten
    in the range (… 20, 10, 5, 2, 1, 0.5, 0.2, 0.1 …), never Plotly's shortened minor labels (a bare "2", "5").

    Over more than ``max_ticks`` of them, one per decade (every other decade, and so on, beyond that).  A range
    holding fewer than three of them (0.17 to 0.23) gets evenly spaced round values instead (0.18, 0.2, 0.22).
    Empty for a range that is not positive and finite.

    >>> whole_log_ticks(0.08, 25)
    ([0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0], ['0.1', '0.2', '0.5', '1', '2', '5', '10', '20'])
    >>> whole_log_ticks(1, 1e6)[1]
    ['1', '10', '100', '1,000', '10,000', '100,000', '1,000,000']
    >>> whole_log_ticks(0.17, 0.23)
    ([0.18, 0.2, 0.22], ['0.18', '0.2', '0.22'])
    """
    if not (math.isfinite(low) and math.isfinite(high) and 0 < low <= high):
        return [], []
    first, last = math.floor(math.log10(low)), math.floor(math.log10(high))
    values: list[float] = []
    for mantissas in ((1, 2, 5), (1,)):
        values = [v for d in range(first, last + 1) for m in mantissas
                  if low * (1 - 1e-9) <= (v := float(f"{m}e{d}")) <= high * (1 + 1e-9)]
        if len(values) <= max_ticks:
            break
    if len(values) > max_ticks:
        values = values[::math.ceil(len(values) / max_ticks)]
    if len(values) >= 3 or high == low:
        return values or [low], [tick_text(v) for v in values] or [f"{low:.3g}"]
    raw = (high - low) / 5                              # at least two steps of a round size fit in the range
    base = 10.0 ** math.floor(math.log10(raw))
    step = next(m * base for m in (1, 2, 5, 10) if m * base >= raw * (1 - 1e-9))
    decimals = _decimals(step) + 1
    steps = range(math.ceil(low / step - 1e-9), math.floor(high / step + 1e-9) + 1)
    values = [round(k * step, decimals) for k in steps]
    return values, [tick_text(v) for v in values]


def _axis_values(fig: go.Figure, axis: str) -> np.ndarray:
    """The positive finite values the traces drawn on ``axis`` (``"x"``, ``"y2"``) put on it."""
    letter = axis[0]
    out = []
    for trace in fig.data:
        if (getattr(trace, f"{letter}axis", None) or letter) != axis:
            continue
        values = getattr(trace, letter, None)
        if values is None:
            continue
        numbers = pd.to_numeric(pd.Series(np.ravel(np.asarray(values, dtype=object))), errors="coerce")
        out.append(numbers.to_numpy(dtype=float))
    values = np.concatenate(out) if out else np.array([])
    return values[np.isfinite(values) & (values > 0)]


def log_axis(fig: go.Figure, axis: str = "y", *, ticks: Sequence[float] | None = None) -> go.Figure:
    """Make ``axis`` (``"x"``, ``"y"``, ``"x2"`` …) of ``fig`` logarithmic, labelled at whole values: the one
    helper every log axis in ``core.figures`` uses.

    The labels are :func:`whole_log_ticks` over the range of the traces drawn on that axis, or the values in
    ``ticks`` (e.g. worker counts 1, 2, 4, 8).  An axis with no positive value keeps Plotly's labels.

    >>> fig = go.Figure(go.Scatter(x=[1, 10, 100], y=[12.0, 3.0, 0.4]))
    >>> fig = log_axis(log_axis(fig, "x"), "y")
    >>> fig.layout.yaxis.type, fig.layout.yaxis.ticktext
    ('log', ('0.5', '1', '2', '5', '10'))
    >>> log_axis(fig, "x", ticks=[1, 4, 16]).layout.xaxis.ticktext
    ('1', '4', '16')
    """
    name = f"{axis[0]}axis{axis[1:]}"
    settings: dict = {"type": "log"}
    if ticks is not None:
        values = [float(v) for v in ticks if float(v) > 0]
        settings.update(tickvals=values, ticktext=[tick_text(v) for v in values])
    else:
        values = _axis_values(fig, axis)
        if values.size:
            vals, texts = whole_log_ticks(float(values.min()), float(values.max()))
            settings.update(tickvals=vals, ticktext=texts)
    fig.layout[name].update(settings)
    return fig


# ---------------------------------------------------------------- text from users' files
def esc(text) -> str:
    """``text`` made inert in a Plotly label: ``<`` and ``>`` become entities (shown as themselves).

    Plotly draws a few HTML tags in every text it renders (``<a href>`` makes a link, ``<b>``
    bold), so a file name such as ``<a href="x">re-authenticate</a>.csv`` would become a link
    in a legend.  Escaping twice changes nothing more.  Bare URLs stay plain text: Plotly links
    only ``<a>`` tags.

    >>> esc('<a href="x">re-authenticate</a>.csv')
    '&lt;a href="x"&gt;re-authenticate&lt;/a&gt;.csv'
    >>> esc(esc("<b>")) == esc("<b>")
    True
    """
    return str(text).replace("<", "&lt;").replace(">", "&gt;")


def _esc_values(values):
    if isinstance(values, str):
        return esc(values)
    if values is None or not hasattr(values, "__len__") or not any(isinstance(v, str) for v in values):
        return values
    return [esc(v) if isinstance(v, str) else v for v in values]


def escape_text(fig: go.Figure) -> go.Figure:
    """Escape (``esc``) every text of ``fig`` that can carry a user's words: trace names (legends),
    legend-group titles, trace ``text`` and ``hovertext``, category values (text on a bar chart's axis:
    ``x``, ``y``, ``labels``, drawn as tick labels), the title, subtitle, axis titles, tick texts and
    annotations.  Hover templates are the builders' own (they ``esc`` what they interpolate)."""
    for trace in fig.data:
        if trace.name is not None:
            trace.name = esc(trace.name)
        for attr in ("text", "hovertext", "x", "y", "labels"):
            if attr in trace:
                setattr(trace, attr, _esc_values(getattr(trace, attr)))
        if "legendgrouptitle" in trace and trace.legendgrouptitle.text:
            trace.legendgrouptitle.text = esc(trace.legendgrouptitle.text)
    layout = fig.layout
    if layout.title.text:
        layout.title.text = esc(layout.title.text)
    if layout.title.subtitle.text:
        layout.title.subtitle.text = esc(layout.title.subtitle.text)
    for axis in [*fig.select_xaxes(), *fig.select_yaxes()]:
        if axis.title.text:
            axis.title.text = esc(axis.title.text)
        if axis.ticktext is not None:
            axis.ticktext = _esc_values(axis.ticktext)
    for note in layout.annotations:
        if note.text:
            note.text = esc(note.text)
    return fig


def escaped(builder: Callable[..., go.Figure]) -> Callable[..., go.Figure]:
    """Decorator of every figure builder in ``core.figures``: the figure it returns has its text
    escaped (``escape_text``), so no chart renders markup from a file name, a column or a label."""
    @functools.wraps(builder)
    def build(*args, **kwargs) -> go.Figure:
        return escape_text(builder(*args, **kwargs))

    build.escapes_text = True
    return build
