"""The inner backtest: checks, scores, horizon ratios, the drift and the fit cache."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.prediction.intervals import (
    MIN_LOG_SPREAD,
    Drift,
    FitCache,
    InnerBacktest,
    inner_backtest,
    stretch,
    whole_epoch,
)
from core.prediction.log_series import accuracy_series
from tests.core.prediction.prediction_logs import course_log


def _bt(predicted):
    # fitted on 5 epochs, checked at epochs 6, 8 and 10
    return InnerBacktest("exp3", np.array([5.0, 5.0, 5.0]), np.array([6.0, 8.0, 10.0]),
                         np.array(predicted, dtype=float))


def test_score_is_the_mean_capped_relative_horizontal_error():
    # |6.6−6|/6 = 0.1, |12−8|/8 = 0.5, never → 1  ⇒  mean 0.5333
    assert _bt([6.6, 12.0, math.inf]).score == pytest.approx((0.1 + 0.5 + 1.0) / 3)
    # a fit that failed (NaN) scores 1 too; 30 vs 10 is capped at 1
    assert _bt([np.nan, 8.0, 30.0]).score == pytest.approx((1.0 + 0.0 + 1.0) / 3)


def test_horizon_ratios_hand_values():
    # g = (e − m)/(ĉ − m): (6−5)/(7−5) = 0.5, (8−5)/(8−5) = 1, never → 0; ĉ <= m counts as m + 1/2
    np.testing.assert_allclose(_bt([7.0, 8.0, math.inf]).ratios, [0.5, 1.0, 0.0])
    np.testing.assert_allclose(_bt([4.0, 8.0, 10.0]).ratios, [2.0, 1.0, 1.0])
    assert _bt([np.nan, 8.0, 10.0]).ratios.size == 2  # failed fits are not checks


def test_drift_quantiles_and_the_floor_on_the_spread():
    d = Drift.from_backtest(_bt([7.0, 8.0, 9.0]), level=0.8)  # g = 0.5, 1, 1.25
    assert d.n_checks == 3 and not d.usable  # fewer than 4 checks: nothing is learned
    assert (d.low, d.median, d.high) == pytest.approx((math.log(0.5), 0.0, math.log(1.25)))
    lo, hi = d.widened(1.0)
    assert lo == pytest.approx(math.log(0.5)) and hi == pytest.approx(max(math.log(1.25), MIN_LOG_SPREAD))


def test_stretch_and_whole_epoch():
    assert stretch(20.0, 10, math.log(0.5)) == 15.0      # 10 + 10·0.5
    assert stretch(9.0, 10, 0.0) == 10.5                 # at or before n counts as n + 1/2
    assert stretch(math.inf, 10, 0.0) == math.inf
    assert whole_epoch(12.0000000001) == 12.0 and whole_epoch(12.01) == 13.0


def test_inner_backtest_splits_at_half_two_thirds_and_four_fifths():
    series = accuracy_series(course_log(epochs=10))
    bt = inner_backtest(series, "exp3")
    # n = 10: m = round(5) = 5, round(6.5) = 6, round(8) = 8 → 5 + 4 + 2 checks
    assert sorted(set(bt.fitted_epochs.tolist())) == [5.0, 6.0, 8.0] and bt.n_checks == 11
    # the data are exactly exp3: every check is hit
    np.testing.assert_allclose(bt.predicted, bt.epoch, rtol=1e-4)


def test_inner_backtest_only_reads_the_series_it_is_given():
    long, short = accuracy_series(course_log(epochs=24)), accuracy_series(course_log(epochs=10))
    a, b = inner_backtest(long.first(10), "mmf"), inner_backtest(short, "mmf")
    np.testing.assert_array_equal(a.predicted, b.predicted)


def test_fit_cache_reuses_fits_of_identical_data_only():
    cache = FitCache()
    series = accuracy_series(course_log(epochs=12))
    one = cache.fit(series.first(8), "exp3")
    assert cache.fit(accuracy_series(course_log(epochs=8)), "exp3") is one  # same data, same fit
    assert cache.fit(series.first(9), "exp3") is not one
    assert cache.fit(series.first(2), "mmf") is None  # 2 points cannot fit 4 parameters
