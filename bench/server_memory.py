"""Resident memory of a dashboard server as browser sessions upload a large log and leave (issue 35).

Run ``python bench/server_memory.py`` (the issue's size: 90 MB logs, 1, 4 and 16 sessions; ``--quick`` for
20 MB and 1, 2 sessions).  It writes a course-format log (``epoch, step, loss, acc``, one row a step, from a
fixed formula: deterministic) into a temporary folder, starts its own ``streamlit run app.py`` on 127.0.0.1
and, for each N, opens N sessions in Debian's Chromium one after the other, each uploading the log on the Logs
page, waiting for its run to be listed, and closing its browser context.  Resident memory (``VmRSS`` in
``/proc/<server pid>/status``) is read idle (after one visit that uploads nothing) and after each round: once
the sessions have ended (their reconnect window ``--grace`` seconds, Streamlit's
``server.disconnectedSessionTTL``, plus the server's sweep) and ``--settle`` seconds more.  Each figure is
printed against the idle value of the same server, with the load average.  Reads nothing outside the project.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.conftest import CHROMIUM, CHROMIUM_FLAGS, start_streamlit, stop_streamlit  # noqa: E402

STEPS_PER_EPOCH = 1000


def write_course_log(path: Path, megabytes: float) -> Path:
    """A valid course-format log of about ``megabytes`` MB: loss ``1 / (1e-4 k + 0.5) + 0.05`` at step k and
    accuracy ``0.5 + 0.45 (1 - exp(-e / 20))`` at epoch e, one row a step (``STEPS_PER_EPOCH`` steps an epoch)."""
    import numpy as np

    n = int(megabytes * 2**20 / 30)                     # a row is about 30 characters
    k = np.arange(1, n + 1)
    epoch = (k - 1) // STEPS_PER_EPOCH + 1
    step = (k - 1) % STEPS_PER_EPOCH + 1
    loss = 1 / (1e-4 * k + 0.5) + 0.05
    acc = 0.5 + 0.45 * (1 - np.exp(-epoch / 20))
    with open(path, "w") as f:
        f.write("epoch, step, loss, acc\n")
        for start in range(0, n, 200_000):
            s = slice(start, start + 200_000)
            f.writelines(f"{e}, {t}, {x:.7f}, {a:.6f}\n" for e, t, x, a in zip(epoch[s], step[s], loss[s], acc[s]))
    return path


def rss_mb(pid: int) -> float:
    """The process's resident memory (``VmRSS`` in ``/proc/<pid>/status``), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS in /proc/{pid}/status")


def visit_and_upload(browser, url: str, log: Path | None, wait_ms: int = 600_000, on_loaded=None) -> None:
    """One session: open the Logs page, upload ``log`` (if any), wait until the run is listed, call
    ``on_loaded()`` (if given) while the session is still open, leave."""
    from playwright.sync_api import expect

    from tests.e2e.conftest import wait_idle

    context = browser.new_context()
    context.set_default_timeout(wait_ms)
    page = context.new_page()
    page.goto(url)
    expect(page.get_by_role("heading", name="Logs", exact=True).first).to_be_visible(timeout=wait_ms)
    wait_idle(page, timeout=wait_ms)
    if log is not None:
        page.get_by_test_id("stFileUploader").locator("input[type=file]").set_input_files(str(log))
        wait_idle(page, timeout=wait_ms)
        expect(page.get_by_test_id("stSidebar").get_by_text("1 uploaded file(s)", exact=False)).to_be_visible(
            timeout=wait_ms)
        wait_idle(page, timeout=wait_ms)
        expect(page.get_by_test_id("stException")).to_have_count(0)
        expect(page.get_by_test_id("stAlertContentError")).to_have_count(0)
    if on_loaded is not None:
        on_loaded()
    context.close()


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=90, help="size of the uploaded log in MB (default 90)")
    parser.add_argument("--sessions", default="1,4,16", help="rounds: sessions per round (default 1,4,16)")
    parser.add_argument("--grace", type=int, default=5,
                        help="server.disconnectedSessionTTL of the server, seconds (default 5; Streamlit's 120)")
    parser.add_argument("--settle", type=float, default=10, help="seconds waited after the grace (default 10)")
    parser.add_argument("--quick", action="store_true", help="20 MB and rounds of 1 and 2 sessions")
    args = parser.parse_args()
    mb, rounds = (20, [1, 2]) if args.quick else (args.mb, [int(n) for n in args.sessions.split(",")])

    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        log = write_course_log(Path(tmp) / "big_run.csv", mb)
        print(f"log {log.stat().st_size / 2**20:.1f} MB; grace {args.grace} s + settle {args.settle} s", flush=True)
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        server, url = start_streamlit(Path(tmp) / "library.duckdb", Path(tmp) / "streamlit.log",
                                      env={"STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL": str(args.grace)})
        try:
            visit_and_upload(browser, url, None)
            time.sleep(args.grace + args.settle)
            idle = rss_mb(server.pid)
            print(f"idle (one visit, no upload): {idle:.0f} MB  (load {_load()})", flush=True)
            for n in rounds:
                t0 = time.perf_counter()
                peak = 0.0
                for _ in range(n):
                    visit_and_upload(browser, url, log)
                    peak = max(peak, rss_mb(server.pid))
                took = time.perf_counter() - t0
                time.sleep(args.grace + args.settle)
                after = rss_mb(server.pid)
                print(f"{n:3d} session(s) uploaded {mb:.0f} MB each and left ({took:.0f} s): highest seen "
                      f"{peak:.0f} MB; {args.grace + args.settle:.0f} s after the last left {after:.0f} MB = idle "
                      f"{after - idle:+.0f} MB ({after / idle:.2f}x idle)  (load {_load()})", flush=True)
        finally:
            stop_streamlit(server)
            browser.close()


if __name__ == "__main__":
    main()
