"""Plan figures as data: trace names and order, best-w markers, bands, extra curves, time/cost plane."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.figures.plan import time_cost_figure, tta_vs_workers_figure
from core.plan.allocation import greedy_allocation
from core.plan.grid import best_workers, cheapest_config, pareto_frontier, plan_grid
from core.speed import scale_to_step_time
from core.speed.optimus import paper_speed_model

CALIBRATED = scale_to_step_time(paper_speed_model("sync"), 0.906, 2, 4)   # 0.02 s per paper unit
STEPS = 50_000


@pytest.fixture
def grid():
    return plan_grid(CALIBRATED, STEPS, workers=range(1, 33))


def _tta(g, **kw):
    return tta_vs_workers_figure(g, best=best_workers(g), **kw)


def _time_cost(g, *, deadline=None, **kw):
    choice = cheapest_config(g, deadline=deadline) if deadline is not None else None
    return time_cost_figure(g, frontier=pareto_frontier(g), choice=choice, **kw)


def _by_name(fig):
    return {t.name: t for t in fig.data}


def test_tta_trace_names_and_axes(grid):
    fig = _tta(grid)
    assert [t.name for t in fig.data] == ["p = 2", "p = 4", "best w"]
    # the figure draws the best w it is given, and computes none itself
    assert [t.name for t in tta_vs_workers_figure(grid).data] == ["p = 2", "p = 4"]
    assert fig.layout.xaxis.title.text == "workers w"
    assert fig.layout.yaxis.title.text == "time to target (hours)"
    assert fig.data[0].line.shape == "spline"


def test_tta_lines_carry_the_grid_hours(grid):
    fig = _tta(grid)
    p2 = grid[grid.p == 2]
    np.testing.assert_array_equal(fig.data[0].x, p2.w)
    np.testing.assert_allclose(fig.data[0].y, p2.time_h)
    # w = 4, p = 2: 50 000 steps · 0.906 s = 45 300 s = 12.583 h
    assert fig.data[0].y[3] == pytest.approx(45_300 / 3600)


def test_best_w_marker_sits_at_the_fastest_w(grid):
    fig = _tta(grid)
    best = _by_name(fig)["best w"]
    # p = 2: 130.56/w + 2.46·w least at w = 7; p = 4: 130.56/w + 1.23·w least at w = 10
    assert list(best.x) == [7, 10]
    assert list(best.text) == ["w = 7", "w = 10"]
    expected = best_workers(grid)
    np.testing.assert_allclose(best.y, expected.time_h)
    assert best.y[0] == pytest.approx(grid[(grid.p == 2) & (grid.w == 7)].time_h.iloc[0])


def test_best_w_marker_moves_when_the_range_is_cut():
    # with w limited to 1..5 the curves are still falling: the best w is the last one, 5
    fig = _tta(plan_grid(CALIBRATED, STEPS, workers=range(1, 6)))
    assert list(_by_name(fig)["best w"].x) == [5, 5]


def test_band_traces_come_before_each_line():
    g = plan_grid(CALIBRATED, STEPS, workers=range(1, 9), steps_interval=(40_000, 65_000))
    fig = _tta(g)
    assert [t.name for t in fig.data] == ["p = 2 range", "p = 2", "p = 4 range", "p = 4", "best w"]
    band = fig.data[0]
    assert band.fill == "toself"
    # upper edge along w, then the lower edge back: 8 + 8 points
    assert len(band.x) == 16 and band.y[0] == pytest.approx(g.time_h_high.iloc[0])
    assert band.y[-1] == pytest.approx(g.time_h_low.iloc[0])


def test_paper_units_axis_and_values():
    g = plan_grid(paper_speed_model("sync"), 1000, workers=range(1, 9))
    fig = _tta(g)
    assert fig.layout.yaxis.title.text == "time to target (paper units)"
    # p = 2, w = 4: 1000 steps · 45.3 units
    assert fig.data[0].y[3] == pytest.approx(45_300)


def test_extra_curves_are_added_by_label(grid):
    extra = pd.concat([
        pd.DataFrame({"p": 2, "w": [1, 2, 4], "time_h": [10.0, 6, 4], "label": "Paleo, p = 2"}),
        pd.DataFrame({"p": 4, "w": [1, 2, 4], "time_h": [9.0, 5, 3], "label": "Paleo, p = 4"}),
    ])
    fig = _tta(grid, extra=extra)
    names = [t.name for t in fig.data]
    assert names == ["p = 2", "p = 4", "best w", "Paleo, p = 2", "Paleo, p = 4"]
    assert list(fig.data[3].y) == [10.0, 6, 4] and fig.data[3].line.dash == "dash"
    assert fig.data[3].line.color == fig.data[0].line.color     # same colour as its p


def test_extra_curves_are_hidden_with_a_note_in_paper_units():
    g = plan_grid(paper_speed_model("sync"), 1000, workers=range(1, 9))
    extra = pd.DataFrame({"p": 2, "w": [1, 2], "time_h": [1.0, 0.5], "label": "Paleo, p = 2"})
    fig = _tta(g, extra=extra)
    assert "Paleo, p = 2" not in [t.name for t in fig.data]
    assert "paper units" in fig.layout.annotations[0].text


def test_empty_grid_gives_a_titled_note():
    empty = plan_grid(CALIBRATED, STEPS, workers=[1]).iloc[0:0]
    fig = _tta(empty)
    assert len(fig.data) == 0 and fig.layout.annotations[0].text == "No configuration to plot."
    assert len(time_cost_figure(empty).data) == 0


def test_time_cost_traces_and_frontier(grid):
    fig = _time_cost(grid)
    assert [t.name for t in fig.data] == ["p = 2", "p = 4", "Pareto frontier"]
    front = pareto_frontier(grid)
    np.testing.assert_allclose(fig.data[2].x, front.time_h)
    np.testing.assert_allclose(fig.data[2].y, front.cost)
    assert fig.layout.xaxis.title.text == "time to target (hours)"
    assert fig.layout.yaxis.title.text == "cost"


def test_time_cost_deadline_and_cheapest_marker(grid):
    fig = _time_cost(grid, deadline=10.0)
    traces = _by_name(fig)
    assert list(traces["deadline"].x) == [10.0, 10.0]
    choice = cheapest_config(grid, deadline=10.0)
    star = traces["cheapest under deadline"]
    assert (star.x[0], star.y[0]) == (choice.time, choice.cost)
    assert star.text[0] == f"p = {choice.p}, w = {choice.w}"
    assert choice.time <= 10.0


def test_time_cost_says_when_no_configuration_meets_the_deadline(grid):
    fig = _time_cost(grid, deadline=0.5)
    names = [t.name for t in fig.data]
    assert "deadline" in names and "cheapest under deadline" not in names
    assert fig.layout.annotations[0].text.startswith("No configuration reaches the target within 0.5 hours")


def test_time_cost_greedy_path_and_optimum(grid):
    a = greedy_allocation(CALIBRATED, STEPS, budget=10)
    fig = _time_cost(grid, allocation=a)
    traces = _by_name(fig)
    assert [t.name for t in fig.data][-2:] == ["greedy path", "exhaustive optimum"]
    np.testing.assert_allclose(traces["greedy path"].x, [s.time_s / 3600 for s in a.path])
    np.testing.assert_allclose(traces["greedy path"].y, [s.cost for s in a.path])
    assert traces["exhaustive optimum"].x[0] == pytest.approx(a.optimum.time_s / 3600)


def test_gpu_counts_over_a_wide_span_are_drawn_on_log_axes_with_the_plans_band():
    import pandas as pd

    from core.figures.plan import tta_vs_workers_figure

    w = [1, 8, 64, 512, 2048]
    table = pd.DataFrame({"mode": "allreduce", "p": 0, "time_unit": "s", "w": w, "time_s": [3600.0 * 16 / n for n in w],
                          "time_h": [16.0 / n for n in w], "time_low": [3600.0 * 14 / n for n in w],
                          "time_high": [3600.0 * 18 / n for n in w]})
    fig = tta_vs_workers_figure(table)
    assert (fig.layout.xaxis.type, fig.layout.yaxis.type) == ("log", "log")       # 2048 / 1 >= 64
    band = next(t for t in fig.data if t.name == "all-reduce range")
    assert list(band.y[:5]) == [18.0 / n for n in w] and list(band.y[5:]) == [14.0 / n for n in w][::-1]
    narrow = tta_vs_workers_figure(table[table["w"] <= 8])
    assert narrow.layout.xaxis.type is None                                       # 8 / 1 < 64: linear
    assert tta_vs_workers_figure(table[table["w"] <= 8], log_axes=True).layout.yaxis.type == "log"
