"""Scaling figures as data: trace names and order, values against core, degenerate input."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from core.figures.scaling import (
    BANDWIDTH_TRACES,
    COMM_SPLIT_TRACES,
    EFFICIENCY_TRACES,
    PS_TIME_TRACES,
    PS_TIMELINE_TRACES,
    SYNC_ASYNC_TRACES,
    bandwidth_figure,
    comm_split_figure,
    efficiency_figure,
    measured_speedup_figure,
    ps_time_vs_machines_figure,
    ps_timeline_figure,
    sync_async_figure,
)
from core.scaling import PSJob, crossover_machines, ps_schedule, ps_time_vs_machines
from core.scaling.measured import scaling_analysis
from core.scaling.sync_async import async_schedule, sync_schedule
from core.scaling.table import parse_scaling_table

JOB = PSJob(1000, batch=32, epochs=2, machines=3, broadcast_s=1.0, compute_s=5.0,
            gather_s=1.0, aggregate_s=0.5)
EPOCHS = b"gpus,batch_per_gpu,epoch_time_s\n1,128,100\n2,64,60\n2,128,55\n4,32,40\n"
SLOW = b"gpus,batch_per_gpu,epoch_time_s\n1,128,100\n4,32,500\n"


def names(fig) -> list[str]:
    return [t.name for t in fig.data]


# --------------------------------------------------------------------------- PS rounds

def test_ps_timeline_has_two_panels_with_fixed_traces():
    fig = ps_timeline_figure(ps_schedule(JOB, first_rounds=2))
    assert names(fig) == list(PS_TIMELINE_TRACES) * 2
    assert [a.text for a in fig.layout.annotations] == ["first 2 rounds",
                                                         "last round (run round 22)"]
    compute = fig.data[1]
    # first panel: 2 rounds x 3 workers computing 5 s from 1 s and from 8.5 + 1 = 9.5 s
    assert list(compute.x) == [5.0] * 6
    assert sorted(set(compute.base)) == [1.0, 9.5]
    # last panel: two workers aggregate in the last round, from 178 + 7 = 185 s
    assert list(fig.data[7].base) == [185.0, 185.5]
    assert fig.layout.xaxis.title.text == "time (s)"


def test_ps_timeline_of_continuous_rounds_ends_on_the_runs_last_round():
    job = replace(JOB, rounds="continuous")          # 64 minibatches in rounds of 3: 22, the last of 1
    fig = ps_timeline_figure(ps_schedule(job, first_rounds=2))
    assert [a.text for a in fig.layout.annotations] == ["first 2 rounds", "last round (run round 22)"]
    # last panel: one worker aggregates, from 21 * 8.5 + 7 = 185.5 s
    assert list(fig.data[7].base) == [185.5]


def test_ps_timeline_of_one_round_has_one_panel():
    job = PSJob(96, batch=32, epochs=1, machines=3, broadcast_s=1, compute_s=5, gather_s=1,
                aggregate_s=0.5)
    assert names(ps_timeline_figure(ps_schedule(job))) == list(PS_TIMELINE_TRACES)


def test_ps_timeline_of_nothing_is_a_titled_note():
    fig = ps_timeline_figure(pd.DataFrame(columns=["part"]))
    assert len(fig.data) == 0 and fig.layout.annotations[0].text == "No rounds to draw."


def test_time_vs_machines_marks_the_crossover():
    curve = ps_time_vs_machines(JOB, range(1, 17))
    fig = ps_time_vs_machines_figure(curve, crossover=crossover_machines(JOB))
    assert names(fig) == list(PS_TIME_TRACES)
    assert list(fig.data[0].y) == curve.total_time_s.tolist()
    assert list(fig.data[2].x) == [7]
    assert fig.data[2].y[0] == curve.loc[curve.machines == 7, "total_time_s"].item()
    assert fig.layout.yaxis.title.text == "total time (s)"


def test_time_vs_machines_without_crossover_has_an_empty_marker():
    curve = ps_time_vs_machines(JOB, range(1, 5))
    fig = ps_time_vs_machines_figure(curve, crossover=None)
    assert names(fig) == list(PS_TIME_TRACES) and len(fig.data[2].x) == 0


# --------------------------------------------------------------------------- sync vs async

def test_sync_async_traces_and_stale_marks():
    starts, durations = [0.0, 1.0, 0.5], [[3.0, 2.0], [1.0, 1.0], [2.0, 2.0]]
    a = async_schedule(starts, durations)
    s = sync_schedule(starts, durations, aggregate_s=0.5, update_s=1.0)
    fig = sync_async_figure(s, a)
    assert names(fig) == list(SYNC_ASYNC_TRACES)
    fresh, stale, applied = fig.data[5], fig.data[6], fig.data[7]
    # staleness in apply order 0, 1, 2, 2, 2, 1: one fresh bar, five stale
    assert (len(fresh.x), len(stale.x)) == (1, a.n_stale) == (1, 5)
    assert list(applied.text) == ["τ=0", "τ=1", "τ=2", "τ=2", "τ=2", "τ=1"]
    assert list(fig.data[4].x) == [4.5, 8.5]                       # sync steps complete


# --------------------------------------------------------------------------- measured scaling

@pytest.fixture
def result():
    return scaling_analysis(parse_scaling_table(EPOCHS, n_samples=1280), n_params=1_000_000,
                            link_gbps=10)


def test_measured_speedup_figure_traces_and_ideal_line(result):
    fig = measured_speedup_figure(result)
    assert names(fig) == ["ideal", "strong, global batch 128", "weak, 128 per GPU"]
    assert list(fig.data[0].x) == [1, 4] and list(fig.data[0].y) == [1.0, 4.0]
    # strong: 100/60 at 2 GPUs and 100/40 at 4 GPUs
    assert np.allclose(fig.data[1].y, [100 / 60, 100 / 40])
    assert fig.layout.yaxis.title.text == "speed-up (×)"


def test_efficiency_figure_has_ideal_and_break_even(result):
    fig = efficiency_figure(result)
    assert names(fig)[:2] == list(EFFICIENCY_TRACES)
    assert np.allclose(fig.data[1].y, [1, 1 / 2, 1 / 3, 1 / 4])     # N0 / N
    assert np.allclose(fig.data[2].y, [100 / 120, 100 / 160])


def test_comm_split_stacks_the_estimates(result):
    fig = comm_split_figure(result, per_epoch=True)
    assert names(fig) == list(COMM_SPLIT_TRACES)
    assert fig.layout.barmode == "relative"
    # bars sorted strong then weak by GPUs: strong 2 GPUs compute 50, communication 10
    assert fig.data[0].y[0] == 50 and fig.data[1].y[0] == 10
    assert len(fig.data[2].x) == 0                                  # no sync_time_s column


def test_bandwidth_figure_shows_the_nominal_link(result):
    fig = bandwidth_figure(result)
    assert names(fig) == list(BANDWIDTH_TRACES)
    assert set(fig.data[2].y) == {1.25}                             # 10 Gbit/s / 8
    assert np.allclose(sorted(fig.data[0].y), sorted(result.rows.achieved_GB_per_s))


def test_slower_than_one_machine_renders():
    r = scaling_analysis(parse_scaling_table(SLOW, n_samples=12_800), n_params=10_000_000,
                         link_gbps=10)
    assert names(measured_speedup_figure(r)) == ["ideal", "strong, global batch 128"]
    assert names(comm_split_figure(r)) == list(COMM_SPLIT_TRACES)
    assert names(bandwidth_figure(r)) == list(BANDWIDTH_TRACES)
    assert list(measured_speedup_figure(r).data[1].y) == [pytest.approx(0.2)]   # 100 / 500
    eff = efficiency_figure(r)
    # efficiency 0.05 lies under the break-even 1/4 at 4 GPUs
    assert eff.data[2].y[0] == pytest.approx(0.05)
    assert eff.data[2].y[0] < eff.data[1].y[-1] == 0.25


def test_without_parameter_count_the_bandwidth_figure_is_a_note():
    r = scaling_analysis(parse_scaling_table(EPOCHS))
    fig = bandwidth_figure(r)
    assert len(fig.data) == 0 and "parameter count" in fig.layout.annotations[0].text


def test_per_step_split_needs_the_dataset_size_for_epoch_tables():
    fig = comm_split_figure(scaling_analysis(parse_scaling_table(EPOCHS)))
    assert len(fig.data) == 0 and "dataset size" in fig.layout.annotations[0].text


# --------------------------------------------------------------------------- batch size

def test_lr_schedule_draws_the_warmup_corners():
    from core.figures.scaling import LR_TRACES, lr_schedule_figure
    from core.scaling.batch_size import batch_size_plan, lr_at_step

    plan = batch_size_plan(1024, n_samples=50_000)      # k = 4: 0.1 -> 0.4 over 5*49 = 245 steps
    fig = lr_schedule_figure(plan)
    assert names(fig) == list(LR_TRACES)
    # warm-up + 2 epochs = 7 * 49 = 343 steps drawn
    assert list(fig.data[0].x) == [0, 245, 343]
    assert list(fig.data[0].y) == pytest.approx([0.1, 0.4, 0.4])
    assert list(fig.data[0].y) == pytest.approx(lr_at_step(plan, np.array([0, 245, 343])).tolist())
    assert list(fig.data[1].x) == [245] and list(fig.data[1].y) == pytest.approx([0.4])
    assert fig.layout.xaxis.title.text == "step (49 per epoch)"


def test_lr_schedule_without_warmup_is_flat_with_no_marker():
    from core.figures.scaling import lr_schedule_figure
    from core.scaling.batch_size import batch_size_plan

    plan = batch_size_plan(128, n_samples=50_000)       # k = 0.5: lr 0.05, no warm-up
    fig = lr_schedule_figure(plan, epochs=1)
    assert list(fig.data[0].x) == [0, 391] and list(fig.data[0].y) == pytest.approx([0.05, 0.05])
    assert len(fig.data[1].x) == 0


def test_ps_timeline_panel_titles_can_be_given():
    from core.scaling import local_schedule

    fig = ps_timeline_figure(local_schedule(JOB), panel_titles=("whole run",))
    assert [a.text for a in fig.layout.annotations] == ["whole run"]
    auto = ps_timeline_figure(ps_schedule(JOB, first_rounds=2))
    assert [a.text for a in auto.layout.annotations] == ["first 2 rounds", "last round (run round 22)"]


def test_bar_charts_grow_for_many_rotated_labels():
    from core.figures.style import HEIGHT

    few = scaling_analysis(parse_scaling_table(EPOCHS), n_params=1000)        # 3 bars
    fig = comm_split_figure(few)
    assert (fig.layout.height or fig.layout.template.layout.height) == HEIGHT   # the template's height
    rows = "".join(f"{g},128,{100 / g + 5}\n" for g in range(2, 10))           # 8 weak rows
    many = scaling_analysis(parse_scaling_table(b"gpus,batch_per_gpu,epoch_time_s\n1,128,100\n"
                                                + rows.encode(), n_samples=12800), n_params=1000)
    # labels like "9 GPUs, 128/GPU (weak)": 22 characters -> 6 px each
    longest = max(len(t) for t in comm_split_figure(many).data[0].x)
    assert comm_split_figure(many).layout.height == HEIGHT + 6 * longest
    assert bandwidth_figure(many).layout.height == HEIGHT + 6 * longest
