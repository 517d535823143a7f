"""The per-run analysis and the table of fits."""

from __future__ import annotations

import numpy as np
import pytest

from core.curves import optimus_loss
from core.logs.reader import read_log
from core.runs.analysis import FIT_TABLE_COLUMNS, analyse_run, epoch_summary, fits_table, select_runs, thin_indices
from core.targets import accuracy_target


def synthetic_log(b=(2e-3, 0.5, 0.1), epochs=20, spe=50, name="resnet32_Tesla V100-PCIE-32GB.csv") -> bytes:
    """Noiseless Optimus loss; running accuracy reaches 0.8 + 0.01*epoch at each epoch's end."""
    rows = ["epoch, step, loss, acc"]
    for e in range(1, epochs + 1):
        for s in range(1, spe + 1):
            k = (e - 1) * spe + s
            acc = (0.8 + 0.01 * e) * s / spe + 0.5 * (1 - s / spe)
            rows.append(f"{e}, {s}, {optimus_loss(k, *b):.10f}, {acc:.6f}")
    return ("\n".join(rows) + "\n").encode()


def test_table_row_has_the_contract_columns_and_hand_checkable_values():
    a = analyse_run(read_log(synthetic_log(), "resnet32_Tesla V100-PCIE-32GB.csv"), target=accuracy_target(0.92))
    t = fits_table([a])
    assert list(t.columns[: len(FIT_TABLE_COLUMNS)]) == list(FIT_TABLE_COLUMNS)
    row = t.iloc[0]
    assert (row["model"], row["gpu"], row["split"], row["depth"]) == ("resnet32", "Tesla V100-PCIE-32GB", "train", 32)
    assert row["steps_per_epoch"] == 50 and row["n_points"] == 1000
    assert row["b0"] == pytest.approx(2e-3, rel=1e-5) and row["b2"] == pytest.approx(0.1, rel=1e-5)
    # epoch-end accuracy 0.8 + 0.01*e >= 0.92 (acc>=0.92 includes equality) first at e = 12 (logged
    # 0.920000); its last step = 12*50 = 600
    assert row["epoch_to_target"] == 12 and row["step_to_target"] == 600
    assert (row["metric"], row["direction"], row["target"]) == ("acc", ">=", 0.92)
    # loss there = mean of the Optimus loss over steps 551..600
    k = np.arange(551, 601)
    assert row["loss_at_target"] == pytest.approx(optimus_loss(k, 2e-3, 0.5, 0.1).mean(), rel=1e-6)
    assert row["flags"] == ""


def test_never_reached_is_flagged_and_cells_are_empty():
    a = analyse_run(read_log(synthetic_log(epochs=5), "r.csv"), target=accuracy_target(0.92))
    row = fits_table([a]).iloc[0]
    assert "never reached target 0.92" in row["flags"]
    assert np.isnan(row["step_to_target"]) and row["epoch_to_target"] is not None


def test_accuracy_only_trace_has_no_fit_but_a_crossing():
    trace = b"progress,iteration,metric,grad_sqr,grad_var\n391,390,0.5,1,1\n782,781,0.93,1,1\n"
    a = analyse_run(read_log(trace, "cifar10/validation-128.csv"))
    row = fits_table([a]).iloc[0]
    assert a.fit is None and np.isnan(row["b0"]) and row["epoch_to_target"] == 2
    assert "accuracy-only trace" in row["flags"]


def test_too_short_log_is_reported_not_raised():
    a = analyse_run(read_log(b"step,loss\n1,2\n2,1\n", "tiny.csv"))
    assert a.fit is None and "not fitted: tiny.csv: expected at least 4 finite points" in a.flags[1]


def test_epoch_summary_and_thinning():
    log = read_log(synthetic_log(epochs=3, spe=4), "r.csv")
    es = epoch_summary(log)
    assert es["step"].tolist() == [4, 8, 12]
    assert es["acc"].tolist() == pytest.approx([0.81, 0.82, 0.83])
    idx = thin_indices(10_000, 300)
    assert len(idx) <= 300 and idx[0] == 0 and idx[-1] == 9999 and np.all(np.diff(idx) > 0)
    assert (np.diff(idx[:20]) == 1).all()  # early points all kept


def test_select_runs_by_view():
    train = analyse_run(read_log(synthetic_log(epochs=3), "a.csv"))
    val = analyse_run(read_log(synthetic_log(epochs=3), "a_val.csv"))
    assert select_runs([train, val], "__all__") == [train, val]
    assert select_runs([train, val], "__train__") == [train]
    assert select_runs([train, val], "__val__") == [val]
    assert select_runs([train, val], "a_val.csv") == [val]
