"""Figures of the batch-size view and the plan's steps axis (core.figures.batch, core.figures.plan)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from core.batch import BatchRun, BatchScaling, fit_batch_scaling, typed_batch_scaling
from core.figures.batch import SAMPLES_TRACES, batch_samples_figure, efficiency_goodput_figure
from core.figures.plan import tta_vs_workers_figure
from core.plan import ScalingRule, batch_plan_grid, best_workers, goodput_curves
from core.speed import SpeedModel

RUNS = [BatchRun(f"r-{b}.csv", float(b), True, 1e6 * (1 + b / 2000) * (1 + d), 1e6 * (1 + b / 2000) * (1 + d) / b,
                 samples_per_s=100.0 * b ** 0.5)
        for b, d in ((250, 0.01), (1000, -0.02), (4000, 0.015), (8000, 0.0))]
SPEED = SpeedModel("allreduce", (0.001, 0.05, 0.002))


def test_samples_figure_draws_the_runs_the_fit_and_its_two_parameters():
    model = fit_batch_scaling(RUNS)
    fig = batch_samples_figure(model, predict=[16000])
    assert tuple(t.name for t in fig.data) == tuple(n for n in SAMPLES_TRACES if n != "outside the fit")
    by = {t.name: t for t in fig.data}
    assert list(by["measured"].x) == [250, 1000, 4000, 8000]
    assert list(by["measured"].y) == [r.samples_to_target for r in RUNS]
    np.testing.assert_allclose(by["fitted E(B)"].y, model.samples(np.asarray(by["fitted E(B)"].x)))
    assert list(by["E_min"].y) == [model.e_min] * 2
    assert list(by["B_noise"].x) == [model.b_noise] * 2 and list(by["B_noise"].y) == [model.e_min, 2 * model.e_min]
    assert by["predicted"].y[0] == pytest.approx(model.samples(16000))
    assert fig.layout.xaxis.type == "log" and "tuned for its batch" in fig.layout.annotations[0].text


def test_a_run_kept_out_of_the_fit_is_drawn_marked_and_the_fit_ignores_it():
    """Issue 36: a capped run's measured value is shown (open marker, its reason on hover), not fitted."""
    capped = replace(RUNS[-1], source="r-16000.csv", global_batch=16000.0, samples_to_target=9e6,
                     steps_to_target=9e6 / 16000, in_fit=False, note="learning rate 0.4 capped (batch 16,000)")
    model = fit_batch_scaling([*RUNS, capped])
    assert model.e_min == pytest.approx(fit_batch_scaling(RUNS).e_min)     # the fit never saw it
    fig = batch_samples_figure(model)
    by = {t.name: t for t in fig.data}
    assert list(by["measured"].x) == [250, 1000, 4000, 8000]
    assert list(by["outside the fit"].x) == [16000] and list(by["outside the fit"].y) == [9e6]
    assert by["outside the fit"].text == ("r-16000.csv: learning rate 0.4 capped (batch 16,000)",)
    assert by["outside the fit"].marker.symbol == "circle-open"


def test_samples_figure_without_interval_or_finite_noise_scale_leaves_those_traces_out():
    fig = batch_samples_figure(BatchScaling(1e6, float("inf"), "typed"))   # no cost of a larger batch measured
    assert [t.name for t in fig.data] == ["fitted E(B)", "measured", "E_min"]


def test_efficiency_and_goodput_panels_show_the_core_numbers():
    model = fit_batch_scaling(RUNS)
    curves = goodput_curves(model, speed=SPEED, workers=[4, 16])
    fig = efficiency_goodput_figure(model, curves)
    assert [t.name for t in fig.data] == ["statistical efficiency", "B_noise", "w = 4", "w = 16", "runs"]
    eff = fig.data[0]
    np.testing.assert_allclose(eff.y, 1 / (1 + np.asarray(eff.x) / model.b_noise))
    runs = fig.data[4]                       # measured throughput × efficiency, one marker per run
    np.testing.assert_allclose(runs.y, [r.samples_per_s / (1 + r.global_batch / model.b_noise) for r in RUNS])
    w4 = curves[curves["label"] == "w = 4"]
    np.testing.assert_allclose(fig.data[2].y, w4["goodput"])


def test_plan_figure_shows_the_steps_each_w_needs_on_a_second_axis():
    grid = batch_plan_grid(SPEED, typed_batch_scaling(1e5, 1000), ScalingRule("per-worker", per_worker_batch=64),
                           workers=range(1, 9))
    fig = tta_vs_workers_figure(grid, best=best_workers(grid), steps_axis=True)
    steps = next(t for t in fig.data if t.name == "steps to target")
    assert steps.yaxis == "y2" and fig.layout.yaxis2.title.text == "steps to target"
    # w = 8: M = 512, S = 1e5·1.512/512 = 295.3 steps
    assert steps.y[-1] == pytest.approx(1e5 * 1.512 / 512)
    plain = tta_vs_workers_figure(grid, best=best_workers(grid))
    assert "steps to target" not in [t.name for t in plain.data]
