"""Uploads on the Logs page: removing a file unloads it, a session holds a bounded amount, memory
stays bounded when large logs are uploaded in turn (issue 15, F4 and F5)."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from tests.pages.conftest import open_page, shown

UPLOADER = "logs_upload_0"


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
    at.file_uploader(key=UPLOADER).set_value([("a_V100.csv", large, "text/csv"),
                                              ("b_V100.csv", large, "text/csv"),
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
