"""Fits of library runs: made once, stored, the same table ``core.runs`` makes; a stopped fit keeps what it did."""

from __future__ import annotations

import pandas as pd
import pytest

from core.errors import InputError
from core.library import Library, fit_library, reached_note, refit_library, with_reached
from core.logs import read_log
from core.runs import analyse_run, fits_table
from core.targets import Target, accuracy_target
from tests.core.library.helpers import course_csv


@pytest.fixture
def lib(db) -> Library:
    lib = Library(db)
    for i, b0 in enumerate((0.01, 0.02, 0.04)):
        data = course_csv(b0=b0, seed=i)
        lib.add(read_log(data, f"resnet{8 + 6 * i}_Tesla V100.csv"), data=data, dataset="mnist1d")
    return lib


def test_library_fits_equal_the_fits_table_of_the_same_runs_and_are_stored(lib):
    first = fit_library(lib, target=accuracy_target(0.9))
    expected = fits_table([analyse_run(log, target=accuracy_target(0.9)) for log in lib.load()])
    pd.testing.assert_frame_equal(first.table, expected)
    assert (first.n_fitted, first.n_stored) == (3, 0)
    # loss = 1/(b0 k + 0.5) + 0.05 exactly: the fit recovers b0 (written with 8 decimals)
    assert first.table["b0"].tolist() == pytest.approx([0.01, 0.02, 0.04], rel=1e-4)
    # epoch-end accuracy 0.6 + 0.06 e (written 0.9000 at e = 5) >= 0.9 first at e = 5, its last step 50
    assert first.table["epoch_to_target"].tolist() == [5, 5, 5] and first.table["step_to_target"].tolist() == [50] * 3
    second = fit_library(lib, target=accuracy_target(0.9))
    assert (second.n_fitted, second.n_stored) == (0, 3)
    pd.testing.assert_frame_equal(second.table, first.table, check_exact=True)
    other_target = fit_library(lib, target=accuracy_target(0.8))
    assert other_target.n_fitted == 3 and other_target.table["epoch_to_target"].tolist() == [4, 4, 4]
    assert first.datasets == {name: "mnist1d" for name in first.table["file"]}


def test_a_stopped_fit_stores_what_it_fitted(lib):
    stopped = fit_library(lib, progress=lambda done, total, label: done < 2)
    assert stopped.cancelled and stopped.n_fitted == 2 and len(stopped.table) == 2
    rest = fit_library(lib)
    assert (rest.n_fitted, rest.n_stored) == (1, 2)


def test_stored_fits_are_for_an_accuracy_a_loss_target_is_refused_naming_the_step(lib):
    with pytest.raises(InputError, match=r"^target: the library's stored fits \(fit --from-library, calibrate "
                                         r"--from-library\) works on an accuracy \(acc>=A\); got loss<=0\.5\."):
        fit_library(lib, target=Target("loss", "<=", 0.5))
    with pytest.raises(InputError, match=r"^target: refit \(the library's stored fits\) works on an accuracy"):
        refit_library(lib, target=Target("loss", "<=", 0.5))
    assert fit_library(lib).n_fitted == 3                # nothing was stored for the refused target


def test_reached_target_is_answered_for_an_accuracy_and_left_empty_with_a_note_otherwise():
    table = pd.DataFrame({"best_acc": [0.95, 0.9, None]})
    assert with_reached(table, accuracy_target(0.92))["reached_target"].tolist() == [True, False, None]
    assert reached_note(accuracy_target(0.92)) is None
    loss = Target("val_loss", "<=", 3.28)
    assert with_reached(table, loss)["reached_target"].tolist() == [None, None, None]
    assert reached_note(loss) == ("The library's table keeps each run's best accuracy and final loss only: whether a "
                                  "run reached val_loss ≤ 3.28 shows in the chart of the runs you choose.")
