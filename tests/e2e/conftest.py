"""A real headless Chromium (Debian's package) driven by Playwright against ``streamlit run``.

Never ``playwright install``: the browser is /usr/bin/chromium, installed by ``.ci/run`` and
by the README's test command.  Without it these tests fail with that instruction, unless
E2E_OPTIONAL=1 is set, which skips them instead.
"""

from __future__ import annotations

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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def library_db(tmp_path_factory) -> Path:
    """The run library of the test server: a file of its own, never the user's default one."""
    return tmp_path_factory.mktemp("e2e_library") / "library.duckdb"


@pytest.fixture(scope="session")
def app_url(library_db):
    port = _free_port()
    log = open(ROOT / ".pytest-streamlit.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "TTA_LIBRARY_DB": str(library_db)})
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=1).read() == b"ok":
                break
        except OSError:
            time.sleep(0.2)
    else:
        proc.kill()
        raise RuntimeError("streamlit did not become healthy; see .pytest-streamlit.log")
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


def wait_idle(page, timeout: float = 60_000) -> None:
    """Wait until the script run triggered by the last action has finished."""
    from playwright.sync_api import expect

    page.wait_for_timeout(150)
    expect(page.get_by_test_id("stApp")).to_have_attribute("data-test-script-state", "notRunning",
                                                           timeout=timeout)


def goto_page(page, app_url: str, title: str) -> None:
    """Open the app and click ``title`` in the sidebar navigation."""
    from playwright.sync_api import expect

    page.goto(app_url)
    expect(page.get_by_test_id("stApp")).to_have_attribute("data-test-connection-state", "CONNECTED",
                                                           timeout=60_000)
    wait_idle(page)
    nav = page.get_by_test_id("stSidebarNav")
    if nav.count():  # one page only: Streamlit shows no navigation
        nav.get_by_role("link", name=title).click()
    expect(page.get_by_role("heading", name=title, exact=True).first).to_be_visible(timeout=60_000)
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


def download(page, scope, label: str, dest: Path, *, timeout: float = 90_000):
    """Click the first download button labelled ``label`` inside ``scope`` (a page or a
    locator), save the file to ``dest`` and return Playwright's Download (for its name)."""
    with page.expect_download(timeout=timeout) as info:
        scope.get_by_test_id("stDownloadButton").filter(has_text=label).first.click()
    info.value.save_as(dest)
    return info.value


def no_exception(page) -> None:
    from playwright.sync_api import expect

    expect(page.get_by_test_id("stException")).to_have_count(0)


__all__ = ["PNG_MAGIC", "course_log", "download", "wait_idle", "goto_page", "no_exception", "re"]
