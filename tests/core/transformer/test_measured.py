"""Step times read from real log subsets (tests/data/transformer, see its NOTICE)."""

from __future__ import annotations

import pytest

from core.errors import LogFormatError
from core.transformer.measured import mllog_step, read_log_step, speedrun_step
from tests.conftest import ROOT

DATA = ROOT / "tests" / "data" / "transformer"
MLLOG = DATA / "llama31_8b_gb200_8gpu_result_0_subset.txt"


def test_mllog_median_tracked_step_time_and_system_json():
    step = read_log_step(MLLOG, DATA / "NVIDIA__tyche_ngpu8_ngc25.09_nemo.json")
    # the five train_step_time values 0.3862, 0.3927, 0.3992, 0.4007, 0.4014: median 0.39920926...
    assert step.step_time == pytest.approx(0.39920926094055176)
    assert (step.global_batch, step.seq_len) == (16, 8192)
    assert (step.device.name, step.gpus, step.domain) == ("GB200", 8, 8)
    assert "median of 5" in step.how


def test_mllog_without_tracked_stats_subtracts_the_evaluations():
    lines = [ln for ln in MLLOG.read_text().splitlines() if "tracked_stats" not in ln]
    step = mllog_step("\n".join(lines), "subset")
    run_s = (1759912564353 - 1759908050362) / 1000
    evals = (1759908367941 - 1759908359724 + 1759908687447 - 1759908679250) / 1000
    assert step.step_time == pytest.approx((run_s - evals) / (172032 / 16))
    assert step.device.name == "GB200"  # from submission_platform '2xNVIDIA GB200'


def test_speedrun_step_avg_tokens_and_gpus():
    step = speedrun_step((DATA / "speedrun_2024-10-18_PyTorch25_subset.txt").read_text())
    assert step.step_time == pytest.approx(0.14182)
    assert (step.global_batch, step.seq_len, step.gpus, step.device.name) == (512, 1024, 8, "H100_SXM")


def test_not_a_log():
    with pytest.raises(LogFormatError, match="expected lines 'step:N/M"):
        speedrun_step("hello", "x.txt")
    with pytest.raises(LogFormatError, match="expected global_batch_size and max_sequence_length"):
        mllog_step(':::MLLOG {"key": "run_start", "time_ms": 1}', "y.txt")


def test_cli_calibrates_on_a_log(capsys):
    from core.cli import main

    code = main(["transformer", "--config", "llama31_8b", "--seq-len", "8192", "--global-batch", "16",
                 "--device", "GB200", "--gpus", "8", "--parallel", "mb=2", "--precision", "fp8",
                 "--measured-log", f"{MLLOG}@{DATA / 'NVIDIA__tyche_ngpu8_ngc25.09_nemo.json'}"])
    out, err = capsys.readouterr()
    assert code == 0, err
    # the same run it was calibrated on comes back at its measured step time
    assert float(out.strip().splitlines()[1].split(",")[11]) == pytest.approx(0.399209, rel=1e-4)
    assert "median of 5 tracked_stats.train_step_time" in err
