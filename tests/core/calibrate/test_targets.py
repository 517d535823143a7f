"""Issue 34: calibration's target choices live in core (``core.calibrate.targets``), not on the page."""

from __future__ import annotations

import pandas as pd
import pytest

from core.calibrate import calibration_target, check_fits_target, normalise_fits
from core.errors import InputError
from core.targets import DEFAULT_TARGET, Target, accuracy_target

LOSS = Target("val_loss", "<=", 3.28)


def test_an_accuracy_target_gets_no_refusal_and_a_warning_only_off_the_course_value():
    default = calibration_target(DEFAULT_TARGET)
    assert (default.course_refusal, default.course_warning, default.caption, default.extrapolation_refusal) == \
        (None, None, None, None)
    other = calibration_target(accuracy_target(0.9))
    assert other.course_refusal is None and other.caption is None and other.extrapolation_refusal is None
    assert other.course_warning == ("The course table records only the 92 % target; its rows use 0.92 whatever "
                                    "the slider says.")


@pytest.mark.parametrize("source, refused", [("course", True), ("both", True), ("logs", False), ("upload", False)])
def test_a_loss_target_refuses_the_course_table_only(source, refused):
    said = calibration_target(LOSS, holdout="resnet56")
    assert (said.refuses(source) is not None) == refused
    assert said.course_refusal.startswith("The course table records acc ≥ 0.92 only: the target val_loss ≤ 3.28 is "
                                          "not an accuracy")
    assert said.caption == "Epochs to val_loss ≤ 3.28: each run's fit and crossing are for this target."
    assert said.extrapolation_refusal.startswith("resnet56's logs end before val_loss ≤ 3.28 on some devices")


def _fits(spec: list[str | None]) -> pd.DataFrame:
    return pd.DataFrame({"target_spec": spec})


def test_fits_made_for_the_target_pass_and_others_are_refused_with_both_named():
    check_fits_target(_fits(["loss<=0.5", "loss<=0.5"]), Target("loss", "<=", 0.5), "fits.csv")
    check_fits_target(_fits([None, None]), LOSS, "fits.csv")            # a table that says nothing is taken as is
    with pytest.raises(InputError, match=r"^fits\.csv: expected fits made for target acc>=0\.92; the table records "
                                         r"loss<=0\.5\. Refit with `python -m core fit --target 'acc>=0\.92'`\.$"):
        check_fits_target(_fits(["loss<=0.5"]), DEFAULT_TARGET, "fits.csv")
    with pytest.raises(InputError, match=r"target acc>=0\.9; the table records acc>=0\.92\. .*\(the course table only "
                                         r"has 0\.92\)\.$"):
        check_fits_target(_fits(["acc>=0.92"]), accuracy_target(0.9), "course.csv")


def _fit_table(**extra) -> pd.DataFrame:
    return pd.DataFrame({"model": ["resnet20"], "gpu": ["V100"], "split": ["train"], "b0": [1e-3], "b1": [1.0],
                         "b2": [0.1], "steps_per_epoch": [391], "step_to_target": [900.0], "epoch_to_target": [3.0],
                         "loss_at_target": [0.5], **extra})


def test_normalise_fits_takes_the_tables_own_record_first_then_the_given_target():
    # the table's own metric, direction and value
    own = normalise_fits(_fit_table(metric=["loss"], direction=["<="], target=[0.5], target_acc=[None]),
                         target=accuracy_target(0.9))
    assert own[["target_acc", "target_spec"]].iloc[0].tolist()[1] == "loss<=0.5" and pd.isna(own["target_acc"][0])
    # its target_acc column
    acc = normalise_fits(_fit_table(target_acc=[0.8]), target=LOSS)
    assert (acc["target_acc"][0], acc["target_spec"][0]) == (0.8, "acc>=0.8")
    # nothing recorded: the given target (an accuracy also fills target_acc; a loss never does)
    given = normalise_fits(_fit_table(), target=accuracy_target(0.9))
    assert (given["target_acc"][0], given["target_spec"][0]) == (0.9, "acc>=0.9")
    loss = normalise_fits(_fit_table(), target=LOSS)
    assert pd.isna(loss["target_acc"][0]) and loss["target_spec"][0] == "val_loss<=3.28"
    none = normalise_fits(_fit_table())
    assert pd.isna(none["target_acc"][0]) and none["target_spec"][0] is None
