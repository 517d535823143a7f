"""MLCommons reference convergence points read from the installed mlperf-logging (core.batch.rcp)."""

from __future__ import annotations

import math

import pytest

from core.batch.rcp import lr_deviation, predict_from_points, rcp_leave_one_out
from core.batch.rcp_data import RcpPoint, latest_round, load_rcps, parse_rcp_spec, rcp_benchmarks, rcp_rounds
from core.errors import InputError

#: the 20 seeds at batch 8 of llama2_70b_lora in mlperf-logging 4.1.68 (training_5.0.0/rcps_llama2_70b_lora.json)
LORA_8 = [3072, 2688, 3456, 3072, 3072, 3072, 3456, 3456, 3072, 2688, 3456, 3072, 3072, 3072, 3840, 3456, 2688, 3072,
          3456, 3456]


def test_the_package_lists_rounds_and_benchmarks():
    assert {"4.0.0", "5.0.0", "5.1.0"} <= set(rcp_rounds())
    assert "llama2_70b_lora" in rcp_benchmarks("4.0.0") and "flux1" not in rcp_benchmarks("4.0.0")
    assert latest_round("resnet") == "4.0.0"          # ResNet-50 left the suite after round 4.0


def test_lora_rcps_are_read_with_the_checkers_olympic_mean():
    rcps = load_rcps("llama2_70b_lora", "5.0.0")
    assert rcps.unit == "samples_count" and rcps.batches.tolist() == [8, 16, 32, 128]
    first = rcps.points[0]
    assert sorted(first.values) == sorted(LORA_8)
    kept = sorted(LORA_8)[1:-1]                        # one lowest and one highest seed dropped
    assert first.mean == pytest.approx(sum(kept) / 18, rel=1e-12) == pytest.approx(3178.667, abs=1e-3)
    assert first.resolution == 384                     # every seed passed at a multiple of 384 samples
    assert [p.learning_rate for p in rcps.points] == [4e-4, 4e-4, 4e-4, 1e-3]


def test_stable_diffusion_31_counts_steps_and_is_turned_into_samples():
    rcps = load_rcps("stable_diffusion", "3.1.0")
    # batch 512: 13 seeds at step 5,000 and one at 6,000; the olympic mean is 5,000 steps = 2,560,000 samples
    assert rcps.unit == "samples_count"
    assert rcps.points[0].global_batch == 512 and rcps.points[0].mean == pytest.approx(5000 * 512, rel=1e-12)
    assert rcps.points[0].resolution == 1000 * 512


def test_a_spec_names_a_benchmark_and_optionally_a_round():
    assert parse_rcp_spec("bert:5.1") == ("bert", "5.1.0")
    with pytest.raises(InputError, match=r"^--rcp: expected BENCHMARK or BENCHMARK:ROUND"):
        parse_rcp_spec(":5.0.0")
    with pytest.raises(InputError, match=r"^--rcp: expected an MLPerf training benchmark .* got 'nope'\. Known: "):
        load_rcps("nope")
    with pytest.raises(InputError, match=r"^--rcp: expected a round with RCPs for flux1; got 4\.0\.0\. Rounds with it: "
                                         r"5\.1\.0"):
        load_rcps("flux1", "4.0.0")


def test_inside_the_batches_a_prediction_interpolates_between_the_neighbours():
    # E = 1000 + 10·B at 100, 200, 400 (McCandlish's line): 300 lies between 200 and 400
    p = predict_from_points([100, 200, 400], [2000, 3000, 5000], [0.02] * 3, 300)
    assert (p.samples, p.region) == (4000, "interpolated")
    assert p.low < 4000 < p.high and p.note == ""


def test_outside_the_batches_a_prediction_is_mccandlish_flagged_and_wider():
    inside = predict_from_points([100, 200, 400], [2000, 3000, 5000], [0.02] * 3, 300)
    out = predict_from_points([100, 200, 400], [2000, 3000, 5000], [0.02] * 3, 800)
    assert out.samples == pytest.approx(9000, rel=1e-9) and out.region == "extrapolated"
    assert out.note.startswith("extrapolated 2x beyond the measured batch 400")
    assert math.log(out.high / out.samples) > math.log(inside.high / inside.samples)


def test_a_measured_batch_returns_its_mean_and_the_seed_spread():
    p = predict_from_points([100, 200], [2000, 3000], [0.05, 0.05], 200)
    assert (p.samples, p.region) == (3000, "measured")
    assert math.log(p.high / 3000) == pytest.approx(1.2815516 * 0.05, rel=1e-6)     # z(0.9)·5 %


def test_a_learning_rate_off_the_references_trend_is_found():
    pts = [RcpPoint(b, (1.0,), 1.0, 0.01 * b / 16) for b in (16, 32, 64)]            # linear scaling
    assert lr_deviation(pts, 128, 0.08) is None
    assert lr_deviation(pts, 128, 0.04) == pytest.approx(math.log(0.5), rel=1e-9)     # capped at half the trend


def test_lora_leave_one_out_rows_on_hand_values():
    rows = {r["global_batch"]: r for r in rcp_leave_one_out(load_rcps("llama2_70b_lora", "5.0.0"))}
    means = {b: r["mean"] for b, r in rows.items()}
    # 16 from its neighbours 8 and 32: 3178.67 + (6037.33 − 3178.67)·8/24 = 4131.56, +2.47 % on 4032
    guess = means[8] + (means[32] - means[8]) * 8 / 24
    assert rows[16]["predicted"] == pytest.approx(guess, rel=1e-12) == pytest.approx(4131.56, abs=0.01)
    assert rows[16]["region"] == "interpolated" and rows[16]["error_pct"] == pytest.approx(2.469, abs=1e-3)
    # 128 runs at 2.5x the rate of 8 to 32: flagged off the curve, extrapolated 4x, and its interval covers it
    assert rows[128]["region"] == "extrapolated" and rows[128]["lr_off_trend"]
    assert "2.5x the other batches' trend" in rows[128]["note"]
    assert rows[128]["low"] <= means[128] <= rows[128]["high"]


def test_fewer_than_three_batches_cannot_be_left_out():
    rcps = load_rcps("llama31_405b", "5.1.0")
    short = type(rcps)(rcps.benchmark, rcps.round, rcps.unit, rcps.points[:2])
    with pytest.raises(InputError, match=r"expected RCPs at three or more global batches to leave one out; got 2"):
        rcp_leave_one_out(short)
