"""A representative part of the bad-input corpus uploaded in a real browser: each file gets one
message naming it and its problem, the good file beside them is fitted, no traceback (issue 15)."""

from __future__ import annotations

import importlib.util

from playwright.sync_api import Page, expect

from tests.conftest import ROOT
from tests.e2e.conftest import WAIT_MS, goto_page, no_exception, wait_idle

CORPUS_DIR = ROOT / "tests" / "data" / "bad_inputs"
_spec = importlib.util.spec_from_file_location("make_corpus", CORPUS_DIR / "make_corpus.py")
make_corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_corpus)
SUBSET = ["png_image.csv", "excel.xlsx.csv", "latin1.csv", "wide_row.csv", "no_loss_column.csv",
          "utf16_no_bom.csv", "header_only.csv"]


def test_bad_uploads_are_each_named_and_a_good_one_is_fitted(page: Page, app_url, tmp_path):
    good = tmp_path / "resnet97_Tesla V100-PCIE-32GB.csv"
    good.write_text("epoch, step, loss, acc\n" + "".join(
        f"{e}, {s}, {1 / (0.02 * ((e - 1) * 20 + s) + 0.5) + 0.05:.6f}, {0.6 + 0.07 * e:.4f}\n"
        for e in range(1, 6) for s in range(1, 21)))
    goto_page(page, app_url, "Logs")
    page.get_by_test_id("stFileUploader").locator("input[type=file]").set_input_files(
        [str(CORPUS_DIR / name) for name in SUBSET] + [str(good)])
    wait_idle(page, timeout=WAIT_MS)
    expect(page.get_by_text("Fitted runs (13)")).to_be_visible(timeout=WAIT_MS)
    errors = page.get_by_test_id("stAlertContentError")
    expect(errors).to_have_count(len(SUBSET), timeout=WAIT_MS)
    for name in SUBSET:
        message = errors.filter(has_text=f"{name}: ")
        expect(message).to_have_count(1)
        problem = make_corpus.CORPUS[name][1].split("|")[0].replace("\\", "").split(".*")[0][:30]
        expect(message).to_contain_text(problem)
    no_exception(page)
    assert "Traceback" not in page.get_by_test_id("stApp").inner_text()
