"""``python -m core scaling`` through ``core.cli.main``."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from core.cli import main
from core.cli.scaling_cmd import CSV_COLUMNS

DATA = Path(__file__).resolve().parents[2] / "data" / "pollux_traces"


@pytest.fixture
def table(tmp_path) -> Path:
    path = tmp_path / "cluster.csv"
    path.write_text("gpus,batch_per_gpu,step_time_s\n1,128,0.2\n4,32,0.08\n4,128,0.25\n")
    return path


def test_prints_one_csv_row_per_comparison(capsys, table):
    assert main(["scaling", str(table), "--params", "1000000", "--link-gbps", "10",
                 "--samples", "1280"]) == 0
    captured = capsys.readouterr()
    out = pd.read_csv(io.StringIO(captured.out))
    assert list(out.columns) == list(CSV_COLUMNS)
    strong = out[out.scaling == "strong"].iloc[0]
    # strong: 0.2 / 0.08 = 2.5x on 4 GPUs; compute 0.05 s, communication 0.03 s a step;
    # 2 * 3/4 * 1e6 * 4 = 6e6 bytes / 0.03 s = 0.2 GB/s of 10/8 = 1.25 GB/s
    assert strong.speedup == pytest.approx(2.5) and strong.efficiency == pytest.approx(0.625)
    assert strong.communication_est_s == pytest.approx(0.03)
    assert strong.achieved_GB_per_s == pytest.approx(0.2) and strong.link_GB_per_s == 1.25
    weak = out[out.scaling == "weak"].iloc[0]
    # weak: 4 * 0.2 / 0.25 = 3.2x; compute 0.2 s, communication 0.05 s
    assert weak.speedup == pytest.approx(3.2) and weak.communication_est_s == pytest.approx(0.05)
    assert "note: Compute and communication are estimates" in captured.err


def test_reads_a_pollux_trace_folder(capsys):
    assert main(["scaling", str(DATA / "cifar10"), "--params", "11173962"]) == 0
    out = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert set(out.scaling) == {"strong", "weak"} and (out.baseline_gpus == 1).all()
    assert (out.speedup < 1).any()                   # 2 GPUs on 2 nodes: slower than 1 GPU


@pytest.mark.parametrize("args, message", [
    (["missing.csv", "--params", "10"], "missing.csv: cannot be read: No such file or directory."),
    (["{table}", "--params", "ten"], "cluster.csv: --params: expected a whole number; got 'ten'."),
    (["{table}", "--params", "0"], "cluster.csv: n_params: expected an int >= 1; got 0."),
    (["{table}", "--params", "10", "--link-gbps", "-5"],
     "cluster.csv: link_gbps: expected a finite number > 0; got -5.0."),
    (["{bad}", "--params", "10"], "bad.csv: expected columns gpus, batch_per_gpu"),
])
def test_bad_input_is_one_stderr_line_and_exit_2(capsys, tmp_path, table, args, message):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    args = [a.format(table=table, bad=bad) for a in args]
    assert main(["scaling", *args]) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert captured.out == "" and len(lines) == 1 and lines[0].startswith(message)
