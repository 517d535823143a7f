"""Speed-table reader: documented columns, the Pollux format, and errors that name file and row."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.errors import InputError, LogFormatError
from core.speed.table import has_parameter_servers, normalise_speed_table, read_speed_table

POLLUX = Path(__file__).resolve().parents[3] / "data" / "pollux_traces"


def test_reads_steps_per_s_with_spaces_after_commas():
    df = read_speed_table(b"p, w, global_batch, steps_per_s\n2, 4, 128, 0.5\n4, 8, 128, 0.8\n")
    assert df.to_dict("records") == [
        {"p": 2, "w": 4, "global_batch": 128.0, "steps_per_s": 0.5},
        {"p": 4, "w": 8, "global_batch": 128.0, "steps_per_s": 0.8}]


def test_step_time_becomes_steps_per_s():
    # 0.25 s per step → 4 steps per second
    df = read_speed_table(b"n_ps,n_workers,step_time_s\n1,2,0.25\n")
    assert df.loc[0, "steps_per_s"] == 4.0 and df.loc[0, "p"] == 1 and df.loc[0, "w"] == 2


def test_samples_per_s_needs_and_uses_the_batch():
    # 512 samples/s at M = 128 → 4 steps per second
    data = b"p,w,samples_per_s\n2,4,512\n"
    assert read_speed_table(data, global_batch=128).loc[0, "steps_per_s"] == 4.0
    with pytest.raises(LogFormatError, match=r"<input>: expected the global batch M .*--batch M"):
        read_speed_table(data)


def test_batch_column_wins_over_argument_and_fills_gaps():
    df = normalise_speed_table(pd.DataFrame({"w": [1, 2], "M": [64, None], "steps_per_s": [1.0, 2.0]}),
                               global_batch=256)
    assert df["global_batch"].tolist() == [64.0, 256.0]


def test_pollux_scalability_reads_as_allreduce_with_m_per_row():
    df = read_speed_table(POLLUX / "cifar10" / "scalability.csv")
    raw = pd.read_csv(POLLUX / "cifar10" / "scalability.csv")
    assert len(df) == len(raw) == 329
    assert (df["p"] == 0).all()
    # first row: 6 replicas × local batch 32 = 192 samples; 1/0.14090566635131835 steps/s
    assert df.loc[0, "w"] == 6 and df.loc[0, "global_batch"] == 192.0
    assert df.loc[0, "steps_per_s"] == pytest.approx(1 / 0.14090566635131835)
    np.testing.assert_allclose(df["global_batch"], raw["num_replicas"] * raw["local_bsz"])
    assert not has_parameter_servers(df)


def test_normalising_twice_is_a_no_op():
    once = read_speed_table(POLLUX / "yolov3" / "scalability.csv")
    pd.testing.assert_frame_equal(normalise_speed_table(once), once)


@pytest.mark.parametrize("csv, message", [
    (b"p,w,loss\n1,2,0.5\n", r"speeds\.csv: expected columns w .* and one of steps_per_s, step_time_s, "
                             r"step_time, samples_per_s; got p, w, loss\."),
    (b"p,w,steps_per_s,step_time_s\n1,2,1,1\n", r"expected one speed column; got steps_per_s, step_time_s"),
    (b"p,w,steps_per_s\n1,2,1\n1,0,1\n", r"expected w integers >= 1; got 0 in row 2"),
    (b"p,w,steps_per_s\n1,2.5,1\n", r"expected w integers >= 1; got 2\.5 in row 1"),
    (b"p,w,steps_per_s\n1,2,fast\n", r"expected steps_per_s numbers > 0; got 'fast' in row 1"),
    (b"p,w,step_time_s\n1,2,-0.1\n", r"expected step_time_s numbers > 0; got -0\.1 in row 1"),
    (b"p,w,steps_per_s\n-1,2,1\n", r"expected p integers >= 0; got -1 in row 1"),
    (b"w,global_batch,local_bsz,steps_per_s\n1,8,8,1\n", r"expected one batch column"),
    (b"p,w,steps_per_s\n", r"expected at least one measured row; got none"),
    (b"", r"speeds.csv: the file is empty; expected a CSV header and rows"),
])
def test_bad_tables_are_refused_naming_file_and_problem(csv, message):
    with pytest.raises(LogFormatError, match=message) as info:
        read_speed_table(csv, source="speeds.csv")
    assert info.value.source == "speeds.csv"


def test_missing_file_is_named(tmp_path):
    with pytest.raises(LogFormatError, match=r"nope\.csv: cannot be read: No such file or directory"):
        read_speed_table(tmp_path / "nope.csv")


def test_dataframe_errors_are_input_errors():
    with pytest.raises(InputError, match=r"table: expected w integers >= 1; got 0 in row 1"):
        normalise_speed_table(pd.DataFrame({"w": [0], "steps_per_s": [1.0]}))
    with pytest.raises(InputError, match=r"expected global_batch M > 0 samples per step; got -3"):
        normalise_speed_table(pd.DataFrame({"w": [1], "steps_per_s": [1.0]}), global_batch=-3)


def test_reader_does_not_modify_a_frame():
    df = pd.DataFrame({"num_replicas": [4], "local_bsz": [32], "step_time": [0.5]})
    before = df.copy()
    normalise_speed_table(df)
    pd.testing.assert_frame_equal(df, before)
