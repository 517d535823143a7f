"""Cached calls into ``core`` shared by the pages: read the logs in play, fit and analyse them.

Part of ``pages/shared`` (re-exported by ``pages.shared.common``).  Nothing here computes a
number: every value comes from ``core``; this module only caches and stores.

Caching: a ``RunLog`` or ``RunAnalysis`` argument is hashed by its fingerprint (``HASH_FUNCS``),
so cached calls take runs as they are.  Runs, fits and analyses are frozen results, cached once
per server (no copy per rerun); tables are cached as data.  Every cache of what users bring is
bounded in bytes (``pages.shared.bounded``: one cache per server, the shared caches' share of
``$TTA_SERVER_MEMORY_MB``), so memory does not grow with every distinct upload.  The built-in
data is read, fitted (from the fits stored with it, ``data/builtin_fits.json``) and analysed once
per server and shared by every session (``BUILTIN_SHARED``: bounded by the data, no time limit).
What an upload turns into lives in the session that uploaded it (``_session_memo``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from core.datasets import BUILTIN_LOG_SETS, builtin_datasets_by_file, builtin_log_files, fitted_run, is_builtin_log
from core.errors import LogFormatError
from core.logs import MIN_FIT_POINTS, RunLog, content_digest, read_log, read_log_file
from core.runs import RunAnalysis, RunFit, analyse_run, fit_metric, fits_table
from core.serving import ByteBoundedCache
from core.tables import frame_digest
from core.targets import Target, target_for
from pages.shared.bounded import bounded_data, bounded_resource, derived_pool
from pages.shared.state import (
    BUILTIN,
    CACHE,
    DIGESTS,
    EDITS,
    HASH_FUNCS,
    LIBRARY_DATASETS,
    LIBRARY_RUNS,
    SHARED,
    UPLOADS,
)

if TYPE_CHECKING:
    from core.prediction import FitCache


#: the built-in data's caches: read, fitted and analysed once per server and shared read-only by every session,
#: with no time limit (a few known files, each a few MB at most: the bound is the data, not the clock); entries
#: sized for every built-in log under a few targets, criteria and edits
BUILTIN_SHARED = dict(show_spinner=False, hash_funcs=HASH_FUNCS, max_entries=2048)


@st.cache_resource(**{**BUILTIN_SHARED, "max_entries": 64})
def _builtin_bytes(set_key: str) -> tuple[tuple[str, bytes, str], ...]:
    files = ((name, path.read_bytes()) for name, path in builtin_log_files(set_key))
    return tuple((name, data, content_digest(data)) for name, data in files)


@st.cache_resource(**{**BUILTIN_SHARED, "max_entries": 512})
def _read_builtin(digest: str, _data: bytes, name: str, roles: tuple[tuple[str, str | None], ...] | None,
                  steps_per_epoch: int | None, split: str | None) -> RunLog | LogFormatError:
    """A built-in log (shared by every session: a few known files), read from its file so that an MLPerf
    log finds its system description (GPUs, accelerator) beside it."""
    path = _builtin_paths().get(name)
    if path is None:
        return _read(_data, name, roles, steps_per_epoch, split)
    try:
        return read_log_file(path, source=name, roles=dict(roles) if roles else None,
                             steps_per_epoch=steps_per_epoch, split=split, min_points=MIN_FIT_POINTS)
    except LogFormatError as exc:
        return exc


@st.cache_resource(show_spinner=False)
def _builtin_paths() -> dict[str, Path]:
    """Every built-in log's file, by the name the pages show."""
    return {name: path for key in BUILTIN_LOG_SETS for name, path in builtin_log_files(key)}


def warm_builtin(set_keys: tuple[str, ...]) -> int:
    """Read and analyse the built-in sets ``set_keys`` as a first visit does (each run's own target, the epoch
    criterion, the default family) into the caches every session shares; the number of runs analysed.  The
    server's warm-up (``serve.py``) calls it before anyone visits."""
    logs = [log for key in set_keys for log in builtin_set_logs(key)]
    return len([_analyse(log, None, "epoch", "optimus") for log in logs])


def builtin_set_logs(set_key: str) -> list[RunLog]:
    """The logs of one built-in set as they are (a section's own example when nothing fitting is loaded)."""
    logs = [_read_builtin(digest, data, name, None, None, None) for name, data, digest in _builtin_bytes(set_key)]
    return [log for log in logs if isinstance(log, RunLog)]


def _read(data: bytes, name: str, roles, steps_per_epoch, split) -> RunLog | LogFormatError:
    """The log, or the error that refused it: a rejected file is read once, not on every rerun."""
    try:
        return read_log(data, name, roles=dict(roles) if roles else None, steps_per_epoch=steps_per_epoch,
                        split=split, min_points=MIN_FIT_POINTS)    # a run too short to fit: refused by name
    except LogFormatError as exc:
        return exc


@bounded_resource(**SHARED)
def _fit(log: RunLog, family: str, metric: str = "loss") -> RunFit:
    """The fitted curve of a log's ``metric`` (a small result: nothing of the log is kept); a built-in log's
    comes from the fits stored with the data (``core.datasets.fitted_run``)."""
    return fitted_run(log, family=family, metric=metric)


def _session_memo(name: str, key, compute: Callable):
    """``compute()`` remembered in this session (least recently used dropped past the session's byte bound).

    What an upload turns into (its parsed log, its analyses) lives in the session that uploaded
    it, not in a cache shared by every session: it goes when the file is removed or the session
    ends, so memory does not grow with every distinct upload of every user.  Every session's memos together
    hold at most the derived share of ``$TTA_SERVER_MEMORY_MB`` (one ``core.serving.BytePool`` per server:
    past it the least recently used entry of any session goes).
    """
    memo = st.session_state.get(f"_memo_{name}")
    if not isinstance(memo, ByteBoundedCache):
        pool = derived_pool()
        memo = st.session_state[f"_memo_{name}"] = ByteBoundedCache(pool.max_bytes, pool=pool)
    return memo.get_or_compute(key, compute)


def forget_uploads(keep: set[str]) -> None:
    """Drop the session's parsed uploads whose content digest is not in ``keep``."""
    memo = st.session_state.get("_memo_logs")
    if isinstance(memo, ByteBoundedCache):
        memo.discard_if(lambda k: k[0] not in keep)
    st.session_state.pop("_memo_analyses", None)


@st.cache_resource(**BUILTIN_SHARED)
def _builtin_analysis(log: RunLog, target: Target | None, criterion: str, family: str) -> RunAnalysis:
    """A built-in log's analysis, made once per server and shared by every session (read-only: frozen)."""
    return analyse_run(log, target=target, criterion=criterion, family=family,
                       fitted=_fit(log, family, fit_metric(log, target_for(log, target))))


def _analyse(log: RunLog, target: Target | None, criterion: str, family: str) -> RunAnalysis:
    if is_builtin_log(log):       # the built-in data as shipped: one analysis per server, not per session
        return _builtin_analysis(log, target, criterion, family)
    metric = fit_metric(log, target_for(log, target))
    return _session_memo("analyses", (log.fingerprint(), target, criterion, family),
                         lambda: analyse_run(log, target=target, criterion=criterion, family=family,
                                             fitted=_fit(log, family, metric)))


@st.cache_resource(show_spinner=False)
def shared_fits() -> FitCache:
    """One cache of learning-curve fits for every prediction the server makes (bounded, thread-safe):
    a new upload refits only itself, never the runs every session already has."""
    # imported here only: core.prediction (scipy.stats, scikit-learn) is for the pages that predict, not
    # for a first visit to the Logs page (docs/cold_start.md)
    from core.prediction import FitCache

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


@bounded_data(**CACHE)
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
    return frame_digest(frame)


def _log_of(name: str, data: bytes, digest: str, origin: str) -> RunLog | LogFormatError:
    roles, spe, split, meta = _edit_args(name)
    if origin == "built-in":
        log = _read_builtin(digest, data, name, roles, spe, split)
    else:
        log = _session_memo("logs", (digest, name, roles, spe, split),
                            lambda: _read(data, name, roles, spe, split))
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


def load_runs(*, target: Target | None = None, criterion: str = "epoch", family: str = "optimus") -> LoadedRuns:
    """Read and analyse every file in play; a bad file is reported, never fatal.

    ``target``: the user's, for every run; None: each run's own declared target, else ``acc>=0.92``
    (``core.targets.target_for``)."""
    logs, errors = load_logs()
    return LoadedRuns(tuple(_analyse(log, target, criterion, family) for log in logs), tuple(errors))


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


def datasets_by_file() -> dict[str, str]:
    """What each run in play trained on, where known: the built-in files' and the library runs' data sets."""
    return {**builtin_datasets_by_file(), **st.session_state.get(LIBRARY_DATASETS, {})}
