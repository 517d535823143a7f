"""Samples and steps to target as a function of the global batch (core.batch)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.batch import (
    BatchRun,
    anchored_batch_scaling,
    batch_scaling,
    fit_batch_scaling,
    measure_batch_run,
    measure_batch_runs,
    typed_batch_scaling,
)
from core.batch.batch import noise_batch_scaling
from core.batch.formulas import goodput, statistical_efficiency, steps_to_target
from core.batch.study import crossing_row
from core.datasets import DATA_DIR, batch_run_files
from core.errors import InputError
from core.logs import read_log, read_log_file
from core.logs.noise import read_gradient_noise
from core.targets import Target, accuracy_target

POLLUX = DATA_DIR / "pollux_traces"


def _runs(e_min: float, b_noise: float, batches, noise=None) -> list[BatchRun]:
    out = []
    for i, b in enumerate(batches):
        e = e_min * (1 + b / b_noise) * (1 + (noise[i] if noise is not None else 0.0))
        out.append(BatchRun(f"run-{b}.csv", float(b), True, e, e / b))
    return out


# ---------------------------------------------------------------- formulas on hand values
def test_efficiency_formula_on_hand_values():
    # B_noise = 1000: a batch of 1000 needs twice E_min (efficiency 1/2); 3000 four times (1/4)
    assert statistical_efficiency(1000, 1000) == 0.5
    assert statistical_efficiency(3000, 1000) == 0.25
    # relative to B0 = 1000: (1000 + 1000)/(1000 + 3000) = 0.5; and 1 at B = B0
    assert statistical_efficiency(3000, 1000, base_batch=1000) == 0.5
    assert statistical_efficiency(1000, 1000, base_batch=1000) == 1.0
    # no measured cost of batch size: every batch is fully efficient
    assert statistical_efficiency(10**6, float("inf")) == 1.0


def test_efficiency_is_pollux_gain_over_scale():
    # Pollux's code (goodput.py): scale = M/B0, gain = (var + sqr)/(var/scale + sqr), efficiency = gain/scale,
    # with B_noise = B0·var/sqr. B0 = 128, sqr = 2, var = 3: B_noise = 192; M = 512: scale 4,
    # gain = 5/2.75, efficiency = 5/11 = (192 + 128)/(192 + 512) = 320/704.
    sqr, var, b0, m = 2.0, 3.0, 128, 512
    scale = m / b0
    gain = (var + sqr) / (var / scale + sqr)
    assert statistical_efficiency(m, b0 * var / sqr, base_batch=b0) == pytest.approx(gain / scale, rel=1e-15)
    assert gain / scale == pytest.approx(5 / 11, rel=1e-15)


def test_steps_are_samples_over_batch_and_never_below_s_min():
    # E_min = 1e6, B_noise = 1000: S(1000) = 2e6/1000 = 2000; S(250) = 1.25e6/250 = 5000; S_min = 1000
    assert steps_to_target(1000, 1e6, 1000) == 2000.0
    assert steps_to_target(250, 1e6, 1000) == 5000.0
    model = typed_batch_scaling(1e6, 1000)
    assert model.s_min == 1000.0
    assert np.all(model.steps(np.geomspace(1, 1e7, 50)) > model.s_min)


def test_time_to_target_is_e_min_over_goodput():
    # 4000 samples/s at batch 3000, B_noise 1000: E(3000) = 4e6 samples take 1000 s; goodput 1000 → 1e6/1000
    model = typed_batch_scaling(1e6, 1000)
    assert model.samples(3000) / 4000.0 == model.e_min / goodput(4000.0, 3000, 1000) == 1000.0


def test_anchored_model_passes_through_its_point():
    m = anchored_batch_scaling(5000, 256, 1000)
    assert m.steps(256) == pytest.approx(5000, rel=1e-12)
    assert m.e_min == pytest.approx(5000 * 256 / (1 + 256 / 1000), rel=1e-12)


# ---------------------------------------------------------------- the fit
@pytest.mark.parametrize("e_min, b_noise", [(1e6, 2000.0), (2.5e7, 300.0), (4e4, 50_000.0)])
def test_fit_recovers_known_e_min_and_b_noise_from_noiseless_points(e_min, b_noise):
    model = fit_batch_scaling(_runs(e_min, b_noise, [64, 256, 1024, 4096, 16384]))
    assert model.e_min == pytest.approx(e_min, rel=1e-9)
    assert model.b_noise == pytest.approx(b_noise, rel=1e-9)
    assert model.mape_pct == pytest.approx(0, abs=1e-9)
    assert model.sigma_rel == pytest.approx(0, abs=1e-9)


def test_fit_with_seeded_noise_is_within_its_interval_for_any_seed():
    for seed in range(20):
        rng = np.random.default_rng(seed)
        runs = _runs(1e6, 2000.0, [64, 128, 256, 512, 1024, 2048, 4096, 8192], noise=rng.normal(0, 0.02, 8))
        model = fit_batch_scaling(runs, level=0.999)
        assert model.e_min_low <= 1e6 <= model.e_min_high, seed
        assert model.b_noise_low <= 2000 <= model.b_noise_high, seed


def test_fit_does_not_depend_on_the_order_of_runs():
    runs = _runs(1e6, 2000.0, [64, 256, 1024, 4096], noise=[0.03, -0.02, 0.01, 0.02])
    a, b = fit_batch_scaling(runs), fit_batch_scaling(runs[::-1])
    assert (a.e_min, a.b_noise, a.b_noise_high) == pytest.approx((b.e_min, b.b_noise, b.b_noise_high), rel=1e-9)


def test_two_runs_give_the_line_through_them_and_no_interval():
    model = fit_batch_scaling(_runs(1e6, 1000.0, [100, 1000]))
    assert model.b_noise == pytest.approx(1000, rel=1e-9)
    assert model.level is None and model.steps_interval(500) is None
    assert any("no interval" in f for f in model.flags)


def test_one_run_without_a_noise_scale_is_refused_saying_what_is_missing():
    with pytest.raises(InputError, match=r"expected runs of one job at two or more global batches that reached "
                                         r"the target; got 1 run\(s\) at 1 batch\(es\).*grad_sqr and grad_var"):
        batch_scaling(_runs(1e6, 1000.0, [256]))


def test_runs_that_never_reached_the_target_are_named_and_left_out():
    runs = _runs(1e6, 1000.0, [256]) + [BatchRun("big-4096.csv", 4096.0, False, note="never reached 0.93: left out")]
    with pytest.raises(InputError, match=r"big-4096\.csv \(never reached 0\.93: left out\) left out"):
        fit_batch_scaling(runs)


def test_prediction_interval_widens_away_from_the_data():
    runs = _runs(1e6, 2000.0, [128, 256, 512, 1024], noise=[0.02, -0.02, 0.01, -0.01])
    model = fit_batch_scaling(runs)
    low, high = model.steps_interval(np.array([512.0, 16384.0]))
    width = (high - low) / model.steps(np.array([512.0, 16384.0]))
    assert width[1] > width[0] > 0
    assert np.all(low <= model.steps([512.0, 16384.0])) and np.all(model.steps([512.0, 16384.0]) <= high)


# ---------------------------------------------------------------- measured runs
def test_pollux_trace_samples_to_target_are_iterations_times_batch():
    log = read_log_file(POLLUX / "cifar10" / "validation-128.csv", source="cifar10/validation-128.csv")
    run = measure_batch_run(log, target=accuracy_target(0.93), samples_per_epoch=50_000)
    frame = pd.read_csv(POLLUX / "cifar10" / "validation-128.csv")
    first = frame[frame["metric"] > 0.93].iloc[0]      # epoch 56: iteration 21874
    assert run.samples_to_target == first["iteration"] * 128 == 2_799_872
    assert run.steps_to_target == 21874 and run.epochs_to_target == pytest.approx(2_799_872 / 50_000)


def test_a_log_is_measured_once_per_question_and_each_question_gets_its_own_answer():
    log = read_log(b"progress,iteration,metric\n10,10,0.5\n20,20,0.91\n30,30,0.95\n", "job/validation-64.csv")
    first = measure_batch_run(log, target=accuracy_target(0.9), samples_per_epoch=640)
    assert measure_batch_run(log, target=accuracy_target(0.9), samples_per_epoch=640) is first        # remembered
    # another target, batch or epoch size is another measurement, never the remembered one
    assert measure_batch_run(log, target=accuracy_target(0.93), samples_per_epoch=640).samples_to_target == 30 * 64
    assert measure_batch_run(log, target=accuracy_target(0.9), global_batch=32).samples_to_target == 20 * 32
    assert measure_batch_run(log, target=accuracy_target(0.9), samples_per_epoch=320).epochs_to_target == 4.0
    # the same bytes read again are another log: measured afresh, to the same answer
    again = read_log(b"progress,iteration,metric\n10,10,0.5\n20,20,0.91\n30,30,0.95\n", "job/validation-64.csv")
    assert measure_batch_run(again, target=accuracy_target(0.9), samples_per_epoch=640) == first


def test_pollux_cifar10_samples_grow_about_2_3x_from_128_to_4096():
    logs = [read_log_file(p, source=n) for n, p in batch_run_files("pollux_cifar10")]
    runs = {r.global_batch: r for r in measure_batch_runs(logs, target=accuracy_target(0.93), samples_per_epoch=50_000)}
    assert runs[4096].samples_to_target / runs[128].samples_to_target == pytest.approx(2.29, abs=0.01)


def test_batches_given_in_file_order_override_and_must_match_the_logs():
    log = read_log(b"epoch,step,loss,acc\n1,10,1.0,0.5\n2,20,0.5,0.95\n", "run.csv")
    run = measure_batch_runs([log], target=accuracy_target(0.9), batches=[32])[0]
    assert (run.global_batch, run.samples_to_target, run.epochs_to_target) == (32.0, 640.0, 2.0)
    with pytest.raises(InputError, match=r"--batch: expected one global batch per log \(1\); got 2"):
        measure_batch_runs([log], target=accuracy_target(0.9), batches=[32, 64])
    with pytest.raises(InputError, match=r"run\.csv: expected the run's global batch; got none"):
        measure_batch_runs([log], target=accuracy_target(0.9))


def test_an_aborted_mllog_run_is_left_out_not_fitted():
    path = DATA_DIR / "mlperf_v3.0_resnet50" / "NVIDIA" / "dgxh100_n64_ngc23.04_mxnet" / "result_1.txt"
    run = measure_batch_run(read_log_file(path), target=accuracy_target(0.759))
    assert not run.reached and "aborted" in run.note and run.global_batch == 20480


# ---------------------------------------------------------------- gradient noise scale
def test_noise_scale_route_on_a_pollux_trace_matches_a_hand_computation():
    path = POLLUX / "cifar10" / "validation-128.csv"
    data = path.read_bytes()
    log = read_log(data, "cifar10/validation-128.csv")
    run = measure_batch_run(log, target=accuracy_target(0.93), samples_per_epoch=50_000)
    row = crossing_row(log, accuracy_target(0.93))
    model = noise_batch_scaling(run, read_gradient_noise(data, log.source), row=row, samples_per_epoch=50_000)
    frame = pd.read_csv(path)
    # B0 = 50000 / 391 (progress per epoch) = 128; B_noise = median of 128·var/sqr over rows 52..56
    window = frame.iloc[row - 5:row]
    expected = float(np.median(128 * window["grad_var"] / window["grad_sqr"]))
    assert row == 56 and model.b_noise == pytest.approx(expected, rel=1e-12)
    assert model.e_min == pytest.approx(2_799_872 / (1 + 128 / expected), rel=1e-12)
    assert model.b_noise_low <= model.b_noise <= model.b_noise_high and model.level is None


def test_one_run_with_a_noise_scale_column_is_enough():
    data = b"progress,iteration,metric,noise_scale\n10,10,0.5,800\n20,20,0.8,1000\n30,30,0.95,1200\n"
    log = read_log(data, "job/validation-500.csv")
    runs = measure_batch_runs([log], target=accuracy_target(0.9))
    noise = {log.source: read_gradient_noise(data, log.source)}
    model = batch_scaling(runs, noise=noise, rows={log.source: crossing_row(log, accuracy_target(0.9))})
    assert model.method == "noise-scale" and model.b_noise == 1000.0     # median of 800, 1000, 1200
    assert model.steps(500) == pytest.approx(runs[0].steps_to_target, rel=1e-12)


# ---------------------------------------------------------------- real reference data (issue 11 measures)
def test_pollux_imagenet_from_the_three_smallest_batches_predicts_the_others_within_15_pct():
    logs = [read_log_file(p, source=n) for n, p in batch_run_files("pollux_imagenet")]
    runs = sorted(measure_batch_runs(logs, target=accuracy_target(0.74), samples_per_epoch=1_281_167),
                  key=lambda r: r.global_batch)
    model = fit_batch_scaling(runs[:3])
    errors = [abs(model.samples(r.global_batch) / r.samples_to_target - 1) for r in runs[3:]]
    assert np.mean(errors) < 0.15 and max(errors) < 0.05      # measured: 1.4 % mean, 2.4 % worst


def test_mlperf_fit_on_batches_up_to_16384_predicts_20480_and_32256_within_10_pct():
    logs = [read_log_file(p) for _, p in batch_run_files("mlperf")]
    runs = measure_batch_runs(logs, target=accuracy_target(0.759))
    model = fit_batch_scaling([r for r in runs if r.global_batch <= 16384])
    assert len(model.used) == 22    # 11 systems × 2 seeds at 1,632 to 16,384; the aborted run is at 20,480
    for batch, measured in ((20480, 50), (32256, 56)):
        assert model.epochs(batch) == pytest.approx(measured, rel=0.10)


def test_samples_to_target_count_a_partial_last_batch_once():
    # 4,000 samples at batch 64: 63 steps an epoch, the last of 32 samples; reached after 2 epochs = 8,000 samples
    log = read_log(b"progress,iteration,metric\n63,63,0.5\n126,126,0.9\n", "job/validation-64.csv")
    run = measure_batch_run(log, target=accuracy_target(0.85), samples_per_epoch=4000)
    assert run.samples_to_target == 8000.0 and run.steps_to_target == 126.0 and run.epochs_to_target == 2.0
    assert measure_batch_run(log, target=accuracy_target(0.85)).samples_to_target == 126 * 64   # N unknown: steps x B


def test_a_run_is_measured_against_a_target_never_a_bare_number():
    log = read_log(b"progress,iteration,metric\n10,10,0.5\n20,20,0.91\n", "job/validation-64.csv")
    with pytest.raises(InputError, match=r"job/validation-64\.csv: expected a Target \(acc>=0\.93, val_loss<=3\.28\); "
                                         r"got 0\.9\."):
        measure_batch_run(log, target=0.9)
    never = measure_batch_run(log, target=accuracy_target(0.95))
    assert not never.reached and never.note == "never reached 0.95: left out"
    loss = measure_batch_run(read_log(b"step,loss\n1,4.0\n2,3.0\n", "lm-8.csv"), target=Target("loss", "<=", 2.0))
    assert not loss.reached and loss.note == "never reached loss<=2: left out"
