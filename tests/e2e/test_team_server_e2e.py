"""Issue 20's team server, for real: three ``streamlit run`` servers on one PostgreSQL library, eight
``python -m core library add`` writers and uploads saved through all three servers at once, and one server
killed (SIGKILL) in the middle of a save.

What must hold whatever the timing: no run lost, none twice, none half-written; the two other servers finish
their saves and keep answering; the killed server, started again, lists every run, and saving its upload again
adds exactly the runs its killed save had not committed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from playwright.sync_api import Browser, Page, expect

from core.library import Library
from tests.core.library.helpers import course_csv
from tests.core.library.workers import HALF_WRITTEN
from tests.e2e.conftest import (
    ROOT,
    WAIT_MS,
    goto_page,
    nav_link,
    no_exception,
    start_streamlit,
    stop_streamlit,
    wait_idle,
)
from tests.pg_server import fresh_database

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)")]

#: a hung child is a failure after this long: a guard against hanging the suite, not a timing check
HANG_S = 600
N_WRITERS, LOGS_PER_FOLDER = 8, 4
N_UPLOADS = {0: 12, 1: 5, 2: 5}          # server 0's save is the long one, killed in its middle
#: a server (by its application name) inside a transaction that writes
WRITING = """SELECT count(*) FROM pg_stat_activity WHERE application_name = %s AND xact_start IS NOT NULL
             AND state <> 'idle' AND (query ILIKE '%%insert%%' OR query ILIKE '%%copy%%')"""
SAVED_0 = "SELECT count(*) FROM runs WHERE source LIKE '%\\_u0.csv'"


def _write_logs(folder: Path, names_seeds: list[tuple[str, int]], **shape) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, seed in names_seeds:
        (folder / name).write_bytes(course_csv(seed=seed, **shape))
        paths.append(folder / name)
    return paths


def _count(url: str, sql: str, *args) -> int:
    with psycopg.connect(url, autocommit=True) as con:
        return con.execute(sql, args or None).fetchone()[0]


def _open_logs_with_uploads(browser: Browser, url: str, files: list[Path]) -> Page:
    context = browser.new_context()
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    goto_page(page, url, "Logs")
    page.get_by_test_id("stFileUploader").locator("input[type=file]").set_input_files([str(f) for f in files])
    wait_idle(page)
    expect(page.get_by_test_id("stSidebar").get_by_text(f"{len(files)} uploaded file(s)", exact=False)
           ).to_be_visible(timeout=WAIT_MS)
    save = page.get_by_test_id("stExpander").filter(has_text="Save to the library")
    save.get_by_text("Save to the library").first.click()
    expect(save.get_by_role("button", name="Save to the library")).to_be_enabled(timeout=WAIT_MS)
    return page


def _click_save(page: Page) -> None:
    page.get_by_test_id("stExpander").filter(has_text="Save to the library").get_by_role(
        "button", name="Save to the library").click()


def _saved(page: Page, added: int, present: int) -> None:
    save = page.get_by_test_id("stExpander").filter(has_text="Save to the library")
    expect(save.get_by_text(f"{added} run(s) added, {present} already in the library.")).to_be_visible(
        timeout=WAIT_MS)
    expect(page.get_by_test_id("stAlertContentError")).to_have_count(0)
    no_exception(page)


def _library_lists(page: Page, n: int) -> None:
    nav_link(page, "Library").click()
    expect(page.get_by_role("heading", name=f"Runs ({n})")).to_be_visible(timeout=WAIT_MS)
    expect(page.get_by_test_id("stAlertContentError")).to_have_count(0)
    no_exception(page)


def test_three_servers_eight_writers_and_one_server_killed_mid_save(browser: Browser, postgres_url, tmp_path):
    db = fresh_database(postgres_url)
    with Library(db).store.connect(create=True):   # the schema exists before eight writers and three servers race
        pass

    # eight CLI writers, each adding its own folder and the next one (every CLI log added by two at once)
    folders = []
    for w in range(N_WRITERS):
        names = [(f"resnet20_Tesla V100-{64 * (i + 1)}_c{w}.csv", 1000 * w + i) for i in range(LOGS_PER_FOLDER)]
        _write_logs(tmp_path / f"cli{w}", names)
        folders.append(tmp_path / f"cli{w}")
    uploads = {s: _write_logs(tmp_path / f"up{s}", [(f"resnet32_Tesla V100-{64 * (i + 1)}_u{s}.csv",
                                                      50_000 + 100 * s + i) for i in range(n)],
                              **({"epochs": 60, "steps": 100} if s == 0 else {}))
               for s, n in N_UPLOADS.items()}
    n_cli = N_WRITERS * LOGS_PER_FOLDER
    n_all = n_cli + sum(N_UPLOADS.values())

    # three app servers on the one library; each names itself to PostgreSQL
    servers = {}
    try:
        for s in N_UPLOADS:
            servers[s] = start_streamlit(f"{db}?application_name=tta-server-{s}", tmp_path / f"server{s}.log")
        pages = {s: _open_logs_with_uploads(browser, servers[s][1], uploads[s]) for s in N_UPLOADS}

        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        writers = [subprocess.Popen([sys.executable, "-m", "core", "library", "add", str(folders[w]),
                                     str(folders[(w + 1) % N_WRITERS]), "--db", db], cwd=ROOT, env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                   for w in range(N_WRITERS)]
        for s in (1, 2, 0):
            _click_save(pages[s])

        # kill server 0 in its save: once it holds a writing transaction open, or (if the poll missed that
        # moment) once a batch of its runs is committed
        deadline = time.monotonic() + HANG_S
        while time.monotonic() < deadline and not _count(db, WRITING, "tta-server-0") and not _count(db, SAVED_0):
            time.sleep(0.005)
        servers[0][0].send_signal(signal.SIGKILL)
        servers[0][0].wait(timeout=HANG_S)
        at_kill = _count(db, SAVED_0)
        print(f"server 0 killed with {at_kill} of its {N_UPLOADS[0]} runs committed")
        assert 0 <= at_kill <= N_UPLOADS[0]

        # the two other servers finish their saves and keep answering
        for s in (1, 2):
            _saved(pages[s], N_UPLOADS[s], 0)
        outs = [p.communicate(timeout=HANG_S) for p in writers]
        assert all(p.returncode == 0 for p in writers), [err[-500:] for _, err in outs]
        n_now = n_cli + N_UPLOADS[1] + N_UPLOADS[2] + at_kill
        for s in (1, 2):
            _library_lists(pages[s], n_now)

        # no run lost, none twice, none half-written
        lib = Library(db)
        table = lib.runs()
        assert len(table) == n_now and table["content_hash"].is_unique and table["source"].is_unique
        with lib.store.connect() as con:
            assert con.execute(HALF_WRITTEN)[0][0] == 0
            assert con.execute("SELECT count(*) FROM series WHERE run_id NOT IN (SELECT run_id FROM runs)"
                               )[0][0] == 0

        # the killed server comes back, lists everything, and its upload saved again adds only what was missing
        servers[0] = start_streamlit(f"{db}?application_name=tta-server-0", tmp_path / "server0-again.log")
        pages[0].context.close()
        pages[0] = _open_logs_with_uploads(browser, servers[0][1], uploads[0])
        _click_save(pages[0])
        _saved(pages[0], N_UPLOADS[0] - at_kill, at_kill)
        _library_lists(pages[0], n_all)
        table = Library(db).runs()
        assert len(table) == n_all and table["content_hash"].is_unique
        assert sorted(table["source"]) == sorted([p.name for f in folders for p in f.iterdir()]
                                                 + [p.name for s in uploads for p in uploads[s]])
    finally:
        for proc, _ in servers.values():
            if proc.poll() is None:
                stop_streamlit(proc)
