"""The Plan view's starting numbers: computed from the paper's θ, or refitted from the built-in trace."""

from __future__ import annotations

import warnings

import pytest

from core.datasets import builtin_speed_tables
from core.errors import FitWarning
from core.plan.examples import (
    CIFAR10_ALLREDUCE_THETA_S,
    EXAMPLE_GLOBAL_BATCH,
    EXAMPLE_STEP_TIME,
    EXAMPLE_THETA_S,
)
from core.speed import fit_speed, read_speed_csv


def test_the_paper_examples_are_the_paper_s_theta_at_0_02_s_per_unit():
    # sync θ (1.02, 2.78, 4.92, 0, 0.02) × 0.02 s; async (2.83, 3.92, 0, 0.11) × 0.02 s
    assert EXAMPLE_THETA_S["sync"] == (0.0204, 0.0556, 0.0984, 0.0, 0.0004)
    assert EXAMPLE_THETA_S["async"] == (0.0566, 0.0784, 0.0, 0.0022)
    # paper sync model at p = 2, w = 4: θ0·M/w + θ1 + θ2·w/p + θ3·w + θ4·p
    # = 1.02·32 + 2.78 + 4.92·2 + 0 + 0.02·2 = 45.3 units -> 0.906 s
    assert EXAMPLE_STEP_TIME == (0.906, 2, 4)


def test_the_allreduce_example_is_the_fit_of_the_cifar10_trace():
    path = dict(builtin_speed_tables())["cifar10/scalability.csv"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitWarning)
        fit = fit_speed(read_speed_csv(path.read_bytes(), source=path.name), family="optimus", mode="allreduce",
                        global_batch=EXAMPLE_GLOBAL_BATCH, source=path.name)
    fitted = tuple(fit.model.named_params.values())
    assert EXAMPLE_THETA_S["allreduce"] == CIFAR10_ALLREDUCE_THETA_S
    assert fitted == pytest.approx(CIFAR10_ALLREDUCE_THETA_S, rel=5e-3)     # three digits
