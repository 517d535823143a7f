"""Eight sessions upload one log each at the same moment (issue 15, "under load"): every session
ends with its own upload fitted, none sees another's, and none shows an error.  Times are printed
by bench/load.py, not asserted here (so the uploads start without waiting for the tabs to go idle)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from bench.load import run_sessions, session_log


def test_eight_concurrent_uploads_without_cross_talk_or_error(app_url, tmp_path):
    assert app_url.startswith("http://127.0.0.1:")
    logs = [session_log(tmp_path, i) for i in range(8)]
    # its own thread: the session's sync Playwright fixtures keep an event loop running in this one
    with ThreadPoolExecutor(max_workers=1) as pool:
        results = pool.submit(asyncio.run, run_sessions(app_url, logs, settle=False)).result()
    assert len(results) == 8
    for log, result in zip(logs, results):
        assert result["errors"] == 0, result["log"]
        assert log.name in result["text"]                                  # its own upload ...
        others = [other.name for other in logs if other != log]
        assert not [name for name in others if name in result["text"]]     # ... and nobody else's
