"""The first visit to a freshly started server, in Chromium: how long until the Logs page's headline
leaves the server, until the page shows it, and until the first chart is drawn, for the server's
very first session (cold: modules imported and runs read on the way) and the next one (warm).

Run ``python bench/first_visit.py`` (``--path /plan`` for a deep link; ``--repeat N`` fresh servers,
medians printed; ``--quick`` one server).  It starts its own servers on 127.0.0.1 (``streamlit run
app.py`` as tests/e2e/conftest.py does) and drives Debian's Chromium, one new browser context per
visit (nothing cached in the browser either).  Each visit is split in three: the headline sent by
the server (the websocket frame that carries it reaches the browser: server-side time), the headline
shown, and the first chart drawn (browser-side time: Streamlit's and plotly's JavaScript).

``--baseline DIR`` also measures another checkout of the project (e.g. ``git worktree add DIR <commit>``
or ``git archive <commit> | tar -x -C DIR``), its servers alternating with this one's, and prints
each median as a ratio to the baseline's from the same run, with the load average before and after
(other work on the machine slows both alike).  The full measurement (``--repeat 5 --baseline DIR``)
takes about 3 minutes.  Issue 21 asked for the first visit measured cold and warm; issue 35 for a
first chart within 5 s of a cold server's start and 2 s for the next session on a quiet machine.
tests/e2e/test_first_visit_e2e.py checks what the visit shows (no file-name navigation, the menu).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.conftest import CHROMIUM, CHROMIUM_FLAGS, stop_streamlit  # noqa: E402

#: bytes of the websocket message that carries the Logs page's headline
HEADLINE = b"reached the target"
#: what each visit reports, in order
MEASURES = ("sent", "shown", "chart")
LABELS = {"sent": "headline sent", "shown": "headline shown", "chart": "first chart drawn"}


def _start(root: Path, tmp: Path, entry: str = "app.py") -> tuple[subprocess.Popen, str]:
    """``streamlit run <entry>`` in ``root`` on a free port (tests/e2e/conftest.py's command, in any checkout);
    its process and URL once ``/_stcore/health`` answers."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with open(tmp / "streamlit.log", "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", entry, "--server.headless", "true",
             "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none"],
            cwd=root, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "TTA_LIBRARY_DB": str(tmp / "l.duckdb")})
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 600          # a safety net for a hung server, not a timing check
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=5).read() == b"ok":
                return proc, url
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"streamlit in {root} did not answer (exit code {proc.poll()}); see {tmp / 'streamlit.log'}")


async def _visit(browser, url: str) -> dict[str, float]:
    from playwright.async_api import expect

    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    sent: dict[str, float] = {}

    def _on_websocket(ws) -> None:
        def _frame(payload) -> None:
            if isinstance(payload, (bytes, bytearray)) and HEADLINE in payload and "headline" not in sent:
                sent["headline"] = time.perf_counter()
        ws.on("framereceived", _frame)

    page.on("websocket", _on_websocket)
    t0 = time.perf_counter()
    await page.goto(url)
    await expect(page.get_by_test_id("stMetric").first).to_be_visible(timeout=300_000)
    shown = time.perf_counter() - t0
    await expect(page.locator(".js-plotly-plot .main-svg").first).to_be_visible(timeout=300_000)
    chart = time.perf_counter() - t0
    menu = await page.get_by_test_id("stTopNavLink").count()
    await context.close()
    return {"sent": sent.get("headline", float("nan")) - t0, "shown": shown, "chart": chart, "menu": menu}


async def _run(path: str, repeat: int, trees: dict[str, tuple[Path, str]], settle: float
               ) -> dict[tuple[str, str], list[dict]]:
    from playwright.async_api import async_playwright

    results: dict[tuple[str, str], list[dict]] = {}
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        for i in range(repeat):
            for tree, (root, entry) in trees.items():
                with tempfile.TemporaryDirectory() as tmp:
                    t0 = time.perf_counter()
                    server, base = _start(root, Path(tmp), entry)
                    up = time.perf_counter() - t0
                    await asyncio.sleep(settle)                     # a server started before its users arrive
                    up += settle
                    try:
                        for visit in ("cold", "warm"):
                            r = await _visit(browser, f"{base}{path}")
                            r["up"] = up
                            results.setdefault((tree, visit), []).append(r)
                            headline = f"headline sent {r['sent']:5.2f} s, " if path in ("", "/") else ""
                            print(f"[{i + 1}/{repeat}] {tree} {path or '/'} {visit}: server up {up:.1f} s after its "
                                  f"start; {headline}shown {r['shown']:5.2f} s, first chart drawn {r['chart']:5.2f} s "
                                  f"after the visit; menu links {r['menu']}", flush=True)
                    finally:
                        stop_streamlit(server)
        await browser.close()
    return results


def _report(results: dict[tuple[str, str], list[dict]], trees: dict, load_before: tuple) -> None:
    print("\nmedians (s after the visit; the cold first chart also after the server's start, up + chart):")
    medians = {key: {m: statistics.median(r[m] for r in rs) for m in (*MEASURES, "up")}
               for key, rs in results.items()}
    for (tree, visit), med in medians.items():
        n = len(results[(tree, visit)])
        since_start = f", first chart {med['up'] + med['chart']:5.2f} s after the start" if visit == "cold" else ""
        print(f"  {tree:12s} {visit}: " + ", ".join(f"{LABELS[m]} {med[m]:5.2f}" for m in MEASURES)
              + f"{since_start} (n={n})")
    if "baseline" in trees:
        print("ratios to the baseline (same run):")
        for tree in [t for t in trees if t != "baseline"]:
            for visit in ("cold", "warm"):
                this, base = medians[(tree, visit)], medians[("baseline", visit)]
                start = (this["up"] + this["chart"]) / (base["up"] + base["chart"])
                print(f"  {tree} {visit}: " + ", ".join(f"{LABELS[m]} {this[m] / base[m]:.2f}x" for m in MEASURES)
                      + (f"; first chart after the start {start:.2f}x" if visit == "cold" else ""))
    after = os.getloadavg()
    print(f"(load average before {' '.join(f'{x:.1f}' for x in load_before)}, "
          f"after {' '.join(f'{x:.1f}' for x in after)}; {os.cpu_count()} CPUs)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--path", default="/", help="the page to open first (default: the Logs page, /)")
    parser.add_argument("--repeat", type=int, default=3, help="how many fresh servers per tree (default 3)")
    parser.add_argument("--quick", action="store_true", help="one server per tree (same as --repeat 1)")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="another checkout of the project to measure in the same run, as the ratios' base "
                             "(served with app.py)")
    parser.add_argument("--entry", action="append", choices=("app.py", "serve.py"), default=None,
                        help="what this tree's servers run, repeatable to measure both (default app.py; serve.py "
                             "warms the server up as it starts)")
    parser.add_argument("--settle", type=float, default=0.0,
                        help="seconds between the server's health answer and the first visit (default 0)")
    args = parser.parse_args()
    trees = {f"this {entry}": (ROOT, entry) for entry in args.entry or ["app.py"]}
    if args.baseline is not None:
        if not (args.baseline / "app.py").is_file():
            parser.error(f"--baseline {args.baseline}: expected a checkout of the project (its app.py); not found")
        trees = {"baseline": (args.baseline.resolve(), "app.py"), **trees}
    load_before = os.getloadavg()
    results = asyncio.run(_run(args.path, 1 if args.quick else args.repeat, trees, args.settle))
    _report(results, trees, load_before)


if __name__ == "__main__":
    main()
