"""The bad-input corpus (tests/data/bad_inputs) through core: each file refused with a message that
names it and its problem, in bounded time and memory; and arbitrary rows (very wide ones too)
never make the reader hang or balloon (issue 15)."""

from __future__ import annotations

import importlib.util
import re
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.errors import LogFormatError
from core.logs import RunLog, read_log, read_log_file

CORPUS_DIR = Path(__file__).resolve().parents[2] / "data" / "bad_inputs"
_spec = importlib.util.spec_from_file_location("make_corpus", CORPUS_DIR / "make_corpus.py")
make_corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_corpus)
CORPUS = make_corpus.CORPUS


def test_the_corpus_on_disk_is_the_one_the_script_writes():
    assert len(CORPUS) >= 30
    for name, (data, _) in CORPUS.items():
        assert (CORPUS_DIR / name).read_bytes() == data, f"{name}: run make_corpus.py"


@pytest.mark.parametrize("name", list(CORPUS))
def test_each_bad_file_is_refused_naming_it_and_the_problem(name):
    with pytest.raises(LogFormatError) as info:
        read_log_file(CORPUS_DIR / name)
    assert info.value.source == name
    assert re.match(rf"{re.escape(name)}: (?:{CORPUS[name][1]})", str(info.value)), str(info.value)


def test_a_row_of_two_million_fields_is_refused_at_that_row_without_parsing_it():
    """Issue 15, F1: a 4 MB line once cost minutes and gigabytes through pandas' fallback. The memory peak
    (deterministic, unlike a duration) shows the row is refused before pandas splits it."""
    data = (b"epoch,step,loss,acc\n" + b",".join([b"1"] * 2_000_000) + b"\n"
            + "".join(f"1,{s},{1 / s:.4f},0.5\n" for s in range(1, 200)).encode())
    tracemalloc.start()
    with pytest.raises(LogFormatError, match=r"^wide\.csv: expected 4 fields per row as in the header; line 2 has "
                                             r"2,000,000"):
        read_log(data, "wide.csv")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 200 * 2**20, peak          # 2 million parsed fields would take gigabytes


def test_special_files_are_refused_before_reading(tmp_path):
    fifo = tmp_path / "pipe.csv"
    import os
    os.mkfifo(fifo)
    for path in (Path("/dev/zero"), fifo, tmp_path):
        with pytest.raises(LogFormatError, match="expected a regular file"):
            read_log_file(path)


def test_utf16_with_a_byte_order_mark_is_read():
    text = "epoch,step,loss,acc\n" + "".join(f"1,{s},{2 / s:.4f},0.5\n" for s in range(1, 11))
    for encoding in ("utf-16", "utf-16-be"):
        data = text.encode(encoding) if encoding == "utf-16" else b"\xfe\xff" + text.encode(encoding)
        log = read_log(data, "excel.csv")
        assert log.n_points == 10 and log.frame["loss"].iloc[0] == 2.0


cells = st.one_of(st.integers(-5, 10**6).map(str), st.floats(allow_nan=True).map(lambda f: f"{f:.4g}"),
                  st.text(alphabet="abc ;\"\t,", max_size=6), st.just(""))
rows = st.lists(st.lists(cells, min_size=0, max_size=12), min_size=0, max_size=40)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=rows, wide=st.integers(0, 200_000), where=st.integers(0, 40))
def test_arbitrary_rows_are_read_or_refused_in_bounded_memory(rows, wide, where):
    lines = ["epoch,step,loss,acc"] + [",".join(r) for r in rows]
    if wide:
        lines.insert(min(where, len(lines) - 1) + 1, ",".join(["1"] * wide))
    data = ("\n".join(lines) + "\n").encode()
    # the memory peak, not a duration, is the bound: the old reader's minutes came with gigabytes
    tracemalloc.start()
    try:
        result = read_log(data, "random.csv")
        assert isinstance(result, RunLog)
    except LogFormatError as exc:
        assert str(exc).startswith("random.csv: ")
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert peak < 100 * 2**20 + 50 * len(data), peak
