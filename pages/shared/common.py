"""Streamlit glue shared by every page: the session's runs, cached calls into ``core``, downloads.

It lives in ``pages/shared/`` so that Streamlit never lists it as a page (its legacy
pages-folder mode, which a server uses for its very first script run, lists only
``pages/*.py``).  Nothing here computes a number: every value comes from ``core``; this
module only caches, stores and renders.

Caching: a ``RunLog`` or ``RunAnalysis`` argument is hashed by its fingerprint
(``HASH_FUNCS``), so cached calls take runs as they are.  Runs, fits and analyses are frozen
results, cached once per server (``st.cache_resource``: no copy per rerun); tables are
cached as data.  Every cache is bounded in entries and in time (``CACHE``, ``SHARED``), so
memory does not grow with every distinct upload.
"""

from __future__ import annotations

import functools
import hashlib
import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.datasets import BATCH_RUN_SETS, BUILTIN_LOG_SETS, batch_run_files, builtin_datasets_by_file, builtin_log_files
from core.defaults import DEFAULT_LEVEL, DEFAULT_TARGET_ACC
from core.errors import LogFormatError
from core.export import figure_html, figure_png
from core.logs import RunLog, read_log, read_log_files
from core.prediction import FitCache
from core.runs import RunAnalysis, RunFit, analyse_run, fit_run, fits_table
from core.untrusted import escape_markdown as plain
from core.untrusted import spreadsheet_safe

if TYPE_CHECKING:
    from core.plan.batch import BatchStudy

# ---------------------------------------------------------------- session state keys
UPLOADS = "log_files"          # dict[name, bytes]: uploaded logs, kept across pages
DIGESTS = "log_digests"        # dict[name, (id of the bytes, content hash)]: each upload hashed once
EDITS = "run_edits"            # dict[name, dict]: user edits of metadata / roles per file
BUILTIN = "builtin_sets"       # list of BUILTIN_LOG_SETS keys shown
BUILTIN_WIDGET = "builtin_sets_widget"
TARGET = "target_acc"          # the target accuracy shared by the pages
SPEED_UPLOADS = "speed_files"  # dict[name, bytes]: uploaded measured-speed tables (Plan page)
#: the Calibrate page's prediction handed to the Plan page: a ``core.plan.StepsEstimate``
#: (``core.plan.steps_from_calibration``), absent until the user sends one
CALIBRATED_STEPS = "calibrated_steps"
#: the learning-curve family chosen on the Logs page ("auto" or a key of core.curves.FAMILIES)
#: and its route ("accuracy" or "loss"); the Plan page predicts steps with them
FAMILY = "curve_family"
ROUTE = "curve_route"
#: runs loaded from the library (the Library page): dict[name, RunLog], name ``<source> (library #<id>)``,
#: and what each trained on (dict[name, data set]); a snapshot: the session keeps them as they were loaded
LIBRARY_RUNS = "library_runs"
LIBRARY_DATASETS = "library_datasets"

#: cached results are hashed by content: a run by its fingerprint
HASH_FUNCS: dict[type, Callable] = {RunLog: RunLog.fingerprint, RunAnalysis: lambda a: a.key}
#: every cache: at most this many entries, each kept at most an hour
CACHE = dict(show_spinner=False, max_entries=256, ttl=3600, hash_funcs=HASH_FUNCS)
#: frozen results shared as they are (never mutated by a page); small ones only: what an upload
#: turns into stays in its session (``_session_memo``)
SHARED = dict(CACHE, max_entries=64, ttl=600)


def init_state() -> None:
    """Create the shared session keys once (idempotent)."""
    st.session_state.setdefault(UPLOADS, {})
    st.session_state.setdefault(EDITS, {})
    st.session_state.setdefault(BUILTIN, ["mnist1d"])
    st.session_state.setdefault(TARGET, DEFAULT_TARGET_ACC)
    st.session_state.setdefault(SPEED_UPLOADS, {})
    st.session_state.setdefault(FAMILY, "auto")
    st.session_state.setdefault(ROUTE, "accuracy")
    st.session_state.setdefault(LIBRARY_RUNS, {})
    st.session_state.setdefault(LIBRARY_DATASETS, {})


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


# ---------------------------------------------------------------- uploads
UPLOADER = "logs_upload"       # the Logs page's uploader; its key carries a generation number
UPLOAD_REFUSALS = "upload_refusals"   # messages about uploads the session cap refused
#: what one session may hold: uploaded bytes and files (a user gets a message past them)
MAX_SESSION_UPLOAD_BYTES = 400 * 2**20
MAX_SESSION_FILES = 200
UPLOADER_GENERATION = "logs_upload_generation"


def uploader_key() -> str:
    """The Logs page uploader's current key (a new key empties the widget).

    Call it when the uploader is drawn: a widget emptied by a page switch (Streamlit clears a
    page's widgets when another page is shown) forgets which names it showed, so a later change
    of the widget never removes files the user did not remove.
    """
    key = f"{UPLOADER}_{st.session_state.setdefault(UPLOADER_GENERATION, 0)}"
    if not st.session_state.get(key):
        st.session_state["_uploader_names"] = []
    return key


def sync_uploads() -> None:
    """``on_change`` of the Logs uploader: the stored uploads follow the widget (✕ on a chip removes)."""
    init_state()
    current = st.session_state.get(uploader_key()) or []
    shown = st.session_state.setdefault("_uploader_names", [])
    store = st.session_state[UPLOADS]
    names = [f.name for f in current]
    digests = st.session_state.setdefault(DIGESTS, {})
    for name in shown:
        if name not in names:
            store.pop(name, None)
            digests.pop(name, None)
    refused = []
    held = sum(len(b) for n, b in store.items() if n not in names)
    for f in current:
        data = f.getvalue()
        if held + len(data) > MAX_SESSION_UPLOAD_BYTES or len(store) - (f.name in store) >= MAX_SESSION_FILES:
            refused.append(f"{f.name}: not loaded: this session already holds {held / 2**20:.0f} MB of uploads "
                           f"(at most {MAX_SESSION_UPLOAD_BYTES / 2**20:.0f} MB and {MAX_SESSION_FILES} files). "
                           "Remove some files first.")
            store.pop(f.name, None)
            digests.pop(f.name, None)
            continue
        held += len(data)
        store[f.name] = data
        digests[f.name] = (id(data), content_digest(data))
    st.session_state[UPLOAD_REFUSALS] = refused
    st.session_state["_uploader_names"] = names
    _forget_uploads({d for _, d in digests.values()})


def clear_uploads() -> None:
    """Forget every uploaded log and empty the uploader (its key changes)."""
    st.session_state[UPLOADS] = {}
    st.session_state[DIGESTS] = {}
    st.session_state[UPLOAD_REFUSALS] = []
    st.session_state["_uploader_names"] = []
    _forget_uploads(set())
    st.session_state[UPLOADER_GENERATION] = st.session_state.get(UPLOADER_GENERATION, 0) + 1


def library():
    """The run library this server uses (``$TTA_LIBRARY_DB``, else the per-user data folder); opening it
    creates nothing: the file appears with the first run saved.  The audit table names this browser session
    (``web session <id>``, after ``$TTA_LIBRARY_ACTOR`` when a proxy in front of the server sets it)."""
    from core.library import Library, default_actor

    return Library(actor=web_actor(default_actor()))


def web_actor(server: str) -> str:
    """Who the audit table names for this browser session: the server's actor and the session's id."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return f"{server}, web session {ctx.session_id if ctx is not None else '?'}"


def load_library_runs(lib, run_ids) -> list[str]:
    """Load runs of the library into the session (beside uploads and built-in data); return their names."""
    from core.library import RunFilter, library_name

    run_ids = [int(i) for i in run_ids]
    if not run_ids:
        return []
    runs = lib.runs(RunFilter.of(id=run_ids))
    datasets = dict(zip(runs["run_id"].astype(int), runs["dataset"]))
    store = st.session_state.setdefault(LIBRARY_RUNS, {})
    names = []
    for run_id, log in lib.get_many(run_ids):
        name = library_name(run_id, log.source)
        store[name] = replace(log, source=name)
        if datasets.get(run_id):
            st.session_state.setdefault(LIBRARY_DATASETS, {})[name] = datasets[run_id]
        names.append(name)
    return names


def save_uploads_to_library(lib, names, *, tags=(), dataset: str | None = None, progress=None):
    """Add uploaded files to the library as the session reads them (column roles and metadata as edited);
    a file the session cannot read is refused with its message.  Returns ``core.library.AddReport``."""
    from core.library import PendingRun, check_tags, content_hash
    from core.library.sources import parameter_count_of

    tags = check_tags(tags)
    uploads = st.session_state.get(UPLOADS, {})

    def items():
        for name in names:
            try:
                log = loaded_log(name)
            except (LogFormatError, KeyError) as exc:
                yield (name, str(exc) if isinstance(exc, LogFormatError) else f"{name}: no longer uploaded.")
                continue
            yield PendingRun(log, content_hash(uploads[name]), dataset, tags,
                             parameter_count_of(log.meta.model, dataset))

    return lib.add_runs(items(), total=len(names), progress=progress)


def unload_library_runs() -> None:
    """Forget every run loaded from the library (the library itself is untouched)."""
    st.session_state[LIBRARY_RUNS] = {}
    st.session_state[LIBRARY_DATASETS] = {}


def datasets_by_file() -> dict[str, str]:
    """What each run in play trained on, where known: the built-in files' and the library runs' data sets."""
    return {**builtin_datasets_by_file(), **st.session_state.get(LIBRARY_DATASETS, {})}


def store_files(files, *, state_key: str) -> list[str]:
    """Keep uploaded files' bytes in ``st.session_state[state_key]`` (same name: replaced); return names."""
    store = st.session_state.setdefault(state_key, {})
    names = []
    for f in files or []:
        store[f.name] = f.getvalue()
        names.append(f.name)
    return names


# ---------------------------------------------------------------- cached core calls
@st.cache_resource(**SHARED)
def _builtin_bytes(set_key: str) -> tuple[tuple[str, bytes, str], ...]:
    files = ((name, path.read_bytes()) for name, path in builtin_log_files(set_key))
    return tuple((name, data, content_digest(data)) for name, data in files)


#: the batch-scaling run sets a page offers: the built-in ones, then the runs loaded on the Logs page
LOADED_RUNS = "loaded"
BATCH_SOURCES: dict[str, str] = {**{k: v.label for k, v in BATCH_RUN_SETS.items()},
                                 LOADED_RUNS: "Runs loaded on the Logs page (sidebar sets, uploads, library runs)"}


def batch_set_files(key: str) -> tuple[tuple[str, bytes, str], ...]:
    """``(name, bytes, digest)`` of a built-in batch-scaling run set, or of every loaded file (``LOADED_RUNS``)."""
    if key == LOADED_RUNS:
        return tuple((n, b, d) for n, b, d, _ in all_log_files())
    return _batch_set_bytes(key)


@st.cache_resource(**SHARED)
def _batch_study(key: str, digest: str, _files: tuple[tuple[str, bytes], ...], target_acc: float,
                 samples_per_epoch: int | None, _extra: tuple[RunLog, ...] = ()
                 ) -> tuple[BatchStudy, tuple[tuple[str, str], ...]]:
    from core.plan.batch import batch_study  # only the batch-size views pay for core.plan

    read = read_log_files(_files)
    study = batch_study([*read.logs, *_extra], target_acc=target_acc, noise=read.noise,
                        samples_per_epoch=samples_per_epoch, level=DEFAULT_LEVEL)
    return study, read.errors


def load_batch_study(source: str, *, target_acc: float, samples_per_epoch: int | None = None
                     ) -> tuple[BatchStudy | None, tuple[tuple[str, str], ...], str]:
    """The batch-scaling study of a run set (``BATCH_SOURCES``): the study (None without runs), the files
    refused, and a digest of the runs (a cache key for charts).  ``LOADED_RUNS`` includes the runs loaded
    from the library (without gradient statistics: the library keeps the tidy series only)."""
    files = batch_set_files(source)
    extra = tuple(library_logs()) if source == LOADED_RUNS else ()
    digest = "|".join([*(d for _, _, d in files), *(log.fingerprint() for log in extra)])
    if not files and not extra:
        return None, (), digest
    study, errors = _batch_study(source, digest, tuple((n, b) for n, b, _ in files), target_acc, samples_per_epoch,
                                 extra)
    return study, errors, digest


@st.cache_resource(**SHARED)
def _batch_set_bytes(key: str) -> tuple[tuple[str, bytes, str], ...]:
    files = ((name, path.read_bytes()) for name, path in batch_run_files(key))
    return tuple((name, data, content_digest(data)) for name, data in files)


@st.cache_resource(**SHARED)
def _read_builtin(digest: str, _data: bytes, name: str, roles: tuple[tuple[str, str | None], ...] | None,
                  steps_per_epoch: int | None, split: str | None) -> RunLog | LogFormatError:
    """A built-in log (shared by every session: a few known files)."""
    return _read(_data, name, roles, steps_per_epoch, split)


def _read(data: bytes, name: str, roles, steps_per_epoch, split) -> RunLog | LogFormatError:
    """The log, or the error that refused it: a rejected file is read once, not on every rerun."""
    try:
        return read_log(data, name, roles=dict(roles) if roles else None, steps_per_epoch=steps_per_epoch,
                        split=split)
    except LogFormatError as exc:
        return exc


@st.cache_resource(**{**SHARED, "max_entries": 4096})
def _fit(log: RunLog, family: str) -> RunFit:
    """The fitted loss curve of a log (a small result: nothing of the log is kept)."""
    return fit_run(log, family=family)


def _session_memo(name: str, key, compute: Callable, *, max_items: int):
    """``compute()`` remembered in this session (least recently used dropped past ``max_items``).

    What an upload turns into (its parsed log, its analyses) lives in the session that uploaded
    it, not in a cache shared by every session: it goes when the file is removed or the session
    ends, so memory does not grow with every distinct upload of every user.
    """
    memo = st.session_state.setdefault(f"_memo_{name}", OrderedDict())
    if key in memo:
        memo.move_to_end(key)
        return memo[key]
    value = memo[key] = compute()
    while len(memo) > max_items:
        memo.popitem(last=False)
    return value


def _forget_uploads(keep: set[str]) -> None:
    """Drop the session's parsed uploads whose content digest is not in ``keep``."""
    memo = st.session_state.get("_memo_logs", {})
    for key in [k for k in memo if k[0] not in keep]:
        del memo[key]
    st.session_state.pop("_memo_analyses", None)


def _analyse(log: RunLog, target_acc: float, criterion: str, family: str) -> RunAnalysis:
    return _session_memo("analyses", (log.fingerprint(), target_acc, criterion, family),
                         lambda: analyse_run(log, target_acc=target_acc, criterion=criterion, family=family,
                                             fitted=_fit(log, family)), max_items=512)


@st.cache_resource(show_spinner=False)
def shared_fits() -> FitCache:
    """One cache of learning-curve fits for every prediction the server makes (bounded, thread-safe):
    a new upload refits only itself, never the runs every session already has."""
    return FitCache(max_fits=20_000)


@dataclass(frozen=True)
class LoadedRuns:
    """What the loaded files gave: analyses of the readable ones, errors of the others."""

    analyses: tuple[RunAnalysis, ...]
    errors: tuple[tuple[str, str], ...]   # (file name, message)

    @property
    def table(self) -> pd.DataFrame:
        return _fits_table(self.analyses)

    @property
    def logs(self) -> tuple[RunLog, ...]:
        return tuple(a.log for a in self.analyses)

    def get(self, name: str) -> RunAnalysis | None:
        return next((a for a in self.analyses if a.log.source == name), None)


@st.cache_data(**CACHE)
def _fits_table(analyses: tuple[RunAnalysis, ...]) -> pd.DataFrame:
    return fits_table(analyses)


def all_log_files() -> list[tuple[str, bytes, str, str]]:
    """Every file in play: ``(name, bytes, digest, origin)`` with origin "built-in" or "uploaded"."""
    files: list[tuple[str, bytes, str, str]] = []
    for key in st.session_state.get(BUILTIN, []):
        files += [(n, b, d, "built-in") for n, b, d in _builtin_bytes(key)]
    digests = st.session_state.setdefault(DIGESTS, {})
    for n, b in st.session_state.get(UPLOADS, {}).items():
        if digests.get(n, (None,))[0] != id(b):   # the stored bytes object (alive: its id is its own)
            digests[n] = (id(b), content_digest(b))
        files.append((n, b, digests[n][1], "uploaded"))
    return files


def _edit_args(name: str) -> tuple:
    edit = st.session_state.get(EDITS, {}).get(name, {})
    roles = edit.get("roles")
    roles_t = tuple(sorted(roles.items())) if roles else None
    meta = tuple(sorted((k, v) for k, v in edit.items() if k in {"model", "depth", "gpu"}))
    return roles_t, edit.get("steps_per_epoch"), edit.get("split"), meta


def frame_key(frame: pd.DataFrame) -> str:
    """A short digest of a table's content and columns (the cache key of calls that take it unhashed)."""
    h = hashlib.blake2b(digest_size=16)
    h.update(pd.util.hash_pandas_object(frame, index=True).to_numpy().tobytes())
    h.update(repr(list(frame.columns)).encode())
    return h.hexdigest()


def content_digest(data: bytes) -> str:
    """A short hash of a file's bytes (computed once per upload, kept beside the bytes)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _log_of(name: str, data: bytes, digest: str, origin: str) -> RunLog | LogFormatError:
    roles, spe, split, meta = _edit_args(name)
    if origin == "built-in":
        log = _read_builtin(digest, data, name, roles, spe, split)
    else:
        log = _session_memo("logs", (digest, name, roles, spe, split),
                            lambda: _read(data, name, roles, spe, split), max_items=MAX_SESSION_FILES)
    if isinstance(log, RunLog) and meta:
        log = log.with_meta(**dict(meta))
    return log


def load_logs() -> tuple[list[RunLog], list[tuple[str, str]]]:
    """Every readable log in play (with the user's edits) and ``(file, message)`` for the others."""
    logs, errors = [], []
    for name, data, digest, origin in all_log_files():
        log = _log_of(name, data, digest, origin)
        if isinstance(log, LogFormatError):
            errors.append((name, str(log)))
        else:
            logs.append(log)
    logs += [_library_log(name) for name in st.session_state.get(LIBRARY_RUNS, {})]
    return logs, errors


def library_logs() -> list[RunLog]:
    """The session's runs from the library, with the user's metadata edits."""
    return [_library_log(name) for name in st.session_state.get(LIBRARY_RUNS, {})]


def is_library_run(name: str) -> bool:
    """Whether ``name`` is a run loaded from the library (its column roles were fixed when it was saved)."""
    return name in st.session_state.get(LIBRARY_RUNS, {})


def _library_log(name: str) -> RunLog:
    log = st.session_state[LIBRARY_RUNS][name]
    _roles, _spe, split, meta = _edit_args(name)
    changes = dict(meta)
    if split:
        changes["split"] = split
    return log.with_meta(**changes) if changes else log


def load_runs(*, target_acc: float, criterion: str = "epoch", family: str = "optimus") -> LoadedRuns:
    """Read and analyse every file in play; a bad file is reported, never fatal."""
    logs, errors = load_logs()
    return LoadedRuns(tuple(_analyse(log, target_acc, criterion, family) for log in logs), tuple(errors))


def loaded_log(name: str) -> RunLog:
    """The RunLog of one loaded file (built-in, uploaded or from the library) with its edits.

    Raises ``LogFormatError`` when the file is refused and ``KeyError`` when none has that name.
    """
    for n, data, digest, origin in all_log_files():
        if n == name:
            log = _log_of(name, data, digest, origin)
            if isinstance(log, LogFormatError):
                raise log
            return log
    if is_library_run(name):
        return _library_log(name)
    raise KeyError(name)


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


# ---------------------------------------------------------------- the page boundary
_LOG = logging.getLogger("planner.pages")


def guarded(where: str) -> Callable:
    """Decorator: an unexpected error in a page (or a fragment) becomes one line on the page.

    Every expected problem is a ``core`` error the page already shows; anything else is a bug,
    and a user should see what failed in one sentence, never a traceback (the traceback goes
    to the server's log). Streamlit's own control flow (``st.stop``, ``st.rerun``) is a
    ``BaseException`` and passes through.
    """
    def wrap(func: Callable) -> Callable:
        @functools.wraps(func)
        def run(*args, **kwargs):
            try:
                return func(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - the boundary: nothing below may show a traceback
                _LOG.exception("%s failed", where)
                detail = " ".join(str(exc).split()) or type(exc).__name__
                st.error(plain(f"{where} could not finish: {detail[:300]}. The details are in the server log."),
                         icon=":material/error:")
                return None
        return run
    return wrap


# ---------------------------------------------------------------- rendering helpers
def show_errors(errors) -> None:
    """One ``st.error`` per rejected file (the message starts with the file name)."""
    for _name, message in errors:
        st.error(plain(message), icon=":material/error:")


@st.cache_resource(**SHARED)
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
