"""Calibration: the course baseline reproduced, no peeking at the held-out runs, LOAO, intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.calibrate import (
    AUTO_METHODS,
    METHODS,
    architecture_parameters,
    calibrate,
    excluded_rows,
    hardware_independence,
    leave_one_architecture_out,
    loao_summary,
    loss_threshold,
    mape,
    method_scores,
    nested_loao,
    nested_summary,
    normalise_fits,
    query_rows,
    read_fits_table,
    recommend_method,
    usable,
)
from core.calibrate.evaluate import parameter_predictions
from core.errors import InputError, LogFormatError
from tests.conftest import SHARED

COURSE = SHARED / "cifar10_resnet_optimus_fits.csv"


@pytest.fixture(scope="module")
def fits() -> pd.DataFrame:
    return read_fits_table(COURSE)


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


def test_degenerate_val_fits_are_excluded_with_a_reason(fits):
    ex = excluded_rows(fits, split="val")
    assert sorted(ex["model"]) == ["resnet18"] * 3 + ["resnet50"] * 3
    assert ex["excluded"].str.startswith("degenerate fit").all()
    assert set(usable(fits, split="val")["model"]) == {"resnet20", "resnet32", "resnet44", "resnet56"}


def test_never_reached_is_nan_not_minus_one(fits):
    val18 = fits[(fits["model"] == "resnet18") & (fits["split"] == "val")]
    assert val18["epoch_to_target"].isna().all() and val18["step_to_target"].isna().all()


def test_loss_threshold_is_the_mean_over_calibration_runs_only(fits):
    rows = usable(fits, split="train")
    calib = rows[rows["model"] != "resnet50"]
    L_measured, n = loss_threshold(calib, threshold="measured")
    assert n == 15 and L_measured == pytest.approx(calib["loss_at_target"].mean())
    cal = calibrate(fits, holdout="resnet50", method="course", threshold="measured")
    assert cal.loss_threshold == pytest.approx(L_measured)


def _poison(fits: pd.DataFrame, model: str) -> pd.DataFrame:
    poisoned = fits.copy()
    m = poisoned["model"] == model
    poisoned.loc[m, ["loss_at_target", "step_to_target", "epoch_to_target"]] = [9.9, 1.0, 1.0]
    poisoned.loc[m, ["b0", "b1", "b2"]] = [0.5, 0.01, 3.0]  # a sound but absurd curve (not degenerate)
    return poisoned


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("threshold", ["curve", "measured"])
def test_the_held_out_runs_never_change_the_prediction(fits, method, threshold):
    clean = calibrate(fits, holdout="resnet50", method=method, threshold=threshold)
    dirty = calibrate(_poison(fits, "resnet50"), holdout="resnet50", method=method, threshold=threshold)
    assert clean.loss_threshold == dirty.loss_threshold
    for col in ("b0_hat", "b1_hat", "b2_hat", "step_pred", "step_pred_low", "step_pred_high"):
        np.testing.assert_array_equal(clean.predictions[col].to_numpy(), dirty.predictions[col].to_numpy())


@pytest.mark.parametrize("method", ["course", "ridge", "direct-gp"])
def test_loao_never_sees_the_architecture_it_predicts(fits, method):
    clean = leave_one_architecture_out(fits, method=method)
    for arch in ("resnet18", "resnet32", "resnet50"):
        dirty = leave_one_architecture_out(_poison(fits, arch), method=method)
        np.testing.assert_array_equal(clean.loc[clean["model"] == arch, "step_pred"].to_numpy(),
                                      dirty.loc[dirty["model"] == arch, "step_pred"].to_numpy())


def test_method_scores_exclude_the_held_out_architecture(fits):
    a = method_scores(fits, holdout="resnet50", methods=("course", "ridge"))
    b = method_scores(_poison(fits, "resnet50"), holdout="resnet50", methods=("course", "ridge"))
    pd.testing.assert_frame_equal(a, b)
    assert (a["n_runs"] == 15).all()  # 5 architectures x 3 GPUs, ResNet-50 removed


def test_recommendation_is_the_lowest_loao_error_among_the_auto_methods(fits):
    scores = method_scores(fits, holdout="resnet50")
    auto = scores[scores["method"].isin(AUTO_METHODS)].set_index("method")["loao_mape_pct"]
    best = recommend_method(scores)
    assert auto[best] == auto.min()
    # outside the calibration set the trend-following methods do not compete
    local = auto[[not METHODS[m].trend for m in auto.index]]
    assert recommend_method(scores, outside=True) == local.idxmin()


def test_mape_counts_unreachable_as_100_percent():
    loao = pd.DataFrame({"model": ["a", "a", "b"], "gpu": ["x", "y", "x"], "method": "m",
                         "epoch_actual": [10.0, 20.0, 40.0], "epoch_pred": [12.0, np.nan, 30.0],
                         "epoch_error_pct": [20.0, np.nan, -25.0]})
    assert mape(loao) == pytest.approx((20 + 100 + 25) / 3)
    s = loao_summary(loao)
    assert s.set_index("model").loc["a", "mape_pct"] == pytest.approx(60.0)


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


def test_auto_leaves_trend_methods_out_outside_the_calibration_set(fits):
    cal = calibrate(fits, holdout="resnet50", method="auto")
    assert not METHODS[cal.method].trend and cal.method in AUTO_METHODS
    assert "trend-following methods left out" in cal.chosen_by


def test_an_unseen_architecture_is_predicted_as_the_held_out_one(fits):
    held = calibrate(fits, holdout="resnet50", method="arch-kernel")
    gpus = tuple(held.predictions["gpu"])
    unseen = calibrate(fits, holdout="resnet50", method="arch-kernel",
                       query=query_rows("resnet50", gpus=gpus, dataset="cifar10", steps_per_epoch=391))
    np.testing.assert_allclose(unseen.predictions["step_pred"], held.predictions["step_pred"])
    np.testing.assert_allclose(unseen.predictions["step_pred_high"], held.predictions["step_pred_high"])
    assert unseen.predictions["epoch_actual"].isna().all() and unseen.outside == held.outside


@pytest.mark.parametrize("holdout", ["resnet18", "resnet50"])
def test_nested_loao_never_reads_the_held_out_architecture(fits, holdout):
    clean, dirty = nested_loao(fits), nested_loao(_poison(fits, holdout))
    cols = ["method", "epoch_pred", "epoch_pred_low", "epoch_pred_high", "inside_calibration_set"]
    pd.testing.assert_frame_equal(clean.loc[clean["model"] == holdout, cols].reset_index(drop=True),
                                  dirty.loc[dirty["model"] == holdout, cols].reset_index(drop=True))


def test_nested_summary_counts_coverage(fits):
    table = nested_loao(fits, method="arch-kernel")
    s = nested_summary(table).set_index("model")
    assert s.loc["all", "n_runs"] == 18
    assert s.loc["all", "coverage"] == pytest.approx(table["covered"].astype(bool).mean())
    r50 = table[table["model"] == "resnet50"]
    assert s.loc["resnet50", "mape_pct"] == pytest.approx(r50["epoch_error_pct"].abs().mean())


def test_parameter_counts_come_from_the_torch_definitions():
    assert architecture_parameters("resnet20", "cifar10") == 269_722  # He et al. option A
    assert architecture_parameters("resnet18", "cifar10") == architecture_parameters("resnet18_cifar", "other")
    assert architecture_parameters("resnet8", "mnist1d") is not None
    assert architecture_parameters("resnet8", "other") is None


def test_parameter_predictions_band_contains_prediction(fits):
    pred = parameter_predictions(fits, holdout="resnet50", method="ridge")
    assert set(pred["param"]) == {"b0", "b1", "b2"}
    assert ((pred["low"] <= pred["predicted"] + 1e-15) & (pred["predicted"] <= pred["high"] + 1e-15)).all()
    assert pred.loc[pred["holdout"], "model"].eq("resnet50").all()


def test_hardware_independence_on_a_hand_example():
    # two models x two GPUs; model effect 10 epochs, GPU effect 1 epoch, no interaction
    rows = pd.DataFrame({"model": ["resnet20", "resnet20", "resnet56", "resnet56"],
                         "gpu": ["V100", "A100", "V100", "A100"], "split": "train",
                         "b0": 1e-3, "b1": 0.5, "b2": 0.1, "epoch_steps": 100,
                         "epoch_to_92acc": [20, 21, 30, 31], "step_to_92acc": [2000, 2100, 3000, 3100],
                         "loss_92acc": 0.3})
    hw = hardware_independence(normalise_fits(rows))
    assert hw.n_models == 2 and hw.n_gpus == 2
    # SD across GPUs within a model: sd(20, 21) = 0.707; across model means sd(20.5, 30.5) = 7.07
    assert hw.within_model_sd == pytest.approx(np.std([20, 21], ddof=1))
    assert hw.across_model_sd == pytest.approx(np.std([20.5, 30.5], ddof=1))
    assert np.isinf(hw.f_gpu) and hw.p_gpu == 0.0  # perfectly additive: no residual at all
    assert "GPU type does change" in hw.sentence


def test_course_data_looks_hardware_independent(fits):
    hw = hardware_independence(fits)
    assert hw.n_models == 6 and hw.n_gpus == 3 and hw.p_gpu > 0.05
    assert hw.within_model_sd < hw.across_model_sd


def test_fit_table_input_is_accepted_and_bad_tables_are_refused(tmp_path):
    table = pd.DataFrame({"file": ["a.csv"], "model": ["resnet20"], "gpu": ["V100"], "split": ["train"],
                          "b0": [1e-3], "b1": [0.5], "b2": [0.1], "steps_per_epoch": [100],
                          "step_to_target": [np.nan], "epoch_to_target": [np.nan], "loss_at_target": [np.nan]})
    f = normalise_fits(table)
    assert f["depth"].iloc[0] == 20 and f["excluded"].iloc[0] == ""
    with pytest.raises(InputError, match="expected the course's columns"):
        normalise_fits(pd.DataFrame({"x": [1]}), source="odd.csv")
    bad = tmp_path / "odd.csv"
    bad.write_text("x,y\n1,2\n")
    with pytest.raises(LogFormatError, match="odd.csv: expected the course's columns"):
        read_fits_table(bad)


def test_holdout_and_method_are_validated(fits):
    with pytest.raises(InputError, match="holdout: expected one of"):
        calibrate(fits, holdout="vgg16")
    with pytest.raises(InputError, match="method: expected one of"):
        calibrate(fits, method="magic")
    with pytest.raises(InputError, match="has no usable run in split 'val'"):
        calibrate(fits, holdout="resnet50", split="val")


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


def test_the_course_table_holds_the_runs_its_label_counts():
    """The Calibrate view's "Course table: 36 … fits" counts the table: 6 depths × 3 GPUs × 2 splits."""
    from core.datasets import COURSE_FITS_RUNS, course_fits_path

    table = read_fits_table(course_fits_path())
    assert len(table) == COURSE_FITS_RUNS == 6 * 3 * 2
    assert (table["model"].nunique(), table["gpu"].nunique(), table["split"].nunique()) == (6, 3, 2)


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
