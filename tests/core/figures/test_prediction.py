"""Prediction figures as data: trace names and order, the observed/unseen split, markers, the band."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from core.figures.prediction import prediction_band_figure, prediction_convergence_figure
from core.prediction.log_series import first_epochs
from core.prediction.predict import prediction_from_first_epochs
from core.prediction.tables import convergence_of_prediction
from core.targets import accuracy_target
from tests.core.prediction.prediction_logs import ACTUAL_EPOCH, TARGET, course_log

BAND_NAMES = ["band", "observed", "unseen", "fitted", "predicted", "target", "predicted epoch", "actual epoch"]


@pytest.fixture(scope="module")
def log():
    return course_log()


@pytest.fixture(scope="module")
def prediction(log):
    return prediction_from_first_epochs(log, 8, family="exp3")


def test_band_figure_trace_names_and_axes(log, prediction):
    fig = prediction_band_figure(log, prediction)
    assert [t.name for t in fig.data] == BAND_NAMES
    assert fig.layout.xaxis.title.text == "epoch" and fig.layout.yaxis.title.text == "accuracy"


def test_observed_and_unseen_points_split_at_the_epochs_seen(log, prediction):
    by = {t.name: t for t in prediction_band_figure(log, prediction).data}
    assert list(by["observed"].x) == list(range(1, 9)) and list(by["unseen"].x) == list(range(9, 25))
    # epoch 1's accuracy: 1 − (0.8·e^(−1/5) + 0.02)
    assert by["observed"].y[0] == pytest.approx(1 - (0.8 * math.exp(-0.2) + 0.02), abs=1e-6)


def test_markers_sit_on_the_target_line_at_the_predicted_and_actual_epochs(log, prediction):
    by = {t.name: t for t in prediction_band_figure(log, prediction, actual_epoch=ACTUAL_EPOCH).data}
    assert list(by["target"].y) == [TARGET, TARGET]
    assert list(by["predicted epoch"].x) == [prediction.epoch] == [ACTUAL_EPOCH]
    assert by["predicted epoch"].error_x.arrayminus[0] == prediction.epoch - prediction.epoch_low
    assert by["predicted epoch"].error_x.array[0] == prediction.epoch_high - prediction.epoch
    assert list(by["actual epoch"].x) == [ACTUAL_EPOCH]


def test_band_lies_after_the_observed_epochs_and_brackets_the_predicted_curve(log, prediction):
    by = {t.name: t for t in prediction_band_figure(log, prediction).data}
    band_x = np.asarray(by["band"].x)
    assert band_x.min() >= 8 and by["band"].fill == "toself"
    half = len(band_x) // 2
    low, high = np.asarray(by["band"].y[:half]), np.asarray(by["band"].y[half:])[::-1]
    assert np.all(low <= high + 1e-12)


def test_observed_part_alone_draws_no_unseen_points_and_no_actual(log, prediction):
    by = {t.name: t for t in prediction_band_figure(first_epochs(log, 8), prediction).data}
    assert len(by["unseen"].x) == 0 and len(by["actual epoch"].x) == 0
    # an actual epoch within the observed epochs is not drawn either: it was seen, not predicted
    by = {t.name: t for t in prediction_band_figure(log, prediction, actual_epoch=5).data}
    assert len(by["actual epoch"].x) == 0


def test_loss_route_draws_the_epoch_mean_loss(log):
    p = prediction_from_first_epochs(log, 8, family="optimus", route="loss")
    fig = prediction_band_figure(log, p)
    assert [t.name for t in fig.data] == BAND_NAMES and fig.layout.yaxis.title.text == "loss (epoch mean)"
    assert list(fig.data[5].y) == [p.loss_threshold] * 2


def test_unreachable_prediction_has_an_empty_epoch_marker(log):
    p = prediction_from_first_epochs(log, 8, family="exp3", target=accuracy_target(0.99))
    by = {t.name: t for t in prediction_band_figure(log, p).data}
    assert p.status == "unreachable" and len(by["predicted epoch"].x) == 0


def test_convergence_figure_traces_and_capped_infinite_ends(log):
    frame = convergence_of_prediction(log, family="exp3", min_epochs=3)
    fig = prediction_convergence_figure(frame)
    assert [t.name for t in fig.data] == ["interval", "predicted", "actual", "epochs seen"]
    assert list(fig.data[1].x) == frame["epochs_seen"].tolist()
    assert list(fig.data[2].y) == [ACTUAL_EPOCH, ACTUAL_EPOCH]
    assert np.isfinite(np.asarray(fig.data[0].y, dtype=float)).all()  # inf drawn at the axis top


def test_degenerate_input_gives_a_titled_note_not_an_exception(log, prediction):
    empty = prediction_convergence_figure(pd.DataFrame(columns=["epochs_seen", "epoch_pred"]))
    assert len(empty.data) == 0 and empty.layout.annotations[0].text == "No prediction to show."
    trace = course_log(epochs=3)
    no_acc = trace.frame.assign(acc=np.nan)
    from dataclasses import replace
    fig = prediction_band_figure(replace(trace, frame=no_acc), prediction)
    assert "no accuracy to show" in fig.layout.annotations[0].text


def test_prior_and_posterior_are_bands_of_their_own_in_the_same_chart(log, prediction):
    from core.prediction import Prior, combine, parse_schedule

    prior = Prior.from_interval(20.0, 10.0, 40.0, level=0.8)
    post = combine(prior, prediction, n_epochs_observed=8)
    fig = prediction_band_figure(log, prediction, prior=prior, posterior=post, schedule=parse_schedule("step:12"))
    names = [t.name for t in fig.data]
    assert names == BAND_NAMES + ["prior", "posterior", "prior epoch", "posterior epoch", "schedule"]
    by = dict(zip(names, fig.data))
    # the prior's band spans its interval on the epoch axis: 20·exp(∓1.2816·ln 4 / 2.5631) = 10 .. 40
    assert min(by["prior"].x) == pytest.approx(10.0) and max(by["prior"].x) == pytest.approx(40.0)
    assert by["prior"].fill == "toself" and by["posterior"].fill == "toself"
    assert min(by["posterior"].x) == post.epoch_low and max(by["posterior"].x) == post.epoch_high
    assert list(by["posterior epoch"].x) == [post.epoch] and list(by["posterior epoch"].y) == [TARGET]
    # the drop after epoch 12 is a line between epochs 12 and 13
    assert list(by["schedule"].x)[:2] == [12.5, 12.5]


def test_convergence_with_a_prior_draws_the_three_answers(log):
    from core.prediction import Prior

    prior = Prior.from_interval(15.0, 10.0, 20.0, level=0.8)
    conv = convergence_of_prediction(log, family="exp3", prior=prior)
    assert (conv["prior_epoch"] == 15.0).all()                       # the prior never reads the run
    actual = int(conv["epoch_actual"].iloc[0])
    ahead, done = conv[conv["epochs_seen"] < actual], conv[conv["epochs_seen"] >= actual]
    assert (ahead["posterior_epoch"] > ahead["epochs_seen"]).all()   # never before the next epoch
    assert len(done) and (done["posterior_epoch"] == actual).all()   # once passed: the measured epoch
    fig = prediction_convergence_figure(conv)
    names = [t.name for t in fig.data]
    assert names[:4] == ["interval", "predicted", "actual", "epochs seen"]
    assert names[4:] == ["prior interval", "prior", "posterior interval", "posterior", "schedule"]
    np.testing.assert_array_equal(fig.data[names.index("posterior")].y, conv["posterior_epoch"].to_numpy())
