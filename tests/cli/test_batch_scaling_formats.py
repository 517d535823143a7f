"""Issue 36, item 5, "one run, one answer": ``python -m core batch-scaling`` gives every run the same samples to
target whether its records are written as course, Lightning or Pollux-layout files.

21 runs (7 global batches × 3 seeds) are trained here on the CPU and written in the three layouts by
``tests/core/batch/format_sweep.py`` (its docstring says how; deterministic, nothing downloaded).  The learning rate
follows the linear rule capped from batch 512 on, so the runs at 512 and 1,024 are not on the tuned curve.

The expected samples to target of each run is computed from the training arrays, not by the project's readers:
the first epoch whose validation accuracy (rounded as the files keep it) is >= the target, times the 4,000 training
samples an epoch; its steps are that epoch × ceil(4000 / B) optimiser steps (the last batch of an epoch kept).

Before this change 36 of 63 figures agreed: the Pollux files at 512 and 1,024 were left out of the output altogether
(capped learning rate), and a Lightning ``metrics.csv`` was read as its training rows (no accuracy) with no batch.
"""

from __future__ import annotations

import io
import math

import pandas as pd
import pytest

from core.cli import main
from tests.core.batch import format_sweep as fs

KEYS = [(b, s) for b in fs.BATCHES for s in fs.SEEDS]
FORMATS = ("course", "lightning", "pollux")
CAPPED = (512, 1024)


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    return fs.write_sweep(tmp_path_factory.mktemp("format_sweep"))


def _run(argv, capsys) -> tuple[int, pd.DataFrame | None, str]:
    code = main(["batch-scaling", *argv])
    out = capsys.readouterr()
    return code, pd.read_csv(io.StringIO(out.out)) if out.out else None, out.err


def _table(sweep, fmt: str, capsys, *extra: str, keys=KEYS) -> tuple[pd.DataFrame, str]:
    """The measured rows of one format's batch-scaling output, indexed by (batch, seed)."""
    paths = {str(p): k for p, k in zip(sweep[fmt], KEYS) if k in keys}
    code, df, err = _run([*paths, "--target-acc", str(fs.TARGET), "--samples-per-epoch", str(fs.N_TRAIN), *extra],
                         capsys)
    assert code == 0, err
    measured = df[df["source"] == "measured"].copy()
    measured.index = pd.MultiIndex.from_tuples([paths[f] for f in measured["file"]], names=["batch", "seed"])
    return measured, err


@pytest.fixture(scope="module")
def expected(sweep):
    return {k: (fs.crossing(run)["epoch"], fs.crossing(run)["epoch"] * fs.N_TRAIN,
                fs.crossing(run)["epoch"] * math.ceil(fs.N_TRAIN / k[0])) for k, run in sweep["runs"].items()}


def test_the_sweep_is_fit_for_the_check(sweep, expected):
    """Every run reaches the target after its first epoch and before its last; the cap costs the large batches."""
    assert len(KEYS) == 21
    assert all(1 < epoch < fs.EPOCHS for epoch, _, _ in expected.values()), expected
    assert [fs.scaled_lr(b) for b in fs.BATCHES] == pytest.approx([0.00025, 0.0005, 0.001, 0.002, 0.004, 0.004, 0.004])
    slowest_uncapped = max(expected[b, s][1] for b in (16, 32, 64, 128, 256) for s in fs.SEEDS)
    assert min(expected[b, s][1] for b in CAPPED for s in fs.SEEDS) > slowest_uncapped


def test_every_run_gives_the_same_samples_to_target_in_every_format(sweep, expected, capsys):
    agree = 0
    for fmt in FORMATS:
        table, _ = _table(sweep, fmt, capsys)
        assert sorted(table.index) == sorted(KEYS), fmt          # every run is shown, capped or not
        for k in KEYS:
            epochs, samples, steps = expected[k]
            row = table.loc[k]
            assert (row.epochs_to_target, row.samples_to_target, row.steps_to_target) == (epochs, samples, steps), \
                (fmt, k)
            agree += 1
    assert agree == 63


def test_capped_runs_are_shown_marked_and_kept_out_of_the_fit(sweep, capsys):
    pollux, err = _table(sweep, "pollux", capsys)
    capped = pollux[[b in CAPPED for b, _ in pollux.index]]
    assert len(capped) == 6 and not capped["in_fit"].any()
    assert capped["note"].str.startswith("learning rate 0.004 capped (batch 512 and larger)").all()
    assert pollux.drop(capped.index)["in_fit"].all() and pollux.drop(capped.index)["note"].isna().all()
    assert "learning rate capped from batch 512 on" in err and "(6)" in err
    # kept out of the fit: the same E_min and B_noise as from the 15 uncapped runs alone
    _, err_15 = _table(sweep, "pollux", capsys, keys=[k for k in KEYS if k[0] not in CAPPED])
    assert err.splitlines()[0] == err_15.splitlines()[0]          # the summary line: E_min, B_noise, MAPE on 15 runs
    assert "error on the 15 measured runs" in err


def test_lightning_and_pollux_agree_row_for_row_and_the_course_does_given_its_learning_rates(sweep, capsys):
    columns = ["global_batch", "epochs_to_target", "samples_to_target", "steps_to_target", "steps_low",
               "steps_high", "region", "in_fit", "note"]
    pollux, err_p = _table(sweep, "pollux", capsys, "--predict", "2048")
    lightning, err_l = _table(sweep, "lightning", capsys, "--predict", "2048")
    pd.testing.assert_frame_equal(pollux[columns], lightning[columns])
    assert err_p.splitlines()[0] == err_l.splitlines()[0]
    # the course format has no learning-rate column: the cap is invisible, every run fitted ...
    course, err_c = _table(sweep, "course", capsys)
    assert course["in_fit"].all() and "capped" not in err_c
    # ... and given each log's rate (--lr, file order) it is seen as from the other formats
    rates = ",".join(f"{fs.scaled_lr(b):g}" for b, _ in KEYS)
    course, err_c = _table(sweep, "course", capsys, "--lr", rates, "--predict", "2048")
    pd.testing.assert_frame_equal(pollux[columns], course[columns])
    assert err_p.splitlines()[0] == err_c.splitlines()[0]


@pytest.mark.parametrize(("extra", "message"), [
    (["--lr", "0.1,0.2"], "--lr: expected one learning rate per LOG (3); got 2"),
    (["--lr", "0.1,0,0.2"], "--lr: expected numbers > 0; got '0.1,0,0.2'. Give learning rates."),
])
def test_learning_rates_are_checked(sweep, extra, message, capsys):
    paths = [str(p) for p in sweep["course"][:3]]
    code, df, err = _run([*paths, "--target-acc", "0.84", "--samples-per-epoch", "4000", *extra], capsys)
    assert code == 2 and df is None and err.strip().startswith(message)
