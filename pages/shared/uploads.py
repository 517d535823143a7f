"""Uploads and the run library in a session: the Logs uploader's files, the session's caps, runs
loaded from and saved to the library.

Part of ``pages/shared`` (re-exported by ``pages.shared.common``).
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from core.errors import LogFormatError
from core.logs import content_digest, name_uploads
from core.serving import MEMORY_ENV_VAR
from pages.shared.cached import forget_uploads, loaded_log
from pages.shared.state import (
    DIGESTS,
    LIBRARY_DATASETS,
    LIBRARY_RUNS,
    MAX_SESSION_FILES,
    UPLOADS,
    init_state,
    report_upload_bytes,
    upload_bytes_left,
)

UPLOADER = "logs_upload"       # the Logs page's uploader; its key carries a generation number
UPLOAD_REFUSALS = "upload_refusals"   # messages about uploads the session cap refused
UPLOAD_NOTES = "upload_notes"   # what the last change of the uploader did with names (core.logs.name_uploads)
#: the uploader's files as the stored uploads know them: file_id -> (name loaded as or None, content digest)
_SHOWN = "_uploader_files"
#: what one session may hold: uploaded bytes and files (a user gets a message past them)
MAX_SESSION_UPLOAD_BYTES = 400 * 2**20
UPLOADER_GENERATION = "logs_upload_generation"


def uploader_key() -> str:
    """The Logs page uploader's current key (a new key empties the widget).

    Call it when the uploader is drawn: a widget emptied by a page switch (Streamlit clears a
    page's widgets when another page is shown) forgets which files it showed, so a later change
    of the widget never removes files the user did not remove.
    """
    key = f"{UPLOADER}_{st.session_state.setdefault(UPLOADER_GENERATION, 0)}"
    if not st.session_state.get(key):
        st.session_state[_SHOWN] = {}
    return key


def sync_uploads() -> None:
    """``on_change`` of the Logs uploader: the stored uploads follow the widget, file by file.

    Each chip of the widget is one uploaded file (its ``file_id``): ✕ on a chip removes the run that file was
    loaded as, and only it.  New files are named by ``core.logs.name_uploads``: two of one name and different
    bytes are two runs, the same bytes twice are one; what it decided is kept for the page to say
    (``UPLOAD_NOTES``).  Past the session's caps a file is refused with a message (``UPLOAD_REFUSALS``).
    """
    init_state()
    current = st.session_state.get(uploader_key()) or []
    shown: dict[str, tuple[str | None, str]] = st.session_state.setdefault(_SHOWN, {})
    store = st.session_state[UPLOADS]
    digests = st.session_state.setdefault(DIGESTS, {})
    ids = {f.file_id for f in current}
    for file_id in [i for i in shown if i not in ids]:            # ✕ on a chip: that file's run goes
        name, _ = shown.pop(file_id)
        if name is not None:
            store.pop(name, None)
            digests.pop(name, None)
    held = {n: _digest(n, b, digests) for n, b in store.items()}
    new = [f for f in current if f.file_id not in shown
           or (shown[f.file_id][0] is None and shown[f.file_id][1] not in held.values())]
    data = [f.getvalue() for f in new]
    plan = name_uploads([(f.name, b) for f, b in zip(new, data)], held=held)
    refused = []
    size = sum(len(b) for b in store.values())
    session_id = _session_id()
    server_left = upload_bytes_left(session_id)
    for f, b, name in zip(new, data, plan.names):
        if name is not None and (size + len(b) > MAX_SESSION_UPLOAD_BYTES or len(store) >= MAX_SESSION_FILES):
            refused.append(f"{f.name}: not loaded: this session already holds {size / 2**20:.0f} MB of uploads "
                           f"(at most {MAX_SESSION_UPLOAD_BYTES / 2**20:.0f} MB and {MAX_SESSION_FILES} files). "
                           "Remove some files first.")
            shown.pop(f.file_id, None)                             # tried again at the widget's next change
            continue
        if name is not None and size + len(b) > server_left:
            refused.append(f"{f.name}: not loaded: the server's sessions already hold their share of its memory "
                           f"for uploads ({MEMORY_ENV_VAR}; {max(server_left - size, 0) / 2**20:.0f} MB left for "
                           "this session). Remove some files, or try again once other sessions have closed.")
            shown.pop(f.file_id, None)
            continue
        if name is not None:
            size += len(b)
            store[name] = b
            digests[name] = (id(b), content_digest(b))
        shown[f.file_id] = (name, content_digest(b))
    st.session_state[UPLOAD_REFUSALS] = refused
    st.session_state[UPLOAD_NOTES] = list(plan.notes)
    report_upload_bytes(session_id, size)
    forget_uploads({d for _, d in digests.values()})


def _session_id() -> str | None:
    """This browser session's id (None outside a server: AppTest or a bare script)."""
    from streamlit.runtime import Runtime
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None and Runtime.exists() else None


def _digest(name: str, data: bytes, digests: dict) -> str:
    """The content digest of a stored upload (computed once, kept beside its bytes in ``DIGESTS``)."""
    if digests.get(name, (None,))[0] != id(data):
        digests[name] = (id(data), content_digest(data))
    return digests[name][1]


def clear_uploads() -> None:
    """Forget every uploaded log and empty the uploader (its key changes)."""
    st.session_state[UPLOADS] = {}
    st.session_state[DIGESTS] = {}
    st.session_state[UPLOAD_REFUSALS] = []
    st.session_state[UPLOAD_NOTES] = []
    st.session_state[_SHOWN] = {}
    forget_uploads(set())
    report_upload_bytes(_session_id(), 0)
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
    from core.library import PendingRun, check_tags, content_hash, parameter_count_of

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


def store_files(files, *, state_key: str) -> list[str]:
    """Keep uploaded files' bytes in ``st.session_state[state_key]`` (same name: replaced); return names."""
    store = st.session_state.setdefault(state_key, {})
    names = []
    for f in files or []:
        store[f.name] = f.getvalue()
        names.append(f.name)
    return names

