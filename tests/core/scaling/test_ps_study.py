"""One call for the parameter-server view: its parts are the round model's own results."""

from __future__ import annotations

from core.scaling import PSJob, local_then_send, ps_schedule, ps_study


def test_a_study_gathers_rounds_timeline_curve_and_local_training():
    job = PSJob(1000, batch=32, epochs=2, machines=3, broadcast_s=1.0, compute_s=5.0, gather_s=1.0,
                aggregate_s=0.5)
    s = ps_study(job, first_rounds=1)
    # the hand example of test_ps_rounds: 11 rounds an epoch, 2 epochs, full round 8.5 s, last 8 s
    assert (s.rounds.total_rounds, s.rounds.total_time_s) == (22, 186.0)
    assert s.schedule.equals(ps_schedule(job, first_rounds=1))
    assert s.local == local_then_send(job)
    # one worker: 32 minibatches an epoch, each 1 + 5 + 1 + 0.5 = 7.5 s -> 2 * 32 * 7.5 = 480 s
    one = s.time_vs_machines.set_index("machines").loc[1]
    assert one["total_time_s"] == 480.0
