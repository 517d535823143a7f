"""Session state shared by the pages: the keys, their starting values, and choices that stay chosen.

Part of ``pages/shared`` (re-exported by ``pages.shared.common``).  A choice the user makes on one
page stays chosen when they visit another page and come back: a page widget that holds a choice is
created with ``**KEPT`` (Streamlit's ``persist_state="session"``), and values the pages share (the
target, the built-in sets) live under keys of their own.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import streamlit as st

from core.datasets import BUILTIN_LOG_SETS
from core.errors import InputError
from core.logs import RunLog
from core.runs import RunAnalysis
from core.serving import (
    MAX_SESSIONS_ENV_VAR,
    SessionRegistry,
    make_freed_memory_returnable,
    max_sessions,
    memory_shares,
    return_freed_memory,
    server_memory_bytes,
    session_admitted,
)
from pages.shared.bounded import release_session_results

# ---------------------------------------------------------------- session state keys
UPLOADS = "log_files"          # dict[name, bytes]: uploaded logs, kept across pages
DIGESTS = "log_digests"        # dict[name, (id of the bytes, content hash)]: each upload hashed once
EDITS = "run_edits"            # dict[name, dict]: user edits of metadata / roles per file
BUILTIN = "builtin_sets"       # list of BUILTIN_LOG_SETS keys shown
#: the built-in sets a new session shows
DEFAULT_BUILTIN_SETS = ("mnist1d",)
BUILTIN_WIDGET = "builtin_sets_widget"
TARGET = "target"              # the Target shared by the pages (None: the loaded runs' default)
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
#: every cache: at most this many entries, each kept at most an hour (Streamlit's caches: the built-in data's);
#: the caches of what users bring take these too and are bounded in bytes instead (``pages.shared.bounded``)
CACHE = dict(show_spinner=False, max_entries=256, ttl=3600, hash_funcs=HASH_FUNCS)
#: frozen results shared as they are (never mutated by a page); small ones only: what an upload
#: turns into stays in its session (``_session_memo``)
SHARED = dict(CACHE, max_entries=64, ttl=600)


#: keyword arguments of a widget whose choice survives page switches (Streamlit drops a widget's
#: value when its page is not shown, unless the widget persists it for the session)
KEPT = dict(persist_state="session")
#: the most files one session may hold (uploads; each parsed log is remembered per file)
MAX_SESSION_FILES = 200


def init_state() -> None:
    """Create the shared session keys once (idempotent)."""
    st.session_state.setdefault(UPLOADS, {})
    st.session_state.setdefault(EDITS, {})
    st.session_state.setdefault(BUILTIN, list(DEFAULT_BUILTIN_SETS))
    st.session_state.setdefault(TARGET, None)
    st.session_state.setdefault(SPEED_UPLOADS, {})
    st.session_state.setdefault(FAMILY, "auto")
    st.session_state.setdefault(ROUTE, "accuracy")
    st.session_state.setdefault(LIBRARY_RUNS, {})
    st.session_state.setdefault(LIBRARY_DATASETS, {})



@st.cache_resource(show_spinner=False)
def _server_sessions() -> tuple[dict[str, None], threading.Lock]:
    """The server's sessions in order of first arrival (one registry per server process), and its lock."""
    return {}, threading.Lock()


def admit_session() -> None:
    """Stop this run with a message when the server already serves its bound of active sessions
    (``core.serving``: ``$TTA_MAX_SESSIONS``); sessions that have closed leave the registry first."""
    from streamlit.runtime import Runtime
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or not Runtime.exists():          # a bare script run or AppTest: no server to bound
        return
    try:
        limit = max_sessions()
        server_memory_bytes()                        # a bad setting is named on the page, not at the first upload
    except InputError as exc:
        st.error(str(exc), icon=":material/error:")
        st.stop()
    runtime = Runtime.instance()
    sessions, lock = _server_sessions()
    with lock:
        sessions.setdefault(ctx.session_id, None)
        for sid in [s for s in sessions if not runtime.is_active_session(s)]:
            del sessions[sid]
        admitted = session_admitted(ctx.session_id, list(sessions), limit)
    _track_session(ctx, runtime)
    if not admitted:
        st.warning(f"This server already serves its {limit} sessions ({MAX_SESSIONS_ENV_VAR}); nothing was "
                   "loaded for this one. Reload the page in a minute, once another session has closed.",
                   icon=":material/hourglass_top:")
        st.stop()


#: how often the server looks for sessions that have ended (seconds)
SWEEP_EVERY_S = 2.0


@st.cache_resource(show_spinner=False)
def session_registry() -> SessionRegistry:
    """The server's sessions and how to release each (one per server process), swept by a daemon thread: a
    session disconnected for ``server.disconnectedSessionTTL`` seconds (Streamlit's own reconnect window) loses
    its state and uploaded files, and the freed memory goes back to the system (``core.serving``)."""
    from streamlit.runtime import Runtime

    make_freed_memory_returnable()
    registry = SessionRegistry(grace_s=float(st.get_option("server.disconnectedSessionTTL")))
    runtime = Runtime.instance()

    def sweep_forever() -> None:
        while True:
            time.sleep(SWEEP_EVERY_S)
            if registry.sweep(runtime.is_active_session, now=time.monotonic()):
                return_freed_memory()
    threading.Thread(target=sweep_forever, name="tta-session-sweeper", daemon=True).start()
    return registry


def _track_session(ctx, runtime) -> None:
    """Register this session so that its state and uploaded files are released once it has ended."""
    state, session_id, files = ctx.session_state, ctx.session_id, runtime.uploaded_file_mgr

    def release() -> None:
        _clear_session_state(state)
        files.remove_session_files(session_id)
        release_session_results(session_id)

    session_registry().track(session_id, release)


def _clear_session_state(state) -> None:
    """Empty a session's whole state from another thread: values, widgets and the widgets' callbacks with what
    they hold (Streamlit 1.67's ``SessionState.clear`` behind its thread-safe wrapper); failing that, every key."""
    inner, lock = vars(state).get("_state"), vars(state).get("_lock")
    if inner is not None and lock is not None and callable(getattr(inner, "clear", None)):
        with lock:
            inner.clear()
        return
    for key in list(state.filtered_state):
        try:
            del state[key]
        except KeyError:                           # gone meanwhile
            pass


def upload_bytes_left(session_id: str | None) -> int:
    """Bytes of uploads this server still takes from ``session_id`` (the uploads' share of
    ``$TTA_SERVER_MEMORY_MB``, ``core.serving.memory_shares``, less what the other sessions hold)."""
    budget = memory_shares(server_memory_bytes()).uploads
    return budget - (session_registry().held_by_others(session_id) if session_id else 0)


def report_upload_bytes(session_id: str | None, nbytes: int) -> None:
    """Tell the server's registry how many upload bytes ``session_id`` holds."""
    if session_id:
        session_registry().set_held(session_id, nbytes)


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
