"""A batch fit that knows its range (issue 23, parts 1, 6, 8): resolution, extrapolation, learning rate, _val logs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import stdtrit

from core.batch import EXTRAPOLATION_SIGMA, BatchRun, batch_study, fit_batch_scaling, measure_batch_run
from core.batch.batch import learning_rate_cap
from core.logs import read_log
from core.targets import accuracy_target


def _line(points, resolution=None, lrs=None):
    """BatchRuns at (batch, samples), each with a resolution and a learning rate."""
    return [BatchRun(f"run-{b}", float(b), True, float(e), float(e) / b, resolution=resolution,
                     learning_rate=None if lrs is None else lrs[i]) for i, (b, e) in enumerate(points)]


# ---------------------------------------------------------------- part 6: runs on an exact line
def test_three_whole_epoch_runs_on_an_exact_line_keep_an_interval_from_their_resolution():
    # 10, 15 and 20 epochs of 1,000 samples at batches 100, 200, 300: exactly E = 5,000 + 50·B
    model = fit_batch_scaling(_line([(100, 10_000), (200, 15_000), (300, 20_000)], resolution=1000))
    assert (model.e_min, model.b_noise) == pytest.approx((5000, 100), rel=1e-9)
    # one epoch is 10 %, 6.67 %, 5 % of the samples: sqrt(mean(0.1², 0.0667², 0.05²)/12) = 0.021695
    floor = math.sqrt((0.1 ** 2 + (1 / 15) ** 2 + 0.05 ** 2) / 3 / 12)
    assert model.sigma_floor == pytest.approx(floor, rel=1e-9) and model.sigma_rel == pytest.approx(floor, rel=1e-9)
    assert floor == pytest.approx(0.021695, abs=1e-6)
    low, high = model.samples_interval(200.0)
    assert high - low > 0 and low < 15_000 < high
    assert model.b_noise_low < 100 < model.b_noise_high       # B_noise = 100 (100 to 100) no more
    assert any("within their resolution" in f for f in model.flags)


def test_intervals_are_multiplicative_and_never_start_at_zero():
    model = fit_batch_scaling(_line([(16, 50_000), (32, 70_000), (64, 60_000)]))    # a poor, wide fit
    low, high = model.samples_interval(np.array([16.0, 48.0]))
    assert np.all(low > 0)
    mid = model.samples(np.array([16.0, 48.0]))
    assert high / mid == pytest.approx(mid / low, rel=1e-9)        # symmetric in log inside the runs
    # beyond them samples never fall as the batch grows: the low end stays at batch 64's
    assert model.samples_interval(1024.0)[0] == pytest.approx(model.samples_interval(64.0)[0], rel=1e-12)


# ---------------------------------------------------------------- part 8: extrapolation and degenerate fits
def test_a_prediction_past_the_largest_batch_is_flagged_and_widened_by_the_stated_rule():
    model = fit_batch_scaling(_line([(100, 10_000), (200, 15_000), (300, 20_000)], resolution=1000))
    assert [model.region(b) for b in (200, 250, 600, 50)] == ["measured", "interpolated", "extrapolated",
                                                              "extrapolated"]
    assert model.extrapolation_sigma(300 * math.e) == pytest.approx(EXTRAPOLATION_SIGMA, rel=1e-12)
    assert model.extrapolation_sigma(250) == 0.0
    # at 600 the relative half-width adds 0.15·ln 2 in quadrature to what the line and the scatter give
    c = np.asarray(model.cov)
    line = (c[0, 0] + 2 * 600 * c[0, 1] + 600 ** 2 * c[1, 1]) / model.samples(600) ** 2
    t = stdtrit(1, 0.9)
    half = t * math.sqrt(line + model.sigma_rel ** 2 + (0.15 * math.log(2)) ** 2)
    low, high = model.samples_interval(600.0)
    assert math.log(model.samples(600) / low) == pytest.approx(half, rel=1e-9)
    # ... and its top is held where steps would stop falling: batch 300's upper end × 600/300
    assert math.log(high / model.samples(600)) < half
    assert high == pytest.approx(model.samples_interval(300.0)[1] * 2, rel=1e-12)
    rows = model.table([250, 600])
    assert [r["region"] for r in rows[-2:]] == ["interpolated", "extrapolated"]
    assert rows[-1]["note"].startswith("extrapolated 2x beyond the measured batch 300")


def test_small_batches_within_noise_say_b_noise_is_not_determined():
    # samples to target at 16, 32, 64 within 2 % of each other: B_noise follows the noise
    model = fit_batch_scaling(_line([(16, 57_344), (32, 56_000), (64, 58_000)]))
    assert model.b_noise_high == math.inf
    assert any(f.startswith("B_noise is not determined") for f in model.flags)


# ---------------------------------------------------------------- part 8: the learning rate
def test_a_capped_learning_rate_is_detected_and_those_runs_are_left_out_of_the_fit():
    # linear scaling 0.01·B/16 up to 0.08 at batch 128, then capped: 256 and 512 need twice the curve's samples
    batches = [16, 32, 64, 128, 256, 512]
    lrs = [0.01, 0.02, 0.04, 0.08, 0.08, 0.08]
    curve = [1e5 * (1 + b / 100) for b in batches]
    samples = [e * (2 if b >= 256 else 1) for b, e in zip(batches, curve)]
    runs = _line(list(zip(batches, samples)), lrs=lrs)
    assert learning_rate_cap(runs) == 256
    model = fit_batch_scaling(runs)
    assert (model.e_min, model.b_noise) == pytest.approx((1e5, 100), rel=1e-9)   # from 16 to 128 only
    assert model.lr_cap_batch == 256
    assert sorted(r.global_batch for r in model.used) == [16, 32, 64, 128]
    assert all("capped" in r.note for r in model.runs if r.global_batch >= 256)
    assert "learning rate stopped growing" in model.note(1024)
    assert model.note(100) == ""


def test_capped_runs_keep_their_measured_values_in_the_table_marked_out_of_the_fit():
    # issue 36: a capped run reached the target; its value is shown (in_fit False, the reason in the note)
    batches, lrs = [16, 32, 64, 128, 256], [0.01, 0.02, 0.04, 0.08, 0.08]
    runs = _line([(b, 1e5 * (1 + b / 100) * (2 if b == 256 else 1)) for b in batches], lrs=lrs)
    model = fit_batch_scaling(runs)
    capped = [r for r in model.runs if r.global_batch == 256]
    assert [(r.reached, r.in_fit) for r in capped] == [(True, False)]
    assert [r.global_batch for r in model.measured] == batches and len(model.used) == 4
    rows = model.table([512])
    assert [(r["global_batch"], r["in_fit"]) for r in rows] == [(16, True), (32, True), (64, True), (128, True),
                                                               (256, False), (512.0, None)]
    assert rows[4]["samples_to_target"] == pytest.approx(2 * 1e5 * (1 + 256 / 100))
    assert rows[4]["note"] == ("learning rate 0.08 capped (batch 256 and larger): not on the tuned curve, left out of "
                               "the fit")
    assert rows[0]["note"] == ""


def test_no_cap_on_a_constant_or_unlogged_learning_rate():
    assert learning_rate_cap(_line([(16, 1), (32, 2), (64, 3)], lrs=[0.1, 0.1, 0.1])) is None
    assert learning_rate_cap(_line([(16, 1), (32, 2), (64, 3)])) is None
    assert learning_rate_cap(_line([(16, 1), (32, 2), (64, 3)], lrs=[0.1, 0.2, 0.3])) is None


def test_the_learning_rate_is_read_from_a_logs_lr_column():
    log = read_log(b"epoch, step, loss, acc, lr\n1, 1, 2.0, 0.5, 0.05\n1, 2, 1.5, 0.6, 0.1\n2, 3, 1.0, 0.95, 0.1\n"
                   b"2, 4, 0.9, 0.96, 0.08\n", "cnn_CPU-16.csv")
    assert measure_batch_run(log, target=accuracy_target(0.9)).learning_rate == 0.1


# ---------------------------------------------------------------- part 1: course _val logs
def _val_log(batch: int, name: str = "cnn_CPU_val") -> bytes:
    rows, step = ["epoch, step, loss, acc"], 0
    for epoch, acc in ((1, 0.5), (2, 0.8), (3, 0.93), (4, 0.95)):
        for _ in range(4):                          # four validation batches per epoch
            step += 1
            rows.append(f"{epoch}, {step}, 1.0, {acc}")
    return ("\n".join(rows) + "\n").encode()


def test_a_validation_log_counts_epochs_times_samples_per_epoch_not_validation_steps():
    log = read_log(_val_log(16), "cnn_CPU_val-16.csv")
    run = measure_batch_run(log, target=accuracy_target(0.92), samples_per_epoch=4096)
    # passes 0.92 at the end of epoch 3 (validation step 12): 3 × 4,096 = 12,288 samples, not 12 × 16 = 192
    assert (run.samples_to_target, run.steps_to_target, run.epochs_to_target) == (12_288, 768, 3)
    assert run.resolution == 4096


def test_a_validation_log_without_samples_per_epoch_is_left_out_saying_why():
    run = measure_batch_run(read_log(_val_log(16), "cnn_CPU_val-16.csv"), target=accuracy_target(0.92))
    assert not run.reached and "--samples-per-epoch" in run.note


def test_validation_logs_at_three_batches_give_the_same_samples_whatever_the_batch():
    logs = [read_log(_val_log(b), f"cnn_CPU_val-{b}.csv") for b in (16, 64, 256)]
    study = batch_study(logs, target=accuracy_target(0.92), samples_per_epoch=4096)
    assert [r.samples_to_target for r in study.runs] == [12_288] * 3      # 3 epochs each
    assert study.model.b_noise == math.inf
