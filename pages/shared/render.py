"""Rendering shared by the pages: the page boundary, the sidebar, charts and downloads.

Part of ``pages/shared`` (re-exported by ``pages.shared.common``).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.export import figure_html, figure_png
from core.untrusted import escape_markdown as plain
from core.untrusted import spreadsheet_safe
from pages.shared.bounded import bounded_resource
from pages.shared.navigation import hand_over_to_app
from pages.shared.state import (
    BUILTIN,
    BUILTIN_WIDGET,
    LIBRARY_RUNS,
    SHARED,
    UPLOADS,
    admit_session,
    builtin_set_labels,
    init_state,
)
from pages.shared.uploads import clear_uploads, unload_library_runs


def _sync_builtin() -> None:
    st.session_state[BUILTIN] = list(st.session_state[BUILTIN_WIDGET])


def page_setup() -> None:
    """First call of every page: shared state and the sidebar's data source.

    Each page calls it itself (rather than relying on ``app.py``) so that a page also
    works when Streamlit runs it on its own (its legacy pages-folder mode on a server's
    first run: :func:`hand_over_to_app` hands such a run over to ``app.py``).
    """
    hand_over_to_app()
    admit_session()
    init_state()
    labels = builtin_set_labels()
    with st.sidebar:
        st.markdown("### Data")
        # The widget's own state is page-scoped (Streamlit clears it on a page switch), so the
        # choice lives in BUILTIN and the widget is re-created from it on every page.
        st.multiselect("Built-in example runs", options=list(labels), format_func=labels.get,
                       default=st.session_state[BUILTIN], key=BUILTIN_WIDGET, on_change=_sync_builtin,
                       help="Real training runs shipped with the app (see data/README.md).")
        uploads = st.session_state.get(UPLOADS, {})
        if uploads:
            st.caption(f"{len(uploads)} uploaded file(s):")
            st.text("\n".join(uploads))
            st.button("Remove uploaded files", key="clear_uploads", icon=":material/delete:",
                      on_click=clear_uploads)
        else:
            st.caption("Upload your own logs on the Logs page.")
        from_library = st.session_state.get(LIBRARY_RUNS, {})
        if from_library:
            st.caption(f"{len(from_library)} run(s) from the library:")
            st.text("\n".join(from_library))
            st.button("Unload library runs", key="clear_library_runs", icon=":material/playlist_remove:",
                      on_click=unload_library_runs)


# ---------------------------------------------------------------- the page boundary




# ---------------------------------------------------------------- rendering helpers
def metric(col, label: str, value: str, *, under: str | None = None, **kwargs) -> None:
    """``st.metric`` in ``col`` with what would not fit its column written whole in a caption under it.

    A metric's value and label never wrap: a long one is cut ("28 epochs (18–…",
    "RingAllReduce: 18.68× spe…").  So the value stays short (the number and its unit) and an
    interval, a scheme or a comparison goes in ``under``, as the Logs page writes its 80 % intervals.
    ``kwargs`` go to ``st.metric`` (``help``, ``delta``, ``delta_color``).
    """
    col.metric(label, value, **kwargs)
    if under:
        col.caption(under)


def show_errors(errors) -> None:
    """One ``st.error`` per rejected file (the message starts with the file name)."""
    for _name, message in errors:
        st.error(plain(message), icon=":material/error:")


@bounded_resource(**SHARED)
def _figure(name: str, inputs: tuple, _args: tuple, _kwargs: dict, _build) -> go.Figure:
    """A figure built once per ``inputs`` (``name`` is the builder; figures are never mutated)."""
    return _build(*_args, **_kwargs)


def chart(figure, *args, key: str, file_stem: str, inputs: tuple | None = None, **kwargs) -> None:
    """Render a plotly figure with its HTML and PNG download buttons.

    ``figure`` is a figure, or a ``core.figures`` builder called as ``figure(*args, **kwargs)``
    and cached (building a figure is the largest part of a rerun): on ``inputs`` when given (a
    few cheap values that determine the arguments, such as the keys of the cached call that
    made them), else on the content of the arguments themselves.
    """
    if callable(figure):
        name = f"{figure.__module__}.{figure.__qualname__}"
        if inputs is None:
            inputs = (args, tuple(sorted(kwargs.items())))
        else:
            inputs = (inputs, tuple((k, v) for k, v in sorted(kwargs.items()) if _cheap(v)))
        figure = _figure(name, inputs, args, kwargs, figure)
    fig = figure
    st.plotly_chart(fig, key=key, config={"displaylogo": False})
    with st.container(horizontal=True):  # buttons at their natural width, in any column width
        st.download_button("Chart (HTML)", data=lambda: figure_html(fig), file_name=f"{file_stem}.html",
                           mime="text/html", key=f"{key}_html", on_click="ignore",
                           icon=":material/download:")
        st.download_button("Chart (PNG)", data=lambda: _png_or_note(fig), file_name=f"{file_stem}.png",
                           mime="image/png", key=f"{key}_png", on_click="ignore",
                           icon=":material/image:")


def detail_tabs(labels: Sequence[str], *, key: str) -> dict:
    """Tabs for the details below a page's answer: ``{label: tab}``, one open at a time (``tab.open``).

    Only the open tab's content needs computing (Streamlit reruns the page when another tab is
    chosen), so a first visit pays for the first tab alone.  The chosen tab stays chosen across
    pages (kept under ``<key>_kept``; tabs have no ``persist_state``).
    """
    kept = f"{key}_kept"

    def _keep() -> None:
        st.session_state[kept] = st.session_state[key]

    default = st.session_state.get(kept)
    tabs = st.tabs(list(labels), key=key, on_change=_keep, default=default if default in labels else labels[0])
    return {label: tab for label, tab in zip(labels, tabs)}


def _cheap(value) -> bool:
    """A plain value that is hashed in no time (options of a figure, next to its ``inputs``)."""
    return value is None or isinstance(value, (bool, int, float, str))


def _png_or_note(fig: go.Figure) -> bytes:
    try:
        return figure_png(fig)
    except RuntimeError as exc:  # no Chromium on this server: say so in the file itself
        return f"PNG export needs Chromium (apt-get install chromium): {exc}".encode()


def table_download(table: pd.DataFrame, *, key: str, file_name: str, label: str = "Table (CSV)") -> None:
    """A CSV download of ``table``; text cells cannot run as spreadsheet formulas (``core.untrusted``)."""
    st.download_button(label, data=lambda: spreadsheet_safe(table).to_csv(index=False), file_name=file_name,
                       mime="text/csv", key=key, on_click="ignore", icon=":material/table:")

