"""Settings of a dashboard server that the pages apply: how many browser sessions one server serves at once, and
how much memory what they upload may take.

Streamlit keeps every session (its uploads, parsed logs and cached results) in the server's memory, and one
server process has one Python interpreter: past a few dozen active sessions each gets slower and the memory
grows with them.  ``$TTA_MAX_SESSIONS`` bounds the sessions a server admits (default
:data:`DEFAULT_MAX_SESSIONS`; ``0`` for no bound).  Sessions are admitted in the order they first arrived; one
over the bound is told so and waits (its page says to reload) until an earlier one closes.  Several servers
behind a load balancer share a PostgreSQL library (``docs/library.md``).

Memory (issue 35): ``$TTA_SERVER_MEMORY_MB`` is the user data one server holds (:func:`server_memory_bytes`);
caches of what uploads turn into are bounded in bytes (:class:`ByteBoundedCache`); a session that has ended is
released (:class:`SessionRegistry`) and the freed memory handed back to the system (:func:`return_freed_memory`).
"""

from __future__ import annotations

import ctypes
import dataclasses
import gc
import os
import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence

import numpy as np
import pandas as pd

from core.errors import InputError

MAX_SESSIONS_ENV_VAR = "TTA_MAX_SESSIONS"
#: sessions one server admits unless ``$TTA_MAX_SESSIONS`` says otherwise
DEFAULT_MAX_SESSIONS = 32


def max_sessions() -> int:
    """The bound on active sessions per server: ``$TTA_MAX_SESSIONS`` (0: none), else :data:`DEFAULT_MAX_SESSIONS`.

    >>> os.environ.pop(MAX_SESSIONS_ENV_VAR, None) and None
    >>> max_sessions()
    32
    """
    text = os.environ.get(MAX_SESSIONS_ENV_VAR, "").strip()
    if not text:
        return DEFAULT_MAX_SESSIONS
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise InputError(f"{MAX_SESSIONS_ENV_VAR}: expected a whole number of sessions >= 0 (0: no bound); got "
                         f"{text!r}. Unset it for {DEFAULT_MAX_SESSIONS}.")
    return value


def session_admitted(session_id: str, sessions: Sequence[str], limit: int) -> bool:
    """Whether ``session_id`` is among the first ``limit`` of the server's active ``sessions`` (in order of first
    arrival); every session when ``limit`` is 0.

    >>> session_admitted("c", ["a", "b", "c"], 2), session_admitted("b", ["a", "b", "c"], 2)
    (False, True)
    >>> session_admitted("c", ["a", "b", "c"], 0)
    True
    """
    if limit == 0:
        return True
    return session_id in list(sessions)[:limit]


# ---------------------------------------------------------------- memory: the server's total, caches bounded in bytes
MEMORY_ENV_VAR = "TTA_SERVER_MEMORY_MB"
#: megabytes of user data (uploads and what they turn into) one server holds unless ``$TTA_SERVER_MEMORY_MB`` says
#: otherwise
DEFAULT_SERVER_MEMORY_MB = 2048
#: the smallest total accepted: below it one upload of the largest size a page takes would not fit
MIN_SERVER_MEMORY_MB = 256
#: shares of the total: the uploads' bytes (every session's together), what the sessions derive from them (parsed
#: logs, analyses: every session's memos together, :class:`BytePool`), and the caches the pages share (results
#: keyed by their inputs); they add up to 1, so the three together stay within the total
UPLOAD_SHARE, DERIVED_SHARE, SHARED_CACHE_SHARE = 0.4, 0.4, 0.2


@dataclasses.dataclass(frozen=True)
class MemoryShares:
    """How one server's total of user data is split (bytes): uploads, session memos, shared caches."""

    uploads: int
    derived: int
    shared_caches: int

    @property
    def total(self) -> int:
        return self.uploads + self.derived + self.shared_caches


def memory_shares(total_bytes: int) -> MemoryShares:
    """The server's total split into its fixed shares (whole bytes, never more than the total together).

    >>> memory_shares(1000)
    MemoryShares(uploads=400, derived=400, shared_caches=200)
    >>> memory_shares(2048 * 2**20).total <= 2048 * 2**20
    True
    """
    uploads, derived = int(total_bytes * UPLOAD_SHARE), int(total_bytes * DERIVED_SHARE)
    return MemoryShares(uploads, derived, min(int(total_bytes * SHARED_CACHE_SHARE), total_bytes - uploads - derived))


def server_memory_bytes() -> int:
    """The bytes of user data one server holds: ``$TTA_SERVER_MEMORY_MB`` megabytes, else
    :data:`DEFAULT_SERVER_MEMORY_MB`.

    >>> os.environ[MEMORY_ENV_VAR] = "512"
    >>> server_memory_bytes() == 512 * 2**20
    True
    >>> os.environ[MEMORY_ENV_VAR] = "lots"
    >>> server_memory_bytes()
    Traceback (most recent call last):
    ...
    core.errors.InputError: TTA_SERVER_MEMORY_MB: expected a whole number of megabytes >= 256; got 'lots'. ...
    >>> del os.environ[MEMORY_ENV_VAR]
    """
    text = os.environ.get(MEMORY_ENV_VAR, "").strip()
    if not text:
        return DEFAULT_SERVER_MEMORY_MB * 2**20
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < MIN_SERVER_MEMORY_MB:
        raise InputError(f"{MEMORY_ENV_VAR}: expected a whole number of megabytes >= {MIN_SERVER_MEMORY_MB}; got "
                         f"{text!r}. Unset it for {DEFAULT_SERVER_MEMORY_MB}.")
    return value * 2**20


def size_of(value, _seen: set[int] | None = None) -> int:
    """Bytes a value holds, counted deeply: arrays by their buffers, frames by pandas' deep memory usage,
    containers and dataclasses by their parts (each object once).

    >>> size_of(b"x" * 1000) >= 1000, size_of(np.zeros(1000)) >= 8000
    (True, True)
    >>> size_of([np.zeros(1000)] * 3) < 2 * 8000           # one array three times is counted once
    True
    """
    seen = set() if _seen is None else _seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    if isinstance(value, (bytes, bytearray, memoryview)):
        return sys.getsizeof(value)
    if isinstance(value, np.ndarray):
        return value.nbytes + 112
    if isinstance(value, (pd.DataFrame, pd.Series, pd.Index)):
        usage = value.memory_usage(deep=True, index=True) if not isinstance(value, pd.Index) else \
            value.memory_usage(deep=True)
        return int(np.sum(usage))
    if isinstance(value, dict):
        return sys.getsizeof(value) + sum(size_of(k, seen) + size_of(v, seen) for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return sys.getsizeof(value) + sum(size_of(v, seen) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name, None) for f in dataclasses.fields(value)}
        return sys.getsizeof(value) + size_of(fields, seen)
    return sys.getsizeof(value)


class BytePool:
    """One bound in bytes shared by several :class:`ByteBoundedCache` (e.g. every session's memo): past it the
    least recently used entry of any member goes.  A member that is garbage-collected leaves the pool with its
    entries (a session's state cleared when it ends frees its share at once).

    >>> pool = BytePool(max_bytes=20_000)
    >>> a, b = ByteBoundedCache(10**6, pool=pool), ByteBoundedCache(10**6, pool=pool)
    >>> _ = a.get_or_compute(1, lambda: np.zeros(1000)); _ = b.get_or_compute(2, lambda: np.zeros(1000))
    >>> _ = b.get_or_compute(3, lambda: np.zeros(1000))    # three of about 8 kB: a's, the oldest, goes
    >>> len(a), len(b), pool.nbytes <= 20_000
    (0, 2, True)
    >>> del b; pool.nbytes
    0
    """

    def __init__(self, max_bytes: int) -> None:
        if max_bytes <= 0:
            raise InputError(f"BytePool: expected max_bytes > 0; got {max_bytes}.")
        self.max_bytes = int(max_bytes)
        self.lock = threading.Lock()
        self.nbytes = 0
        self._order: OrderedDict[tuple[int, Hashable], int] = OrderedDict()   # (member, key) -> bytes, LRU first
        self._members: dict[int, weakref.ReferenceType] = {}

    def _join(self, cache: ByteBoundedCache) -> None:
        cid = id(cache)
        self._members[cid] = weakref.ref(cache)
        weakref.finalize(cache, self._leave, cid)

    def _leave(self, cid: int) -> None:
        with self.lock:
            self._members.pop(cid, None)
            for item in [k for k in self._order if k[0] == cid]:
                self.nbytes -= self._order.pop(item)

    def _added(self, cid: int, key: Hashable, size: int) -> None:      # called with the lock held
        self._order[(cid, key)] = size
        self.nbytes += size
        while self.nbytes > self.max_bytes and self._order:
            (owner, old), _ = next(iter(self._order.items()))
            member = self._members[owner]()
            if member is None:
                self.nbytes -= self._order.pop((owner, old))
            else:
                member._drop(old)

    def _removed(self, cid: int, key: Hashable) -> None:                 # called with the lock held
        size = self._order.pop((cid, key), None)
        if size is not None:
            self.nbytes -= size


class ByteBoundedCache:
    """A least-recently-used cache bounded in bytes (:func:`size_of` of each value), safe across threads.

    Past ``max_bytes`` the least recently used entries go; a value larger than the whole bound is returned to
    its caller but not kept.  With a ``pool``, the pool's bound holds too, across all its members.

    >>> cache = ByteBoundedCache(max_bytes=20_000)
    >>> for i in range(5):
    ...     _ = cache.get_or_compute(i, lambda: np.zeros(1000))     # about 8 kB each
    >>> len(cache), sorted(cache.keys()), cache.nbytes <= 20_000
    (2, [3, 4], True)
    """

    def __init__(self, max_bytes: int, *, sizeof: Callable[[object], int] = size_of,
                 pool: BytePool | None = None) -> None:
        if max_bytes <= 0:
            raise InputError(f"ByteBoundedCache: expected max_bytes > 0; got {max_bytes}.")
        self.max_bytes = int(max_bytes) if pool is None else min(int(max_bytes), pool.max_bytes)
        self._sizeof = sizeof
        self._items: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()
        self._pool = pool
        self._lock = pool.lock if pool is not None else threading.Lock()
        self.nbytes = 0
        if pool is not None:
            pool._join(self)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._items

    def keys(self) -> list[Hashable]:
        with self._lock:
            return list(self._items)

    def get(self, key: Hashable, default=None):
        with self._lock:
            if key not in self._items:
                return default
            self._items.move_to_end(key)
            if self._pool is not None:
                self._pool._order.move_to_end((id(self), key))
            return self._items[key][0]

    def put(self, key: Hashable, value) -> None:
        size = self._sizeof(value)
        with self._lock:
            self._drop(key)
            if size > self.max_bytes:
                return
            self._items[key] = (value, size)
            self.nbytes += size
            while self.nbytes > self.max_bytes:
                self._drop(next(iter(self._items)))
            if self._pool is not None:
                self._pool._added(id(self), key, size)

    def get_or_compute(self, key: Hashable, compute: Callable[[], object]):
        """The value kept under ``key``, else ``compute()`` (kept when it fits)."""
        missing = object()
        value = self.get(key, missing)
        if value is missing:
            value = compute()
            self.put(key, value)
        return value

    def pop(self, key: Hashable) -> None:
        with self._lock:
            self._drop(key)

    def discard_if(self, drop: Callable[[Hashable], bool]) -> None:
        """Forget every entry whose key ``drop`` accepts."""
        with self._lock:
            for key in [k for k in self._items if drop(k)]:
                self._drop(key)

    def clear(self) -> None:
        with self._lock:
            for key in list(self._items):
                self._drop(key)

    def _drop(self, key: Hashable) -> None:                 # called with the lock held
        item = self._items.pop(key, None)
        if item is not None:
            self.nbytes -= item[1]
            if self._pool is not None:
                self._pool._removed(id(self), key)


# ---------------------------------------------------------------- sessions that ended: their data released
class SessionRegistry:
    """The sessions of one server and how to release what each holds once it has ended (thread-safe).

    A page registers its session with a ``release`` callable; :meth:`sweep` is given which sessions are still
    connected and, for every other one that has been gone ``grace_s`` seconds or more (a reconnect within it keeps
    everything), calls its ``release`` once and forgets it.  ``held`` counts the bytes each session reports
    (:meth:`set_held`), so that a server-wide total can be enforced.

    >>> reg, released = SessionRegistry(grace_s=10), []
    >>> reg.track("a", lambda: released.append("a")); reg.track("b", lambda: released.append("b"))
    >>> reg.sweep(lambda s: s == "b", now=0.0), reg.sweep(lambda s: s == "b", now=10.0), released
    ([], ['a'], ['a'])
    """

    def __init__(self, grace_s: float) -> None:
        self.grace_s = float(grace_s)
        self._release: dict[str, Callable[[], None]] = {}
        self._gone_since: dict[str, float] = {}
        self._held: dict[str, int] = {}
        self._lock = threading.Lock()

    def track(self, session_id: str, release: Callable[[], None]) -> None:
        with self._lock:
            self._release[session_id] = release

    def set_held(self, session_id: str, nbytes: int) -> None:
        with self._lock:
            self._held[session_id] = int(nbytes)

    def held_by_others(self, session_id: str) -> int:
        """Bytes the server's other sessions hold."""
        with self._lock:
            return sum(n for s, n in self._held.items() if s != session_id)

    def sessions(self) -> list[str]:
        with self._lock:
            return list(self._release)

    def sweep(self, is_active: Callable[[str], bool], *, now: float) -> list[str]:
        """Release every session gone for ``grace_s`` seconds or more; the ids released."""
        due = []
        with self._lock:
            for sid in list(self._release):
                if is_active(sid):
                    self._gone_since.pop(sid, None)
                elif now - self._gone_since.setdefault(sid, now) >= self.grace_s:
                    due.append((sid, self._release.pop(sid)))
                    self._gone_since.pop(sid, None)
                    self._held.pop(sid, None)
        for _, release in due:
            release()
        return [sid for sid, _ in due]


#: glibc's ``M_MMAP_THRESHOLD`` (``mallopt``) and the size from which a server's allocations get pages of their
#: own: by default glibc raises the threshold to the largest block freed (up to 32 MB), after which the columns of
#: a parsed upload land in the heaps of the sessions' threads, where what stays around them keeps them resident;
#: a fixed threshold keeps every large array in pages of its own, returned to the system when it is freed
M_MMAP_THRESHOLD, MMAP_FROM_BYTES = -3, 256 * 2**10


def make_freed_memory_returnable() -> None:
    """Allocate so that freed memory can go back to the system: pyarrow (the CSV reader) allocates from the
    system's ``malloc`` instead of its own pool, and glibc gives every block of :data:`MMAP_FROM_BYTES` or more
    pages of its own (elsewhere than glibc, only the first).  Called once per server process, before its first
    upload is read."""
    import pyarrow

    pyarrow.set_memory_pool(pyarrow.system_memory_pool())
    try:
        ctypes.CDLL("libc.so.6").mallopt(M_MMAP_THRESHOLD, MMAP_FROM_BYTES)
    except (OSError, AttributeError):      # not glibc
        pass


def return_freed_memory() -> None:
    """Collect garbage and hand freed memory back to the operating system: pyarrow's memory pool (the CSV reader
    allocates there) and glibc's heap (``malloc_trim``; elsewhere only the collection), so that the server's
    resident memory drops once a session's data is released."""
    gc.collect()
    arrow = sys.modules.get("pyarrow")          # pyarrow's own pool (mimalloc or jemalloc) keeps what it freed
    if arrow is not None:
        arrow.default_memory_pool().release_unused()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):      # not glibc: the collection is all there is
        pass
