"""``python -m core batch-scaling`` through ``core.cli.main``: exact columns, hand-checkable rows."""

from __future__ import annotations

import io
import re

import pandas as pd
import pytest

from core.cli import main
from core.datasets import DATA_DIR

POLLUX = DATA_DIR / "pollux_traces"
COLUMNS = ["global_batch", "epochs_to_target", "samples_to_target", "steps_to_target", "steps_low", "steps_high",
           "source", "region", "in_fit", "note", "file"]
RCP_COLUMNS = ["benchmark", "round", "global_batch", "seeds", "mean", "seed_cv_pct", "learning_rate", "predicted",
               "low", "high", "error_pct", "mccandlish", "mccandlish_error_pct", "region", "note"]


def _run(argv, capsys) -> tuple[int, pd.DataFrame | None, str]:
    code = main(["batch-scaling", *argv])
    out = capsys.readouterr()
    return code, pd.read_csv(io.StringIO(out.out)) if out.out else None, out.err


def test_exact_columns_measured_then_predicted_rows_and_a_summary_line(capsys):
    paths = [str(POLLUX / "cifar10" / f"validation-{b}.csv") for b in (128, 256, 512)]
    code, df, err = _run([*paths, "--target-acc", "0.93", "--samples-per-epoch", "50000", "--predict", "1024,4096"],
                         capsys)
    assert code == 0 and list(df.columns) == COLUMNS
    assert df["source"].tolist() == ["measured"] * 3 + ["predicted"] * 2
    assert df["global_batch"].tolist() == [128, 256, 512, 1024, 4096]
    assert df["region"].tolist() == ["measured"] * 3 + ["extrapolated"] * 2
    assert df["note"].iloc[3].startswith("extrapolated 2x beyond the measured batch 512")
    # batch 128 first passes 0.93 at iteration 21874: 2,799,872 samples = 56.0 epochs of 50,000
    first = df.iloc[0]
    assert (first.steps_to_target, first.samples_to_target) == (21874, pytest.approx(2_799_872, rel=1e-5))
    assert first.epochs_to_target == pytest.approx(55.9974, rel=1e-5)
    assert (df.steps_low <= df.steps_to_target).iloc[3:].all() and (df.steps_to_target <= df.steps_high).iloc[3:].all()
    lines = err.strip().splitlines()
    # the summary, then one line per warning: B_noise's interval reaches infinity from 128 to 512 (737 to inf)
    assert all(line.startswith("batch scaling: ") for line in lines[1:])
    assert any(line.startswith("batch scaling: B_noise is not determined") for line in lines[1:])
    assert re.search(r"^E_min = [0-9.e+,]+ samples \(80% interval .* to .*\), B_noise = [0-9,.]+ \(80% interval .*\)"
                     r".*MAPE [0-9.]+ %.*assumed tuned for its batch", lines[0])


def test_runs_never_reaching_the_target_are_named_and_left_out(capsys):
    paths = [str(POLLUX / "cifar10" / f"validation-{b}.csv") for b in (128, 256, 512)]
    code, df, err = _run([*paths, "--target-acc", "0.945"], capsys)
    never = [line for line in err.splitlines() if "never reached 0.945: left out" in line]
    assert code == 0 and len(never) >= 1
    assert len(df) == 3 - len(never)


def test_batches_in_file_order_and_the_aborted_mllog_run(capsys):
    mlperf = DATA_DIR / "mlperf_v3.0_resnet50" / "NVIDIA"
    paths = [str(mlperf / d / f"result_{s}.txt") for d in ("dgxh100_n8_ngc23.04_mxnet", "dgxh100_n64_ngc23.04_mxnet",
                                                            "dgxh100_n96_ngc23.04_mxnet") for s in (0, 1)]
    code, df, err = _run([*paths, "--target-acc", "0.759"], capsys)
    assert code == 0
    assert "dgxh100_n64_ngc23.04_mxnet/result_1.txt: aborted run (run_stop status 'aborted'): left out" in err
    assert df["global_batch"].tolist() == [3200, 3200, 20480, 32256, 32256]
    assert df["epochs_to_target"].tolist() == [35, 35, 50, 56, 56]


def test_one_run_without_a_noise_scale_is_refused(capsys):
    code, df, err = _run([str(DATA_DIR / "pollux_traces" / "imagenet" / "validation-200.csv"), "--target-acc", "0.74"],
                         capsys)
    # the imagenet trace has grad_sqr and grad_var: one run is enough
    assert code == 0 and df["source"].tolist() == ["measured"]
    one = next((DATA_DIR / "batch_logs").glob("*-64.txt"))      # MLLOG, no gradient statistics
    code, df, err = _run([str(one), "--target-acc", "0.92"], capsys)
    assert code == 2 and df is None
    assert re.search(r"^batch scaling: expected runs of one job at two or more global batches that reached the target; "
                     r"got 1 run\(s\) at 1 batch\(es\)\. Add a run at another global batch", err.strip())


@pytest.mark.parametrize("argv, message", [
    (["a.csv", "b.csv", "--target-acc", "0.9", "--batch", "64"],
     r"^--batch: expected one global batch per LOG \(2\); got 1"),
    (["a.csv", "--target-acc", "0.9", "--predict", "x"], r"^--predict: expected a number > 0; got 'x'"),
    (["/nonexistent/r.txt", "--target-acc", "0.9"], r"^/nonexistent/r\.txt: cannot be read"),
])
def test_bad_input_gives_stderr_lines_and_exit_2(argv, message, capsys):
    code, df, err = _run(argv, capsys)
    assert code == 2
    assert re.search(message, err.strip().splitlines()[0]), err


def test_rcp_rows_leave_one_batch_out_with_exact_columns(capsys):
    code, df, err = _run(["--rcp", "llama2_70b_lora:5.0.0", "--predict", "64,256"], capsys)
    assert code == 0 and list(df.columns) == RCP_COLUMNS
    assert df["global_batch"].tolist() == [8, 16, 32, 128, 64, 256]
    assert df["region"].tolist() == ["extrapolated", "interpolated", "interpolated", "extrapolated", "interpolated",
                                     "extrapolated"]
    assert df["seeds"].iloc[:4].tolist() == [20] * 4 and df["mean"].iloc[4:].isna().all()
    # 64 from every batch: between 32 (6037.33) and 128 (11264): 6037.33 + 5226.67·32/96 = 7779.56
    assert df["predicted"].iloc[4] == pytest.approx(7779.56, abs=0.01)
    lines = err.strip().splitlines()
    assert lines[0].startswith("llama2_70b_lora 5.0.0 RCPs (samples_count, 4 global batches): E_min = ")
    assert re.match(r"leave one batch out: mean \|error\| [0-9.]+ % \(McCandlish's line alone [0-9.]+ %\); 80% "
                    r"intervals cover [0-4] of 4 batch means", lines[1])


def test_rcp_list_names_benchmarks_rounds_and_the_latest(capsys):
    code, df, _ = _run(["--rcp", "list"], capsys)
    assert code == 0 and list(df.columns) == ["benchmark", "rounds", "latest"]
    row = df.set_index("benchmark").loc["llama2_70b_lora"]
    assert row["rounds"].split()[0] == "4.0.0"


@pytest.mark.parametrize("argv, message", [
    (["--rcp", "nope"], r"^--rcp: expected an MLPerf training benchmark"),
    (["a.csv", "--rcp", "bert"], r"^--rcp: expected either LOG files or --rcp; got both"),
    ([], r"^batch-scaling: expected LOG files .* or --rcp BENCHMARK\[:ROUND\]; got neither"),
    (["a.csv"], r"^--target-acc: expected the target \(--target METRIC<=VALUE, or --target-acc A"),
])
def test_rcp_and_log_arguments_are_checked(argv, message, capsys):
    code, df, err = _run(argv, capsys)
    assert code == 2 and df is None
    assert re.search(message, err.strip().splitlines()[0]), err


def test_llm_logs_are_scaled_to_their_own_falling_target(capsys):
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "data" / "llm" / "mlperf_v5.1" / "llama31_8b"
    logs = sorted(str(p) for p in root.glob("*/result_*.txt"))
    assert main(["batch-scaling", *logs]) == 0                 # eval_accuracy<=3.3 read from the logs
    measured = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert main(["fit", *logs]) == 0
    fit = pd.read_csv(io.StringIO(capsys.readouterr().out))
    # the measured rows are each log's samples at its first evaluation at log-perplexity <= 3.3, as fit reads it
    rows = measured[measured["source"] == "measured"]
    assert sorted(rows["samples_to_target"].dropna()) == sorted(fit["samples_to_target"])
    with pytest.raises(SystemExit) as exit_info:                           # a loss that climbs: refused
        main(["batch-scaling", *logs, "--target", "loss>=3.3"])
    assert exit_info.value.code == 2 and "is a loss, which falls" in capsys.readouterr().err
