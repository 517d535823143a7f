"""core.calibrate.table: reading and normalising fit tables, which rows are usable and why not."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.calibrate import normalise_fits, read_fits_table, usable
from core.calibrate.table import excluded_rows
from core.errors import InputError, LogFormatError


def test_degenerate_val_fits_are_excluded_with_a_reason(fits):
    ex = excluded_rows(fits, split="val")
    assert sorted(ex["model"]) == ["resnet18"] * 3 + ["resnet50"] * 3
    assert ex["excluded"].str.startswith("degenerate fit").all()
    assert set(usable(fits, split="val")["model"]) == {"resnet20", "resnet32", "resnet44", "resnet56"}


def test_never_reached_is_nan_not_minus_one(fits):
    val18 = fits[(fits["model"] == "resnet18") & (fits["split"] == "val")]
    assert val18["epoch_to_target"].isna().all() and val18["step_to_target"].isna().all()


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


def test_the_course_table_holds_the_runs_its_label_counts():
    """The Calibrate view's "Course table: 36 … fits" counts the table: 6 depths × 3 GPUs × 2 splits."""
    from core.datasets import COURSE_FITS_RUNS, course_fits_path

    table = read_fits_table(course_fits_path())
    assert len(table) == COURSE_FITS_RUNS == 6 * 3 * 2
    assert (table["model"].nunique(), table["gpu"].nunique(), table["split"].nunique()) == (6, 3, 2)
