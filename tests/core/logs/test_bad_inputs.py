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
from core.logs import MIN_FIT_POINTS, RunLog, read_log, read_log_file
from core.logs.points import check_points, is_forecastable

CORPUS_DIR = Path(__file__).resolve().parents[2] / "data" / "bad_inputs"
_spec = importlib.util.spec_from_file_location("make_corpus", CORPUS_DIR / "make_corpus.py")
make_corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_corpus)
CORPUS = make_corpus.CORPUS
UNFIT = make_corpus.UNFIT
READABLE = make_corpus.READABLE


def test_the_corpus_on_disk_is_the_one_the_script_writes():
    assert len(CORPUS) + len(UNFIT) >= 30
    for name, (data, _) in {**CORPUS, **UNFIT, **READABLE}.items():
        assert (CORPUS_DIR / name).read_bytes() == data, f"{name}: run make_corpus.py"
    on_disk = {p.name for p in CORPUS_DIR.iterdir() if p.name != "make_corpus.py"}
    assert on_disk == set(CORPUS) | set(UNFIT) | set(READABLE)


@pytest.mark.parametrize("name", list(UNFIT))
def test_a_run_too_short_to_fit_is_refused_naming_it_and_what_it_lacks(name):
    """Issue 36: one row, every row at step 0, two points: refused where a run is read to be fitted."""
    assert MIN_FIT_POINTS == 4                      # Optimus's 3 parameters + 1 (core.curves.min_fit_points)
    with pytest.raises(LogFormatError) as info:
        read_log_file(CORPUS_DIR / name, min_points=MIN_FIT_POINTS)
    assert info.value.source == name
    assert re.match(rf"{re.escape(name)}: (?:{UNFIT[name][1]})", str(info.value)), str(info.value)
    log = read_log_file(CORPUS_DIR / name)          # min_points=1: the table as it is, never forecastable
    assert not is_forecastable(log)
    with pytest.raises(LogFormatError, match=rf"^{re.escape(name)}: expected at least 4 points"):
        check_points(log)


def test_three_points_are_refused_and_four_are_read():
    rows = "".join(f"{s},{2.0 / s}\n" for s in range(1, 5))
    with pytest.raises(LogFormatError, match=r"^three\.csv: .*; got 3 \('loss'\)\.$"):
        read_log(("step,loss\n" + rows.rsplit("\n", 2)[0] + "\n").encode(), "three.csv", min_points=MIN_FIT_POINTS)
    assert read_log(("step,loss\n" + rows).encode(), "four.csv", min_points=MIN_FIT_POINTS).n_points == 4


def test_an_accuracy_only_run_counts_its_accuracy_points():
    rows = "".join(f"{s},{0.1 * s}\n" for s in range(1, 6))
    log = read_log(("step,acc\n" + rows).encode(), "acc.csv", roles={"loss": None}, min_points=MIN_FIT_POINTS)
    assert log.n_points == 5 and is_forecastable(log)


def test_real_runs_of_few_evaluations_load_flagged_not_refused():
    """A Pollux BERT trace has 2 evaluations (real, finished runs): loaded for its measured values, flagged, never
    fitted; an MLPerf LLM log of 5 evaluations is forecastable."""
    root = CORPUS_DIR.parents[2]
    bert = read_log_file(root / "data" / "pollux_traces" / "bert" / "validation-12.csv", min_points=MIN_FIT_POINTS)
    assert bert.n_points == 2 and not is_forecastable(bert)
    assert bert.flags[-1] == ("2 evaluation(s): fewer than the 4 a curve fit needs; measured values only, not "
                              "fitted or forecast")
    lora = read_log_file(root / "tests" / "data" / "llm" / "mlperf_v5.0" / "llama2_70b_lora"
                         / "Dell__16xXE9712x4GB200" / "result_0.txt", min_points=MIN_FIT_POINTS)
    assert lora.n_points == 5 and is_forecastable(lora)


@pytest.mark.parametrize("name", list(READABLE))
def test_a_good_run_with_another_separator_is_read_as_the_comma_file(name):
    """Issue 36: semicolons and tabs are sniffed; a decimal comma is read as a decimal point, never as text or as
    another number (a file mixing both is refused: decimal_comma_and_point.csv in CORPUS)."""
    log = read_log_file(CORPUS_DIR / name, min_points=MIN_FIT_POINTS)
    assert log.frame["loss"].round(4).tolist() == READABLE[name][1]
    assert log.frame["acc"].tolist() == [0.5] * 10 and log.frame["global_step"].tolist() == list(range(1, 11))
    assert ("decimal commas read as decimal points in 'loss', 'acc'" in log.flags) == ("decimal_comma" in name)


def test_a_text_column_with_commas_in_a_semicolon_file_is_left_as_text():
    rows = "".join(f"1;{s};{2.0 / s:.4f};a,{s}\n" for s in range(1, 6))
    log = read_log(("epoch;step;loss;note\n" + rows).encode(), "notes.csv")
    assert log.frame["loss"].iloc[1] == 1.0 and log.flags == ()


def test_commas_that_may_separate_thousands_are_refused_not_read_as_decimals():
    """A tab file whose steps read 1,000 2,000 ...: thousands (1000) or decimals (1.0)? Never guessed: refused by
    name (it was read as steps 1.0, 2.0 ... with only a flag). One value with other than three digits after its
    comma (2,5) settles it: a decimal comma."""
    thousands = "step\tloss\n" + "".join(f"{s},000\t{2 + 1 / s:.4f}\n" for s in range(1, 9))
    with pytest.raises(LogFormatError, match=r"thousands.csv: .*column 'step'.*'1,000', which reads as a thousands "
                                             r"separator as well as a decimal comma"):
        read_log(thousands.encode(), "thousands.csv")
    decimals = "step;loss\n" + "".join(f"{s};2,{500 + s}\n" for s in range(1, 8)) + "8;2,5\n"
    log = read_log(decimals.encode(), "decimals.csv")
    assert log.frame["loss"].tolist()[:2] == [2.501, 2.502] and log.frame["loss"].iloc[-1] == 2.5


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
