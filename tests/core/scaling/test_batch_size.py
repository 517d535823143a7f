"""Batch-size helper: linear learning-rate scaling, gradual warm-up, steps per epoch."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.errors import InputError
from core.scaling.batch_size import LARGE_BATCH_TEXT, batch_size_plan, lr_at_step, steps_per_epoch


def test_steps_per_epoch_counts_the_partial_batch():
    # CIFAR-10, batch 128: 390 full batches + one of 50000 - 390*128 = 80 samples
    assert steps_per_epoch(50_000, 128) == 391
    assert steps_per_epoch(1024, 128) == 8                 # divides evenly


def test_goyal_imagenet_example():
    # Goyal et al.: 0.1 at 256; batch 8192 -> k = 32, lr = 3.2
    p = batch_size_plan(8192, n_samples=1_281_167)
    assert (p.scale, p.lr) == (32.0, pytest.approx(3.2))
    # ceil(1281167 / 8192) = 157 steps an epoch (156 * 8192 = 1277952 < 1281167)
    assert p.steps_per_epoch == 157 and p.warmup_steps == 5 * 157


def test_warmup_rises_linearly_to_the_scaled_rate():
    p = batch_size_plan(1024, n_samples=50_000, warmup_epochs=5)
    # k = 4: from 0.1 to 0.4 over 5 * 49 = 245 steps, +0.3/245 a step
    steps = np.array([0, 49, 245, 10_000])
    assert lr_at_step(p, steps) == pytest.approx([0.1, 0.1 + 0.3 * 49 / 245, 0.4, 0.4])
    assert np.all(np.diff(lr_at_step(p, np.arange(300))) >= 0)


def test_smaller_batch_scales_down_without_warmup():
    p = batch_size_plan(64, n_samples=50_000)
    # k = 64/256 = 0.25 -> lr 0.025 from the first step
    assert (p.lr, p.warmup_steps) == (pytest.approx(0.025), 0)
    assert lr_at_step(p, 0) == pytest.approx(0.025)


def test_plan_serialises():
    d = batch_size_plan(512, n_samples=1000, base_lr=0.2, base_batch=128).to_dict()
    assert json.loads(json.dumps(d))["lr"] == pytest.approx(0.8)   # 0.2 * 512/128


@pytest.mark.parametrize("kw, error, message", [
    (dict(batch=0), InputError, r"batch: expected an int >= 1; got 0"),
    (dict(base_lr=-0.1), InputError, r"base_lr: expected a finite number > 0; got -0\.1"),
    (dict(warmup_epochs=-1), InputError, r"warmup_epochs: expected a finite number >= 0"),
    (dict(n_samples=10.5), InputError, r"n_samples: expected an int"),
])
def test_bad_plans_are_refused(kw, error, message):
    args = dict(batch=256, n_samples=1000)
    args.update(kw)
    with pytest.raises(error, match=message):
        batch_size_plan(args.pop("batch"), **args)


def test_negative_step_is_refused():
    with pytest.raises(InputError, match="step: expected steps >= 0"):
        lr_at_step(batch_size_plan(512, n_samples=1000), -1)


def test_large_batch_text_states_the_effect_and_its_sources():
    assert "fewer steps per epoch" in LARGE_BATCH_TEXT
    for source in ("Goyal", "Shallue", "Keskar"):
        assert source in LARGE_BATCH_TEXT
