"""Text from a user's files is shown as text and exported as inert cells (issue 15, F6 and F7).

A file name, a column header and a model name carrying Markdown (a link, an image from another
host, bold text, a Streamlit colour directive) must appear literally: no link, no image, no
formatting; and the fits table downloaded as CSV must not start a cell with a formula.
"""

from __future__ import annotations

import pandas as pd
from playwright.sync_api import Page, expect

from tests.e2e.conftest import WAIT_MS, download, goto_page, no_exception, wait_idle

IMAGE = "![p](https:evil.example)"
LINK = "[click](https:evil.example)"


def _log(path, loss_column: str = "loss"):
    rows = [f"epoch, step, {loss_column}, acc"]
    for e in range(1, 6):
        for s in range(1, 21):
            k = (e - 1) * 20 + s
            rows.append(f"{e}, {s}, {1 / (0.02 * k + 0.5) + 0.05:.6f}, {0.6 + 0.07 * e:.4f}")
    path.write_text("\n".join(rows) + "\n")
    return path


def test_markdown_in_names_is_shown_as_text_and_exports_are_inert(page: Page, app_url, tmp_path):
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    goto_page(page, app_url, "Logs")
    good = _log(tmp_path / f"=1+2 {IMAGE} **bold** :red[x].csv")
    bad = _log(tmp_path / "headers.csv", loss_column=f"{LINK} q")          # no loss column: an error names it
    page.get_by_test_id("stFileUploader").locator("input[type=file]").set_input_files([str(good), str(bad)])
    wait_idle(page, timeout=WAIT_MS)
    expect(page.get_by_text("Fitted runs (13)")).to_be_visible(timeout=WAIT_MS)
    error = page.get_by_test_id("stAlertContentError").filter(has_text="headers.csv")
    expect(error).to_contain_text(LINK, timeout=WAIT_MS)                   # the header, literally
    sidebar = page.get_by_test_id("stSidebar")
    expect(sidebar).to_contain_text(f"=1+2 {IMAGE} **bold** :red[x].csv")
    app = page.get_by_test_id("stApp")
    assert app.locator("a[href*='evil']").count() == 0
    assert app.locator("img[src*='evil']").count() == 0
    assert app.locator("strong", has_text="bold").count() == 0
    assert not [u for u in requests if "evil" in u]

    table = tmp_path / "fits.csv"
    download(page, page, "Table (CSV)", table)
    files = pd.read_csv(table)["file"].tolist()
    assert f"'=1+2 {IMAGE} **bold** :red[x].csv" in files                # neutralised, not a formula
    assert not [f for f in files if str(f).startswith(("=", "+", "-", "@"))]
    no_exception(page)
