"""Planned schedules: built from specs, read from logs' lr columns and CSVs, their area and their falls."""

from __future__ import annotations

import numpy as np
import pytest

from core.errors import InputError, LogFormatError
from core.logs import read_log, read_log_file
from core.schedules import (
    COOLDOWN_SHAPES,
    SCHEDULE_KINDS,
    PlannedSchedule,
    build_schedule,
    log_schedule,
    parse_schedule_spec,
    resolve_planned_schedule,
)
from core.schedules.from_log import read_schedule_csv
from core.schedules.planned import schedule_from_points
from core.schedules.spec import cooldown_rate
from tests.conftest import DATA

CURVES = DATA / "llm" / "lr_schedule_loss_curves"


def test_area_is_the_sum_of_the_rates_by_hand():
    # warm-up 0 -> 1 over 10 steps (area 5), constant 1 to 30 (20), linear 1 -> 0 to 50 (10)
    s = PlannedSchedule((0.0, 10.0, 30.0, 50.0), (0.0, 1.0, 1.0, 0.0))
    assert s.area([10, 30, 50, 40]).tolist() == [5.0, 25.0, 35.0, 25.0 + (1 + 0.5) / 2 * 10]
    assert s.warmup_end == 10.0 and s.total_steps == 50.0 and s.peak == 1.0


def test_the_falls_of_the_rate_add_up_to_its_whole_decrease_and_none_lie_in_the_warm_up():
    s = build_schedule("cosine", total=10_000, peak=3e-4, warmup=1_000, final=3e-5)
    steps, drops, rates = s.decay_events(max_events=50)
    assert drops.sum() == pytest.approx(3e-4 - 3e-5, rel=1e-9)
    assert steps.min() > 1_000 and steps.max() < 10_000 and 40 <= steps.size <= 60
    assert np.all(np.diff(steps) > 0) and np.all(rates <= 3e-4) and np.all(rates >= 3e-5)


@pytest.mark.parametrize("kind", SCHEDULE_KINDS)
def test_every_kind_builds_from_its_spec_and_stays_within_its_peak(kind):
    extra = {"wsd": ",decay=0.2,shape=1-sqrt,final=10%", "step": ",drops=5000;8000,factor=0.5",
             "cosine": ",final=1e-5", "linear": ",final=1e-5", "constant": ""}[kind]
    s = parse_schedule_spec(f"{kind}:total=10000,warmup=500,peak=1e-3{extra}")
    rates = s.lr_at(np.arange(0, 10_001, 50))
    assert s.total_steps == 10_000 and s.unit == "absolute" and s.spec.startswith(kind)
    assert rates.max() == pytest.approx(1e-3) and rates.min() >= 0
    assert float(s.lr_at(250)) == pytest.approx(0.5e-3)               # halfway up the warm-up


def test_wsd_cool_downs_by_hand():
    # 1-sqrt from 1 to 0.1 over steps 800..1000: at a quarter of the way, 1 - 0.9 * sqrt(0.25) = 0.55
    s = parse_schedule_spec("wsd:total=1000,decay_start=800,final=10%,shape=1-sqrt")
    assert float(s.lr_at(700)) == 1.0 and float(s.lr_at(850)) == pytest.approx(0.55, abs=2e-3)
    exp = parse_schedule_spec("wsd:total=1000,decay=200,final=1%,shape=exp")       # 200 steps, geometric
    assert float(exp.lr_at(900)) == pytest.approx(0.1, rel=2e-2)
    assert cooldown_rate([0.5], 1.0, 0.0, "linear").tolist() == [0.5]
    assert set(COOLDOWN_SHAPES) >= {"1-sqrt", "linear", "exp"}


@pytest.mark.parametrize("spec, message", [
    ("cosine:100", "expected KIND:total=N"),
    ("wsd:warmup=10", "expected total="),
    ("wsd:total=100,decay_start=120", "decay start"),
    ("wsd:total=100,shape=square", "expected one of"),
    ("constant:total=100,foo=1", "expected keys among"),
    ("wsd:total=100,final=0,shape=exp", "an exponential never reaches 0"),
    ("cosine:total=abc", "expected total= a number"),
])
def test_a_bad_spec_is_refused_with_what_was_expected(spec, message):
    with pytest.raises(InputError, match=message):
        parse_schedule_spec(spec)


def test_a_schedule_refuses_unsorted_steps_and_negative_rates():
    with pytest.raises(InputError, match="step 5 after step 10"):
        PlannedSchedule((0.0, 10.0, 5.0), (1.0, 1.0, 1.0), source="plan.csv")
    with pytest.raises(InputError, match="learning rates >= 0"):
        PlannedSchedule((0.0, 10.0), (1.0, -1.0))


def test_the_lr_column_of_a_shared_curve_reconstructs_its_declared_schedule():
    # wsd_20000_24000: warm-up to 3e-4 by step 2,160, constant to 20,000, exponential to 3e-5 at 24,000
    log = read_log_file(CURVES / "csv_100" / "wsd_20000_24000.csv")
    s = log_schedule(log)
    declared = build_schedule("wsd", total=24_000, peak=3e-4, warmup=2_160, decay_start=20_000, final=3e-5,
                              shape="exp")
    grid = np.arange(2_200, 23_900, 100.0)
    assert np.max(np.abs(s.lr_at(grid) / declared.lr_at(grid) - 1)) < 0.03   # the column is logged every 128 steps
    assert s.source.startswith("the lr column of") and s.total_steps == log.frame["global_step"].iloc[-1]
    # the area the laws read agrees to 0.3 % (the warm-up before the first logged row is taken as linear from 0)
    assert s.area(23_000) == pytest.approx(float(declared.area(23_000)), rel=3e-3)


def test_a_csv_of_step_and_lr_is_a_plan_and_a_file_without_lr_is_refused_by_name():
    s = read_schedule_csv(b"step,lr\n0,0\n1000,3e-4\n20000,3e-4\n24000,3e-5\n", "plan.csv")
    assert s.lr_at([500, 22_000]).tolist() == pytest.approx([1.5e-4, 1.65e-4])
    with pytest.raises(LogFormatError, match="plan.csv: expected a step column and a learning-rate column"):
        read_schedule_csv(b"step,loss\n1,2\n", "plan.csv")
    with pytest.raises(LogFormatError, match="plan.csv: .*increase row by row|plan.csv: .*at least two"):
        read_schedule_csv(b"step,lr\n5,1e-3\n", "plan.csv")


def test_a_declared_plan_replaces_the_logs_own_after_the_observed_part():
    log = read_log_file(CURVES / "csv_100" / "constant_24000.csv")
    plan = resolve_planned_schedule(
        log, "wsd:total=24000,peak=3e-4,decay_start=20000,final=3e-5,shape=linear", observed_step=12_000)
    assert float(plan.lr_at(11_000)) == pytest.approx(3e-4) and float(plan.lr_at(24_000)) == pytest.approx(3e-5)
    assert float(plan.lr_at(22_000)) == pytest.approx(3e-4 - 0.5 * 2.7e-4)
    assert plan.source.startswith("the lr column of") and "then declared" in plan.source


def test_a_speedrun_log_declares_its_get_lr_as_multipliers():
    log = read_log_file(DATA / "llm" / "nanogpt_speedrun" / "track_1_short" / "2025-09-29_PolarExpress"
                        / "0e3f0af5-ad08-47a6-813d-0c709b50d422.txt")
    s = log_schedule(log)
    # get_lr: 1.0 to step 815 (1 - cooldown_frac 0.5 of 1,630), then linear to 0.1 at 1,630, held to 1,670
    assert s.unit == "relative to peak" and s.total_steps == 1_670
    assert s.lr_at([800, 1_222.5, 1_630, 1_660]).tolist() == pytest.approx([1.0, 0.55, 0.1, 0.1])


def test_an_mllog_language_model_log_declares_its_cosine_with_its_rates():
    log = read_log_file(DATA / "llm" / "mlperf_v5.1" / "llama31_8b" / "NVIDIA__tyche_ngpu8_ngc25.09_nemo"
                        / "result_0.txt")
    s = log_schedule(log)
    assert log.meta.lr_schedule.startswith("cosine:total=1200000,warmup=16,peak=0.0004,final=4e-05")
    assert s.total_steps == 1_200_000 and float(s.lr_at(16)) == pytest.approx(4e-4)
    assert float(s.lr_at(600_008)) == pytest.approx((4e-4 + 4e-5) / 2, rel=1e-3)   # halfway down the cosine


def test_points_before_the_first_logged_row_rise_from_zero():
    s = schedule_from_points([100, 200], [1.0, 1.0], source="lr column")
    assert s.steps == (0.0, 100.0, 200.0) and float(s.lr_at(50)) == 0.5
    plain = read_log(b"step,lr,loss\n1,1e-3,3\n2,1e-3,2.9\n", "r.csv")
    assert log_schedule(plain).steps == (1.0, 2.0)                     # logged from step 1: nothing added


def test_a_new_plan_never_rewrites_the_rates_already_trained():
    past = PlannedSchedule((0.0, 100.0, 200.0), (3e-4, 3e-4, 3e-4))
    joined = past.then(PlannedSchedule((0.0, 400.0), (1e-3, 1e-3)), at=150)
    # the area to the cut is the log's (150 steps at 3e-4), the new rate starts within a step of it
    assert float(joined.area([150.0])[0]) == pytest.approx(150 * 3e-4)
    assert float(joined.lr_at(150.0)) == pytest.approx(3e-4) and float(joined.lr_at(151.0)) == pytest.approx(1e-3)


def test_a_spec_in_multipliers_of_the_peak_is_taken_relative_to_the_logs_own_peak():
    log = read_log_file(CURVES / "csv_100" / "constant_24000.csv")
    peak = log_schedule(log).cut_at(12_000).peak
    plan = resolve_planned_schedule(log, "wsd:total=24000,decay_start=20000,final=0.1,shape=linear",
                                    observed_step=12_000)
    assert plan.unit == "absolute" and float(plan.lr_at(24_000)) == pytest.approx(0.1 * peak)
    assert f"{peak:.3g}" in plan.source


def test_an_lr_column_that_makes_no_plan_is_no_plan():
    log = read_log(b"step,lr,loss\n100,0,3.0\n200,0,2.9\n300,0,2.8\n", "zero_lr.csv")
    assert log_schedule(log) is None
