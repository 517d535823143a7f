"""The first visit to a freshly started server, in Chromium: how long until the Logs page's headline
leaves the server, until the page shows it, and until the first chart is drawn, for the server's
very first session (cold: modules imported and runs fitted on the way) and the next one (warm).

Run ``python bench/first_visit.py`` (``--path /plan`` for a deep link; ``--repeat N`` servers).  It
starts its own server on 127.0.0.1 and drives Debian's Chromium, one new browser context per visit
(nothing cached in the browser either).  Issue 21 asks for the first visit measured cold and warm;
tests/e2e/test_first_visit_e2e.py checks what it shows (no file-name navigation, the menu).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.conftest import CHROMIUM, CHROMIUM_FLAGS, start_streamlit, stop_streamlit  # noqa: E402

#: bytes of the websocket message that carries the Logs page's headline
HEADLINE = b"reached the target"


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


async def _run(path: str, repeat: int) -> None:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        for _ in range(repeat):
            with tempfile.TemporaryDirectory() as tmp:
                t0 = time.perf_counter()
                server, base = start_streamlit(Path(tmp) / "library.duckdb", Path(tmp) / "streamlit.log")
                up = time.perf_counter() - t0
                try:
                    for visit in ("cold", "warm"):
                        r = await _visit(browser, f"{base}{path}")
                        headline = f"headline sent by the server {r['sent']:5.2f} s, " if path in ("", "/") else ""
                        print(f"{path or '/'} {visit}: server up {up:.1f} s after its start; {headline}headline "
                              f"shown {r['shown']:5.2f} s, first chart drawn {r['chart']:5.2f} s after the visit; "
                              f"menu links {r['menu']}", flush=True)
                finally:
                    stop_streamlit(server)
        await browser.close()
    print(f"(load average {' '.join(f'{x:.1f}' for x in os.getloadavg())})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--path", default="/", help="the page to open first (default: the Logs page, /)")
    parser.add_argument("--repeat", type=int, default=1, help="how many fresh servers")
    args = parser.parse_args()
    asyncio.run(_run(args.path, args.repeat))


if __name__ == "__main__":
    main()
