"""Plan: time to target by hand (steps, not epochs), grid, cost, frontier, deadline, greedy allocation."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import InputError
from core.plan.allocation import greedy_allocation
from core.plan.grid import (
    best_workers,
    cheapest_config,
    display_time,
    pareto_frontier,
    plan_grid,
    suggest_deadline,
    time_to_target_s,
)
from core.speed import scale_to_step_time
from core.speed.optimus import FORMULAS_LATEX, THETA_NAMES, SpeedModel, paper_speed_model

ALLREDUCE = SpeedModel("allreduce", (0.001, 0.05, 0.002), global_batch=256)   # 0.098 s/step at w=8
CALIBRATED = scale_to_step_time(paper_speed_model("sync"), 0.906, 2, 4)       # 1 paper unit = 0.02 s


# --- time to target ---------------------------------------------------------------------------

def test_time_to_target_counts_steps_not_epochs():
    # 350 epochs × 391 steps = 136 850 steps; 0.098 s per step at w = 8
    # → 136 850 · 0.098 = 13 411.3 s = 3.7254 h (dividing epochs would give 350 · 0.098 = 34.3 s)
    steps = 350 * 391
    assert time_to_target_s(steps, ALLREDUCE, 0, 8) == pytest.approx(13411.3)
    g = plan_grid(ALLREDUCE, steps, workers=[8])
    assert g.loc[0, "time_s"] == pytest.approx(13411.3)
    assert g.loc[0, "time_h"] == pytest.approx(13411.3 / 3600)


@pytest.mark.parametrize("p, w, seconds", [
    # calibrated paper sync: 0.02 s per paper unit; 10 000 steps at (2, 4): 45.30 · 0.02 = 0.906 s/step → 9060 s
    (2, 4, 9060.0),
    # (4, 10): 130.56/10 + 2.78 + 4.92·10/4 + 0.02·4 = 13.056 + 2.78 + 12.3 + 0.08 = 28.216 units
    #          = 0.56432 s/step → 5643.2 s
    (4, 10, 5643.2),
])
def test_time_to_target_by_hand_sync(p, w, seconds):
    assert time_to_target_s(10_000, CALIBRATED, p, w) == pytest.approx(seconds)


def test_async_time_counts_every_worker_update_as_a_step():
    # paper async at (2, 4): f = 4 / 10.89 updates per unit; 1000 updates → 1000 · 10.89 / 4 = 2722.5
    m = paper_speed_model("async")
    assert time_to_target_s(1000, m, 2, 4) == pytest.approx(2722.5)


@pytest.mark.parametrize("steps", [0, -5, float("nan"), "100"])
def test_time_to_target_refuses_bad_steps(steps):
    with pytest.raises(InputError, match="time_to_target_s: steps_to_target: expected a finite number > 0"):
        time_to_target_s(steps, ALLREDUCE, 0, 8)


# --- the grid -----------------------------------------------------------------------------------

def test_grid_shape_columns_and_defaults():
    g = plan_grid(CALIBRATED, 10_000)
    assert list(g.columns) == ["mode", "p", "w", "steps_per_s", "time_s", "time_h", "cost", "time_unit"]
    assert len(g) == 2 * 64 and sorted(g["p"].unique()) == [2, 4] and g["w"].max() == 64
    assert (g["mode"] == "sync").all() and (g["time_unit"] == "s").all()


def test_grid_cost_by_hand():
    # (2, 4): 9060 s = 2.5167 h; price 3 per worker-hour, 0.5 per PS-hour: 2.5167 · (4·3 + 2·0.5) = 32.717
    g = plan_grid(CALIBRATED, 10_000, ps=[2], workers=[4], price_worker=3.0, price_ps=0.5)
    assert g.loc[0, "cost"] == pytest.approx(9060 / 3600 * 13)


def test_allreduce_grid_uses_p_zero_and_refuses_ps():
    g = plan_grid(ALLREDUCE, 1000, workers=[1, 2])
    assert g["p"].tolist() == [0, 0]
    with pytest.raises(InputError, match=r"expected ps = \(0,\) for mode 'allreduce'"):
        plan_grid(ALLREDUCE, 1000, ps=[2, 4])


@pytest.mark.parametrize("kwargs, message", [
    (dict(ps=[0, 2]), r"expected ps as integers >= 1"),
    (dict(workers=[]), r"expected workers as integers >= 1"),
    (dict(workers=[0, 1]), r"expected workers as integers >= 1"),
    (dict(workers=[1.5]), r"expected workers as integers >= 1"),
    (dict(price_worker=-1.0), r"plan_grid: price_worker: expected a finite number >= 0; got -1.0"),
    (dict(steps_interval=(2000, 3000)), r"expected steps_interval \(low, high\) with 0 < low <= "
                                        r"steps_to_target = 1000 <= high"),
])
def test_grid_refuses_bad_options(kwargs, message):
    with pytest.raises(InputError, match=message):
        plan_grid(CALIBRATED, 1000, **kwargs)


def test_interval_columns_scale_with_steps():
    g = plan_grid(CALIBRATED, 10_000, ps=[2], workers=[4], steps_interval=(8_000, 15_000))
    # 0.906 s per step: 7248 s and 13 590 s
    assert g.loc[0, "time_s_low"] == pytest.approx(7248.0)
    assert g.loc[0, "time_s_high"] == pytest.approx(13590.0)
    assert g.loc[0, "time_h_high"] == pytest.approx(13590.0 / 3600)
    assert g.loc[0, "cost_low"] == pytest.approx(7248.0 / 3600 * 6)


@settings(max_examples=30, deadline=None)
@given(st.floats(0.01, 100), st.floats(0.01, 100), st.floats(1, 1e7))
def test_cost_doubles_when_prices_double(price_worker, price_ps, steps):
    one = plan_grid(CALIBRATED, steps, workers=range(1, 9), price_worker=price_worker, price_ps=price_ps)
    two = plan_grid(CALIBRATED, steps, workers=range(1, 9), price_worker=2 * price_worker,
                    price_ps=2 * price_ps)
    np.testing.assert_allclose(two["cost"], 2 * one["cost"], rtol=1e-12)
    np.testing.assert_allclose(two["time_s"], one["time_s"], rtol=0)


@settings(max_examples=30, deadline=None)
@given(st.floats(1, 1e7), st.floats(1.01, 10))
def test_time_is_linear_in_steps(steps, factor):
    a = plan_grid(CALIBRATED, steps, workers=range(1, 9))
    b = plan_grid(CALIBRATED, steps * factor, workers=range(1, 9))
    np.testing.assert_allclose(b["time_s"], factor * a["time_s"], rtol=1e-9)
    pd.testing.assert_frame_equal(best_workers(a)[["p", "w"]], best_workers(b)[["p", "w"]])


# --- best w, frontier, deadline ------------------------------------------------------------------

def test_best_workers_by_hand():
    # step time ∝ 130.56/w + 4.92·w/p (+ constants): least where w² = 130.56·p/4.92,
    # p = 2: w* = 7.29 → compare 7 (18.651 + 17.22 = 35.871) and 8 (16.32 + 19.68 = 36.0): 7
    # p = 4: w* = 10.30 → 10 (13.056 + 12.3 = 25.356) beats 11 (11.869 + 13.53 = 25.399): 10
    best = best_workers(plan_grid(CALIBRATED, 10_000))
    assert best[["p", "w"]].to_dict("records") == [{"p": 2, "w": 7}, {"p": 4, "w": 10}]


def test_pareto_frontier_tiny_example():
    #   A (1 h, cost 9), B (2 h, 5), C (3 h, 6), D (4 h, 2), E (2 h, 7)
    #   C is beaten by B (faster and cheaper), E by B (as fast, cheaper): frontier A, B, D
    g = pd.DataFrame({"p": [1] * 5, "w": [5, 4, 3, 2, 6], "time_s": [3600.0, 7200, 10800, 14400, 7200],
                      "cost": [9.0, 5, 6, 2, 7]})
    front = pareto_frontier(g)
    assert front["w"].tolist() == [5, 4, 2]
    assert front["cost"].is_monotonic_decreasing and front["time_s"].is_monotonic_increasing


def test_pareto_frontier_points_are_not_dominated():
    g = plan_grid(CALIBRATED, 10_000, ps=[1, 2, 4, 8], workers=range(1, 33), price_ps=0.3)
    front = pareto_frontier(g)
    for _, row in front.iterrows():
        better = g[(g.time_s <= row.time_s) & (g.cost <= row.cost) &
                   ((g.time_s < row.time_s) | (g.cost < row.cost))]
        assert better.empty, (row.p, row.w)
    # and every row left out is matched or beaten by a frontier row
    kept = set(zip(front.p, front.w))
    for _, row in g.iterrows():
        if (row.p, row.w) not in kept:
            assert ((front.time_s <= row.time_s) & (front.cost <= row.cost)).any(), (row.p, row.w)
    assert 0 < len(front) < len(g)


def _small_grid():
    #   p=1 w=1: 2 h, cost 4 | p=1 w=2: 1 h, cost 3 | p=2 w=2: 0.5 h, cost 2 | p=2 w=4: 0.4 h, cost 2.4
    return pd.DataFrame({"p": [1, 1, 2, 2], "w": [1, 2, 2, 4], "time_s": [7200.0, 3600, 1800, 1440],
                         "time_h": [2.0, 1, 0.5, 0.4], "cost": [4.0, 3, 2, 2.4], "time_unit": "s"})


def test_cheapest_config_meeting_a_deadline():
    choice = cheapest_config(_small_grid(), deadline=1.5)     # three meet it; the cheapest costs 2
    assert choice.met and (choice.p, choice.w, choice.cost, choice.time) == (2, 2, 2.0, 0.5)
    tight = cheapest_config(_small_grid(), deadline=0.45)     # only (2, 4) at 0.4 h
    assert (tight.p, tight.w) == (2, 4)


def test_cheapest_config_says_when_none_meets_it():
    choice = cheapest_config(_small_grid(), deadline=0.25)
    assert not choice.met and choice.p is None and choice.cost is None
    assert (choice.fastest_p, choice.fastest_w, choice.fastest_time) == (2, 4, 0.4)
    assert choice.message == ("No configuration reaches the target within 0.25 hours; "
                              "the fastest, p = 2, w = 4, takes 0.4 hours.")
    assert choice.to_dict()["met"] is False


def test_paper_units_grid_compares_deadline_in_paper_units():
    g = plan_grid(paper_speed_model("sync"), 1000, ps=[2], workers=[4])   # 45 300 paper units
    assert display_time(g) == ("time_s", "paper units")
    assert cheapest_config(g, deadline=50_000).met
    assert not cheapest_config(g, deadline=40_000).met


# --- greedy allocation ------------------------------------------------------------------------------

def test_greedy_allocation_by_hand():
    # units per step 130.56/w + 2.78 + 4.92·w/p + 0.02·p (paper sync θ, M = 128):
    # (1,1) 138.28 → worker (1,2) 77.92 vs PS (2,1) 135.84 → worker
    # (1,2) → (1,3) 61.08 vs (2,2) 73.02 → worker;  (1,3) → (1,4) 55.12 vs (2,3) 53.72 → PS
    # (2,3) → (2,4) 45.30 vs (3,3) 51.28 → worker; p + w = 6 = budget
    a = greedy_allocation(paper_speed_model("sync"), 1, budget=6)
    assert [(s.added, s.p, s.w) for s in a.path] == [
        ("start", 1, 1), ("worker", 1, 2), ("worker", 1, 3), ("ps", 2, 3), ("worker", 2, 4)]
    assert [s.time_s for s in a.path] == pytest.approx([138.28, 77.92, 61.08, 53.72, 45.30])
    assert a.stop_reason == "budget spent"
    assert (a.optimum.p, a.optimum.w) == (2, 4) and a.gap_pct == 0.0


def test_greedy_stops_without_gain_and_misses_the_optimum():
    # θ = (1, 1, 6, 0, 4), M = 10: 1/f = 10/w + 1 + 6·w/p + 4·p
    # (1,1) = 10 + 1 + 6 + 4 = 21; one worker (1,2) = 5 + 1 + 12 + 4 = 22; one PS (2,1) = 10 + 1 + 3 + 8 = 22
    # both help only together: (2,2) = 5 + 1 + 6 + 8 = 20 → greedy stops at (1,1), 5 % slower
    m = SpeedModel("sync", (1, 1, 6, 0, 4), global_batch=10)
    a = greedy_allocation(m, 1, budget=4)
    assert a.stop_reason == "no gain" and (a.greedy.p, a.greedy.w) == (1, 1)
    assert (a.optimum.p, a.optimum.w, a.optimum.time_s) == (2, 2, pytest.approx(20.0))
    assert a.gap_pct == pytest.approx(5.0)


def test_greedy_allocation_costs_and_frame():
    # budget 2: only the start (1, 1): 138.28 units of 0.02 s → with prices 2 and 1: 2.7656/3600·(2 + 1)
    a = greedy_allocation(CALIBRATED, 1, budget=2, price_worker=2.0, price_ps=1.0)
    assert len(a.path) == 1 and a.path[0].cost == pytest.approx(138.28 * 0.02 / 3600 * 3)
    # in paper units there is no money: the cost is left empty
    assert math.isnan(greedy_allocation(paper_speed_model("sync"), 1, budget=2).path[0].cost)
    frame = a.path_frame()
    assert list(frame.columns) == ["step", "added", "p", "w", "time_s", "time_h", "cost"]
    d = a.to_dict()
    assert d["greedy_p"] == 1 and d["optimum_w"] == 1 and d["budget"] == 2


def test_greedy_allreduce_adds_only_workers():
    a = greedy_allocation(ALLREDUCE, 1000, budget=64)
    assert all(s.p == 0 for s in a.path) and {s.added for s in a.path[1:]} == {"worker"}
    # 0.256/w + 0.002·w is least at w = sqrt(128) = 11.3 → 11 (0.04527) vs 12 (0.04533): stop at 11
    assert (a.greedy.p, a.greedy.w) == (0, 11) and a.stop_reason == "no gain"
    assert (a.optimum.p, a.optimum.w) == (0, 11)


@pytest.mark.parametrize("budget", [1, 0, 5000, 2.5, True])
def test_greedy_refuses_bad_budget(budget):
    with pytest.raises(InputError, match=r"greedy_allocation: budget: expected an int in \[2, 4096\]"):
        greedy_allocation(paper_speed_model("sync"), 1, budget=budget)


@pytest.mark.parametrize("seed", range(5))
def test_greedy_never_beats_the_exhaustive_optimum(seed):
    rng = np.random.default_rng(seed)
    m = SpeedModel("sync", tuple(rng.uniform(0, 1, 5)), global_batch=64)
    a = greedy_allocation(m, 100, budget=int(rng.integers(2, 40)))
    assert a.greedy.time_s >= a.optimum.time_s * (1 - 1e-12), f"seed={seed}"
    assert a.greedy.p + a.greedy.w <= a.budget and a.optimum.p + a.optimum.w <= a.budget


# ---------------------------------------------------------------- default deadline (Plan page)
@pytest.mark.parametrize("fastest_h, factor, expected", [
    (0.37, 2.0, 1.0),      # 0.74 -> 1
    (0.5, 2.0, 1.0),       # exactly 1 stays 1
    (0.6, 2.0, 2.0),       # 1.2 -> 2
    (1.5, 2.0, 5.0),       # 3 -> 5
    (3.0, 2.0, 10.0),      # 6 -> 10
    (0.012, 2.0, 0.05),    # 0.024 -> 0.05
])
def test_suggest_deadline_rounds_up_to_1_2_5(fastest_h, factor, expected):
    g = pd.DataFrame({"time_s": [fastest_h * 3600, 99 * 3600.0], "time_h": [fastest_h, 99.0], "time_unit": "s"})
    assert suggest_deadline(g, factor=factor) == expected


def test_suggest_deadline_is_always_met_and_uses_paper_units():
    g = plan_grid(paper_speed_model("sync"), 1000, workers=range(1, 17))
    d = suggest_deadline(g)
    # paper units: fastest at p = 4, w = 10: 130.56/10 + 2.78 + 4.92·10/4 + 0.02·4 = 28.216 units
    # per step -> 28 216 units; 2x = 56 432 -> 100 000
    assert d == 100_000.0
    assert cheapest_config(g, deadline=d).met


def test_suggest_deadline_refuses_empty_grid_and_bad_factor():
    g = plan_grid(paper_speed_model("sync"), 1000, workers=[4])
    with pytest.raises(InputError, match=r"suggest_deadline: factor: expected a finite number > 0; got 0"):
        suggest_deadline(g, factor=0)
    with pytest.raises(InputError, match="expected a non-empty plan grid"):
        suggest_deadline(g.iloc[:0])


def test_latex_formulas_name_every_theta_of_their_mode():
    for mode, names in THETA_NAMES.items():
        latex = FORMULAS_LATEX[mode]
        assert [f"\\theta_{n[-1]}" in latex for n in names] == [True] * len(names)
        assert latex.count("\\theta_") == len(names)
