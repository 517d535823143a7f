"""Samples to a falling target: power-law extrapolation, prior from other runs, backtest-weighted posterior."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.logs.reader import read_log
from core.prediction.progress import predict_progress
from core.prediction.progress_estimates import ProgressCache, prior_progress
from core.prediction.progress_measure import observed_count, progress_to_target
from core.targets import Target

LOSS = Target("loss", "<=", 2.5)


def power_law_log(name: str, *, a: float = 30.0, e: float = 2.0, alpha: float = 0.5, steps: int = 60,
                  noise: float = 0.0, seed: int = 0) -> object:
    """Evaluations of L = e + a·(100·step)^(-alpha) every step (100 samples a step)."""
    rng = np.random.default_rng(seed)
    rows = "".join(f"{s},{e + a * (100 * s) ** -alpha * (1 + noise * rng.standard_normal()):.6f}\n"
                   for s in range(1, steps + 1))
    return read_log(("step,loss\n" + rows).encode(), name)


def test_progress_to_target_is_the_first_evaluation_at_target():
    log = power_law_log("a.csv")
    # 2 + 30/sqrt(100 s) <= 2.5  <=>  s >= 36
    assert progress_to_target(log, LOSS) == 36.0


def test_the_extrapolation_inverts_the_power_law_from_a_quarter_of_the_run():
    f = predict_progress(power_law_log("a.csv"), target=LOSS, observe=0.25)
    assert f.n_observed == 15 and f.status == "predicted"
    assert f.extrapolation.value == pytest.approx(36.0, rel=1e-3)
    assert f.extrapolation.low <= 36.0 <= f.extrapolation.high


def test_a_run_that_met_its_target_says_so_whatever_the_direction():
    f = predict_progress(power_law_log("a.csv"), target=LOSS)
    assert (f.status, f.posterior.value, f.method) == ("reached", 36.0, "measured")


def test_the_prior_is_the_median_of_the_other_runs_with_an_interval_that_widens_with_few_runs():
    others = [power_law_log(f"o{i}.csv", a=a) for i, a in enumerate((28.0, 30.0, 32.0))]
    truth = [math.ceil((a / 0.5) ** 2 / 100) for a in (28.0, 30.0, 32.0)]   # 32, 36, 41
    assert [progress_to_target(o, LOSS) for o in others] == truth
    p = prior_progress(power_law_log("new.csv"), others, LOSS)
    assert p.value == pytest.approx(36.0)
    assert p.low < 32 and p.high > 41       # a prediction interval, wider than the three runs' range


def test_the_posterior_learns_from_the_backtest_which_source_to_trust():
    # six runs whose curves differ (a) but whose first quarter tells each one's own a exactly:
    # the extrapolation is right and the prior is off by the spread between runs
    runs = [power_law_log(f"r{a}.csv", a=a) for a in (24.0, 27.0, 30.0, 33.0, 36.0, 39.0)]
    f = predict_progress(runs[0], runs[1:], LOSS, observe=0.25)
    assert f.prior_weight is not None and f.prior_weight < 0.2
    assert f.method == "extrapolation"
    assert f.posterior.value == pytest.approx(progress_to_target(runs[0], LOSS), rel=0.05)



def test_a_shared_cache_gives_the_same_leave_one_out_and_does_each_runs_work_once():
    # every run reaches 2.5 within its 60 steps: (a / 0.5)² / 100 <= 57.8
    runs = [power_law_log(f"r{a}.csv", a=a) for a in (24.0, 27.0, 30.0, 33.0, 36.0, 38.0)]
    cache = ProgressCache()
    for i, log in enumerate(runs):
        others = runs[:i] + runs[i + 1:]
        plain = predict_progress(log, others, LOSS, observe=0.25)
        cached = predict_progress(log, others, LOSS, observe=0.25, cache=cache)
        assert cached == plain
    # six runs: one progress to target and one cut extrapolation (15 of 60 evaluations) each, whatever the
    # number of predictions that backtested them
    counts = cache.counts()
    assert (counts["truth"], counts["extrapolation"]) == (6, 6)
    assert cache.truth(runs[2], LOSS) == 36.0 == progress_to_target(runs[2], LOSS)



def test_a_run_measured_at_the_samples_of_the_others_lies_inside_the_interval_not_one_ulp_beside_it():
    # five runs that all first meet 2.5 at step 41 ((32 / 0.5)² / 100 = 40.96), as MLPerf LoRA runs meet their
    # target at the same evaluation: the backtest errors are exactly 0, the interval is [41, 41]
    runs = [power_law_log(f"same{i}.csv", a=32.0) for i in range(5)]
    f = predict_progress(runs[0], runs[1:], LOSS, observe=3)       # 3 evaluations: no extrapolation
    assert not f.extrapolation.available and f.prior.value == 41.0
    assert f.posterior.value == 41.0 and f.posterior.low <= 41.0 <= f.posterior.high


def test_without_finished_runs_there_is_no_prior_and_it_is_said():
    f = predict_progress(power_law_log("a.csv"), [], LOSS, observe=0.25)
    assert not f.prior.available and "no other run" in f.prior.description
    assert f.method == "extrapolation"


def test_a_floor_above_the_target_is_never_reached():
    f = predict_progress(power_law_log("a.csv", e=2.6), target=LOSS, observe=0.5)
    assert f.extrapolation.value == math.inf and not f.extrapolation.available


def test_observed_count():
    assert observed_count(14, 0.25) == 4 and observed_count(14, None) == 14 and observed_count(2, 0.1) == 1


@pytest.mark.parametrize("source, n", [("tests/data/sweep/pollux/resnet8/validation-64.csv", 10),
                                       ("tests/data/sweep/pollux/resnet8/validation-128.csv", 6),
                                       ("tests/data/sweep/mllog/resnet8_CPU-64.txt", 10)])
def test_the_extrapolations_interval_always_contains_its_own_estimate(source, n):
    """A floor barely below the target skews the parameter draws: their 10 % quantile lay above the best fit
    (78,858 samples with an interval of 93,535 – never on the first file).  The interval starts at the best
    fit then, and says why."""
    from pathlib import Path

    from core.logs.reader import read_log_file
    from core.targets import parse_target

    root = Path(__file__).resolve().parents[3]
    log = read_log_file(root / source)
    estimate = ProgressCache().extrapolation(log, parse_target("acc>=0.92"), n, level=0.8)
    assert math.isfinite(estimate.value)
    assert estimate.low <= estimate.value <= estimate.high
    assert estimate.low == estimate.value
    assert "lower quantile lay above the best fit" in estimate.description


def _trainer_log_with_periodic_evaluations() -> object:
    """A Trainer log: the training loss every 50 steps, eval_loss = 1.8 + 2·exp(−s/800) every 250, 1,000 steps
    an epoch. The first evaluation at eval_loss <= 2.0 is at step 2,000 (1.9642); epoch 2's mean is above it."""
    import json

    history = [{"epoch": s / 1000, "step": s, "loss": 1.7 + 2 * math.exp(-s / 700), "learning_rate": 5e-5}
               for s in range(50, 3001, 50)]
    history += [{"epoch": s / 1000, "step": s, "eval_loss": 1.8 + 2 * math.exp(-s / 800)}
                for s in range(250, 3001, 250)]
    history.sort(key=lambda h: (h["step"], "eval_loss" in h))
    state = {"global_step": 3000, "max_steps": 3000, "num_train_epochs": 3, "log_history": history}
    return read_log(json.dumps(state).encode(), "trainer_state.json")


def test_an_evaluation_metric_counts_at_its_first_evaluation_at_target_under_every_criterion():
    from core.runs import find_target_crossing

    log = _trainer_log_with_periodic_evaluations()
    target = Target("eval_loss", "<=", 2.0)
    # evaluations every 250 steps, several an epoch: each is compared, never its epoch's mean (3,000 before)
    assert [find_target_crossing(log, target, criterion=c).step for c in ("epoch", "first-row")] == [2000.0, 2000.0]
    assert progress_to_target(log, target) == 2000.0
    f = predict_progress(log, target=target, observe=0.5)
    assert f.n_observed == 6 and f.observed_progress == 1500.0
    # the extrapolation of evaluations 250..1,500 lands within one evaluation spacing (250 steps) of the first
    # evaluation at target (the curve itself crosses 2.0 at 800·ln 10 = 1,842)
    assert abs(f.extrapolation.value - 2000.0) < 250.0


def test_a_per_step_accuracy_log_counts_in_epochs_as_the_logs_page_does():
    from core.runs import find_target_crossing

    rows = "".join(f"{e},{s},{2 / e:.4f},{min(0.99, 0.5 + 0.04 * e + 0.05 * (s % 2)):.4f}\n"
                   for e in range(1, 13) for s in range(1, 11))
    log = read_log(("epoch,step,loss,acc\n" + rows).encode(), "resnet8_V100.csv")
    target = Target("acc", ">=", 0.9)
    # the epoch's final running accuracy (its last row, s = 10: no +0.05) first reaches 0.9 at epoch 10 (step 100);
    # a single row (s odd) reaches it in epoch 9
    assert find_target_crossing(log, target, criterion="first-row").epoch == 9
    assert progress_to_target(log, target) == find_target_crossing(log, target).step == 100.0
    f = predict_progress(log, target=target, observe=0.25)
    assert f.unit == "steps" and f.n_observed == 3 and f.observed_progress == 30.0    # three epochs of twelve


def test_a_course_validation_log_counts_in_epochs_never_in_validation_batches():
    train = "".join(f"{e},{s},{2 / e:.4f},{0.5 + 0.04 * e:.4f}\n" for e in range(1, 13) for s in range(1, 11))
    val = "".join(f"{e},{s},{2 / e:.4f},{0.5 + 0.035 * e + 0.001 * k:.4f}\n"
                  for e in range(1, 13) for s in range(1, 4) for k in (0,))
    header = "epoch,step,loss,acc\n"
    logs = {name: read_log((header + (val if "_val" in name else train)).encode(), name)
            for name in ("resnet8_V100-512.csv", "resnet8_V100-512_val.csv",
                         "resnet14_V100-512_val.csv", "resnet20_V100-512_val.csv")}
    target = Target("acc", ">=", 0.85)
    own = logs["resnet8_V100-512_val.csv"]
    # 0.5 + 0.035·e >= 0.85 at epoch 10; its steps (three validation batches an epoch, 30 at epoch 10) never count
    assert progress_to_target(own, target) == 10.0
    f = predict_progress(own, list(logs.values()), target, observe=0.25)
    assert f.unit == "epochs" and f.observed_progress == 3.0
    # the prior pools the other validation logs (epochs), never the training log (samples at batch 512)
    assert f.prior.value == 10.0 and "2 other runs" in f.prior.description
    assert predict_progress(logs["resnet8_V100-512.csv"], list(logs.values()), target, observe=0.25).unit == "samples"


def _trainer(history: list[dict]) -> object:
    import json

    return read_log(json.dumps({"log_history": history}).encode(), "trainer_state.json")


def test_an_evaluation_on_every_logged_row_is_still_an_evaluation_never_an_epoch_mean():
    """eval_steps = logging_steps: eval_loss fills every row; 2.50 at step 20 meets eval_loss <= 2.5 there
    (its epoch's mean, 2.375 with the later evaluations, would move it to step 40)."""
    from core.runs import find_target_crossing

    history = [{"epoch": s / 40, "step": s, "loss": 3 - s / 40, "eval_loss": 3 - s / 40} for s in range(10, 81, 10)]
    log = _trainer(history)
    target = Target("eval_loss", "<=", 2.5)
    assert find_target_crossing(log, target).step == 20.0 == progress_to_target(log, target)


def test_a_one_epoch_fine_tune_is_evaluated_at_every_row_so_it_can_be_extrapolated():
    history = [{"epoch": s / 100, "step": s, "loss": 2.0 + 30 * (100 * s) ** -0.5} for s in range(1, 101)]
    log = _trainer(history)
    f = predict_progress(log, target=LOSS, observe=0.25)
    assert f.n_observed == 25 and f.extrapolation.available       # 100 rows, not 1 epoch
    assert f.extrapolation.value == pytest.approx(36.0, rel=0.02)   # 2 + 30/sqrt(100 s) <= 2.5 at s = 36


def test_an_evaluation_on_a_step_without_a_token_count_keeps_its_place_by_interpolation():
    """The evaluation at step 75 has no training record, so no num_input_tokens_seen: its tokens are
    interpolated between steps 70 and 80 (2,000 a step): 150,000, where the run met the target."""
    history = [{"epoch": s / 200, "step": s, "loss": 3.0, "num_input_tokens_seen": 2000 * s}
               for s in range(10, 201, 10)]
    history += [{"epoch": s / 200, "step": s, "eval_loss": 3.0 - s / 100} for s in (25, 50, 75, 100, 125)]
    history.sort(key=lambda h: h["step"])
    log = _trainer(history)
    target = Target("eval_loss", "<=", 2.25)
    assert progress_to_target(log, target) == 150_000.0
    f = predict_progress(log, target=target)
    assert f.status == "reached" and f.posterior.value == 150_000.0


def test_the_showcase_is_a_run_of_the_pages_metric_that_met_its_target_after_its_first_quarter():
    from core.prediction.progress_measure import progress_showcase

    early = power_law_log("early.csv", a=5.0)        # 2 + 5/sqrt(100 s) <= 2.5 at s = 1: met at once
    late = power_law_log("late.csv")                 # at s = 36 of 60: after the first quarter
    never = power_law_log("never.csv", e=2.6)        # its floor lies above the target
    acc = read_log(b"epoch,step,loss,acc\n1,1,2,0.5\n2,1,1,0.95\n", "acc.csv")
    assert progress_showcase([acc, never, early, late], LOSS, "loss").source == "late.csv"
    assert progress_showcase([never, early, acc], LOSS, "loss").source == "early.csv"
    assert progress_showcase([never], LOSS, "loss").source == "never.csv"
    assert progress_showcase([], LOSS) is None
