"""``python -m core backtest``: CSV columns on stdout, the summary line on stderr, exit codes."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from core.cli import main
from core.prediction.backtest_table import BACKTEST_COLUMNS, EXTRA_COLUMNS
from tests.core.prediction.prediction_logs import ACTUAL_EPOCH, course_csv

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "data" / "pollux_traces" / "cifar10" / "validation-128.csv"


@pytest.fixture
def run_log(tmp_path):
    path = tmp_path / "resnet20_Tesla V100.csv"
    path.write_bytes(course_csv())
    return path


def test_prints_one_row_per_file_and_fraction_with_the_contract_columns(capsys, run_log):
    assert main(["backtest", str(run_log), "--observe", "0.3,0.5,0.7", "--family", "exp3"]) == 0
    captured = capsys.readouterr()
    out = pd.read_csv(io.StringIO(captured.out))
    assert list(out.columns) == list(BACKTEST_COLUMNS + EXTRA_COLUMNS)
    assert out["observed_fraction"].tolist() == [0.3, 0.5, 0.7]
    assert out["file"].eq(str(run_log)).all() and out["family"].eq("exp3").all()
    assert out["epoch_actual"].eq(ACTUAL_EPOCH).all()
    assert out["status"].tolist() == ["scored", "scored", "observed"]
    # the summary goes to stderr, so stdout stays a CSV
    summary = captured.err.strip().splitlines()[-1]
    assert summary.startswith("summary [family exp3]: f=0.3: median |error| ")
    assert "f=0.5" in summary and "f=0.7: median |error| n/a" in summary


def test_no_extra_prints_the_contract_columns_only(capsys, run_log):
    assert main(["backtest", str(run_log), "--observe", "0.5", "--family", "exp3", "--no-extra"]) == 0
    out = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert list(out.columns) == list(BACKTEST_COLUMNS) and len(out) == 1
    row = out.iloc[0]
    # the exact exp3 curve reaches 0.92 in epoch 13, and so does the prediction from 12 epochs
    assert row["epoch_pred"] == 13 and row["epoch_actual"] == 13 and row["error_pct"] == 0
    assert bool(row["covered"]) and row["epoch_low"] <= 13 <= row["epoch_high"]


def test_an_unreadable_file_is_named_on_stderr_and_the_others_are_backtested(capsys, run_log, tmp_path):
    bad = tmp_path / "broken.csv"
    bad.write_bytes(b"\x00\x01\x02")
    missing = tmp_path / "missing.csv"
    status = main(["backtest", str(bad), str(run_log), str(missing), "--observe", "0.5", "--family", "exp3"])
    captured = capsys.readouterr()
    assert status == 2
    err = captured.err.strip().splitlines()
    assert err[0].startswith(f"{bad}: expected a CSV text file; got binary data")
    assert err[1].startswith(f"{missing}: cannot be read")
    assert err[-1].startswith("summary [family exp3]")
    out = pd.read_csv(io.StringIO(captured.out))
    assert out["file"].tolist() == [str(run_log)]


def test_relative_target_on_a_pollux_trace(capsys):
    assert main(["backtest", str(TRACE), "--observe", "0.5", "--target-rel", "0.99", "--family", "mmf"]) == 0
    out = pd.read_csv(io.StringIO(capsys.readouterr().out))
    row = out.iloc[0]
    # 0.99 × the last epoch's accuracy 0.9448 = 0.9354, first passed in epoch 59
    assert row["target_acc"] == pytest.approx(0.99 * 0.9448) and row["epoch_actual"] == 59
    assert row["target_definition"].startswith("0.99 × final accuracy")
    assert row["status"] == "scored" and pd.isna(row["epoch_pred_via_loss"])  # a trace has no loss


def test_a_log_without_accuracy_is_rejected_for_a_relative_target(capsys, tmp_path, run_log):
    loss_only = tmp_path / "run-tag-train_loss.csv"
    loss_only.write_text("Wall time,Step,Value\n" + "".join(f"{i}.0,{i},{1 / i:.4f}\n" for i in range(1, 30)))
    assert main(["backtest", str(loss_only), str(run_log), "--target-rel", "0.95", "--observe", "0.5",
                 "--family", "exp3"]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"{loss_only}: expected an accuracy column")
    assert pd.read_csv(io.StringIO(captured.out))["file"].tolist() == [str(run_log)]


@pytest.mark.parametrize("args,message", [
    (["--observe", "0.5,1.2"], "expected a fraction in (0, 1); got 1.2"),
    (["--observe", ","], "expected fractions like 0.3,0.5,0.7"),
    (["--family", "pow5"], "expected one of auto, optimus"),
    (["--target-acc", "92"], "did you mean 0.92"),
    (["--target-acc", "0.9", "--target-rel", "0.9"], "not allowed with argument"),
])
def test_bad_options_exit_with_a_message(capsys, run_log, args, message):
    with pytest.raises(SystemExit) as exc:
        main(["backtest", str(run_log), *args])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.slow
def test_python_dash_m_core_backtest_runs_as_a_program(run_log):
    proc = subprocess.run([sys.executable, "-m", "core", "backtest", str(run_log), "--observe", "0.5",
                           "--family", "exp3"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].startswith(",".join(BACKTEST_COLUMNS))
    assert "summary [family exp3]" in proc.stderr


def test_a_log_declared_falling_target_is_backtested_in_samples(capsys):
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "data" / "llm" / "mlperf_v5.1" / "llama31_8b"
    logs = sorted(str(p) for p in root.glob("*/result_*.txt"))
    assert main(["backtest", *logs, "--observe", "0.25"]) == 0
    out = capsys.readouterr()
    t = pd.read_csv(io.StringIO(out.out))
    assert len(t) == len(logs) and set(t["unit"]) == {"samples"}
    # the actual samples are each log's own samples_count at its first evaluation at log-perplexity <= 3.3
    fit = main(["fit", *logs]) == 0 and pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert dict(zip(t["file"], t["actual"])) == dict(zip(fit["file"], fit["samples_to_target"]))
    # the prior is the median of the other systems: a value a reader can recompute from the fit table
    first = t.iloc[0]
    others = fit[fit["file"] != first["file"]]
    low, high = others["samples_to_target"].min(), others["samples_to_target"].max()
    assert low <= first["prior"] <= high
    assert "summary [prior, extrapolation, posterior]" in out.err
    assert "not applied" not in out.err
    # a posterior method asked for is not dropped in silence, and the scores stay those of predict's answer
    assert main(["backtest", *logs, "--observe", "0.25", "--posterior-method", "calibrated"]) == 0
    out = capsys.readouterr()
    assert "--posterior-method calibrated not applied" in out.err
    assert pd.read_csv(io.StringIO(out.out)).equals(t)


def _cifar_copy(folder: Path, *, delay: int = 0) -> list[str]:
    """The six CIFAR-10 traces copied to ``folder/cifar10`` (one job); with ``delay``, batch 256's first
    ``delay`` evaluations at or above 0.94 are set to 0.9390 (it passes the target later)."""
    out = folder / "cifar10"
    out.mkdir(parents=True)
    for trace in sorted((ROOT / "data" / "pollux_traces" / "cifar10").glob("validation-*.csv")):
        frame = pd.read_csv(trace)
        if delay and trace.name == "validation-256.csv":
            above = frame.index[frame["metric"] >= 0.94][:delay]
            frame.loc[above, "metric"] = 0.9390
        frame.to_csv(out / trace.name, index=False)
    return sorted(str(p) for p in out.glob("*.csv"))


@pytest.mark.parametrize("method", ["backtest", "calibrated"])
def test_a_learning_posterior_never_reads_the_predicted_runs_unseen_epochs(capsys, tmp_path, method):
    # "backtest" and "calibrated" learn from the other runs' cases; the priors of those cases must not have
    # seen the run being predicted (as in `predict`): batch 256's epochs after the observed 10 % are changed
    # (it passes 0.94 later) and its row's prior, extrapolation and posterior stay exactly the same
    rows = {}
    for label, delay in (("as_run", 0), ("later", 12)):
        runs = _cifar_copy(tmp_path / label, delay=delay)
        assert main(["backtest", *runs, "--prior-from", *runs, "--observe", "0.1", "--target-acc", "0.94",
                     "--family", "exp3", "--posterior-method", method]) == 0
        table = pd.read_csv(io.StringIO(capsys.readouterr().out))
        rows[label] = table[table["file"].str.endswith("validation-256.csv")].iloc[0]
    assert rows["as_run"]["epoch_actual"] == 72 and rows["later"]["epoch_actual"] > 72   # the change matters
    answer = ["epoch_pred", "epoch_low", "epoch_high", "prior_epoch", "prior_low", "prior_high",
              "posterior_epoch", "posterior_low", "posterior_high", "posterior_method"]
    assert rows["as_run"][answer].tolist() == rows["later"][answer].tolist()
