"""A real headless Chromium (Debian's package) driven by Playwright against ``streamlit run``.

Never ``playwright install``: the browser is /usr/bin/chromium, installed by ``.ci/run`` and
by the README's test command.  Without it these tests fail with that instruction, unless
E2E_OPTIONAL=1 is set, which skips them instead.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
#: how long a browser check waits for the app (ms) before it fails: a hang guard, not a timing assertion. Generous
#: on purpose (a fresh server at load 20-35 took 46-78 s to its first chart); ``TTA_E2E_WAIT_MS`` changes it.
WAIT_MS = int(os.environ.get("TTA_E2E_WAIT_MS", "240000"))
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.e2e)
            if not Path(CHROMIUM).exists() and os.environ.get("E2E_OPTIONAL") == "1":
                item.add_marker(pytest.mark.skip(reason=f"{CHROMIUM} not installed (E2E_OPTIONAL=1)"))


@pytest.fixture(scope="session", autouse=True)
def _chromium_installed():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is not installed: run `apt-get install -y chromium` (Debian's package; "
                    "never `playwright install`), or set E2E_OPTIONAL=1 to skip the browser tests.")


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_FLAGS}


@pytest.fixture
def context(context):
    """Every action and ``expect`` waits up to ``WAIT_MS`` unless a test says otherwise."""
    from playwright.sync_api import expect

    context.set_default_timeout(WAIT_MS)
    expect.set_options(timeout=WAIT_MS)
    return context


#: the test server's output (one file per pytest-xdist worker, so that parallel workers never share one)
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
SERVER_LOG = ROOT / (f".pytest-streamlit-{_WORKER}.log" if _WORKER else ".pytest-streamlit.log")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def library_db(tmp_path_factory) -> Path:
    """The run library of the test server: a file of its own, never the user's default one."""
    return tmp_path_factory.mktemp("e2e_library") / "library.duckdb"


def start_streamlit(library_db, log_path: Path, env: dict | None = None, entry: str = "app.py"
                    ) -> tuple[subprocess.Popen, str]:
    """Start ``streamlit run app.py`` (or ``entry``: ``serve.py``) on a free loopback port with the project's own
    ``.streamlit/config.toml``
    and the library ``library_db`` (a DuckDB path or a PostgreSQL URL); its process and URL once
    ``/_stcore/health`` answers (the caller stops it)."""
    port = _free_port()
    log = open(log_path, "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", entry, "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
        env={**os.environ, "TTA_LIBRARY_DB": str(library_db), **(env or {})})
    log.close()                                  # the child keeps its own copy of the file
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, proc, log_path)
    except BaseException:
        proc.kill()
        raise
    return proc, url


def stop_streamlit(proc: subprocess.Popen) -> None:
    """Terminate a server started by ``start_streamlit`` (kill it if it does not exit)."""
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=60)


@contextlib.contextmanager
def streamlit_server(library_db: Path, log_path: Path = SERVER_LOG, env: dict | None = None, entry: str = "app.py"):
    """A fresh ``streamlit run app.py`` (see ``start_streamlit``); yields its URL and stops it afterwards."""
    proc, url = start_streamlit(library_db, log_path, env, entry)
    try:
        yield url
    finally:
        stop_streamlit(proc)


def _wait_healthy(url: str, proc: subprocess.Popen, log_path: Path) -> None:
    """Poll the health endpoint until it answers; fail if the server exits (or hangs for 10 minutes)."""
    deadline = time.monotonic() + 600          # a safety net for a hung server, not a timing check
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=5).read() == b"ok":
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"streamlit did not answer (exit code {proc.poll()}); see {log_path}")


@pytest.fixture(scope="session")
def app_url(library_db):
    with streamlit_server(library_db) as url:
        yield url


def wait_idle(page, timeout: float = WAIT_MS) -> None:
    """Wait until the script run triggered by the last action has finished."""
    from playwright.sync_api import expect

    page.wait_for_timeout(150)
    expect(page.get_by_test_id("stApp")).to_have_attribute("data-test-script-state", "notRunning",
                                                           timeout=timeout)


def nav_link(page, title: str):
    """The link to ``title`` in the app's navigation (``st.navigation(..., position="top")``)."""
    return page.get_by_test_id("stTopNavLink").filter(has_text=re.compile(rf"{re.escape(title)}\s*$"))
    # its text is the icon's ligature name then the title ("show_chartLogs")


def open_tab(page, label: str) -> None:
    """Click the tab ``label`` and wait until its content is computed."""
    page.get_by_role("tab", name=label).click()
    wait_idle(page, timeout=WAIT_MS)


def leave_and_come_back(page, title: str, *, via: str = "Plan") -> None:
    """Go to the page ``via`` and back to ``title`` with the menu, as a user switches pages."""
    from playwright.sync_api import expect

    nav_link(page, via).click()
    expect(page.get_by_role("heading", name=via, exact=True).first).to_be_visible(timeout=WAIT_MS)
    wait_idle(page, timeout=WAIT_MS)
    nav_link(page, title).click()
    wait_idle(page, timeout=WAIT_MS)


def goto_page(page, app_url: str, title: str) -> None:
    """Open the app and click ``title`` in the navigation."""
    from playwright.sync_api import expect

    page.goto(app_url)
    expect(page.get_by_test_id("stApp")).to_have_attribute("data-test-connection-state", "CONNECTED",
                                                           timeout=WAIT_MS)
    wait_idle(page)
    nav_link(page, title).click()
    expect(page.get_by_role("heading", name=title, exact=True).first).to_be_visible(timeout=WAIT_MS)
    wait_idle(page)


PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def course_log(folder: Path, name: str, b0: float) -> Path:
    """A course-format log of 10 epochs × 30 steps written to ``folder / name``: loss 1/(b0·k + 0.5) + 0.05 at
    step k, accuracy 0.5 + 0.045·e at epoch e (0.95 at the end; first above 0.92 at e = 10, above 0.90 at 9)."""
    rows = ["epoch, step, loss, acc"]
    for e in range(1, 11):
        for s in range(1, 31):
            k = (e - 1) * 30 + s
            rows.append(f"{e}, {s}, {1 / (b0 * k + 0.5) + 0.05:.6f}, {0.5 + 0.045 * e:.4f}")
    path = folder / name
    path.write_text("\n".join(rows) + "\n")
    return path


def download(page, scope, label: str, dest: Path, *, timeout: float = WAIT_MS):
    """Click the first download button labelled ``label`` inside ``scope`` (a page or a
    locator), save the file to ``dest`` and return Playwright's Download (for its name)."""
    with page.expect_download(timeout=timeout) as info:
        scope.get_by_test_id("stDownloadButton").filter(has_text=label).first.click()
    info.value.save_as(dest)
    return info.value


def no_exception(page) -> None:
    from playwright.sync_api import expect

    expect(page.get_by_test_id("stException")).to_have_count(0)


__all__ = ["PNG_MAGIC", "WAIT_MS", "course_log", "download", "wait_idle", "goto_page", "nav_link", "no_exception", "re",
           "start_streamlit", "stop_streamlit", "streamlit_server"]
