"""Issue 35: what a session uploaded is gone from the server's memory once the session has ended.

A real server and Debian's Chromium: one session uploads a generated 30 MB course-format log on the Logs page
and closes its browser context; the server's resident memory (``VmRSS`` in ``/proc/<pid>/status``) must come back
within ``BOUND_MB`` of its idle value.  The server's reconnect window (``server.disconnectedSessionTTL``) is 5 s
here instead of Streamlit's 120 s; the poll deadline is a hang guard, not a timing check."""

from __future__ import annotations

import time

from playwright.sync_api import Browser

from bench.server_memory import rss_mb, visit_and_upload, write_course_log
from tests.e2e.conftest import WAIT_MS, start_streamlit, stop_streamlit

#: how far above idle the server may stay once the session's data is released (MB)
BOUND_MB = 40
#: how long the test polls for the memory to come back (s): a hang guard
DEADLINE_S = 300


def test_a_sessions_upload_leaves_the_servers_memory_when_it_ends(browser: Browser, tmp_path):
    log = write_course_log(tmp_path / "big_run.csv", 30)
    proc, url = start_streamlit(tmp_path / "library.duckdb", tmp_path / "server.log",
                                env={"STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL": "5"})
    try:
        visit_and_upload(browser, url, None, wait_ms=WAIT_MS)   # the pages' modules loaded, built-in runs fitted
        time.sleep(10)                                          # that first session released too
        idle = rss_mb(proc.pid)

        holding = []
        visit_and_upload(browser, url, log, wait_ms=WAIT_MS, on_loaded=lambda: holding.append(rss_mb(proc.pid)))
        assert holding[0] > idle + BOUND_MB, f"the upload should hold memory while its session is open: " \
                                             f"idle {idle:.0f} MB, with the upload {holding[0]:.0f} MB"

        deadline, now = time.monotonic() + DEADLINE_S, rss_mb(proc.pid)
        while now > idle + BOUND_MB and time.monotonic() < deadline:
            time.sleep(2)
            now = rss_mb(proc.pid)
        assert now <= idle + BOUND_MB, f"idle {idle:.0f} MB, with the upload {holding[0]:.0f} MB, " \
                                       f"{DEADLINE_S} s after the session left {now:.0f} MB"
    finally:
        stop_streamlit(proc)
