"""``python -m core fit``: CSV on stdout, one stderr line per rejected file, exit status."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from core.cli import main
from core.runs.analysis import FIT_TABLE_COLUMNS

ROOT = Path(__file__).resolve().parents[2]
LOGS = sorted((ROOT / "data" / "logs").glob("*.csv"))


def test_fit_prints_one_row_per_run_with_the_contract_columns(capsys, tmp_path):
    good = tmp_path / "resnet8_Tesla V100-PCIE-32GB.csv"
    good.write_text("epoch, step, loss, acc\n" + "".join(
        f"{e}, {s}, {1 / (0.01 * ((e - 1) * 10 + s) + 0.5) + 0.1:.8f}, {0.85 + 0.01 * e:.3f}\n"
        for e in range(1, 11) for s in range(1, 11)))
    assert main(["fit", str(good), "--target-acc", "0.9"]) == 0
    out = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert list(out.columns[: len(FIT_TABLE_COLUMNS)]) == list(FIT_TABLE_COLUMNS)
    row = out.iloc[0]
    assert row["model"] == "resnet8" and row["gpu"] == "Tesla V100-PCIE-32GB" and row["steps_per_epoch"] == 10
    assert row["b0"] == pytest.approx(0.01, rel=1e-4) and row["b1"] == pytest.approx(0.5, rel=1e-4)
    # epoch-end accuracy 0.85 + 0.01*e >= 0.9 first at e = 5 (logged 0.900), last step 50
    assert row["epoch_to_target"] == 5 and row["step_to_target"] == 50


def test_a_rejected_file_is_named_on_stderr_and_the_others_are_fitted(capsys, tmp_path):
    bad = tmp_path / "broken.csv"
    bad.write_bytes(b"\x00\x01\x02")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    status = main(["fit", str(LOGS[0]), str(bad), str(empty)])
    captured = capsys.readouterr()
    assert status == 2
    err = captured.err.strip().splitlines()
    assert err[0].startswith(f"{bad}: expected a CSV text file; got binary data")
    assert err[1].startswith(f"{empty}: the file is empty")
    out = pd.read_csv(io.StringIO(captured.out))
    assert len(out) == 1 and out["file"].iloc[0] == str(LOGS[0])


def test_steps_per_epoch_option_and_bad_target(capsys):
    assert main(["fit", str(LOGS[0]), "--steps-per-epoch", "100", "--no-extra"]) == 0
    out = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert out["steps_per_epoch"].iloc[0] == 100 and list(out.columns) == list(FIT_TABLE_COLUMNS)
    with pytest.raises(SystemExit):
        main(["fit", str(LOGS[0]), "--target-acc", "92"])
    assert "did you mean 0.92" in capsys.readouterr().err


def test_python_dash_m_core_runs_as_a_program():
    proc = subprocess.run([sys.executable, "-m", "core", "fit", str(LOGS[0])], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("file,model,gpu,split,depth,steps_per_epoch,n_points,b0,b1,b2")


def test_jobs_give_the_same_table(capsys):
    assert main(["fit", *map(str, LOGS[:4])]) == 0
    serial = capsys.readouterr().out
    assert main(["fit", *map(str, LOGS[:4]), "--jobs", "2"]) == 0
    assert capsys.readouterr().out == serial


def test_a_run_of_two_evaluations_is_read_flagged_and_a_single_row_is_refused(capsys, tmp_path):
    """A run of 2 evaluations (Pollux's BERT trace: real and finished) is read for its measured values, flagged, not
    fitted; a single row is refused (issue 36: too few points for a curve, never a loaded run)."""
    bert = ROOT / "data" / "pollux_traces" / "bert" / "validation-12.csv"
    assert main(["fit", str(bert), "--target-acc", "0.88"]) == 0          # read: not a refusal
    out = capsys.readouterr()
    row = pd.read_csv(io.StringIO(out.out)).iloc[0]
    assert "2 evaluation(s): fewer than the 4 a curve fit needs" in row["flags"] and row["epoch_to_target"] == 2
    assert out.err == "" and pd.isna(row["b0"])                  # an accuracy trace: no loss curve to fit
    one = tmp_path / "single_row.csv"
    one.write_text("step,loss\n1,2.0\n")
    assert main(["fit", str(one)]) == 2
    out = capsys.readouterr()
    assert out.err == f"{one}: expected at least 4 points at different steps to fit a curve; got one data row.\n"


TENSORBOARD_RUN = ROOT / "tests" / "data" / "sweep" / "tensorboard" / "resnet8_CPU-16"
TENSORBOARD_FILE = TENSORBOARD_RUN / "events.out.tfevents.0.sweep.0"


def test_fit_reads_a_tensorboard_event_file_and_its_folder_as_library_add_does(capsys):
    # issue 36: "expected a CSV text file; got binary data" before; now the registry's TensorBoard reader
    assert main(["fit", str(TENSORBOARD_FILE), str(TENSORBOARD_RUN)]) == 0
    out = capsys.readouterr()
    assert out.err == ""
    table = pd.read_csv(io.StringIO(out.out))
    assert table["file"].tolist() == [str(TENSORBOARD_FILE), str(TENSORBOARD_RUN)]
    assert table["format"].tolist() == ["tfevents"] * 2
    assert table["model"].tolist() == ["resnet8"] * 2 and table["gpu"].tolist() == ["CPU"] * 2   # from the folder
    assert table["n_points"].tolist() == [500, 500] and table["steps_per_epoch"].tolist() == [250, 250]
    fit = ["b0", "b1", "b2", "r2"]
    assert table.loc[0, fit].tolist() == table.loc[1, fit].tolist()
    from core.logs.tfevents import read_tfevents
    from core.runs import fit_run

    library = fit_run(read_tfevents([TENSORBOARD_FILE], TENSORBOARD_RUN.name), family="optimus")
    assert table.loc[0, "b0"] == pytest.approx(library.fit.params["b0"], rel=1e-5)   # as printed


def test_python_dash_m_core_fit_reads_an_event_file():
    proc = subprocess.run([sys.executable, "-m", "core", "fit", str(TENSORBOARD_FILE), "--no-extra"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "binary data" not in proc.stderr, proc.stderr
    assert pd.read_csv(io.StringIO(proc.stdout)).iloc[0]["n_points"] == 500


def test_fit_reads_a_trainer_checkpoint_with_predict_results_and_says_what_it_skipped(capsys):
    checkpoint = ROOT / "tests" / "data" / "hf_trainer" / "checkpoint-60"
    assert main(["fit", str(checkpoint), "--target", "eval_accuracy>=0.85"]) == 0
    out = capsys.readouterr()
    assert "expected 'step'" not in out.err
    row = pd.read_csv(io.StringIO(out.out)).iloc[0]
    assert row["format"] == "hf-trainer" and row["steps_per_epoch"] == 20
    assert ("log_history[16] has no step: skipped (predict_accuracy, predict_loss, predict_runtime, "
            "predict_samples_per_second, predict_steps_per_second)") in row["flags"]
    # eval_accuracy 0.8698, 0.8646, 0.8698 at steps 20, 40, 60 (the file): >= 0.85 first at the first evaluation
    assert row["step_to_target"] == 20 and row["epoch_to_target"] == 1
