"""Issue 35: the analysis' fast paths (no copy of a dense log's table, epoch ends without a sort) give what the
careful paths give, each checked against a computation written here."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.logs import read_log
from core.runs import analyse_run
from core.runs.evaluations import compared_rows, epoch_ends, rows_holding
from core.targets import accuracy_target


def careful_epoch_ends(rows: pd.DataFrame) -> np.ndarray:
    """Each epoch's last row, by epoch: the last position holding each distinct epoch, found one by one."""
    epoch = rows["epoch"].to_numpy(dtype=float, na_value=np.nan)
    return np.array([int(np.flatnonzero(epoch == e)[-1]) for e in np.unique(epoch[~np.isnan(epoch)])], dtype=int)


EPOCHS = {
    "in order": [1, 1, 1, 2, 2, 3],
    "in order with gaps": [1, 1, None, 2, None, 2, 3, 3],
    "one epoch": [4, 4, 4],
    "out of order": [2, 2, 1, 1, 3, 2],
    "a restart back to epoch 1": [1, 1, 2, 2, 1, 1, 2],
    "no epochs": [None, None],
    "one row": [7],
}


@pytest.mark.parametrize("epochs", EPOCHS.values(), ids=EPOCHS.keys())
def test_epoch_ends_are_each_epochs_last_row(epochs):
    rows = pd.DataFrame({"epoch": pd.array(epochs, dtype="Int64")})
    assert epoch_ends(rows).tolist() == careful_epoch_ends(rows).tolist()


def test_rows_holding_is_the_boolean_selection_or_the_frame_itself():
    frame = pd.DataFrame({"global_step": [1.0, 2.0, 3.0], "loss": [2.0, np.nan, 1.0], "acc": [0.1, 0.2, 0.3]})
    pd.testing.assert_frame_equal(rows_holding(frame, "loss"), frame[frame["loss"].notna()])
    assert rows_holding(frame, "acc") is frame


def _course(acc_gap: bool) -> bytes:
    lines = ["epoch,step,loss,acc"]
    for e in range(1, 7):
        for s in range(1, 11):
            acc = "" if acc_gap and s % 3 == 0 else f"{min(0.99, 0.5 + 0.08 * e + 0.001 * s):.4f}"
            lines.append(f"{e},{s},{2.0 / (e * 10 + s):.5f},{acc}")
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("acc_gap", [False, True], ids=["dense", "accuracy on some rows"])
def test_compared_rows_and_the_crossing_are_those_of_the_selected_rows(acc_gap):
    log = read_log(_course(acc_gap), "resnet20_V100.csv")
    rows = log.frame[log.frame["acc"].notna()]
    positions, values = compared_rows(log, "acc")
    assert positions.tolist() == careful_epoch_ends(rows).tolist()
    assert values.tolist() == rows["acc"].to_numpy()[positions].tolist()
    # accuracy 0.5 + 0.08 e + 0.001 s at an epoch's last row (s = 10 either way): 0.83 after epoch 4, 0.91 after 5
    crossing = analyse_run(log, target=accuracy_target(0.9)).crossing
    assert (crossing.reached, crossing.epoch, crossing.step) == (True, 5, 50.0)
