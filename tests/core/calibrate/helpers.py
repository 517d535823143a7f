"""The course's fit table (data/cifar10_resnet_optimus_fits.csv) and a way to poison one architecture of it."""

from __future__ import annotations

import pandas as pd

from tests.conftest import DATA

COURSE = DATA / "cifar10_resnet_optimus_fits.csv"


def poison(fits: pd.DataFrame, model: str) -> pd.DataFrame:
    """``fits`` with every run of ``model`` given absurd targets and a sound but absurd curve (not degenerate):
    a method that reads a held-out architecture changes its answer."""
    poisoned = fits.copy()
    m = poisoned["model"] == model
    poisoned.loc[m, ["loss_at_target", "step_to_target", "epoch_to_target"]] = [9.9, 1.0, 1.0]
    poisoned.loc[m, ["b0", "b1", "b2"]] = [0.5, 0.01, 3.0]
    return poisoned
