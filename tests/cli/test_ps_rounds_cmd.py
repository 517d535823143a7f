"""``python -m core ps-rounds`` through ``core.cli.main``."""

from __future__ import annotations

import json

import pytest

from core.cli import main

ARGS = ["ps-rounds", "--samples", "1000", "--batch", "32", "--epochs", "2", "--machines", "3",
        "--broadcast", "1", "--compute", "5", "--gather", "1", "--aggregate", "0.5"]


def test_prints_rounds_total_time_and_crossover(capsys):
    assert main(ARGS) == 0
    out = capsys.readouterr().out.splitlines()
    # 11 rounds an epoch, the last with 2 of 3 workers; 22 rounds; 186 s; crossover m = 7
    assert "rounds per epoch: 11 (last round: 2 of 3 workers)" in out
    assert "total rounds: 22 (2 epochs)" in out
    assert any(line.startswith("total time: 186 s") for line in out)
    assert any(line.startswith("crossover workers: 7 ") for line in out)
    assert "train locally, send once: 113.5 s" in out


def test_json_output(capsys):
    assert main(ARGS + ["--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["total_time_s"], data["crossover_machines"]) == (186.0, 7)
    assert data["local_then_send"]["total_time_s"] == 113.5


def test_global_batch_kind(capsys):
    args = ARGS.copy()
    args[args.index("--batch") + 1] = "96"
    assert main(args + ["--batch-kind", "global", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    # 96 / 3 = 32 per worker: the same rounds as the per-worker example
    assert (data["per_worker_batch"], data["total_rounds"]) == (32.0, 22)


def test_no_crossover_is_said(capsys):
    args = ARGS.copy()
    args[args.index("--aggregate") + 1] = "0"
    assert main(args) == 0
    assert "crossover workers: none" in capsys.readouterr().out


@pytest.mark.parametrize("flag, value, message", [
    ("--machines", "0", "ps-rounds: machines: expected an int >= 1; got 0."),
    ("--batch", "x", "ps-rounds: --batch: expected a whole number; got 'x'."),
    ("--compute", "-1", "ps-rounds: compute_s: expected a finite number > 0; got -1.0. A minibatch always takes some time."),
    ("--epochs", "1.5", "ps-rounds: --epochs: expected a whole number; got '1.5'."),
])
def test_bad_input_is_one_stderr_line_and_exit_2(capsys, flag, value, message):
    args = ARGS.copy()
    args[args.index(flag) + 1] = value
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(message)
