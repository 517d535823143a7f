"""Synchronous vs asynchronous schedules: staleness by hand, step completion, the bound text."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import InputError
from core.scaling import (
    STALENESS_BOUND_SOURCES,
    STALENESS_BOUND_TEXT,
    UPDATE_COLUMNS,
    async_schedule,
    staleness_bound,
    sync_schedule,
)
from core.scaling.sync_async import TIMELINE_COLUMNS

# Three workers, two gradients each: the example drawn on the Scaling page.
STARTS = [0.0, 1.0, 0.5]
DURATIONS = [[3.0, 2.0], [1.0, 1.0], [2.0, 2.0]]


def test_async_two_workers_one_stale_gradient():
    a = async_schedule([0.0, 1.0], [3.0, 1.0])
    u = a.updates
    # worker 2: read at 1 (version 0), arrives at 2, applied to version 0 -> staleness 0
    # worker 1: read at 0 (version 0), arrives at 3, applied to version 1 -> staleness 1
    assert list(zip(u.worker, u.read_version, u.applied_to_version, u.staleness)) == [
        (2, 0, 0, 0), (1, 0, 1, 1)]
    assert (a.max_staleness, a.n_stale, a.finish_s) == (1, 1, 3.0)


def test_async_staleness_by_hand_with_repeated_gradients():
    a = async_schedule(STARTS, DURATIONS)
    u = a.updates
    # arrivals: w2 at 1+1 = 2, w3 at 0.5+2 = 2.5, w1 at 3, w2 again at 2+1 = 3 (tie: w1
    # first), w3 again at 2.5+2 = 4.5, w1 again at 3+2 = 5
    assert list(zip(u.worker, u.applied_s)) == [(2, 2.0), (3, 2.5), (1, 3.0), (2, 3.0),
                                                (3, 4.5), (1, 5.0)]
    # reads: w2's 2nd at t=2 sees 1 update; w3's 2nd at 2.5 sees 2; w1's 2nd at 3 sees 4
    assert u.read_version.tolist() == [0, 0, 0, 1, 2, 4]
    # staleness = position in the apply order - version read
    assert u.staleness.tolist() == [0, 1, 2, 2, 2, 1]
    assert list(u.columns) == list(UPDATE_COLUMNS)


def test_async_equal_workers_are_stale_by_their_rank():
    # four workers read version 0 at t = 0 and all take 1 s: staleness 0, 1, 2, 3
    a = async_schedule([0.0] * 4, [1.0] * 4)
    assert a.updates.staleness.tolist() == [0, 1, 2, 3]


def test_async_timeline_bars_carry_staleness():
    a = async_schedule(STARTS, DURATIONS)
    t = a.timeline
    assert list(t.columns) == list(TIMELINE_COLUMNS)
    w1 = t[t.machine == "worker 1"]
    assert list(zip(w1.start_s, w1.end_s, w1.staleness)) == [(0.0, 3.0, 2), (3.0, 5.0, 1)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10), st.lists(st.integers(1, 10), min_size=1,
                                                         max_size=4)),
                min_size=1, max_size=5))
def test_async_invariants(workers):
    starts = [float(s) for s, _ in workers]
    durations = [[float(d) for d in ds] for _, ds in workers]
    u = async_schedule(starts, durations).updates
    assert len(u) == sum(len(ds) for ds in durations)
    assert u.applied_to_version.tolist() == list(range(len(u)))
    assert (u.staleness >= 0).all() and (u.read_version <= u.applied_to_version).all()
    assert u.applied_s.is_monotonic_increasing


def test_async_single_worker_is_never_stale():
    assert async_schedule([0.0], [[1.0, 2.0, 0.5]]).max_staleness == 0


def test_sync_step_completes_after_aggregation_and_update():
    s = sync_schedule([0.0, 1.0], [3.0, 1.0], aggregate_s=0.5, update_s=1.0)
    # arrivals 0+3 = 3 and 1+1 = 2; aggregate [2, 2.5] then [3, 3.5]; update [3.5, 4.5]
    assert s.step_end_s == (4.5,) and s.finish_s == 4.5
    # waits: worker 1 from 3 to 4.5, worker 2 from 2 to 4.5
    assert s.wait_s == (1.5, 2.5)
    server = s.timeline[s.timeline.machine == "server"]
    assert list(zip(server.activity, server.start_s, server.end_s)) == [
        ("aggregate", 2.0, 2.5), ("aggregate", 3.0, 3.5), ("update", 3.5, 4.5)]


def test_sync_aggregations_queue_when_gradients_arrive_together():
    s = sync_schedule([0.0, 0.0], [2.0, 2.0], aggregate_s=0.5, update_s=0.25)
    # both arrive at 2: aggregate [2, 2.5], [2.5, 3]; update [3, 3.25]
    assert s.step_end_s == (3.25,)


def test_sync_next_step_starts_on_fresh_parameters():
    s = sync_schedule(STARTS, DURATIONS, aggregate_s=0.5, update_s=1.0)
    # step 1: arrivals 2 (w2), 2.5 (w3), 3 (w1); aggregations end at 2.5, 3.0, 3.5; update
    # to 4.5. Step 2 starts at 4.5 for all: arrivals 5.5, 6.5, 6.5; aggregations [5.5, 6],
    # [6.5, 7], [7, 7.5]; update to 8.5
    assert s.step_end_s == (4.5, 8.5)
    compute = s.timeline[(s.timeline.activity == "compute") & (s.timeline.iteration == 2)]
    assert set(compute.start_s) == {4.5}
    assert (s.timeline.loc[s.timeline.activity == "compute", "staleness"] == 0).all()


def test_results_serialise_to_json():
    a = async_schedule(STARTS, DURATIONS).to_dict()
    s = sync_schedule(STARTS, DURATIONS, aggregate_s=0.5, update_s=1.0).to_dict()
    assert json.loads(json.dumps(a))["max_staleness"] == 2
    assert json.loads(json.dumps(s))["step_end_s"] == [4.5, 8.5]


@pytest.mark.parametrize("starts, durations, message", [
    ([0.0], [1.0, 2.0], r"start_s, compute_s: expected one start time .* got 1 start times "
                        r"and 2 durations"),
    ([], [], r"got 0 start times"),
    ([-1.0], [1.0], r"start_s\[0\]: expected a finite number >= 0; got -1\.0"),
    ([0.0], [0.0], r"compute_s\[0\]: expected a finite number > 0; got 0\.0"),
    ([0.0], [[]], r"compute_s\[0\]: expected at least one duration"),
])
def test_bad_schedules_are_refused(starts, durations, message):
    with pytest.raises(InputError, match=message):
        async_schedule(starts, durations)


def test_sync_needs_the_same_number_of_steps_per_worker():
    with pytest.raises(InputError, match=r"same number of steps .* got \[1, 2\]"):
        sync_schedule([0.0, 0.0], [[1.0], [1.0, 1.0]], aggregate_s=0.1, update_s=0.1)


def test_start_times_must_be_a_sequence():
    with pytest.raises(InputError, match="start_s: expected a sequence"):
        async_schedule(3.0, [1.0])


def test_staleness_bound_value():
    # eta * tau * Delta = 0.01 * 4 * 5 = 0.2
    assert staleness_bound(0.01, 4, 5.0) == pytest.approx(0.2)
    assert staleness_bound(0.01, 0, 5.0) == 0.0
    with pytest.raises(InputError, match="step_size"):
        staleness_bound(0.0, 1, 1.0)


def test_bound_text_is_two_sentences_with_its_sources():
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z])", STALENESS_BOUND_TEXT)
    assert len(sentences) == 2
    assert "η·τ·Δ" in STALENESS_BOUND_TEXT and "Hogwild!" in STALENESS_BOUND_TEXT
    assert any("Niu" in s and "2011" in s for s in STALENESS_BOUND_SOURCES)
    assert any("Mania" in s and "Perturbed Iterate" in s for s in STALENESS_BOUND_SOURCES)


# ---------------------------------------------------------------- worker table (the page's editor)

def test_schedule_inputs_reads_an_edited_worker_table():
    import pandas as pd

    from core.scaling import schedule_inputs

    table = pd.DataFrame({"start_s": [0.0, 1.0, 0.5, None], "compute_1_s": [3.0, 1.0, 2.0, None],
                          "compute_2_s": [2.0, 1.0, 2.0, None], "compute_3_s": [None] * 4})
    starts, durations = schedule_inputs(table)        # the blank 4th row is skipped
    assert starts == tuple(STARTS)
    assert durations == tuple(tuple(d) for d in DURATIONS)
    # the same schedule as from the lists
    assert (async_schedule(starts, durations).updates.staleness.tolist()
            == async_schedule(STARTS, DURATIONS).updates.staleness.tolist())
    # fewer gradients for one worker: async fine, sync refuses (steps differ)
    short = table.assign(compute_2_s=[2.0, None, 2.0, None])
    assert schedule_inputs(short)[1][1] == (1.0,)
    with pytest.raises(InputError, match="same number of steps"):
        sync_schedule(*schedule_inputs(short), aggregate_s=0.5, update_s=1.0)


def test_schedule_inputs_accepts_one_compute_column():
    import pandas as pd

    from core.scaling import schedule_inputs

    assert schedule_inputs(pd.DataFrame({" Start_s": [0, 1], "compute_s": [3, 1]})) == (
        (0.0, 1.0), ((3.0,), (1.0,)))


@pytest.mark.parametrize("columns, message", [
    ({"start_s": [0.0, -1.0], "compute_1_s": [1.0, 1.0]},
     r"workers.csv: expected start_s >= 0 \(seconds\) in every filled row; got -1.0 in row 2"),
    ({"start_s": [0.0, None], "compute_1_s": [1.0, 1.0]},
     r"expected start_s >= 0 .* got a blank cell in row 2"),
    ({"start_s": [0.0, "soon"], "compute_1_s": [1.0, 1.0]}, r"got 'soon' in row 2"),
    ({"start_s": [0.0, 1.0], "compute_1_s": [1.0, 0.0]}, r"expected compute_1_s > 0 .* got 0.0 in row 2"),
    ({"start_s": [0.0], "compute_1_s": [None], "compute_2_s": [1.0]},
     r"durations of row 1 without gaps; got a blank cell before compute_2_s"),
    ({"start_s": [0.0], "compute_1_s": [None]}, r"at least one duration in row 1"),
    ({"start_s": [None], "compute_1_s": [None]}, r"at least one worker row; got none"),
    ({"begin": [0.0], "compute_1_s": [1.0]}, r"expected a column start_s .* got begin, compute_1_s"),
])
def test_schedule_inputs_refusals_name_the_table_row_and_cell(columns, message):
    import pandas as pd

    from core.scaling import schedule_inputs

    with pytest.raises(InputError, match=message):
        schedule_inputs(pd.DataFrame(columns), source="workers.csv")


def test_schedule_inputs_wants_a_frame():
    from core.scaling import schedule_inputs

    with pytest.raises(InputError, match="worker table: expected a DataFrame"):
        schedule_inputs([[0.0, 1.0]])
