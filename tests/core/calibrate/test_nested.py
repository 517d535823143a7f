"""core.calibrate.nested: the nested leave-one-architecture-out evaluation and its summary."""

from __future__ import annotations

import pandas as pd
import pytest

from core.calibrate import (
    nested_loao,
    nested_summary,
)
from tests.core.calibrate.helpers import poison


@pytest.mark.slow
@pytest.mark.parametrize("holdout", ["resnet18", "resnet50"])
def test_nested_loao_never_reads_the_held_out_architecture(fits, holdout):
    clean, dirty = nested_loao(fits), nested_loao(poison(fits, holdout))
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
