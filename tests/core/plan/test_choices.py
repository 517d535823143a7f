"""What the Plan view offers and opens on: steps sources, the default run, the anchor batch."""

from __future__ import annotations

import pytest

from core.errors import InputError
from core.logs import read_log
from core.plan import ScalingRule, default_run, steps_sources
from core.plan.goodput import anchor_batch_of
from core.runs import analyse_run
from core.speed.optimus import SpeedModel
from core.targets import accuracy_target


def _run(name: str, final_acc: float):
    rows = ["epoch, step, loss, acc"] + [f"{e}, {s}, {1 / (0.02 * (10 * e + s) + 0.5):.5f}, "
                                         f"{final_acc * e / 6:.4f}" for e in range(1, 7) for s in range(1, 11)]
    return analyse_run(read_log(("\n".join(rows) + "\n").encode(), name), target=accuracy_target(0.9))


def test_sources_need_runs_for_run_and_a_handed_over_calibration_for_calibrate():
    assert steps_sources(has_runs=True, has_calibration=True) == ("run", "calibrate", "typed", "batch")
    assert steps_sources(has_runs=False, has_calibration=False) == ("typed", "batch")
    assert steps_sources(has_runs=False, has_calibration=True) == ("calibrate", "typed", "batch")


def test_the_default_run_is_the_first_that_reached_the_target():
    short, done, also = _run("resnet8_V100.csv", 0.8), _run("resnet20_V100.csv", 0.95), _run("resnet32_V100.csv", 0.97)
    assert not short.crossing.reached and done.crossing.reached
    assert default_run([short, done, also]) == "resnet20_V100.csv"
    assert default_run([short]) == "resnet8_V100.csv"        # none reached: the first
    assert default_run([]) is None


def test_the_anchor_batch_is_the_rule_s_fixed_batch_else_the_speed_model_s():
    speed = SpeedModel("allreduce", (0.001, 0.05, 0.002), global_batch=256)
    assert anchor_batch_of(ScalingRule("fixed", global_batch=512), speed) == 512.0
    assert anchor_batch_of(ScalingRule("per-worker", per_worker_batch=64), speed) == 256.0
    with pytest.raises(InputError, match="expected a global batch"):
        anchor_batch_of(ScalingRule("per-worker", per_worker_batch=64),
                        SpeedModel("allreduce", (0.001, 0.05, 0.002), global_batch=None))
