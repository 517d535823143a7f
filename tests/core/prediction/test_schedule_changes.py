"""A progress prediction never extrapolates through a schedule change the log declares without saying so
(issue 18: warm-up, cosine, warmup-stable-decay)."""

from __future__ import annotations

import numpy as np
import pytest

from core.datasets import builtin_log_files
from core.logs import read_log_file
from core.prediction import predict_progress
from core.prediction.progress_measure import progress
from core.prediction.schedule_changes import declared_changes, schedule_flags, step_to_progress


@pytest.fixture(scope="module")
def speedrun():
    return [read_log_file(p, source=n) for n, p in builtin_log_files("speedrun")]


def test_a_speedrun_declares_its_cooldown_and_its_end(speedrun):
    log = speedrun[0]
    # the script: 1,670 iterations, the last 815 a linear cool-down (its stable phase ends at step 855)
    assert (log.meta.max_steps, log.meta.decay_steps) == (1670, 815)
    assert [c.step for c in declared_changes(log)] == [855.0, 1670.0]
    steps = log.frame["global_step"].to_numpy(dtype=float)
    tokens = progress(log)
    per_step = tokens[-1] / steps[-1]                       # a constant number of tokens per step
    assert step_to_progress(steps, tokens, 855) == pytest.approx(855 * per_step)


def test_a_prediction_from_before_the_cooldown_says_it_crosses_it(speedrun):
    log, others = speedrun[0], speedrun[1:]
    early = predict_progress(log, others, observe=0.25)
    cooldown = step_to_progress(log.frame["global_step"].to_numpy(dtype=float), progress(log), 855)
    assert early.observed_progress < cooldown < early.posterior.value
    assert [f for f in early.flags if "lies past step 855" in f and "warmup-stable-decay" in f]
    # observed past the cool-down's start: nothing left to say about it
    late = predict_progress(log, others, observe=0.9)
    assert late.observed_progress > cooldown
    assert not [f for f in late.flags if "step 855" in f]


def test_no_flag_without_a_declared_schedule_or_a_prediction(speedrun):
    log = speedrun[0]
    assert schedule_flags(log, progress(log), 1.0, None, "tokens") == ()
    assert schedule_flags(log, progress(log), 1.0, float(np.nan), "tokens") == ()
    plain = log.with_meta(max_steps=None, decay_steps=None, warmup_steps=None)
    assert declared_changes(plain) == [] and schedule_flags(plain, progress(plain), 1.0, 1e12, "tokens") == ()
