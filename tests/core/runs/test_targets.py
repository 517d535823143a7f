"""Where a run passed its target, and where a fitted curve reaches a loss threshold."""

from __future__ import annotations

import numpy as np
import pytest

from core.curves import fit_curve, optimus_loss
from core.errors import InputError
from core.logs.reader import read_log
from core.runs.targets import TargetCrossing, find_target_crossing, predict_step_at_loss
from core.targets import accuracy_target

# Epoch 1: running acc 0.95 on the first batch (one lucky batch), 0.80 at the end.
# Epoch 2: 0.93 first row, 0.91 at the end. Epoch 3: 0.90 first row, 0.94 at the end.
LOG = b"""epoch, step, loss, acc
1, 1, 2.0, 0.95
1, 2, 1.0, 0.85
1, 3, 0.9, 0.80
2, 1, 0.8, 0.93
2, 2, 0.7, 0.92
2, 3, 0.6, 0.91
3, 1, 0.5, 0.90
3, 2, 0.4, 0.92
3, 3, 0.3, 0.94
"""


def test_epoch_level_criterion_uses_the_epochs_final_running_accuracy():
    c = find_target_crossing(read_log(LOG, "r.csv"), accuracy_target(0.92), criterion="epoch")
    # epoch ends: 0.80, 0.91, 0.94 -> epoch 3; its last step (3-1)*3 + 3 = 9; mean loss (0.5+0.4+0.3)/3
    assert (c.reached, c.epoch, c.step, c.acc) == (True, 3, 9.0, 0.94)
    assert c.loss == pytest.approx(0.4)


def test_first_row_criterion_fires_on_the_first_lucky_batch():
    c = find_target_crossing(read_log(LOG, "r.csv"), accuracy_target(0.92), criterion="first-row")
    assert (c.epoch, c.step, c.loss, c.acc) == (1, 1.0, 2.0, 0.95)


def test_meeting_the_target_includes_equality():
    # acc>=0.94 is met by an epoch that ends at exactly 0.94; 0.9401 is not
    assert find_target_crossing(read_log(LOG, "r.csv"), accuracy_target(0.94), criterion="epoch").reached
    assert not find_target_crossing(read_log(LOG, "r.csv"), accuracy_target(0.9401), criterion="epoch").reached


def test_never_reached_and_no_accuracy():
    assert not find_target_crossing(read_log(LOG, "r.csv"), accuracy_target(0.99)).reached
    c = find_target_crossing(read_log(b"step,loss\n1,2\n2,1\n3,0.5\n", "r.csv"), accuracy_target(0.92))
    assert not c.reached and c.note == "no accuracy column"


def test_epoch_trace_crossing_is_the_first_epoch_above_target():
    trace = b"progress,iteration,metric,grad_sqr,grad_var\n391,390,0.5,1,1\n782,781,0.91,1,1\n1173,1171,0.93,1,1\n"
    c = find_target_crossing(read_log(trace, "cifar10/validation-128.csv"), accuracy_target(0.92))
    assert (c.epoch, c.step, c.acc) == (3, 1171.0, 0.93)


def test_unknown_epochs_fall_back_to_first_row_and_say_so():
    log = read_log(b"Wall time,Step,Value\n1,10,0.5\n2,20,0.95\n", "tag-acc.csv")
    c = find_target_crossing(log, accuracy_target(0.92))
    assert c.criterion == "first-row" and "epochs unknown" in c.note and c.step == 20


@pytest.mark.parametrize("bad,msg", [(92, "Did you mean 0.92"), (0, r"expected a finite number in \(0, 1\)"),
                                     (1.0, "expected a finite number in"), ("0.92", r"got '0.92' \(str\)")])
def test_target_acc_is_validated(bad, msg):
    with pytest.raises(InputError, match=msg):
        accuracy_target(bad)


def test_a_crossing_takes_a_target_never_a_bare_number():
    with pytest.raises(InputError, match=r"crossing: expected a Target \(acc>=0.92, val_loss<=3.28\); got 0.92"):
        TargetCrossing(0.92, "epoch", False)


def test_predicted_step_and_epoch_hand_computation():
    k = np.arange(1, 3001.0)
    fit = fit_curve(k, optimus_loss(k, 0.001, 1.0, 0.1))
    p = predict_step_at_loss(fit, 0.6, steps_per_epoch=391)
    # k* = (1/(0.6 - 0.1) - 1)/0.001 = 1000; epoch = ceil(1000/391) = 3
    assert p.reachable and p.step == pytest.approx(1000.0, rel=1e-6) and p.epoch == 3


def test_unreachable_when_threshold_is_at_or_below_the_floor():
    k = np.arange(1, 3001.0)
    fit = fit_curve(k, optimus_loss(k, 0.001, 1.0, 0.1))
    p = predict_step_at_loss(fit, 0.08)
    assert not p.reachable and p.step is None
    assert p.reason.startswith("unreachable: the fitted floor b2 = 0.1")


def test_interval_from_the_covariance_brackets_the_step_and_shrinks_with_less_noise():
    k = np.arange(1, 3001.0)
    widths = []
    for noise in (0.02, 0.08):
        y = optimus_loss(k, 0.001, 1.0, 0.1) + np.random.default_rng(4).normal(0, noise, k.size)
        p = predict_step_at_loss(fit_curve(k, y), 0.3, steps_per_epoch=100, level=0.8)
        assert p.step_low < p.step < p.step_high and p.level == 0.8
        assert "parameter covariance" in p.interval_method
        widths.append(p.step_high - p.step_low)
        again = predict_step_at_loss(fit_curve(k, y), 0.3, steps_per_epoch=100, level=0.8)
        assert (again.step_low, again.step_high) == (p.step_low, p.step_high)  # seeded
    assert widths[0] < widths[1]
    # true step (1/(0.3-0.1) - 1)/0.001 = 4000 lies within a few interval widths
    assert abs(p.step - 4000) < 3 * widths[1]


def test_a_trainer_eval_accuracy_counts_at_its_first_evaluation_at_target_not_its_epochs_last():
    """eval_accuracy fills the acc role of a Trainer log; it is a whole evaluation, not a running average:
    two evaluations an epoch (steps 20 and 40 of epoch 1), 55 % at step 20."""
    import json

    from core.logs import read_log
    from core.runs import find_target_crossing
    from core.targets import Target

    history = [{"epoch": s / 40, "step": s, "loss": 2 - s / 100} for s in range(10, 81, 10)]
    history += [{"epoch": s / 40, "step": s, "eval_accuracy": 50 + s / 4} for s in (20, 40, 60, 80)]
    log = read_log(json.dumps({"log_history": history}).encode(), "trainer_state.json")
    for criterion in ("epoch", "first-row"):
        c = find_target_crossing(log, Target("acc", ">=", 0.55), criterion=criterion)
        assert (c.step, c.value) == (20.0, 0.55), criterion


def test_an_evaluation_column_of_a_plain_epoch_step_csv_counts_every_evaluation():
    # epoch, step, loss and an eval_accuracy logged twice an epoch (steps 5, 10, 15, ...: 0.5 + 0.01·step);
    # the header reads as the course format, but the column is named as an evaluation: the first evaluation
    # at 0.75 is at step 25, in the middle of epoch 3, not at the epoch's last evaluation (step 30)
    rows = ["epoch,step,loss,eval_accuracy"]
    for k in range(1, 51):
        rows.append(f"{(k - 1) // 10 + 1},{k},{2.0 / k:.4f}," + (f"{0.5 + 0.01 * k:.3f}" if k % 5 == 0 else ""))
    log = read_log(("\n".join(rows) + "\n").encode(), "run.csv")
    assert log.fmt == "course" and log.roles.acc == "eval_accuracy"
    crossing = find_target_crossing(log, accuracy_target(0.75))
    assert crossing.step == 25.0 and crossing.epoch == 3


def test_the_epoch_a_run_is_still_in_is_not_yet_an_evaluation():
    # a course per-step log, 10 steps an epoch: 9 whole epochs whose running accuracy ends at 0.80 + 0.01·e,
    # then 3 steps of epoch 10 at a lucky 0.95 (the running accuracy over 3 batches)
    def log_of(steps_in_last: int):
        rows = ["epoch,step,loss,acc"]
        for e in range(1, 11):
            for s in range(1, (11 if e < 10 else steps_in_last + 1)):
                acc = 0.95 if e == 10 else 0.80 + 0.01 * e * s / 10
                rows.append(f"{e},{(e - 1) * 10 + s},{2.0 / e:.3f},{acc:.4f}")
        return read_log(("\n".join(rows) + "\n").encode(), "resnet8_V100.csv")

    running = log_of(3)
    assert any(f.startswith("partial last epoch (3 of 10") for f in running.flags)
    assert not find_target_crossing(running, accuracy_target(0.9)).reached        # best whole epoch: 0.89 (epoch 9)
    finished = log_of(10)                                        # epoch 10 done: its running accuracy counts
    crossing = find_target_crossing(finished, accuracy_target(0.9))
    assert crossing.epoch == 10 and crossing.step == 100.0


def test_a_finished_log_that_keeps_every_50th_step_is_not_cut_short():
    # 391 steps an epoch, the accuracy logged every 50 steps (the last logged step of epoch 6 is 2,300, 46
    # before its end): the epoch is finished, not partial, and its running accuracy 0.92 counts
    rows = ["step,epoch,loss,acc"]
    for k in range(50, 6 * 391 + 1, 50):
        e = -(-k // 391)
        rows.append(f"{k},{e},{2.0 / e:.4f},{0.80 + 0.02 * e:.4f}")
    log = read_log(("\n".join(rows) + "\n").encode(), "run.csv")
    assert not any("partial" in f for f in log.flags)
    crossing = find_target_crossing(log, accuracy_target(0.91))
    assert crossing.reached and crossing.epoch == 6 and crossing.step == 2300.0


def test_an_eval_column_of_a_val_file_is_still_an_evaluation():
    # the plain epoch,step,loss,eval_accuracy CSV above, named as a validation file: the same answer
    rows = ["epoch,step,loss,eval_accuracy"]
    for k in range(1, 51):
        rows.append(f"{(k - 1) // 10 + 1},{k},{2.0 / k:.4f}," + (f"{0.5 + 0.01 * k:.3f}" if k % 5 == 0 else ""))
    data = ("\n".join(rows) + "\n").encode()
    for name in ("run.csv", "run_val.csv", "run_test.csv"):
        assert find_target_crossing(read_log(data, name), accuracy_target(0.75)).step == 25.0, name
