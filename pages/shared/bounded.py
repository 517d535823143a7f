"""Caches of the pages bounded in bytes: drop-in for ``st.cache_resource`` / ``st.cache_data`` where what a cache
holds depends on what users upload, edit or load (issue 35).

Part of ``pages/shared`` (imported by the pages directly).  Nothing here computes a number; it only
caches.  Every function decorated here keeps its results in ONE cache per server process
(``core.serving.ByteBoundedCache``, thread-safe) bounded by the shared caches' share of ``$TTA_SERVER_MEMORY_MB``
(``core.serving.memory_shares``): least recently used results go first, whatever function made them.  Arguments
are hashed as Streamlit hashes them (same ``hash_funcs``, e.g. a ``RunLog`` by its fingerprint; a parameter named
``_x`` is not hashed); ``max_entries`` and ``ttl`` are accepted and ignored (the bound is in bytes).  The
sessions' memos (``pages.shared.cached``) share one pool, the derived share, server-wide.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import inspect
import threading
from collections.abc import Callable, Hashable
from contextlib import nullcontext

import streamlit as st
from streamlit.runtime.caching.cache_type import CacheType
from streamlit.runtime.caching.hashing import update_hash
from streamlit.runtime.scriptrunner import get_script_run_ctx

from core.serving import ByteBoundedCache, BytePool, memory_shares, server_memory_bytes


@st.cache_resource(show_spinner=False)
def shared_cache() -> ByteBoundedCache:
    """The one byte-bounded cache of every ``bounded_*`` function of this server."""
    return ByteBoundedCache(memory_shares(server_memory_bytes()).shared_caches)


@st.cache_resource(show_spinner=False)
def derived_pool() -> BytePool:
    """The bound shared by every session's memo (what uploads turn into) on this server."""
    return BytePool(memory_shares(server_memory_bytes()).derived)


class SessionUse:
    """Which sessions used each shared result: a result goes when the last session that used it has ended.

    Shared results are keyed by content, so sessions that bring the same data share them; but what one
    session's upload turned into must not outlive every session that used it (issue 35: memory back to the
    idle server's once sessions end).  Thread-safe.

    >>> use = SessionUse()
    >>> use.used("fit-a", "s1"); use.used("fit-a", "s2"); use.used("fit-b", "s1")
    >>> use.ended("s1")
    ['fit-b']
    >>> use.ended("s2")
    ['fit-a']
    """

    def __init__(self) -> None:
        self._users: dict[Hashable, set[str]] = {}
        self._lock = threading.Lock()

    def used(self, key: Hashable, session_id: str) -> None:
        with self._lock:
            self._users.setdefault(key, set()).add(session_id)

    def ended(self, session_id: str) -> list[Hashable]:
        """Forget ``session_id``; the keys no remaining session used (to drop)."""
        with self._lock:
            gone = []
            for key, users in list(self._users.items()):
                users.discard(session_id)
                if not users:
                    del self._users[key]
                    gone.append(key)
            return gone


@st.cache_resource(show_spinner=False)
def session_use() -> SessionUse:
    """The sessions that used each result of the ``bounded_*`` functions of this server."""
    return SessionUse()


def release_session_results(session_id: str) -> None:
    """Drop the shared results that only ``session_id``, now ended, still used."""
    cache = shared_cache()
    for key in session_use().ended(session_id):
        cache.pop(key)


def clear_bounded_caches() -> None:
    """Forget every result of the ``bounded_*`` functions (as ``st.cache_data.clear()`` does for Streamlit's)."""
    shared_cache().clear()


def _decorator(kind: CacheType, show_spinner: bool | str = False, hash_funcs: dict | None = None,
               **_streamlit_only) -> Callable[[Callable], Callable]:
    def wrap(func: Callable) -> Callable:
        signature = inspect.signature(func)
        name = f"{func.__code__.co_filename}:{func.__qualname__}"   # a page script runs anew: its name stays
        spinner = show_spinner if isinstance(show_spinner, str) else (
            f"Running {func.__name__}(…)." if show_spinner else None)

        @functools.wraps(func)
        def call(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            hasher = hashlib.md5(usedforsecurity=False)
            for arg, value in bound.arguments.items():
                if not arg.startswith("_"):
                    update_hash((arg, value), hasher, kind, hash_funcs=hash_funcs)
            key, cache, missing = (name, hasher.hexdigest()), shared_cache(), object()
            value = cache.get(key, missing)
            if value is missing:
                with st.spinner(spinner) if spinner else nullcontext():
                    value = func(*args, **kwargs)
                cache.put(key, value)
            if (ctx := get_script_run_ctx(suppress_warning=True)) is not None:
                session_use().used(key, ctx.session_id)
            if kind is CacheType.DATA and not isinstance(value, BaseException):   # an error is not changed
                return copy.deepcopy(value)                                        # cache_data: a copy per call
            return value

        call.clear = lambda: shared_cache().discard_if(lambda k: k[0] == name)
        return call
    return wrap


def bounded_resource(**options) -> Callable[[Callable], Callable]:
    """``st.cache_resource(**options)`` bounded in bytes: the cached object itself (frozen results only)."""
    return _decorator(CacheType.RESOURCE, **options)


def bounded_data(**options) -> Callable[[Callable], Callable]:
    """``st.cache_data(**options)`` bounded in bytes: a copy of the cached value on every call."""
    return _decorator(CacheType.DATA, **options)
