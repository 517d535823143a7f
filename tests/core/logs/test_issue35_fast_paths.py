"""Issue 35: the reader's fast paths give what the careful paths give, on inputs chosen to trip them.

Each fast path is checked against an independent careful computation written here (the regular expression
over the whole text, pandas' ``nunique``), not against itself.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from core.logs import read_log, read_log_file
from core.logs.points import curve_points, distinct_count
from core.logs.speedrun import is_speedrun

#: the careful test: a ``step:N/M ... train_time:`` line anywhere, found by scanning every line
_CAREFUL_STEP_LINE = re.compile(rb"(?m)^step:\d+/\d+ [^\n]*train_time:")


def careful_is_speedrun(data: bytes) -> bool:
    return (_CAREFUL_STEP_LINE.search(data) is not None
            or (b"NVIDIA-SMI" in data and b"train_time" in data and b"val_loss" in data))


_CSV_ROWS = b"".join(b"%d, %d, %.4f, 0.5\n" % (e, s, 2.0 / (e * 10 + s)) for e in range(1, 400) for s in range(1, 11))

SPEEDRUN_TRICKS = {
    "first line": b"step:0/10 val_loss:10.8 train_time:0ms step_avg:nanms\n",
    "after a newline": b"import torch\nstep:1/10 train_loss:4.0 train_time:5ms step_avg:5.00ms\n",
    "after a CRLF": b"import torch\r\nstep:1/10 train_loss:4.0 train_time:5ms step_avg:5.00ms\r\n",
    "deep in a large CSV": b"epoch, step, loss, acc\n" + _CSV_ROWS + b"step:1/10 x:1 train_time:5ms\n" + _CSV_ROWS,
    "step: inside a line only": b"epoch,loss\n1,2 step:1/10 train_time:5ms\n",
    "step: at a line start, no train_time": b"epoch,loss\nstep:1/10 loss:2\n",
    "step: with no number": b"step:a/10 train_time:5ms\n",
    "a course CSV": b"epoch, step, loss, acc\n" + _CSV_ROWS,
    "nvidia-smi table before the first step": b"| NVIDIA-SMI 535 |\nval_loss train_time\n",
    "empty": b"",
}


@pytest.mark.parametrize("data", SPEEDRUN_TRICKS.values(), ids=SPEEDRUN_TRICKS.keys())
def test_the_speedrun_sniff_answers_as_the_scan_of_every_line_does(data):
    assert is_speedrun(data) == careful_is_speedrun(data)


def test_the_speedrun_tricks_hold_both_answers():
    answers = {name: careful_is_speedrun(data) for name, data in SPEEDRUN_TRICKS.items()}
    assert answers["deep in a large CSV"] and answers["after a CRLF"] and answers["first line"]
    assert not answers["a course CSV"] and not answers["step: inside a line only"]


def _arrays(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    steps = np.sort(rng.integers(0, 50, 200)).astype(float)
    with_nan = steps.copy()
    with_nan[[0, 57, 199]] = np.nan
    return {
        "sorted with repeats": steps,
        "sorted, NaN inside": with_nan,
        "unsorted": rng.permutation(steps),
        "one step back (a restart)": np.r_[np.arange(10.0), np.arange(5.0, 20.0)],
        "integers": np.arange(30, dtype=np.int64).repeat(3),
        "one value": np.array([4.0]),
        "empty": np.array([], dtype=float),
        "all NaN": np.full(5, np.nan),
        "inf at the end": np.r_[np.arange(5.0), np.inf, np.inf],
        "-0.0 and 0.0": np.array([-0.0, 0.0, 1.0]),
    }


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_distinct_count_is_pandas_nunique(seed):
    for name, values in _arrays(seed).items():
        assert distinct_count(values) == pd.Series(values).nunique(), name


def _careful_curve_points(log) -> tuple[int, str]:
    frame = log.frame
    best = (0, "loss")
    for column in dict.fromkeys(["loss", "acc", *log.metrics.values()]):
        if column in frame:
            n = int(frame.loc[frame[column].notna(), "global_step"].nunique())
            best = max(best, (n, column), key=lambda t: t[0])
    return best


LOGS = {
    "course": b"epoch, step, loss, acc\n" + _CSV_ROWS,
    "lightning, sparse": (b"epoch,step,train_loss,val_loss,val_acc\n0,9,2.0,,\n0,9,,1.9,0.3\n0,19,1.8,,\n"
                          b"1,29,1.6,,\n1,29,,1.5,0.5\n1,39,1.4,,\n2,49,1.2,,\n2,49,,1.1,0.6\n"),
    "accuracy at fewer steps": b"step,loss,acc\n1,2.0,0.1\n2,1.5,\n3,1.2,\n4,1.0,0.4\n5,0.9,\n",
    "steps out of order": b"step,loss\n5,1.0\n1,2.0\n3,1.5\n2,1.8\n4,1.2\n",
}


@pytest.mark.parametrize("data", LOGS.values(), ids=LOGS.keys())
def test_curve_points_counts_as_nunique_does(data):
    log = read_log(data, "resnet20_V100.csv")
    assert curve_points(log) == _careful_curve_points(log)


SPEEDRUN_LOG = (b"import torch\n# the script\n"
                + b"".join(b"step:%d/6 %strain_time:%dms step_avg:5.00ms\n"
                           % (i, b"val_loss:%.3f " % (4.0 - 0.1 * i) if i % 2 == 0 else b"", 5 * i)
                           for i in range(7)))
MLLOG = b"".join(b':::MLLOG {"key": "%s", "value": %s, "time_ms": %d, "metadata": {"epoch_num": %d}}\n'
                 % (key, value, t, epoch) for key, value, t, epoch in (
                     (b"global_batch_size", b"256", 0, 0), (b"run_start", b"null", 1000, 0),
                     (b"eval_accuracy", b"0.5", 2000, 1), (b"eval_accuracy", b"0.7", 3000, 2),
                     (b"eval_accuracy", b"0.76", 4000, 3), (b"run_stop", b"null", 4500, 3)))


@pytest.mark.parametrize("name, data", [("record/abc.txt", SPEEDRUN_LOG), ("sys/result_0.txt", MLLOG),
                                        ("runs/resnet20_V100.csv", LOGS["course"])], ids=["speedrun", "mllog", "csv"])
def test_read_log_file_sniffs_once_and_reads_as_read_log_does(tmp_path, name, data):
    path = tmp_path / name
    path.parent.mkdir(parents=True)
    path.write_bytes(data)
    from_file = read_log_file(path)
    prefix = name.split("/")[0] + "/" if not name.endswith(".csv") else ""     # folder-named formats
    from_bytes = read_log(data, prefix + path.name, path=str(path))
    assert from_file.source == from_bytes.source
    assert (from_file.fmt, from_file.flags) == (from_bytes.fmt, from_bytes.flags)
    pd.testing.assert_frame_equal(from_file.frame, from_bytes.frame)


MLLOG_TRICKS = {
    "marker first": b':::MLLOG {"key": "run_start"}\n',
    "marker after timestamps": b"2024-01-01 12:00:00 start\n" * 1000 + b':::MLLOG {"key": "run_start"}\n',
    "colons but no marker": b"time,loss\n12:00:01,2.0\n12:00:02,1.0\n",
    "no colon": b"epoch, step, loss, acc\n" + _CSV_ROWS,
    "two colons only": b"::MLLOG\n",
}


@pytest.mark.parametrize("data", MLLOG_TRICKS.values(), ids=MLLOG_TRICKS.keys())
def test_the_mllog_sniff_answers_as_the_marker_search_does(data):
    from core.logs import is_mllog

    assert is_mllog(data) == (b":::MLLOG" in data)


def test_a_decimal_comma_file_whose_first_lines_look_like_plain_csv_is_read_as_its_decimal_point_twin():
    # the separator is sniffed on the first lines, which hold whole numbers only: the decimal commas further down
    # must still be read as decimal points, never as a second separator or text
    rows = [(e, s, 3.0 / (e * 20 + s)) for e in range(1, 31) for s in range(1, 21)]
    head = "epoch;step;loss\n" + "".join(f"{e};{s};{i + 2}\n" for i, (e, s, _) in enumerate(rows[:8]))
    comma = head + "".join(f"{e};{s};{y:.6f}".replace(".", ",") + "\n" for e, s, y in rows[8:])
    point = head + "".join(f"{e};{s};{y:.6f}\n" for e, s, y in rows[8:])
    log_comma = read_log(comma.encode(), "resnet20_V100.csv")
    log_point = read_log(point.encode(), "resnet20_V100.csv")
    pd.testing.assert_frame_equal(log_comma.frame, log_point.frame)
    assert log_comma.frame["loss"].iloc[8] == pytest.approx(float(f"{rows[8][2]:.6f}"))
    assert "decimal commas read as decimal points in 'loss'" in log_comma.flags


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sorted_unique_is_numpy_unique(seed):
    from core.logs.csv_steps import sorted_unique

    for name, values in _arrays(seed).items():
        finite = values[np.isfinite(values)]
        assert sorted_unique(finite).tolist() == np.unique(finite).tolist(), name


def test_the_line_bound_still_refuses_a_file_of_more_lines(monkeypatch):
    # the newline count is skipped only where the file has fewer bytes than the bound has lines
    import core.tables
    from core.errors import LogFormatError

    monkeypatch.setattr(core.tables, "MAX_LINES", 50)
    with pytest.raises(LogFormatError, match=r"many.csv: expected at most 50 rows; got 61"):
        read_log(b"step,loss\n" + b"".join(b"%d,%d\n" % (i, 100 - i) for i in range(60)), "many.csv")


NOISE_TRICKS = {
    "a course log": b"epoch, step, loss, acc\n" + _CSV_ROWS,
    "a Pollux trace": b"progress,iteration,metric,grad_sqr,grad_var\n391,390,0.4,8.0,5.0\n782,780,0.5,6.0,5.5\n",
    "upper case after blank lines, CRLF": b"\r\n\r\n progress,GNS\r\n1,2\r\n2,3\r\n",
    "a name in a data row only": b"step,loss,note\n1,2.0,gns\n2,1.5,grad_var\n",
    "a quoted name over two lines": b'step,"noise\nscale",loss\n1,2,3\n',
    "a quoted name": b'step,"noise_scale",loss\n1,20,3\n2,30,2\n',
    "a UTF-8 BOM": b"\xef\xbb\xbfgns,step\n10,1\n12,2\n",
    "a first line past 64 KiB": b",".join([b"c%d" % i for i in range(12000)] + [b"gns"]) + b"\n"
                                + b",".join([b"1"] * 12001) + b"\n",
    "only grad_sqr": b"step,grad_sqr\n1,2.0\n",
}


def _noise_answer(data: bytes):
    from core.errors import LogFormatError
    from core.logs.noise import read_gradient_noise

    try:
        got = read_gradient_noise(data, "n.csv")
    except LogFormatError as exc:
        return ("refused", str(exc))
    if got is None:
        return None
    return tuple((k, None if v is None else np.asarray(v).tolist()) for k, v in sorted(vars(got).items()))


@pytest.mark.parametrize("data", NOISE_TRICKS.values(), ids=NOISE_TRICKS.keys())
def test_the_noise_columns_gate_answers_as_parsing_every_file_does(data, monkeypatch):
    import core.logs.noise

    fast = _noise_answer(data)
    monkeypatch.setattr(core.logs.noise, "may_name_noise_columns", lambda data: True)   # the careful way
    assert fast == _noise_answer(data)


def test_the_noise_tricks_hold_every_answer():
    answers = {name: _noise_answer(data) for name, data in NOISE_TRICKS.items()}
    assert answers["a course log"] is None and answers["a name in a data row only"] is None
    assert answers["only grad_sqr"][0] == "refused"
    found = [name for name, a in answers.items() if a is not None and a[0] != "refused"]
    assert set(found) >= {"a Pollux trace", "upper case after blank lines, CRLF", "a quoted name", "a UTF-8 BOM",
                          "a first line past 64 KiB"}
