"""Streamlit glue shared by every page: cached calls into ``core``, loaded runs, downloads.

It lives in ``pages/shared/`` so that Streamlit never lists it as a page (its legacy
pages-folder mode, which a server uses for its very first script run, lists only
``pages/*.py``).  Nothing here computes a number: every value comes from ``core``; this
module only caches, stores and renders.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.datasets import BUILTIN_LOG_SETS, builtin_log_files
from core.errors import LogFormatError
from core.export import figure_html, figure_png
from core.logs.reader import RunLog, read_log
from core.runs.analysis import RunAnalysis, analyse_run, fits_table
from core.runs.targets import DEFAULT_TARGET_ACC

# ---------------------------------------------------------------- session state keys
UPLOADS = "log_files"          # dict[name, bytes]: uploaded logs, kept across pages
EDITS = "run_edits"            # dict[name, dict]: user edits of metadata / roles per file
BUILTIN = "builtin_sets"       # list of BUILTIN_LOG_SETS keys shown
BUILTIN_WIDGET = "builtin_sets_widget"
TARGET = "target_acc"          # the target accuracy shared by the pages
SPEED_UPLOADS = "speed_files"  # dict[name, bytes]: uploaded measured-speed tables (Plan page)
#: The Calibrate page's prediction of steps to target, read by the Plan page (absent until
#: the Calibrate page has predicted something).  A plain dict:
#: ``{"label": str, "steps": float, "steps_low": float | None, "steps_high": float | None,
#: "note": str}``; steps are training steps (not epochs) at the batch size of the
#: calibration runs; ``steps_low``/``steps_high`` an interval or None; ``label`` names the
#: model and device ("ResNet-50 on Tesla V100"), ``note`` says how it was predicted.
#: Validated by ``core.plan.steps.steps_from_prediction``.
CALIBRATE_PREDICTION = "calibrate_prediction"
#: the learning-curve family chosen on the Logs page ("auto" or a key of core.curves.FAMILIES)
#: and its route ("accuracy" or "loss"); the Plan page predicts steps with them
FAMILY = "curve_family"
ROUTE = "curve_route"


def init_state() -> None:
    """Create the shared session keys once (idempotent)."""
    st.session_state.setdefault(UPLOADS, {})
    st.session_state.setdefault(EDITS, {})
    st.session_state.setdefault(BUILTIN, ["mnist1d"])
    st.session_state.setdefault(TARGET, DEFAULT_TARGET_ACC)
    st.session_state.setdefault(SPEED_UPLOADS, {})
    st.session_state.setdefault(FAMILY, "auto")
    st.session_state.setdefault(ROUTE, "accuracy")


def _sync_builtin() -> None:
    st.session_state[BUILTIN] = list(st.session_state[BUILTIN_WIDGET])


def page_setup() -> None:
    """First call of every page: shared state and the sidebar's data source.

    Each page calls it itself (rather than relying on ``app.py``) so that a page also
    works when Streamlit runs it on its own (its legacy pages-folder mode on a server's
    first run).
    """
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
            st.caption(f"{len(uploads)} uploaded file(s): " + ", ".join(uploads))
            if st.button("Remove uploaded files", key="clear_uploads", icon=":material/delete:"):
                st.session_state[UPLOADS] = {}
                st.rerun()
        else:
            st.caption("Upload your own logs on the Logs page.")


# ---------------------------------------------------------------- cached core calls
@st.cache_data(show_spinner=False, max_entries=512)
def _builtin_bytes(set_key: str) -> tuple[tuple[str, bytes], ...]:
    return tuple((name, path.read_bytes()) for name, path in builtin_log_files(set_key))


@st.cache_data(show_spinner=False, max_entries=1024)
def _read(data: bytes, name: str, roles: tuple[tuple[str, str | None], ...] | None,
          steps_per_epoch: int | None, split: str | None) -> RunLog:
    return read_log(data, name, roles=dict(roles) if roles else None,
                    steps_per_epoch=steps_per_epoch, split=split)


@st.cache_data(show_spinner=False, max_entries=1024)
def _analyse(data: bytes, name: str, roles: tuple[tuple[str, str | None], ...] | None,
             steps_per_epoch: int | None, split: str | None, meta: tuple[tuple[str, object], ...],
             target_acc: float, criterion: str, family: str) -> RunAnalysis:
    log = _read(data, name, roles, steps_per_epoch, split)
    if meta:
        log = log.with_meta(**dict(meta))
    return analyse_run(log, target_acc=target_acc, criterion=criterion, family=family)


@dataclass(frozen=True)
class LoadedRuns:
    """What the loaded files gave: analyses of the readable ones, errors of the others."""

    analyses: tuple[RunAnalysis, ...]
    errors: tuple[tuple[str, str], ...]   # (file name, message)

    @property
    def table(self) -> pd.DataFrame:
        return fits_table(self.analyses)


def all_log_files() -> list[tuple[str, bytes, str]]:
    """Every file in play: ``(name, bytes, origin)`` with origin "built-in" or "uploaded"."""
    files: list[tuple[str, bytes, str]] = []
    for key in st.session_state.get(BUILTIN, []):
        files += [(n, b, "built-in") for n, b in _builtin_bytes(key)]
    files += [(n, b, "uploaded") for n, b in st.session_state.get(UPLOADS, {}).items()]
    return files


def _edit_args(name: str) -> tuple:
    edit = st.session_state.get(EDITS, {}).get(name, {})
    roles = edit.get("roles")
    roles_t = tuple(sorted(roles.items())) if roles else None
    meta = tuple(sorted((k, v) for k, v in edit.items() if k in {"model", "depth", "gpu"}))
    return roles_t, edit.get("steps_per_epoch"), edit.get("split"), meta


def load_runs(*, target_acc: float, criterion: str = "epoch", family: str = "optimus") -> LoadedRuns:
    """Read and analyse every file in play; a bad file is reported, never fatal."""
    analyses, errors = [], []
    for name, data, _origin in all_log_files():
        roles, spe, split, meta = _edit_args(name)
        try:
            analyses.append(_analyse(data, name, roles, spe, split, meta, target_acc, criterion, family))
        except LogFormatError as exc:
            errors.append((name, str(exc)))
    return LoadedRuns(tuple(analyses), tuple(errors))


def read_uploaded(name: str) -> RunLog:
    """The RunLog of one loaded file with its edits (raises ``LogFormatError``)."""
    for n, data, _ in all_log_files():
        if n == name:
            roles, spe, split, meta = _edit_args(name)
            log = _read(data, name, roles, spe, split)
            return log.with_meta(**dict(meta)) if meta else log
    raise KeyError(name)


def add_uploads(files) -> list[str]:
    """Store uploaded logs' bytes under their names (same name: replaced); return names."""
    init_state()
    return store_files(files, state_key=UPLOADS)


def store_files(files, *, state_key: str) -> list[str]:
    """Keep uploaded files' bytes in ``st.session_state[state_key]`` (same name: replaced).

    The generic form of :func:`add_uploads`, for other kinds of files (e.g. ``SPEED_UPLOADS``).
    """
    store = st.session_state.setdefault(state_key, {})
    names = []
    for f in files or []:
        store[f.name] = f.getvalue()
        names.append(f.name)
    return names


def keep_valid_choice(key: str, options, default=None) -> None:
    """Reset a keyed widget's stored choice when it is no longer among ``options``.

    Call it before creating a radio or selectbox whose options depend on other inputs. The
    choice becomes ``default`` (or the first option), set through the session state so that
    the browser shows it too (deleting the key would leave the old value on screen).
    """
    options = list(options)
    if key in st.session_state and st.session_state[key] not in options and options:
        st.session_state[key] = default if default in options else options[0]


def builtin_set_labels() -> dict[str, str]:
    return {k: v[0] for k, v in BUILTIN_LOG_SETS.items()}


# ---------------------------------------------------------------- rendering helpers
def show_errors(errors) -> None:
    """One ``st.error`` per rejected file (the message starts with the file name)."""
    for _name, message in errors:
        st.error(message, icon=":material/error:")


def chart(fig: go.Figure, *, key: str, file_stem: str) -> None:
    """Render a plotly figure with its HTML and PNG download buttons."""
    st.plotly_chart(fig, key=key, config={"displaylogo": False})
    with st.container(horizontal=True):  # buttons at their natural width, in any column width
        st.download_button("Chart (HTML)", data=lambda: figure_html(fig), file_name=f"{file_stem}.html",
                           mime="text/html", key=f"{key}_html", on_click="ignore",
                           icon=":material/download:")
        st.download_button("Chart (PNG)", data=lambda: _png_or_note(fig), file_name=f"{file_stem}.png",
                           mime="image/png", key=f"{key}_png", on_click="ignore",
                           icon=":material/image:")


def _png_or_note(fig: go.Figure) -> bytes:
    try:
        return figure_png(fig)
    except Exception as exc:  # no Chromium on this server: say so in the file itself
        return f"PNG export needs Chromium (apt-get install chromium): {exc}".encode()


def table_download(table: pd.DataFrame, *, key: str, file_name: str, label: str = "Table (CSV)") -> None:
    """A CSV download of ``table``."""
    buf = io.StringIO()
    table.to_csv(buf, index=False)
    st.download_button(label, data=buf.getvalue(), file_name=file_name, mime="text/csv", key=key,
                       on_click="ignore", icon=":material/table:")


def target_slider(*, key: str) -> float:
    """The target-accuracy slider, shared by the pages through ``TARGET``.

    Each page has its own widget (widget state is page-scoped); it starts from the shared
    value and writes every change back to it, so moving it on one page moves it on all.
    """
    init_state()

    def _sync() -> None:
        st.session_state[TARGET] = float(st.session_state[key])

    return float(st.slider("Target accuracy", min_value=0.50, max_value=0.99, step=0.01,
                           value=float(st.session_state[TARGET]), key=key, on_change=_sync, format="%.2f",
                           help="The run counts as converged when its accuracy exceeds this."))
