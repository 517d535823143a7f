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


# the course's worked case: 76,800 samples, minibatch 1,536 (50 an epoch), 10 epochs, 6 machines
COURSE = ["ps-rounds", "--samples", "76800", "--batch", "1536", "--epochs", "10", "--machines", "6",
          "--broadcast", "1.5", "--compute", "4", "--gather", "1.5", "--aggregate", "0.015"]


def test_course_case_per_epoch_is_the_default(capsys):
    assert main(COURSE) == 0
    out = capsys.readouterr().out.splitlines()
    # 9 rounds an epoch (8 full of 7.09 s, the last with 2 workers, 7.03 s): 90 rounds, 637.5 s
    assert out[:5] == [
        "minibatches per epoch: 50",
        "rounds per epoch: 9 (last round: 2 of 6 workers)",
        "total rounds: 90 (10 epochs)",
        "round time: 7.09 s (last round of an epoch 7.03 s)",
        "total time: 637.5 s (compute 360, communication 270, aggregation 7.5)",
    ]
    assert out[-1] == "round counting: per-epoch (each epoch starts a new round)"


def test_course_case_continuous_rounds(capsys):
    assert main(COURSE + ["--rounds", "continuous"]) == 0
    out = capsys.readouterr().out.splitlines()
    # 500 minibatches: 83 full rounds of 7.09 s and one of 2 workers, 7.03 s: 84 rounds, 595.5 s
    assert "total rounds: 84 (10 epochs)" in out
    assert "round time: 7.09 s (last round of the run 7.03 s)" in out
    assert "total time: 595.5 s (compute 336, communication 252, aggregation 7.5)" in out
    assert "rounds per epoch: 8.4 on average (last round of the run: 2 of 6 workers)" in out
    assert out[-1] == "round counting: continuous (the minibatches of the whole run flow across epochs)"


@pytest.mark.parametrize("mode, rounds, total", [("per-epoch", 90, 637.5), ("continuous", 84, 595.5)])
def test_course_case_json_names_the_rounds_mode(capsys, mode, rounds, total):
    assert main(COURSE + ["--rounds", mode, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["rounds"], data["total_rounds"], data["total_time_s"]) == (mode, rounds, total)
    assert (data["round_time_s"], data["last_round_time_s"], data["last_round_workers"]) == (7.09, 7.03, 2)


def test_an_unknown_rounds_mode_is_refused(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(COURSE + ["--rounds", "per_epoch"])
    assert exit_.value.code == 2
    assert "--rounds: expected one of per-epoch, continuous; got 'per_epoch'" in capsys.readouterr().err


@pytest.mark.parametrize("flag, value, message", [
    ("--machines", "0", "ps-rounds: machines: expected an int >= 1; got 0."),
    ("--batch", "x", "ps-rounds: --batch: expected a whole number; got 'x'."),
    ("--compute", "-1",
     "ps-rounds: compute_s: expected a finite number > 0; got -1.0. A minibatch always takes some time."),
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
