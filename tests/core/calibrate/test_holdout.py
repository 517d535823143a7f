"""core.calibrate.holdout: calibrate one held-out architecture; the course baseline reproduced; no peeking."""

from __future__ import annotations

import numpy as np
import pytest

from core.calibrate import (
    AUTO_METHODS,
    CALIBRATION_METHODS,
    calibrate,
    query_rows,
)
from core.errors import InputError
from tests.core.calibrate.helpers import poison


def test_course_baseline_reproduces_the_course_printout(fits):
    cal = calibrate(fits, holdout="resnet50", split="train", method="course")
    p = cal.predictions.set_index("gpu")
    # MISSION.md: RTX 8000 (0.000168, 0.647202, 0.000019), V100 (0.000201, 0.757450, 0.004070),
    # A100 (0.000234, 0.867698, 0.008120)
    expected = {"Quadro RTX 8000": (0.000168, 0.647202, 0.000019),
                "Tesla V100-PCIE-32GB": (0.000201, 0.757450, 0.004070),
                "NVIDIA A100-PCIE-40GB": (0.000234, 0.867698, 0.008120)}
    for gpu, (b0, b1, b2) in expected.items():
        assert p.loc[gpu, "b0_hat"] == pytest.approx(b0, abs=5e-7)
        assert p.loc[gpu, "b1_hat"] == pytest.approx(b1, abs=5e-7)
        assert p.loc[gpu, "b2_hat"] == pytest.approx(b2, abs=5e-7)


@pytest.mark.slow
@pytest.mark.parametrize("method", list(CALIBRATION_METHODS))
@pytest.mark.parametrize("threshold", ["curve", "measured"])
def test_the_held_out_runs_never_change_the_prediction(fits, method, threshold):
    clean = calibrate(fits, holdout="resnet50", method=method, threshold=threshold)
    dirty = calibrate(poison(fits, "resnet50"), holdout="resnet50", method=method, threshold=threshold)
    assert clean.loss_threshold == dirty.loss_threshold
    for col in ("b0_hat", "b1_hat", "b2_hat", "step_pred", "step_pred_low", "step_pred_high"):
        np.testing.assert_array_equal(clean.predictions[col].to_numpy(), dirty.predictions[col].to_numpy())


def test_auto_leaves_trend_methods_out_outside_the_calibration_set(fits):
    cal = calibrate(fits, holdout="resnet50", method="auto")
    assert not CALIBRATION_METHODS[cal.method].trend and cal.method in AUTO_METHODS
    assert "trend-following methods left out" in cal.chosen_by


def test_an_unseen_architecture_is_predicted_as_the_held_out_one(fits):
    held = calibrate(fits, holdout="resnet50", method="arch-kernel")
    gpus = tuple(held.predictions["gpu"])
    unseen = calibrate(fits, holdout="resnet50", method="arch-kernel",
                       query=query_rows("resnet50", gpus=gpus, dataset="cifar10", steps_per_epoch=391))
    np.testing.assert_allclose(unseen.predictions["step_pred"], held.predictions["step_pred"])
    np.testing.assert_allclose(unseen.predictions["step_pred_high"], held.predictions["step_pred_high"])
    assert unseen.predictions["epoch_actual"].isna().all() and unseen.outside == held.outside


def test_holdout_and_method_are_validated(fits):
    with pytest.raises(InputError, match="holdout: expected one of"):
        calibrate(fits, holdout="vgg16")
    with pytest.raises(InputError, match="method: expected one of"):
        calibrate(fits, method="magic")
    with pytest.raises(InputError, match="has no usable run in split 'val'"):
        calibrate(fits, holdout="resnet50", split="val")
