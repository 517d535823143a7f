"""Gradient-noise-scale columns (core.logs.noise)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.datasets import DATA_DIR
from core.errors import LogFormatError
from core.logs.noise import noise_scale_at, read_gradient_noise

POLLUX = DATA_DIR / "pollux_traces"


@pytest.mark.parametrize("job, base", [("cifar10", 128.0), ("imagenet", 200.0)])
def test_pollux_traces_give_their_statistics_and_initial_batch(job, base):
    # B0 = N / progress per epoch: CIFAR-10 50,000 / 390.6 = 128; ImageNet 1,281,167 / 6,405.8 = 200
    n = {"cifar10": 50_000, "imagenet": 1_281_167}[job]
    path = next((POLLUX / job).glob("validation-*.csv"))
    noise = read_gradient_noise(path.read_bytes(), path.name)
    frame = pd.read_csv(path)
    assert noise.base_batch(n) == base
    np.testing.assert_allclose(noise.scale(base), base * frame["grad_var"] / frame["grad_sqr"])


def test_logs_without_the_columns_have_no_noise_scale():
    assert read_gradient_noise(b"epoch,step,loss,acc\n1,1,2.0,0.5\n", "r.csv") is None
    assert read_gradient_noise(b':::MLLOG {"key": "run_start"}\n', "r.txt") is None


@pytest.mark.parametrize("content, message", [
    (b"epoch,grad_sqr\n1,2.0\n", r"^r\.csv: expected both grad_sqr and grad_var.*got grad_sqr without grad_var"),
    (b"epoch,grad_sqr,grad_var\n1,2.0,-1\n", r"^r\.csv: expected finite numbers >= 0 in column 'grad_var'; got -1"),
])
def test_broken_statistics_are_refused_naming_the_file(content, message):
    with pytest.raises(LogFormatError, match=message):
        read_gradient_noise(content, "r.csv")


def test_noise_scale_at_takes_the_median_of_the_last_evaluations_skipping_gaps():
    assert noise_scale_at(np.array([100.0, np.nan, 300.0, 500.0]), 4, window=3) == (400.0, 300.0, 500.0)
    assert all(np.isnan(noise_scale_at(np.array([np.nan]), 1)))
