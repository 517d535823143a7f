"""``python -m core calibrate``: columns, LOAO table, fit-table input, errors."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from core.cli import main
from tests.conftest import DATA, ROOT

COURSE = str(DATA / "cifar10_resnet_optimus_fits.csv")
CONTRACT = ["model", "gpu", "method", "b0", "b1", "b2", "b0_hat", "b1_hat", "b2_hat", "epoch_actual",
            "epoch_pred", "epoch_pred_low", "epoch_pred_high", "epoch_error_pct"]


@pytest.mark.slow
def test_course_baseline_rows(capsys):
    assert main(["calibrate", COURSE, "--holdout", "resnet50", "--method", "course"]) == 0
    out = capsys.readouterr()
    table = pd.read_csv(io.StringIO(out.out))
    assert list(table.columns[: len(CONTRACT)]) == CONTRACT
    assert len(table) == 3 and set(table["model"]) == {"resnet50"}
    assert table.set_index("gpu").loc["Quadro RTX 8000", "b0_hat"] == pytest.approx(0.000168, abs=5e-7)
    assert "loss threshold L" in out.err and "recommended" in out.err


@pytest.mark.slow
def test_loao_table_and_auto(capsys):
    assert main(["calibrate", COURSE, "--loao", "--method", "ridge"]) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out))
    # the old columns first, then the interval and where the architecture lies
    assert list(table.columns) == ["model", "gpu", "method", "epoch_actual", "epoch_pred", "epoch_error_pct",
                                   "epoch_pred_low", "epoch_pred_high", "covered", "inside_calibration_set",
                                   "outside_reason"]
    assert len(table) == 18 and set(table["method"]) == {"ridge"}
    assert main(["calibrate", COURSE, "--method", "auto"]) == 0
    out = capsys.readouterr()
    table = pd.read_csv(io.StringIO(out.out))
    assert table["method"].iloc[0] in {"arch-kernel", "arch-gp", "mean"}   # resnet50 is outside: no trend method
    assert "lies outside the calibration set" in out.err


@pytest.mark.slow
def test_nested_loao_with_auto_prints_scores_and_coverage(capsys):
    assert main(["calibrate", COURSE, "--loao", "--method", "auto"]) == 0
    out = capsys.readouterr()
    table = pd.read_csv(io.StringIO(out.out))
    assert len(table) == 18 and table["covered"].dtype == bool
    mape = table["epoch_error_pct"].abs().mean()
    assert f"MAPE {mape:.1f} % over 18 runs" in out.err
    assert f"coverage {100 * table['covered'].mean():.0f} %" in out.err


@pytest.mark.slow
def test_output_of_core_fit_is_accepted(capsys, tmp_path):
    logs = sorted(str(p) for p in (ROOT / "data" / "logs").glob("*[0-9]_Intel Xeon Processor.csv"))
    assert main(["fit", *logs]) == 0
    fits = tmp_path / "fits.csv"
    fits.write_text(capsys.readouterr().out)
    argv = ["calibrate", str(fits), "--holdout", "resnet56", "--method", "direct-ridge", "--dataset", "mnist1d"]
    assert main(argv) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert table["model"].tolist() == ["resnet56"] and table["epoch_actual"].iloc[0] == 13


@pytest.mark.slow
def test_errors_exit_2(capsys, tmp_path):
    assert main(["calibrate", str(tmp_path / "missing.csv")]) == 2
    assert "missing.csv: cannot be read" in capsys.readouterr().err
    assert main(["calibrate", COURSE, "--holdout", "vgg16"]) == 2
    assert "holdout: expected one of" in capsys.readouterr().err
    assert main(["calibrate", COURSE, "--target-acc", "0.9"]) == 2
    assert "the course table only has 0.92" in capsys.readouterr().err


def test_calibrate_takes_a_loss_target_and_refuses_fits_made_for_another(capsys, tmp_path):
    from pathlib import Path

    logs = sorted(str(p) for p in (Path(__file__).resolve().parents[2] / "data" / "logs").glob("*.csv"))
    assert main(["fit", *logs, "--target", "loss<=0.5"]) == 0
    fits = tmp_path / "fits.csv"
    fits.write_text(capsys.readouterr().out)
    assert main(["calibrate", str(fits), "--holdout", "resnet20", "--dataset", "mnist1d", "--target", "loss<=0.5"]) == 0
    out = capsys.readouterr()
    assert "resnet20" in out.out and "loss threshold L" in out.err
    assert main(["calibrate", str(fits), "--holdout", "resnet20", "--dataset", "mnist1d"]) == 2
    err = capsys.readouterr().err
    assert "expected fits made for target acc>=0.92; the table records loss<=0.5" in err
