"""Uploads on the Logs page: removing a file unloads it, a session holds a bounded amount, memory
stays bounded when large logs are uploaded in turn (issue 15, F4 and F5); files of one name stay two
runs, the same bytes twice are one, and every malformed file gets one message naming it (issue 36)."""

from __future__ import annotations

import gc
import re

import numpy as np
import pytest

from tests.conftest import ROOT
from tests.pages.conftest import open_page, shown

UPLOADER = "logs_upload_0"
CORPUS_DIR = ROOT / "tests" / "data" / "bad_inputs"


def course_log(rows_per_epoch: int = 20, epochs: int = 5, b0: float = 0.02) -> bytes:
    k = np.arange(1, rows_per_epoch * epochs + 1)
    e, s = (k - 1) // rows_per_epoch + 1, (k - 1) % rows_per_epoch + 1
    loss = 1 / (b0 * k + 0.5) + 0.05
    acc = 0.6 + 0.07 * e
    lines = "\n".join(f"{a}, {b}, {c:.6f}, {d:.4f}" for a, b, c, d in zip(e, s, loss, acc))
    return ("epoch, step, loss, acc\n" + lines + "\n").encode()


def fitted_files(at) -> list[str]:
    return list(at.dataframe[0].value.index)


def test_removing_a_file_from_the_uploader_unloads_it_and_the_button_clears_all():
    at = open_page()
    builtin = len(fitted_files(at))
    at.file_uploader(key=UPLOADER).set_value([("resnet98_V100.csv", course_log(), "text/csv"),
                                              ("resnet99_V100.csv", course_log(b0=0.03), "text/csv")]).run()
    assert {"resnet98_V100.csv", "resnet99_V100.csv"} <= set(fitted_files(at))
    at.file_uploader(key=UPLOADER).set_value([("resnet98_V100.csv", course_log(), "text/csv")]).run()  # ✕ on 99
    files = fitted_files(at)
    assert "resnet98_V100.csv" in files and "resnet99_V100.csv" not in files
    assert at.session_state["log_files"].keys() == {"resnet98_V100.csv"}
    at.sidebar.button(key="clear_uploads").click().run()
    assert len(fitted_files(at)) == builtin and at.session_state["log_files"] == {}
    assert at.session_state["logs_upload_generation"] == 1          # a fresh, empty uploader
    assert not at.exception


def test_a_session_holds_a_bounded_amount_of_uploads(monkeypatch):
    import pages.shared.uploads as uploads

    monkeypatch.setattr(uploads, "MAX_SESSION_UPLOAD_BYTES", 30_000)
    at = open_page()
    small, large = course_log(), course_log(rows_per_epoch=200)      # ~2 kB and ~25 kB
    other = course_log(rows_per_epoch=200, b0=0.03)                  # other bytes (the same bytes are one run)
    at.file_uploader(key=UPLOADER).set_value([("a_V100.csv", large, "text/csv"),
                                              ("b_V100.csv", other, "text/csv"),
                                              ("resnet20_V100.csv", small, "text/csv")]).run()
    assert set(at.session_state["log_files"]) == {"a_V100.csv", "resnet20_V100.csv"}
    errors = [shown(e.value) for e in at.error]
    assert len(errors) == 1 and errors[0].startswith("b_V100.csv: not loaded: this session already holds 0 MB")
    assert not at.exception


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


def test_memory_stays_bounded_when_large_logs_are_uploaded_in_turn():
    """Eight different ~12 MB logs, each replacing the last: what the session keeps of an upload
    goes with it, so resident memory ends within 250 MB of where it was after the first."""
    at = open_page()
    logs = [course_log(rows_per_epoch=40_000, epochs=10, b0=0.0001 * (i + 1)) for i in range(8)]
    assert all(10e6 < len(b) < 15e6 for b in logs)
    after = []
    for i, data in enumerate(logs):
        at.file_uploader(key=UPLOADER).set_value([(f"resnet{20 + i}_V100.csv", data, "text/csv")]).run()
        assert not at.exception and f"resnet{20 + i}_V100.csv" in fitted_files(at)
        gc.collect()
        after.append(_rss_mb())
    assert len(at.session_state["_memo_logs"]) == 1                 # only the file in the uploader
    assert max(after[1:]) - after[0] < 250, after


@pytest.fixture(autouse=True)
def _drop_logs():
    yield
    gc.collect()


# ---------------------------------------------------------------- issue 36: uploads keep their identity
LLM = ROOT / "tests" / "data" / "llm"
EIGHT_B = (LLM / "mlperf_v5.1" / "llama31_8b" / "AMD__MI355X_EPYC_9575F_pytorch" / "result_0.txt").read_bytes()
LORA = (LLM / "mlperf_v5.0" / "llama2_70b_lora" / "Dell__16xXE9712x4GB200" / "result_0.txt").read_bytes()
NAMED_8B, NAMED_LORA = "result_0.txt (llama31_8b, MI355X)", "result_0.txt (llama2_70b_lora, 16xXE9712x4GB200)"


def infos(at) -> list[str]:
    return [shown(i.value) for i in at.info]


def test_two_result_files_of_one_name_are_two_runs_with_names_that_tell_them_apart():
    at = open_page()
    builtin = len(fitted_files(at))
    at.file_uploader(key=UPLOADER).set_value([("result_0.txt", EIGHT_B, "text/plain"),
                                              ("result_0.txt", LORA, "text/plain")]).run()
    assert not at.exception and not at.error
    files = fitted_files(at)
    assert len(files) == builtin + 2 and {NAMED_8B, NAMED_LORA} <= set(files)
    assert set(at.session_state["log_files"]) == {NAMED_8B, NAMED_LORA}
    assert at.session_state["log_files"][NAMED_LORA] == LORA
    assert (f"result_0.txt and result_0.txt differ: loaded as {NAMED_8B} and {NAMED_LORA}.") in infos(at)
    # ✕ on the first chip: exactly that file goes (AppTest gives the chip left a new id: its run is re-read)
    at.file_uploader(key=UPLOADER).set_value([("result_0.txt", LORA, "text/plain")]).run()
    assert list(at.session_state["log_files"].values()) == [LORA]
    assert len(fitted_files(at)) == builtin + 1 and not at.exception


def test_the_same_bytes_under_two_names_are_one_run_and_the_page_says_so():
    at = open_page()
    builtin = len(fitted_files(at))
    at.file_uploader(key=UPLOADER).set_value([("resnet98_V100.csv", course_log(), "text/csv"),
                                              ("copy of resnet98.csv", course_log(), "text/csv")]).run()
    assert fitted_files(at).count("resnet98_V100.csv") == 1 and len(fitted_files(at)) == builtin + 1
    assert at.session_state["log_files"].keys() == {"resnet98_V100.csv"}
    assert ("copy of resnet98.csv has the same bytes as resnet98_V100.csv: loaded once, as resnet98_V100.csv."
            in infos(at))
    assert not at.error and not at.exception


def test_a_session_cap_still_counts_files_told_apart(monkeypatch):
    import pages.shared.uploads as uploads

    monkeypatch.setattr(uploads, "MAX_SESSION_FILES", 1)
    at = open_page()
    at.file_uploader(key=UPLOADER).set_value([("result_0.txt", EIGHT_B, "text/plain"),
                                              ("result_0.txt", LORA, "text/plain")]).run()
    assert list(at.session_state["log_files"]) == [NAMED_8B]
    errors = [shown(e.value) for e in at.error]
    assert len(errors) == 1 and errors[0].startswith("result_0.txt: not loaded: this session already holds")


# ---------------------------------------------------------------- issue 36: every bad file is named
def _corpus():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_corpus", CORPUS_DIR / "make_corpus.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_single_row_zero_steps_and_semicolons_on_the_page():
    corpus = _corpus()
    names = ["single_row.csv", "zero_steps.csv", "two_points.csv", "decimal_comma_and_point.csv", "semicolon.csv",
             "semicolon_decimal_comma.csv"]
    at = open_page()
    builtin = len(fitted_files(at))
    at.file_uploader(key=UPLOADER).set_value([(n, (CORPUS_DIR / n).read_bytes(), "text/csv") for n in names]).run()
    assert not at.exception
    errors = [shown(e.value) for e in at.error]
    expected = {**corpus.CORPUS, **corpus.UNFIT}
    for name in names[:4]:
        mine = [e for e in errors if e.startswith(f"{name}: ")]
        assert len(mine) == 1 and re.match(rf"{re.escape(name)}: (?:{expected[name][1]})", mine[0]), errors
    assert len(errors) == 4
    files = fitted_files(at)
    assert len(files) == builtin + 2 and {"semicolon.csv", "semicolon_decimal_comma.csv"} <= set(files)
    table = at.dataframe[0].value
    assert table.loc["semicolon.csv", "b0"] == pytest.approx(table.loc["semicolon_decimal_comma.csv", "b0"])
    headline = next(m for m in at.metric if m.label == "Runs that reached the target")
    assert headline.value.endswith(f" of {builtin + 2}")            # the refused files are not loaded runs
    warned = [shown(w.value) for w in at.warning if "not loaded and not counted above" in shown(w.value)]
    assert warned == [f"4 file(s) not loaded and not counted above: {', '.join(names[:4])}. Why, under the "
                      "uploader below."]                             # named at the answer too, not only below


def test_every_file_of_the_malformed_corpus_gets_one_named_message_on_the_page():
    corpus = _corpus()
    expected = {**corpus.CORPUS, **corpus.UNFIT}
    at = open_page()
    builtin = len(fitted_files(at))
    at.file_uploader(key=UPLOADER).set_value([(n, (CORPUS_DIR / n).read_bytes(), "text/csv")
                                              for n in expected]).run()
    assert not at.exception
    errors = [shown(e.value) for e in at.error]
    for name, (_, problem) in expected.items():
        mine = [e for e in errors if e.startswith(f"{name}: ")]
        assert len(mine) == 1, (name, errors)
        assert re.match(rf"{re.escape(name)}: (?:{problem})", mine[0]), mine[0]
    assert len(errors) == len(expected) and len(fitted_files(at)) == builtin


def test_the_cross_on_one_of_two_chips_of_one_name_removes_that_file_and_the_other_keeps_its_name():
    """As a browser does it: each chip keeps its file id, so the file left keeps the name it was loaded under.
    (``set_value`` gives every file a new id; the ids are set as the widget's state holds them.)"""
    at = open_page()
    builtin = len(fitted_files(at))
    uploader = at.file_uploader(key=UPLOADER)
    uploader._files = [("chip-a", "result_0.txt", EIGHT_B, "text/plain"),
                       ("chip-b", "result_0.txt", LORA, "text/plain")]
    at.run()
    assert set(at.session_state["log_files"]) == {NAMED_8B, NAMED_LORA}
    uploader = at.file_uploader(key=UPLOADER)
    uploader._files = [("chip-b", "result_0.txt", LORA, "text/plain")]           # ✕ on chip a
    at.run()
    assert at.session_state["log_files"] == {NAMED_LORA: LORA}
    assert NAMED_LORA in fitted_files(at) and len(fitted_files(at)) == builtin + 1
    uploader = at.file_uploader(key=UPLOADER)
    uploader._files = [("chip-b", "result_0.txt", LORA, "text/plain"),
                       ("chip-c", "result_0.txt", LORA, "text/plain")]           # the same file dropped again
    at.run()
    assert at.session_state["log_files"] == {NAMED_LORA: LORA}
    assert f"result_0.txt has the same bytes as {NAMED_LORA}: loaded once, as {NAMED_LORA}." in infos(at)
    uploader = at.file_uploader(key=UPLOADER)
    uploader._files = [("chip-c", "result_0.txt", LORA, "text/plain")]           # ✕ on chip b: c still holds it
    at.run()
    assert list(at.session_state["log_files"].values()) == [LORA] and not at.exception
