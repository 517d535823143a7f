"""``python -m core transformer``: one-line refusals of bad input, exit 2, nothing on stdout."""

from __future__ import annotations

import re

import pytest

from core.cli import main

BASE = ["transformer", "--config", "llama31_8b", "--seq-len", "8192", "--global-batch", "16"]


@pytest.mark.parametrize("extra,pattern", [
    (["--device", "TPUv5", "--gpus", "8"], r"^device: expected one of P100, .*H100_SXM"),
    (["--device", "H100", "--gpus", "8", "--parallel", "dp=8,ep=2"], r"^--parallel: expected keys among"),
    (["--device", "H100", "--gpus", "8", "--parallel", "tp=3"], r"^--gpus: expected multiples of tp×pp×cp = 3"),
    (["--device", "H100", "--gpus", "eight"], r"^--gpus: expected whole numbers"),
    (["--device", "H100", "--gpus", "8", "--measured-step", "1.2"], r"^--measured-step: expected S@DEVICE,GPUS"),
    (["--device", "H100", "--gpus", "8", "--precision", "fp4"],
     r"^python -m core transformer: error: argument --precision: expected one of bf16, fp8; got 'fp4'"),
])
def test_bad_input_is_one_line(capsys, extra, pattern):
    try:
        status = main(BASE + extra)
    except SystemExit as done:              # a bad option's value: argparse's one line, exit 2
        status = done.code
    assert status == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert re.search(pattern, err.strip())


def test_missing_config_file(capsys, tmp_path):
    code = main(["transformer", "--config", str(tmp_path / "nope.json"), "--seq-len", "1024", "--global-batch", "8",
                 "--device", "H100", "--gpus", "8"])
    assert code == 2
    assert "--config: expected a config.json file" in capsys.readouterr().err


def test_searched_strategy_and_lora(capsys):
    code = main(["transformer", "--config", "llama2_70b", "--lora-rank", "16", "--seq-len", "8192",
                 "--global-batch", "8", "--device", "MI300X", "--gpus", "8"])
    out, err = capsys.readouterr()
    assert code == 0, err
    row = out.strip().splitlines()[1]
    assert row.startswith("8,MI300X,llama2_70b,")
    assert "# strategy searched: the fastest that fits" in err and "uncalibrated: assumed prior spread ±50%" in err
