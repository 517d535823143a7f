"""Figure export: self-contained HTML (opens offline) and PNG bytes (kaleido + Chromium)."""

from __future__ import annotations

import threading
import warnings

import plotly.graph_objects as go

_KALEIDO_LOCK = threading.Lock()
_KALEIDO_STARTED = False


def figure_html(fig: go.Figure) -> str:
    """The figure as one HTML page with plotly.js inlined, so it works with no network."""
    return fig.to_html(include_plotlyjs=True, full_html=True)


def _ensure_kaleido_server() -> None:
    """Start kaleido's persistent Chromium once per process (0.3 s per image after)."""
    global _KALEIDO_STARTED
    with _KALEIDO_LOCK:
        if _KALEIDO_STARTED:
            return
        import kaleido

        warnings.filterwarnings("ignore", message="The kopts argument is ignored")
        kaleido.start_sync_server(silence_warnings=True)
        _KALEIDO_STARTED = True


def legend_entries(fig: go.Figure) -> int:
    """How many entries the figure's legend shows (one per legend group, traces with a name).

    >>> legend_entries(go.Figure([go.Scatter(name="a", legendgroup="g"), go.Scatter(name="b", legendgroup="g"),
    ...                           go.Scatter(name="c", showlegend=False), go.Scatter(name="d")]))
    2
    """
    seen = set()
    for trace in fig.data:
        if trace.showlegend is False or not trace.name:
            continue
        seen.add(trace.legendgroup or f"_{trace.name}")
    return len(seen)


def png_height(fig: go.Figure, height: int = 520) -> int:
    """A PNG height that shows every legend entry (about 21 px each, plus margins).

    >>> png_height(go.Figure([go.Scatter(name=str(i)) for i in range(29)]))
    729
    """
    return max(height, 120 + 21 * legend_entries(fig))


def figure_png(fig: go.Figure, *, width: int = 1000, height: int | None = None, scale: float = 2.0) -> bytes:
    """The figure as PNG bytes, rendered by kaleido in Debian's headless Chromium.

    ``height`` defaults to :func:`png_height`: tall enough for the whole legend (a chart of 29
    runs once lost half of its legend in the PNG).

    Raises
    ------
    RuntimeError
        When no Chromium is installed (``apt-get install chromium``).
    """
    _ensure_kaleido_server()
    with _KALEIDO_LOCK:
        return fig.to_image(format="png", width=width, height=height or png_height(fig), scale=scale)
