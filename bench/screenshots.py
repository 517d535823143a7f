"""Take a full-page screenshot of every page of the running dashboard (for docs/images).

Usage: start ``streamlit run app.py --server.port 8600`` then
``python bench/screenshots.py http://127.0.0.1:8600 docs/images``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from playwright.sync_api import expect, sync_playwright

# the repository first and bench/ out: bench/pages.py would hide the pages package
sys.path[:] = [str(Path(__file__).resolve().parents[1])] + [
    p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from app import PAGES  # noqa: E402
from tests.e2e.conftest import CHROMIUM, CHROMIUM_FLAGS  # noqa: E402


def main(url: str, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1500, "height": 4200})  # the app scrolls inside its own container
        page.goto(url)
        # app.py's st.navigation sits at the top (the pages-folder navigation is off in .streamlit/config.toml)
        expect(page.get_by_test_id("stApp")).to_have_attribute("data-test-script-state", "notRunning",
                                                               timeout=180_000)
        for _path, title, _icon in PAGES:
            nav = page.get_by_test_id("stTopNavLink").filter(has_text=re.compile(rf"{re.escape(title)}\s*$"))
            expect(nav).to_have_count(1, timeout=60_000)
            nav.click()
            expect(page.get_by_role("heading", name=title, exact=True).first).to_be_visible(timeout=90_000)
            page.wait_for_timeout(300)
            expect(page.get_by_test_id("stApp")).to_have_attribute("data-test-script-state", "notRunning",
                                                                   timeout=180_000)
            charts = page.get_by_test_id("stPlotlyChart")
            expect(page.locator(".js-plotly-plot")).to_have_count(charts.count(), timeout=60_000)
            page.wait_for_timeout(4000)
            page.screenshot(path=str(out / f"{title.lower()}.png"), full_page=True)
            print("saved", out / f"{title.lower()}.png")
        browser.close()


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
