"""The plan when the batch follows the workers (core.plan.goodput)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.batch import BatchRun, fit_batch_scaling, typed_batch_scaling
from core.errors import InputError
from core.plan.goodput import ScalingRule, batch_plan_grid, best_configuration
from core.plan.grid import pareto_frontier, plan_grid
from core.speed import scale_to_step_time
from core.speed.optimus import SpeedModel, paper_speed_model
from core.speed.pollux import PolluxSpeedModel

ALLREDUCE = SpeedModel("allreduce", (0.001, 0.05, 0.002))          # 1/f = 0.001·M/w + 0.05 + 0.002·w
BATCH = typed_batch_scaling(1e5, 1000)                              # E(M) = 1e5·(1 + M/1000)


def test_per_worker_rule_time_is_steps_at_w_m_over_the_speed_at_w_m():
    g = batch_plan_grid(ALLREDUCE, BATCH, ScalingRule("per-worker", per_worker_batch=64), workers=[1, 2, 8])
    for w in (1, 2, 8):
        m = 64 * w
        steps = 1e5 * (1 + m / 1000) / m
        step_time = 0.001 * 64 + 0.05 + 0.002 * w
        row = g[g["w"] == w].iloc[0]
        assert (row["global_batch"], row["steps"]) == pytest.approx((m, steps), rel=1e-12)
        assert row["time_s"] == pytest.approx(steps * step_time, rel=1e-12)
        assert row["efficiency"] == pytest.approx(1 / (1 + m / 1000), rel=1e-12)
        assert row["goodput"] == pytest.approx(m / step_time / (1 + m / 1000), rel=1e-12)
        assert row["time_s"] == pytest.approx(BATCH.e_min / row["goodput"], rel=1e-12)   # T = E_min / goodput


def test_fixed_rule_is_the_plain_plan_with_the_steps_of_that_batch():
    model = scale_to_step_time(paper_speed_model("sync"), 0.906, 2, 4)        # M = 128
    g = batch_plan_grid(model, BATCH, ScalingRule("fixed", global_batch=128), ps=[2, 4], workers=range(1, 17))
    plain = plan_grid(model, BATCH.steps(128), ps=[2, 4], workers=range(1, 17))
    np.testing.assert_allclose(g["time_s"], plain["time_s"], rtol=1e-12)
    np.testing.assert_allclose(g["steps"], 1e5 * (1 + 0.128) / 128, rtol=1e-12)   # S(128) at every w


def test_best_rule_finds_the_brute_force_optimum_over_integer_per_worker_batches():
    rule = ScalingRule("best", batch_min=32, batch_max=2048)
    g = batch_plan_grid(ALLREDUCE, BATCH, rule, workers=[1, 4, 16])
    for w in (1, 4, 16):
        m = np.arange(max(1, math.ceil(32 / w)), 2048 // w + 1) * w             # every allowed M = w·m
        t = BATCH.steps(m) * (0.001 * m / w + 0.05 + 0.002 * w)
        row = g[g["w"] == w].iloc[0]
        assert row["time_s"] <= t.min() * 1.01          # 64 geometric candidates: within 1 % of the best M
        assert 32 <= row["global_batch"] <= 2048 and row["global_batch"] % w == 0


def test_best_rule_is_never_slower_than_a_fixed_rule_within_its_bounds():
    best = batch_plan_grid(ALLREDUCE, BATCH, ScalingRule("best", batch_min=64, batch_max=4096), workers=[2, 8, 32])
    for rule in (ScalingRule("fixed", global_batch=256), ScalingRule("per-worker", per_worker_batch=64)):
        other = batch_plan_grid(ALLREDUCE, BATCH, rule, workers=[2, 8, 32])
        assert np.all(best["time_s"].to_numpy() <= other["time_s"].to_numpy() * (1 + 1e-9))


def test_growing_the_batch_with_the_workers_costs_samples_the_fixed_batch_does_not():
    per_worker = batch_plan_grid(ALLREDUCE, BATCH, ScalingRule("per-worker", per_worker_batch=64), workers=[1, 64])
    # at w = 64 the batch is 4096: E = 1e5·5.096 samples against 1e5·1.064 at w = 1
    samples = per_worker["steps"] * per_worker["global_batch"]
    assert samples.iloc[1] / samples.iloc[0] == pytest.approx(5.096 / 1.064, rel=1e-12)


def test_intervals_carry_both_fits_in_quadrature():
    runs = [BatchRun(f"r{b}", float(b), True, e, e / b) for b, e in
            ((128, 2.8e6), (256, 3.2e6), (512, 3.3e6), (1024, 3.8e6))]
    batch = fit_batch_scaling(runs)
    speed = PolluxSpeedModel((0.01, 0.0005, 0.05, 0.002, 0.0, 0.05, 0.002, 2.0), gpus_per_node=4,
                             time_band=(0.9, 1.2), level=0.8)
    g = batch_plan_grid(speed, batch, ScalingRule("per-worker", per_worker_batch=32), workers=[4, 16])
    for row in g.itertuples():
        lo_steps = math.log(row.steps / row.steps_low)
        hi_steps = math.log(row.steps_high / row.steps)
        assert row.time_s_high / row.time_s == pytest.approx(math.exp(math.hypot(hi_steps, math.log(1.2))))
        assert row.time_s / row.time_s_low == pytest.approx(math.exp(math.hypot(lo_steps, math.log(1 / 0.9))))
        assert row.cost_low <= row.cost <= row.cost_high


def test_best_configuration_and_frontier_over_w_and_m():
    g = batch_plan_grid(ALLREDUCE, BATCH, ScalingRule("best", batch_min=64, batch_max=8192), workers=range(1, 65))
    best = best_configuration(g)
    assert best["time_s"] == g["time_s"].min()
    front = pareto_frontier(g)
    assert front["time_s"].is_monotonic_increasing and front["cost"].is_monotonic_decreasing
    assert front.iloc[0]["w"] == best["w"]


@pytest.mark.parametrize("kwargs, message", [
    (dict(rule="largest"), r"scaling rule: expected one of fixed, per-worker, best; got 'largest'"),
    (dict(rule="per-worker"), r"scaling rule 'per-worker': per_worker_batch: expected a finite number > 0; got None"),
    (dict(rule="best", batch_min=512, batch_max=64), r"expected batch_min <= batch_max; got 512 > 64"),
])
def test_bad_rules_are_refused_with_the_house_message(kwargs, message):
    with pytest.raises(InputError, match=message):
        ScalingRule(**kwargs)


def test_best_rule_without_room_for_one_sample_per_worker_says_so():
    with pytest.raises(InputError, match=r"at least one sample per worker within \[8, 16\]"):
        batch_plan_grid(ALLREDUCE, BATCH, ScalingRule("best", batch_min=8, batch_max=16), workers=[32, 64])
