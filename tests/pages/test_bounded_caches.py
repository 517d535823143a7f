"""Issue 35, bounded memory per server, in the pages: the caches of what users bring are bounded in bytes
(``pages.shared.bounded``), every session's memo counts against one server-wide bound, and an upload's bytes are
held once (the uploader's own bytes, not a copy)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.serving import ByteBoundedCache, BytePool
from pages.shared import bounded
from tests.pages.conftest import open_page
from tests.pages.test_uploads import UPLOADER, course_log

MB = 2**20


def test_a_bounded_cache_is_filled_past_its_byte_bound_and_keeps_the_newest(monkeypatch):
    small = ByteBoundedCache(max_bytes=5 * MB)
    monkeypatch.setattr(bounded, "shared_cache", lambda: small)
    calls = []

    @bounded.bounded_data()
    def column(n: int, _unhashed: object = None) -> pd.DataFrame:
        calls.append(n)
        return pd.DataFrame({"x": np.full(MB // 8, float(n))})          # 1 MB a result

    for n in range(12):
        assert column(n)["x"].iloc[0] == n
    assert small.nbytes <= 5 * MB and len(small) == 4                   # 4 × (1 MB + the frame's index) fit
    assert column(11, _unhashed="anything")["x"].iloc[0] == 11 and calls == list(range(12))   # kept: not rerun
    assert column(0)["x"].iloc[0] == 0 and calls[-1] == 0               # gone past the bound: computed again


def test_a_cached_table_is_a_copy_and_a_cached_resource_is_the_object(monkeypatch):
    cache = ByteBoundedCache(max_bytes=MB)
    monkeypatch.setattr(bounded, "shared_cache", lambda: cache)

    @bounded.bounded_data()
    def table(n: int) -> pd.DataFrame:
        return pd.DataFrame({"x": [n]})

    @bounded.bounded_resource()
    def frozen(n: int) -> tuple:
        return (n,)

    first = table(1)
    first.loc[0, "x"] = 99                                              # a page changing its copy
    assert table(1).loc[0, "x"] == 1
    assert frozen(2) is frozen(2)


def test_the_logs_page_holds_an_upload_once_and_its_parsed_log_in_the_servers_pool(monkeypatch):
    import pages.shared.cached as cached

    pool = BytePool(max_bytes=64 * MB)
    monkeypatch.setattr(cached, "derived_pool", lambda: pool)
    at = open_page()
    name, data = "resnet98_V100.csv", course_log(rows_per_epoch=200)
    at.file_uploader(key=UPLOADER).set_value([(name, data, "text/csv")]).run()
    assert not at.exception and not at.error
    held = at.session_state["log_files"][name]
    files = at.session_state[UPLOADER]
    assert held == data and any(held is f.getvalue() for f in files)   # the uploader's bytes, no copy
    logs = at.session_state["_memo_logs"]
    assert [key[1] for key in logs.keys()] == [name]
    assert 0 < logs.nbytes <= pool.nbytes <= pool.max_bytes             # counted against the server's bound


#: Streamlit's own caches that stay: the built-in data's (bounded by the data), the server's singletons, and
#: caches keyed by a built-in name only
STREAMLIT_CACHES = {"_builtin_bytes", "_read_builtin", "_builtin_paths", "_builtin_analysis", "shared_fits",
                    "_server_sessions", "session_registry", "shared_cache", "derived_pool", "session_use",
                    "_batch_set_bytes",
                    "_course_fits", "_builtin_speed_bytes", "_set_speed", "_loadable_nets", "_builtin_profile",
                    "_parameter_count", "_pollux_table"}


def test_every_other_cache_of_the_pages_is_bounded_in_bytes():
    import re

    from tests.conftest import ROOT

    streamlit_cached = set()
    for path in (ROOT / "pages").rglob("*.py"):
        text = path.read_text()
        streamlit_cached |= set(re.findall(r"@st\.cache_(?:data|resource)\b[^\n]*\n(?:[^\n]*\n)*?def (\w+)", text))
    assert streamlit_cached and streamlit_cached <= STREAMLIT_CACHES, streamlit_cached - STREAMLIT_CACHES


def test_a_cached_error_is_returned_as_it_is(monkeypatch):
    from core.errors import LogFormatError

    cache = ByteBoundedCache(max_bytes=MB)
    monkeypatch.setattr(bounded, "shared_cache", lambda: cache)

    @bounded.bounded_data()
    def refused(name: str) -> LogFormatError:
        return LogFormatError(name, "expected the course's columns")

    assert str(refused("odd.csv")) == str(refused("odd.csv")) and refused("odd.csv") is refused("odd.csv")


def test_a_shared_result_goes_when_the_last_session_that_used_it_ends(monkeypatch):
    # issue 35: what one session's upload turned into does not outlive every session that used it; a result
    # two sessions used stays until both have ended
    cache, use = ByteBoundedCache(10_000_000), bounded.SessionUse()
    monkeypatch.setattr(bounded, "shared_cache", lambda: cache)
    monkeypatch.setattr(bounded, "session_use", lambda: use)
    session = {"id": "a"}
    monkeypatch.setattr(bounded, "get_script_run_ctx",
                        lambda suppress_warning=False: type("Ctx", (), {"session_id": session["id"]})())
    calls = []

    @bounded.bounded_resource()
    def doubled(x: int) -> np.ndarray:
        calls.append(x)
        return np.full(1000, 2 * x)

    doubled(1), doubled(2)          # session a: 1 and 2
    session["id"] = "b"
    doubled(2)                      # session b: 2 (shared with a)
    assert calls == [1, 2] and len(cache) == 2
    bounded.release_session_results("a")
    assert len(cache) == 1          # 1 went with a; 2 stays for b
    doubled(2)
    assert calls == [1, 2]          # still cached
    bounded.release_session_results("b")
    assert len(cache) == 0
    doubled(2)
    assert calls == [1, 2, 2]       # computed again once nobody held it
