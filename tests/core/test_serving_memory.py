"""Issue 35, bounded memory per server: the byte-bounded cache, the pool every session's memo shares, the
shares of the total, the registry that releases ended sessions, and
``$TTA_SERVER_MEMORY_MB``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.errors import InputError
from core.serving import (
    DEFAULT_SERVER_MEMORY_MB,
    ByteBoundedCache,
    BytePool,
    MemoryShares,
    SessionRegistry,
    memory_shares,
    server_memory_bytes,
    size_of,
)

MB = 2**20


def test_the_cache_fills_past_its_bound_and_keeps_the_most_recent():
    cache = ByteBoundedCache(max_bytes=10 * MB)
    for i in range(25):                                   # 25 arrays of 1 MB (131,072 float64) into 10 MB
        cache.put(i, np.zeros(MB // 8))
    assert cache.nbytes <= 10 * MB
    assert sorted(cache.keys()) == list(range(16, 25))    # 9 fit: 9 × (1 MB + 112 bytes of header) <= 10 MB
    assert cache.get(15) is None and cache.get(24) is not None


def test_reading_an_entry_makes_it_the_last_to_go():
    cache = ByteBoundedCache(max_bytes=3 * MB)
    for i in range(3):
        cache.put(i, b"x" * (MB - 100))
    cache.get(0)                                          # 0 is now the most recent: 1 goes first
    cache.put(3, b"x" * (MB - 100))
    assert sorted(cache.keys()) == [0, 2, 3]


def test_a_value_larger_than_the_bound_is_returned_not_kept():
    cache = ByteBoundedCache(max_bytes=MB)
    cache.put("small", b"x" * 1000)
    value = cache.get_or_compute("big", lambda: b"x" * (2 * MB))
    assert len(value) == 2 * MB
    assert cache.keys() == ["small"] and cache.nbytes < MB


def test_computed_once_while_kept():
    cache, calls = ByteBoundedCache(max_bytes=MB), []
    for _ in range(3):
        cache.get_or_compute("k", lambda: calls.append(1) or np.arange(10))
    assert len(calls) == 1


def test_entries_can_be_dropped_by_key():
    cache = ByteBoundedCache(max_bytes=MB)
    for key in [("d1", "a.csv"), ("d2", "b.csv"), ("d3", "c.csv")]:
        cache.put(key, b"x" * 100)
    cache.discard_if(lambda k: k[0] != "d2")
    assert cache.keys() == [("d2", "b.csv")]
    before = cache.nbytes
    cache.pop(("d2", "b.csv"))
    assert len(cache) == 0 and cache.nbytes == 0 < before


def test_a_bound_must_be_positive():
    with pytest.raises(InputError, match="expected max_bytes > 0; got 0"):
        ByteBoundedCache(max_bytes=0)


def test_size_of_counts_frames_and_dataclass_fields_deeply():
    frame = pd.DataFrame({"step": np.arange(100_000, dtype="float64"), "loss": np.ones(100_000)})
    assert size_of(frame) >= 2 * 800_000                  # two columns of 100,000 × 8 bytes
    assert size_of(frame.astype("float32")) < size_of(frame)
    assert size_of({"a": frame, "b": frame}) < 2 * size_of(frame)     # the same frame twice counts once
    from core.logs import read_log
    log = read_log(b"step,loss\n" + b"".join(b"%d,%f\n" % (k, 1 / k) for k in range(1, 5001)), "a.csv")
    assert size_of(log) >= 5000 * 8 * 2                   # at least the step and loss columns


def _registry(grace_s=30):
    released = []
    reg = SessionRegistry(grace_s=grace_s)
    for sid in ("a", "b", "c"):
        reg.track(sid, lambda sid=sid: released.append(sid))
    return reg, released


def test_a_session_is_released_once_gone_for_its_grace():
    reg, released = _registry(grace_s=30)
    connected = {"a", "b", "c"}
    assert reg.sweep(connected.__contains__, now=0.0) == []
    connected.discard("a")                                # a's tab closes at t = 10
    assert reg.sweep(connected.__contains__, now=10.0) == []
    assert reg.sweep(connected.__contains__, now=39.0) == []       # 29 s gone: within the reconnect window
    assert reg.sweep(connected.__contains__, now=40.0) == ["a"]    # 30 s gone: released
    assert reg.sweep(connected.__contains__, now=100.0) == []      # once only
    assert released == ["a"] and reg.sessions() == ["b", "c"]


def test_a_session_that_reconnects_within_its_grace_keeps_its_data():
    reg, released = _registry(grace_s=30)
    reg.sweep(lambda s: s != "b", now=0.0)                # b disconnects
    reg.sweep(lambda s: True, now=20.0)                   # and comes back
    assert reg.sweep(lambda s: True, now=60.0) == [] and released == []
    reg.sweep(lambda s: s != "b", now=61.0)               # a second departure starts a new window
    assert reg.sweep(lambda s: s != "b", now=90.0) == []
    assert reg.sweep(lambda s: s != "b", now=91.0) == ["b"]


def test_the_registry_counts_what_other_sessions_hold_until_they_are_released():
    reg, _ = _registry(grace_s=0)
    reg.set_held("a", 100 * MB)
    reg.set_held("b", 30 * MB)
    assert reg.held_by_others("c") == 130 * MB and reg.held_by_others("a") == 30 * MB
    reg.sweep(lambda s: s != "a", now=0.0)
    assert reg.held_by_others("c") == 30 * MB


@pytest.mark.parametrize(("text", "want"), [("", DEFAULT_SERVER_MEMORY_MB * MB), ("256", 256 * MB),
                                            (" 4096 ", 4096 * MB)])
def test_the_total_comes_from_the_environment(monkeypatch, text, want):
    monkeypatch.setenv("TTA_SERVER_MEMORY_MB", text)
    assert server_memory_bytes() == want


@pytest.mark.parametrize("text", ["255", "0", "-5", "2GB", "1.5"])
def test_a_bad_total_is_refused_with_its_name(monkeypatch, text):
    monkeypatch.setenv("TTA_SERVER_MEMORY_MB", text)
    with pytest.raises(InputError, match=f"TTA_SERVER_MEMORY_MB: expected a whole number of megabytes >= 256; "
                                         f"got '{text}'. Unset it for {DEFAULT_SERVER_MEMORY_MB}."):
        server_memory_bytes()


# ---------------------------------------------------------------- one bound for every session's memo, and the total
def test_the_sessions_memos_share_one_bound_and_the_oldest_entry_of_any_goes():
    pool = BytePool(max_bytes=10 * MB)
    sessions = [ByteBoundedCache(10 * MB, pool=pool) for _ in range(4)]
    for i in range(20):                                   # 20 arrays of 1 MB, round robin over 4 sessions
        sessions[i % 4].put(i, np.zeros(MB // 8))
    assert pool.nbytes <= 10 * MB
    assert pool.nbytes == sum(s.nbytes for s in sessions)
    assert sorted(k for s in sessions for k in s.keys()) == list(range(11, 20))   # 9 of them, the newest
    assert sessions[3].keys() == [11, 15, 19] and sessions[0].keys() == [12, 16]


def test_reading_a_sessions_entry_keeps_it_in_the_pool():
    pool = BytePool(max_bytes=3 * MB + 1000)
    a, b = ByteBoundedCache(10 * MB, pool=pool), ByteBoundedCache(10 * MB, pool=pool)
    a.put("old", np.zeros(MB // 8))
    b.put(1, np.zeros(MB // 8))
    b.put(2, np.zeros(MB // 8))
    assert a.get("old") is not None                       # read: now the most recent
    b.put(3, np.zeros(MB // 8))
    assert a.keys() == ["old"] and b.keys() == [2, 3]


def test_a_session_that_ends_frees_its_share_of_the_pool():
    pool = BytePool(max_bytes=10 * MB)
    gone, stays = ByteBoundedCache(10 * MB, pool=pool), ByteBoundedCache(10 * MB, pool=pool)
    gone.put("x", np.zeros(MB // 8))
    stays.put("y", np.zeros(MB // 8))
    assert pool.nbytes == 2 * (MB + 112)
    del gone                                              # its session state cleared
    assert pool.nbytes == MB + 112
    stays.clear()
    assert pool.nbytes == 0


@pytest.mark.parametrize(("total_mb", "uploads", "derived", "shared"),
                         [(2048, 819.2, 819.2, 409.6), (256, 102.4, 102.4, 51.2), (1000, 400, 400, 200)])
def test_the_total_is_split_into_fixed_shares_that_add_up_to_it(total_mb, uploads, derived, shared):
    shares = memory_shares(total_mb * MB)
    assert shares == MemoryShares(int(uploads * MB), int(derived * MB), int(shared * MB))
    assert shares.total <= total_mb * MB and total_mb * MB - shares.total <= 2


def test_every_session_together_stays_within_the_derived_share_whatever_their_number():
    shares = memory_shares(256 * MB)                      # 102.4 MB for what every session derives
    pool = BytePool(shares.derived)
    memos = [ByteBoundedCache(pool.max_bytes, pool=pool) for _ in range(16)]
    for memo in memos:                                    # 16 sessions, each 10 MB of parsed logs: 160 MB asked
        for j in range(10):
            memo.put(j, np.zeros(MB // 8))
    assert pool.nbytes <= shares.derived
    assert sum(m.nbytes for m in memos) == pool.nbytes
    assert len(memos[-1]) == 10 and len(memos[0]) == 0    # the latest session whole, the earliest dropped
