"""Two runs on one learning-rate plan are recognised as such when they count progress in different units (issue 34):
one counts optimiser steps, the other tokens at 1,024 a step; compared through the factor between their units."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from core.logs import read_log
from core.prediction.schedule_runs import ScheduleRun, same_plan
from core.schedules import build_schedule

TOKENS_PER_STEP = 1024.0


def _run(plan, *, tokens: bool) -> ScheduleRun:
    steps = np.arange(100, 2001, 100)
    rows = "".join(f"{s},{float(plan.lr_at(s)):.6g},{3.0 - s / 1e5:.5f}\n" for s in steps)
    log = read_log(("step,lr,loss\n" + rows).encode(), "tokens.csv" if tokens else "steps.csv")
    if tokens:                                         # a log that counts its tokens (as a speedrun log does)
        log = replace(log, frame=log.frame.assign(tokens=log.frame["global_step"] * TOKENS_PER_STEP))
    x = steps * TOKENS_PER_STEP if tokens else steps.astype(float)
    return ScheduleRun(log, "g", plan, steps.astype(float), 3.0 - steps / 1e5, x, "tokens" if tokens else "steps")


def test_a_run_in_tokens_on_the_same_plan_is_the_same_plan_through_its_tokens_per_step():
    wsd = build_schedule("wsd", total=2000, peak=1e-3, warmup=100, decay_start=1500, final=1e-4)
    flat = build_schedule("constant", total=2000, peak=1e-3, warmup=100)
    in_steps, in_tokens = _run(wsd, tokens=False), _run(wsd, tokens=True)
    # up to step 1,900 (past the decay's start), in the steps run's unit
    assert same_plan(in_steps, in_tokens, 1900, b_per_a=TOKENS_PER_STEP)
    # the units differ and no factor is given: never compared as if they were one unit
    assert not same_plan(in_steps, in_tokens, 1900)
    # a wrong factor reads the other run's plan at the wrong place: the decay no longer lines up
    assert not same_plan(in_steps, in_tokens, 1900, b_per_a=TOKENS_PER_STEP / 2)
    # another plan in tokens: the same up to the decay's start, not past it
    other = _run(flat, tokens=True)
    assert same_plan(in_steps, other, 1400, b_per_a=TOKENS_PER_STEP)
    assert not same_plan(in_steps, other, 1900, b_per_a=TOKENS_PER_STEP)


def test_every_other_run_is_pooled_or_named_with_its_reason_never_lumped_as_not_reaching():
    # a built-in speedrun record forecast from a quarter of its log, the other built-in record's logs as the prior
    from pathlib import Path

    from core.logs import read_log_file
    from core.prediction import forecast_run

    root = Path(__file__).resolve().parents[3] / "data" / "llm" / "nanogpt_speedrun" / "track_1_short"
    paths = sorted(str(p) for p in root.glob("*/*.txt"))
    logs = [read_log_file(p, source=p) for p in paths]
    run, others = logs[0], [lg for lg in logs if Path(lg.source).parent != Path(logs[0].source).parent]
    answer = forecast_run(run, others, observe=0.25)
    prior = answer.progress.progress.prior
    named = {src for src, _ in prior.left_out}
    assert named <= {o.source for o in others}
    if not prior.available:                      # no answer from the prior: every other run is named, with a reason
        assert named == {o.source for o in others}
        assert all(why for _, why in prior.left_out)
    text = " ".join(answer.lines())
    assert "no other run that reached the target" not in text
    for src in named:
        assert src in text                       # the command line and the page list each one
