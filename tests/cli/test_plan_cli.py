"""``python -m core plan`` through ``core.cli.main``: CSV rows computed by hand, and clear refusals."""

from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.speed.optimus import SpeedModel


def _csv(capsys):
    out = capsys.readouterr()
    return pd.read_csv(io.StringIO(out.out)), out.err


def test_default_plan_prints_one_row_per_configuration(capsys):
    assert main(["plan", "--steps", "1000", "--batch", "128"]) == 0
    df, err = _csv(capsys)
    assert list(df.columns[:6]) == ["mode", "p", "w", "steps_per_s", "time_s", "cost"]
    assert len(df) == 2 * 64 and sorted(df.p.unique()) == [2, 4]
    # paper θ at (2, 4): 45.3 units per step → 1000 steps = 45 300 units; f = 1/45.3 = 0.0220751
    row = df[(df.p == 2) & (df.w == 4)].iloc[0]
    assert row.time_s == pytest.approx(45_300, rel=1e-5)
    assert row.steps_per_s == pytest.approx(1 / 45.3, rel=1e-5)
    assert row.time_unit == "paper units"
    assert "paper units" in err


def test_calibrated_plan_with_prices(capsys):
    # 0.906 s per step at (2, 4); 10 000 steps = 9060 s = 2.5167 h; cost 2.5167·(4·2 + 2·0.5) = 22.65
    assert main(["plan", "--steps", "10000", "--batch", "128", "--ps", "2", "--workers", "4",
                 "--calibrate-step-time", "0.906@2,4", "--price-worker", "2", "--price-ps", "0.5"]) == 0
    df, err = _csv(capsys)
    assert df.w.tolist() == [1, 2, 3, 4]               # --workers 4 means 1:4
    row = df[df.w == 4].iloc[0]
    assert row.time_s == pytest.approx(9060, rel=1e-5)
    assert row.cost == pytest.approx(9060 / 3600 * 9, rel=1e-5)
    assert row.time_unit == "s" and err == ""


def test_typed_theta_async_and_worker_list(capsys):
    # async θ = (2, 4, 0, 0.1) s at (2, 8): f = 8 / (2 + 4·8/2 + 0 + 0.2) = 8/18.2 → 91 steps = 207.025 s
    assert main(["plan", "--steps", "91", "--mode", "async", "--theta", "2,4,0,0.1",
                 "--ps", "2", "--workers", "2,8"]) == 0
    df, _ = _csv(capsys)
    assert df.w.tolist() == [2, 8]
    assert df.time_s.iloc[1] == pytest.approx(91 * 18.2 / 8, rel=1e-5)


def test_fit_theta_from_a_speed_csv(tmp_path, capsys):
    theta = (0.001, 0.05, 0.002)
    w = np.array([1, 2, 4, 8, 16])
    truth = SpeedModel("allreduce", theta, global_batch=256)
    pd.DataFrame({"w": w, "global_batch": 256, "steps_per_s": truth.steps_per_s(0, w)}).to_csv(
        tmp_path / "speeds.csv", index=False)
    assert main(["plan", "--steps", "10000", "--mode", "allreduce", "--batch", "256",
                 "--theta", f"fit:{tmp_path / 'speeds.csv'}", "--workers", "8:8"]) == 0
    df, _ = _csv(capsys)
    # 0.001·256/8 + 0.05 + 0.002·8 = 0.098 s per step → 980 s
    assert df.p.tolist() == [0] and df.time_s.iloc[0] == pytest.approx(980, rel=1e-5)


def test_steps_interval_adds_columns(capsys):
    assert main(["plan", "--steps", "1000", "--steps-interval", "800,1500", "--ps", "2",
                 "--workers", "4:4"]) == 0
    df, _ = _csv(capsys)
    assert df.time_s_low.iloc[0] == pytest.approx(800 * 45.3, rel=1e-5)
    assert df.time_s_high.iloc[0] == pytest.approx(1500 * 45.3, rel=1e-5)


@pytest.mark.parametrize("argv, message", [
    (["--steps", "100", "--theta", "1,2"], r"^--theta: expected 5 theta values"),
    (["--steps", "100", "--theta", "1,x"], r"^--theta: expected comma-separated numbers"),
    (["--steps", "100", "--workers", "many"], r"^--workers: expected A:B, N or a list"),
    (["--steps", "100", "--ps", "0,2"], r"expected ps as integers >= 1"),
    (["--steps", "0"], r"plan_grid: steps_to_target: expected a finite number > 0; got 0.0"),
    (["--steps", "100", "--calibrate-step-time", "0.9"], r"^--calibrate-step-time: expected SECONDS@P,W"),
    (["--steps", "100", "--mode", "allreduce"], r"no all-reduce θ"),
    (["--steps", "100", "--theta", "1,1,1,1,1"], r"^--batch: expected the global batch M"),
    (["--steps", "100", "--theta", "fit:/nonexistent/speeds.csv"], r"speeds.csv: cannot be read: No such file"),
])
def test_bad_input_gives_one_stderr_line_and_exit_2(argv, message, capsys):
    assert main(["plan", *argv]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    lines = out.err.strip().splitlines()
    assert len(lines) == 1
    assert re.search(message, lines[0]), lines[0]


# ---------------------------------------------------------------- issue 11: the batch grows with the workers
def test_per_worker_batch_with_a_batch_model_adds_global_batch_and_steps(capsys):
    # typed θ all-reduce 1/f = 0.001·M/w + 0.05 + 0.002·w; E_min = 1e5, B_noise = 1000; m = 64
    assert main(["plan", "--batch-model", "1e5,1000", "--per-worker-batch", "64", "--mode", "allreduce",
                 "--theta", "0.001,0.05,0.002", "--workers", "1,4"]) == 0
    df, err = _csv(capsys)
    assert list(df.columns) == ["mode", "p", "w", "steps_per_s", "time_s", "cost", "time_h", "time_unit",
                                "global_batch", "steps"]
    # w = 4: M = 256, S = 1e5·1.256/256 = 490.625 steps of 0.064 + 0.05 + 0.008 = 0.122 s → 59.856 s
    row = df[df.w == 4].iloc[0]
    assert (row.global_batch, row.steps) == (256, pytest.approx(490.625))
    assert row.time_s == pytest.approx(59.85625, rel=1e-5)
    assert err == ""


def test_batch_model_with_a_fixed_batch_keeps_the_plain_columns(capsys):
    assert main(["plan", "--batch-model", "1e5,1000", "--batch", "256", "--mode", "allreduce",
                 "--theta", "0.001,0.05,0.002", "--workers", "4"]) == 0
    df, _ = _csv(capsys)
    assert list(df.columns) == ["mode", "p", "w", "steps_per_s", "time_s", "cost", "time_h", "time_unit"]
    # S(256) = 490.625 steps at every w; at w = 4 the step takes 0.122 s
    assert df[df.w == 4].iloc[0].time_s == pytest.approx(490.625 * 0.122, rel=1e-5)


def test_best_batch_is_no_slower_than_the_per_worker_rule(capsys):
    common = ["--batch-model", "1e5,1000", "--mode", "allreduce", "--theta", "0.001,0.05,0.002", "--workers", "2,8"]
    assert main(["plan", *common, "--best-batch", "64:4096"]) == 0
    best, _ = _csv(capsys)
    assert main(["plan", *common, "--per-worker-batch", "64"]) == 0
    fixed, _ = _csv(capsys)
    assert (best.time_s.to_numpy() <= fixed.time_s.to_numpy() + 1e-9).all()
    assert ((best.global_batch >= 64) & (best.global_batch <= 4096)).all()


@pytest.mark.parametrize("argv, message", [
    (["--steps", "100", "--per-worker-batch", "64"], r"^--per-worker-batch: expected --batch-model E_MIN,B_NOISE"),
    (["--batch", "128"], r"^--steps: expected --steps N, --batch-model E_MIN,B_NOISE or --from-library \[FILTER\] "
                         r"\(one of them\); got none\. Give one\."),
    (["--steps", "100", "--batch-model", "1e5,1000"], r"got several"),
    (["--batch-model", "1e5", "--per-worker-batch", "8"], r"^--batch-model: expected E_MIN,B_NOISE"),
    (["--batch-model", "1e5,1000", "--best-batch", "64"], r"^--best-batch: expected LO:HI"),
    (["--batch-model", "1e5,-5", "--per-worker-batch", "8"], r"^B_noise: expected a finite number > 0; got -5.0"),
])
def test_bad_batch_options_give_one_stderr_line_and_exit_2(argv, message, capsys):
    assert main(["plan", *argv]) == 2
    out = capsys.readouterr()
    assert out.out == "" and len(out.err.strip().splitlines()) == 1
    assert re.search(message, out.err.strip()), out.err


def test_plan_from_logs_fits_two_gpu_counts_and_plans_the_third(capsys):
    from pathlib import Path

    import numpy as np

    from core.batch import load_rcps
    from core.logs import read_log_file
    from core.plan import SAMPLES_SOURCES, measured_configurations

    root = Path(__file__).resolve().parents[2] / "data" / "llm" / "mlperf_v5.1" / "llama31_8b"
    train = sorted(str(p) for p in root.glob("NVIDIA__tyche_ngpu*/result_*.txt") if "ngpu72" not in str(p))
    assert main(["plan", "--from-logs", *train, "--mode", "allreduce", "--workers", "72:72", "--batch", "36"]) == 0
    out = capsys.readouterr()
    frame = pd.read_csv(io.StringIO(out.out), keep_default_na=False)
    row = frame.iloc[0]
    assert list(frame.columns[-10:]) == ["global_batch", "samples_to_target", "step_time_s", "time_low", "time_high",
                                         "speed_model", "samples_source", "device", "strategy", "note"]
    # two GPU counts: nothing to leave out, the bracket (the default) is used and stderr says so
    assert row["speed_model"] == "bracket" and "too few to leave one out" in out.err
    assert set(frame["samples_source"]) <= set(SAMPLES_SOURCES)
    # by hand: the per-GPU batches 2 (8 GPUs at M=16) and 0.125 (512 at M=64), and 0.5 at 72
    table, _ = measured_configurations([read_log_file(p, source=p) for p in train])
    g = table.assign(m=table["global_batch"] / table["w"]).groupby("m")["step_time_s"].median()
    (m1, t1), (m2, t2) = sorted(g.items())
    over = t1 + (t2 - t1) * (0.5 - m1) / (m2 - m1)                      # the line through both
    slope = np.log(t2 / t1) / np.log(m2 / m1)
    elastic = t1 * (0.5 / m1) ** slope                                   # the power law through both
    assert row["step_time_s"] == pytest.approx(np.sqrt(over * elastic), rel=1e-5)
    assert row["time_low"] < row["time_s"] < row["time_high"]
    # samples at M=36: the logs have batches 16 and 64 only, so MLCommons' reference points, between 32 and 64
    rcps = load_rcps("llama31_8b")
    assert row["samples_source"] == "rcp"
    assert row["samples_to_target"] == pytest.approx(np.interp(36, rcps.batches, rcps.means), rel=1e-5)
    overhead = np.median(table["counted_over_training"])
    assert row["time_s"] == pytest.approx(row["samples_to_target"] / 36 * row["step_time_s"] * overhead, rel=1e-5)
    assert "reference convergence points" in row["note"]


def test_plan_from_logs_honours_or_refuses_model(capsys):
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "data" / "llm" / "mlperf_v5.1" / "llama31_8b"
    logs = sorted(str(p) for p in root.glob("NVIDIA__tyche_ngpu*/result_*.txt") if "ngpu72" not in str(p))
    base = ["plan", "--from-logs", *logs, "--mode", "allreduce", "--workers", "64,128", "--batch", "64"]
    rows = {}
    for model in ("overhead", "elastic", "transformer"):
        assert main([*base, "--model", model]) == 0
        rows[model] = _csv(capsys)[0].set_index("w")
        assert set(rows[model]["speed_model"]) == {model}
    # inside the measured per-GPU batches (0.5 lies in 0.125-2) the line lies below the power law (concave, slope < 1)
    assert rows["overhead"].loc[128, "step_time_s"] < rows["elastic"].loc[128, "step_time_s"]
    assert rows["transformer"]["strategy"].str.contains("tp=").all()
    # pollux and optimus need three configurations; two are loaded: refused, with the reason, never ignored
    for model in ("pollux", "optimus"):
        assert main([*base, "--model", model]) == 2
        out = capsys.readouterr()
        assert out.out == "" and f"speed model {model}: cannot be fitted to these logs" in out.err
    # Paleo needs the network named beside the speeds, which logs do not give: not offered, refused with the choices
    assert main([*base, "--model", "paleo"]) == 2
    assert "speed model: expected one of auto, optimus" in capsys.readouterr().err
    # another device needs the transformer model
    assert main([*base, "--model", "overhead", "--to-device", "B200"]) == 2
    assert "device B200: expected the speed model transformer or auto" in capsys.readouterr().err
    # --model with the paper's θ is refused too
    assert main(["plan", "--steps", "100", "--batch", "32", "--model", "pollux"]) == 2
    assert "--model pollux: expected --theta fit:CSV" in capsys.readouterr().err


def test_plan_from_logs_skips_gpu_counts_no_strategy_can_use(capsys):
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "data" / "llm" / "mlperf_v5.1" / "llama31_8b"
    logs = sorted(str(p) for p in root.glob("NVIDIA__tyche_ngpu8_*/result_*.txt"))
    assert main(["plan", "--from-logs", *logs, "--mode", "allreduce", "--workers", "64", "--batch", "32",
                 "--to-device", "GB200"]) == 0
    table, err = _csv(capsys)
    planned = set(table["w"])
    # 1 to 64 GPUs at a global batch of 32: 17 GPUs cannot split it (a prime above the 16 pipeline stages the
    # search allows); 16, 32 and 64 can, and the plan keeps them
    assert {1, 2, 8, 16, 32, 64} <= planned and 17 not in planned
    skipped = sorted(set(range(1, 65)) - planned)
    assert f"skipped {len(skipped)} GPU count(s) (17," in err
    assert "divides into data × tensor × pipeline × context degrees" in err and "--gpus" not in err


def test_plan_from_logs_refuses_batches_that_are_not_whole_samples(capsys):
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "data" / "llm" / "mlperf_v5.1" / "llama31_8b"
    logs = sorted(str(p) for p in root.glob("NVIDIA__tyche_ngpu*/result_*.txt"))
    base = ["plan", "--from-logs", *logs, "--workers", "1,2,3,4"]
    for extra, message in ((["--batch", "0.5"], "--batch: expected a whole number of samples per step"),
                           (["--per-worker-batch", "-1"], "--per-worker-batch: expected samples per GPU > 0"),
                           (["--per-worker-batch", "0"], "--per-worker-batch: expected samples per GPU > 0"),
                           (["--batch", "64", "--ps", "2"], "--from-logs: takes the steps and speed from the logs; "
                                                            "got --ps too"),
                           (["--batch", "64", "--theta", "1,2,3"], "got --theta too")):
        assert main([*base, *extra]) == 2, extra
        out = capsys.readouterr()
        assert out.out == "" and message in out.err, (extra, out.err)
    # m = 0.5 per GPU: 1 and 3 GPUs would step on half samples; skipped and named, 2 and 4 planned (no --mode:
    # the plan from logs is all-reduce)
    assert main([*base, "--per-worker-batch", "0.5"]) == 0
    table, err = _csv(capsys)
    assert table["w"].tolist() == [2, 4] and table["global_batch"].tolist() == [1, 2]
    assert "skipped 2 GPU count(s) (1, 3): the global batch w × 0.5 is not a whole number of samples" in err


def test_plan_from_logs_refuses_two_benchmarks_and_says_when_it_assumes_perfect_scaling(capsys):
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "data" / "llm" / "mlperf_v5.1" / "llama31_8b"
    logs = sorted(str(p) for p in root.glob("NVIDIA__tyche_ngpu8_*/result_*.txt"))
    from core.errors import InputError
    from core.logs import read_log_file
    from core.plan import plan_from_logs

    runs = [read_log_file(p, source=p) for p in logs]
    other = runs[0].with_meta(model="llama2_70b_lora")      # the same run, declared as another benchmark
    with pytest.raises(InputError, match=r"expected logs of one benchmark \(one model, one target\); got "
                                         r"llama2_70b_lora, llama31_8b. Plan them separately"):
        plan_from_logs([*runs[1:], other], [8], global_batch=16.0)
    # one GPU count measured: the step elsewhere is perfect scaling, said, and its interval widens with the distance
    assert main(["plan", "--from-logs", *logs, "--workers", "8,16,64", "--batch", "16"]) == 0
    table, err = _csv(capsys)
    assert "one per-GPU batch measured: perfect scaling assumed" in err
    width = (table["time_high"] / table["time_low"]).tolist()
    assert width[0] < width[1] < width[2]


def test_plan_from_logs_refuses_a_log_it_cannot_use(capsys, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("step,loss\n1,2\n2,1\n3,0.5\n")
    assert main(["plan", "--from-logs", str(bad), "--mode", "allreduce", "--workers", "8:8", "--batch", "16"]) == 2
    err = capsys.readouterr().err
    assert "no GPU count" in err and "expected at least one log" in err


def test_plan_from_logs_to_another_device(capsys):
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "data" / "llm" / "mlperf_v5.1" / "llama31_8b"
    logs = sorted(str(p) for p in root.glob("NVIDIA__tyche_ngpu8_*/result_*.txt"))     # 8 × GB200, global batch 16
    base = ["plan", "--from-logs", *logs, "--mode", "allreduce", "--workers", "8,16"]
    assert main(base) == 0
    own = pd.read_csv(io.StringIO(capsys.readouterr().out)).set_index("w")
    assert main([*base, "--to-device", "GB200"]) == 0
    same, err = _csv(capsys)
    same = same.set_index("w")
    assert list(same.columns) == list(own.columns) and set(same["device"]) == {"GB200"}
    assert set(same["speed_model"]) == {"transformer"} and set(own["speed_model"]) == {"bracket"}
    assert "8×GB200 (from NVIDIA__tyche_ngpu8_ngc25.09_nemo.json)" in err
    # the source device at the source's GPU count reproduces the logs' own plan, inside the model's interval
    assert same.loc[8, "time_s"] == pytest.approx(own.loc[8, "time_s"], rel=0.02)
    assert same.loc[8, "time_low"] <= own.loc[8, "time_s"] <= same.loc[8, "time_high"]
    # time = samples / M × step × the logs' evaluation overhead, as in plan --from-logs
    overhead = own.loc[8, "time_s"] / (own.loc[8, "samples_to_target"] / 16 * own.loc[8, "step_time_s"])
    row = same.loc[16]
    assert row["time_s"] == pytest.approx(row["samples_to_target"] / 16 * row["step_time_s"] * overhead, rel=1e-4)
    assert row["time_s"] < same.loc[8, "time_s"]                # more GPUs of the same kind: shorter
    # a slower device (H100: a fraction of GB200's peaks and bandwidth) takes longer at the same count
    assert main([*base, "--to-device", "H100"]) == 0
    slower = _csv(capsys)[0].set_index("w")
    assert set(slower["device"]) == {"H100_SXM"} and (slower["time_s"] > same["time_s"]).all()


def test_to_device_needs_logs_and_a_known_device(capsys):
    assert main(["plan", "--to-device", "H100", "--steps", "10"]) == 2
    assert "--to-device: expected --from-logs" in capsys.readouterr().err
    from pathlib import Path

    log = next((Path(__file__).resolve().parents[2] / "data" / "llm" / "mlperf_v5.1" / "llama31_8b").glob(
        "NVIDIA__tyche_ngpu8_*/result_0.txt"))
    assert main(["plan", "--from-logs", str(log), "--mode", "allreduce", "--workers", "8", "--to-device", "TPU9"]) == 2
    assert "TPU9" in capsys.readouterr().err
