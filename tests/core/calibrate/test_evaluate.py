"""core.calibrate.evaluate: loss threshold, leave-one-architecture-out, method scores, MAPE, loss errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.calibrate import (
    AUTO_METHODS,
    CALIBRATION_METHODS,
    calibrate,
    leave_one_architecture_out,
    loao_summary,
    mape,
    method_scores,
    recommend_method,
    usable,
)
from core.calibrate.evaluate import loss_threshold, parameter_predictions
from tests.core.calibrate.helpers import poison


def test_loss_threshold_is_the_mean_over_calibration_runs_only(fits):
    rows = usable(fits, split="train")
    calib = rows[rows["model"] != "resnet50"]
    L_measured, n = loss_threshold(calib, threshold="measured")
    assert n == 15 and L_measured == pytest.approx(calib["loss_at_target"].mean())
    cal = calibrate(fits, holdout="resnet50", method="course", threshold="measured")
    assert cal.loss_threshold == pytest.approx(L_measured)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["course", "ridge", "direct-gp"])
def test_loao_never_sees_the_architecture_it_predicts(fits, method):
    clean = leave_one_architecture_out(fits, method=method)
    for arch in ("resnet18", "resnet32", "resnet50"):
        dirty = leave_one_architecture_out(poison(fits, arch), method=method)
        np.testing.assert_array_equal(clean.loc[clean["model"] == arch, "step_pred"].to_numpy(),
                                      dirty.loc[dirty["model"] == arch, "step_pred"].to_numpy())


def test_method_scores_exclude_the_held_out_architecture(fits):
    a = method_scores(fits, holdout="resnet50", methods=("course", "ridge"))
    b = method_scores(poison(fits, "resnet50"), holdout="resnet50", methods=("course", "ridge"))
    pd.testing.assert_frame_equal(a, b)
    assert (a["n_runs"] == 15).all()  # 5 architectures x 3 GPUs, ResNet-50 removed


@pytest.mark.slow
def test_recommendation_is_the_lowest_loao_error_among_the_auto_methods(fits):
    scores = method_scores(fits, holdout="resnet50")
    auto = scores[scores["method"].isin(AUTO_METHODS)].set_index("method")["loao_mape_pct"]
    best = recommend_method(scores)
    assert auto[best] == auto.min()
    # outside the calibration set the trend-following methods do not compete
    local = auto[[not CALIBRATION_METHODS[m].trend for m in auto.index]]
    assert recommend_method(scores, outside=True) == local.idxmin()


def test_mape_counts_unreachable_as_100_percent():
    loao = pd.DataFrame({"model": ["a", "a", "b"], "gpu": ["x", "y", "x"], "method": "m",
                         "epoch_actual": [10.0, 20.0, 40.0], "epoch_pred": [12.0, np.nan, 30.0],
                         "epoch_error_pct": [20.0, np.nan, -25.0]})
    assert mape(loao) == pytest.approx((20 + 100 + 25) / 3)
    s = loao_summary(loao)
    assert s.set_index("model").loc["a", "mape_pct"] == pytest.approx(60.0)


def test_parameter_predictions_band_contains_prediction(fits):
    pred = parameter_predictions(fits, holdout="resnet50", method="ridge")
    assert set(pred["param"]) == {"b0", "b1", "b2"}
    assert ((pred["low"] <= pred["predicted"] + 1e-15) & (pred["predicted"] <= pred["high"] + 1e-15)).all()
    assert pred.loc[pred["holdout"], "model"].eq("resnet50").all()


def test_loss_error_figure_plots_the_core_errors(fits):
    from core.calibrate.evaluate import predicted_loss_errors
    from core.figures.calibrate import loss_error_figure

    cal = calibrate(fits, holdout="resnet50", method="course")
    fig = loss_error_figure(cal, kind="relative")
    first = cal.predictions.iloc[0]
    errors = predicted_loss_errors(cal, np.asarray(fig.data[0].x))
    part = errors[errors["gpu"] == first["gpu"]]
    assert fig.data[0].name == first["gpu"]
    np.testing.assert_allclose(fig.data[0].y, part["rel_error_pct"])
    # at step 1: fitted 1/(b0 + b1) + b2 against predicted with the hatted parameters
    k1 = errors.iloc[0]
    assert k1["fitted"] == pytest.approx(1 / (first["b0"] * k1["step"] + first["b1"]) + first["b2"])


def test_the_recommended_method_is_the_lowest_of_the_competing_bars(fits):
    """The label, the rule and the chart agree: the highlighted bar is the lowest plain one."""
    from core.calibrate import competing_methods
    from core.figures.calibrate import method_scores_figure

    scores = method_scores(fits, holdout="resnet50")
    for outside in (False, True):
        best = recommend_method(scores, outside=outside)
        competing = competing_methods(scores, outside=outside)
        bar = method_scores_figure(scores, recommended=best, competing=competing).data[0]
        plain = {m: v for m, v, h in zip(bar.x, bar.y, bar.marker.pattern.shape) if h == ""}
        assert set(plain) == set(competing) and min(plain, key=plain.get) == best
        highlighted = [m for m, c in zip(bar.x, bar.marker.color) if c != "#9aa5b1"]
        assert highlighted == [best]
