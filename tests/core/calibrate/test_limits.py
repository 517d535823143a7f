"""core.calibrate.limits: the conformal interval and the "outside the calibration set" rule."""

from __future__ import annotations

import numpy as np
import pytest

from core.calibrate import (
    calibrate,
)


def test_interval_is_the_distance_weighted_conformal_quantile_of_the_loao_residuals(fits):
    cal = calibrate(fits, holdout="resnet50", method="direct-ridge", level=0.8)
    p = cal.predictions
    assert (p["step_pred_low"] <= p["step_pred"]).all() and (p["step_pred"] <= p["step_pred_high"]).all()
    r = np.array(cal.residuals)
    assert len(r) == 15                       # 5 architectures x 3 GPUs, ResNet-50 removed
    # q is the ceil((15 + 1)·0.8) = 13th smallest |r_i|/s_i; the interval is pred·exp(∓q·s), s = 1 + d/d̄
    assert cal.interval_q <= np.abs(r).max()
    s = 1 + cal.distance / cal.mean_distance
    assert p["step_pred_low"].to_numpy() == pytest.approx(p["step_pred"].to_numpy() * np.exp(-cal.interval_q * s))
    assert p["step_pred_high"].to_numpy() == pytest.approx(p["step_pred"].to_numpy() * np.exp(cal.interval_q * s))


def test_interval_widens_with_the_distance_from_the_calibration_set(fits):
    # ResNet-50 is far from every other architecture; ResNet-44 sits between ResNet-32 and ResNet-56
    far, near = (calibrate(fits, holdout=h, method="arch-kernel") for h in ("resnet50", "resnet44"))
    assert far.distance > 2 * near.distance and far.difficulty > near.difficulty
    width = [np.log(c.predictions["step_pred_high"] / c.predictions["step_pred_low"]).iloc[0] for c in (far, near)]
    assert width[0] > width[1]


def test_outside_the_calibration_set_is_said_in_words(fits):
    far = calibrate(fits, holdout="resnet50", method="arch-kernel")
    assert not far.inside
    # ResNet-50 (CIFAR adaptation): 23.5 M parameters against at most 11.2 M (ResNet-18); the only bottleneck net
    assert "parameter count 23.5 M above the calibration range 270 k–11.2 M" in far.outside
    assert "block type bottleneck not among the calibration architectures (basic)" in far.outside
    assert far.where().startswith("resnet50 lies outside the calibration set: ")
    inside = calibrate(fits, holdout="resnet44", method="arch-kernel")
    assert inside.inside and inside.outside == () and "inside" in inside.where()


def test_the_distances_to_the_other_architectures_are_each_architectures_nearest_distance(fits):
    """One pass over the features gives what a nearest_distance per architecture gave."""
    import math

    from core.calibrate.limits import FeatureSpace
    from core.calibrate.table import architectures, usable

    rows = usable(fits, split="train")
    space = FeatureSpace.of(rows)
    got = space.distances_to_other_architectures(rows)
    assert set(got) == set(architectures(rows))
    for arch in architectures(rows):
        expected = float(space.nearest_distance(rows[rows["model"] == arch].iloc[:1], rows[rows["model"] != arch])[0])
        assert math.isclose(got[arch], expected, rel_tol=1e-12)
    only = rows[rows["model"] == "resnet20"]
    assert FeatureSpace.of(only).distances_to_other_architectures(only) == {"resnet20": math.inf}
