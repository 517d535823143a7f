"""``python -m core predict`` through a planned schedule, and ``python -m core schedule``: columns, the numbers core
gives for the same input, refusals."""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.curves import MULTI_POWER, schedule_features
from core.logs import read_log_file
from core.prediction import COOLDOWN_COLUMNS, forecast_progress, forecast_through_schedule, plan_cooldown
from core.schedules import build_schedule
from core.targets import Target
from tests.conftest import ROOT

CURVES = ROOT / "data" / "llm" / "lr_schedule_loss_curves"
TRUTH = {"L0": 2.0, "A": 0.3, "alpha": 0.4, "B": 300.0, "C": 2.0, "beta": 0.5, "gamma": 0.5}


def _table(out: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(out))


def _hand_made(folder, name: str, schedule) -> str:
    """A noise-free run of a known multi-power law, logging its rate at every row (and at each knot)."""
    t = np.union1d(np.arange(600, schedule.total_steps + 1, 200.0), [k for k in schedule.steps if k >= 600])
    y = MULTI_POWER.evaluate(schedule_features(schedule, t), TRUTH)
    path = folder / name
    rows = "".join(f"{a:.0f},{b:.10g},{c:.7f}\n" for a, b, c in zip(t, schedule.lr_at(t), y))
    path.write_text("step,lr,loss\n" + rows)
    return str(path)


@pytest.fixture
def runs(tmp_path):
    const = build_schedule("constant", total=20_000, peak=1e-3, warmup=600)
    drops = [build_schedule("step", total=20_000, peak=1e-3, warmup=600, drops=(d,), factor=0.2)
             for d in (8_000, 12_000)]
    return (_hand_made(tmp_path, "constant.csv", const),
            [_hand_made(tmp_path, f"drop{i}.csv", s) for i, s in enumerate(drops)])


def test_predict_through_a_declared_wsd_schedule_gives_the_loss_at_its_end(runs, capsys):
    run, others = runs
    spec = "wsd:total=20000,warmup=600,peak=1e-3,decay_start=14000,final=2e-4,shape=linear"
    assert main(["predict", run, "--prior-from", *others, "--target", "loss<=1.95", "--observe", "0.4",
                 "--schedule", spec, "--family", "multi-power"]) == 0
    out = capsys.readouterr()
    row = _table(out.out).iloc[0]
    f = forecast_progress(read_log_file(run, source=run), [read_log_file(p, source=p) for p in others],
                          Target("loss", "<=", 1.95), observe=0.4, planned=spec, family="multi-power")
    assert row["route"] == "through the schedule (multi-power)" == f.route
    assert row["metric_at_end"] == pytest.approx(f.schedule.metric_at_end, rel=1e-5)
    assert row["posterior_progress"] == pytest.approx(f.progress.posterior.value, rel=1e-5)
    assert row["schedule"].startswith(f"the lr column of {run} to step 8,000, then declared: wsd:")
    # the truth of the law under that plan: 2 + ... at step 20,000
    truth = MULTI_POWER.evaluate(schedule_features(f.schedule.schedule, [20_000.0]), TRUTH)[0]
    assert row["metric_at_end"] == pytest.approx(truth, rel=2e-3)
    assert "parameters: B, C, beta, gamma from joint fit of 2 other runs" in out.err


def test_predict_reads_a_planned_schedule_csv_and_refuses_a_bad_one(runs, tmp_path, capsys):
    run, others = runs
    plan = tmp_path / "plan.csv"
    plan.write_text("step,lr\n0,0\n600,1e-3\n14000,1e-3\n20000,2e-4\n")
    assert main(["predict", run, "--prior-from", *others, "--target", "loss<=1.95", "--observe", "0.4",
                 "--planned-schedule", str(plan)]) == 0
    row = _table(capsys.readouterr().out).iloc[0]
    assert row["schedule"].endswith(f"then planned schedule {plan}") and math.isfinite(row["metric_at_end"])
    bad = tmp_path / "bad.csv"
    bad.write_text("step,loss\n1,2\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["predict", run, "--target", "loss<=1.95", "--planned-schedule", str(bad)])
    assert exit_info.value.code == 2
    assert "bad.csv: expected a step column and a learning-rate column" in capsys.readouterr().err


def test_predict_with_a_planned_schedule_and_an_accuracy_target_says_it_cannot(capsys):
    log = str(ROOT / "data" / "logs" / "resnet20_Intel Xeon Processor.csv")
    assert main(["predict", log, "--target-acc", "0.9", "--schedule", "wsd:total=1000,decay=0.2"]) == 2
    assert "a planned schedule in optimiser steps is forecast through with a falling target" in capsys.readouterr().err


def test_the_schedule_verb_on_a_hand_made_run(runs, capsys):
    run, others = runs
    args = ["schedule", run, "--prior-from", *others, "--target", "loss<=1.95", "--observe", "0.4", "--shapes",
            "linear,exp", "--decay-fraction", "0.1:0.2", "--max-steps", "20000", "--step-time", "0.5",
            "--family", "multi-power"]
    assert main(args) == 0
    out = capsys.readouterr()
    table = _table(out.out)
    assert list(table.columns) == list(COOLDOWN_COLUMNS)
    assert set(table["shape"]) == {"linear", "exp"} and set(table["decay_fraction"]) == {0.1, 0.15, 0.2}
    f = forecast_through_schedule(read_log_file(run, source=run), [read_log_file(p, source=p) for p in others],
                                  Target("loss", "<=", 1.95), observe=0.4, family="multi-power")
    plan = plan_cooldown(f, shapes=("linear", "exp"), decay_fractions=(0.1, 0.15, 0.2), max_steps=20_000,
                         step_time_s=0.5)
    assert table["total_steps"].tolist() == plan.table["total_steps"].tolist()
    assert table["metric_at_end"].to_numpy() == pytest.approx(plan.table["metric_at_end"].to_numpy(), rel=1e-5)
    shortest = table[table["shortest"]].iloc[0]
    assert shortest["p_reach"] >= 0.8 and table.iloc[0]["shortest"]          # best first
    assert f"shortest plan reaching loss<=1.95 with ≥ 80% probability: {shortest['total_steps']:,.0f} steps" in out.err


def test_the_schedule_verb_refuses_a_run_without_a_plan_with_one_line(tmp_path, capsys):
    run = tmp_path / "no_lr.csv"
    run.write_text("step,loss\n" + "".join(f"{s},{2 + 3 * s ** -0.4:.5f}\n" for s in range(100, 2001, 100)))
    assert main(["schedule", str(run), "--target", "loss<=2.1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "expected a planned learning-rate schedule" in err[0] and str(run) in err[0]
