"""core.calibrate.stored_scores: the course table's method scores, computed once and shipped, are what
``method_scores`` computes, cover every held-out architecture, split and threshold, and are never used
for another table."""

from __future__ import annotations

import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from core.calibrate import CALIBRATION_METHODS, architectures, method_scores, method_scores_for, read_fits_table, usable
from core.calibrate.stored_scores import stored_method_scores
from core.datasets import course_fits_path, course_method_scores_path


@pytest.fixture(scope="module")
def course() -> pd.DataFrame:
    return read_fits_table(course_fits_path(), source="course table")      # as the Calibrate page reads it


def test_the_shipped_scores_are_what_method_scores_computes(course):
    """The page's default (train split, resnet50 held out, the fitted curve's threshold), recomputed."""
    stored = stored_method_scores(course, split="train", holdout="resnet50", threshold="curve")
    assert stored is not None
    assert_frame_equal(stored, method_scores(course, split="train", holdout="resnet50", threshold="curve"),
                       rtol=1e-9, atol=0)
    assert list(stored["method"]) == list(CALIBRATION_METHODS)


def test_every_held_out_architecture_split_and_threshold_is_shipped(course):
    table = pd.read_csv(course_method_scores_path())
    expected = {(split, holdout, threshold) for split in ("train", "val")
                for holdout in architectures(usable(course, split=split)) for threshold in ("curve", "measured")}
    assert len(expected) == 20                                             # 6 train + 4 val architectures, ×2
    assert set(table[["split", "holdout", "threshold"]].itertuples(index=False, name=None)) == expected
    assert len(table) == 20 * len(CALIBRATION_METHODS)
    for split, holdout, threshold in expected:
        assert stored_method_scores(course, split=split, holdout=holdout, threshold=threshold) is not None


def test_another_table_is_scored_not_looked_up(course):
    """One fitted value changed: the digest differs, nothing stored is returned, the scores are computed
    (and the changed row moves them)."""
    changed = course.copy()
    row = changed.index[(changed["model"] == "resnet20") & (changed["split"] == "train")][0]
    changed.loc[row, "b0"] *= 1.5                                          # a calibration run's fit
    assert stored_method_scores(changed, split="train", holdout="resnet50") is None
    assert stored_method_scores(course.iloc[1:], split="train", holdout="resnet50") is None
    computed = method_scores_for(changed, split="train", holdout="resnet50")
    assert_frame_equal(computed, method_scores(changed, split="train", holdout="resnet50"))
    stored = stored_method_scores(course, split="train", holdout="resnet50")
    assert not computed["loao_mape_pct"].equals(stored["loao_mape_pct"])
