"""Issue 23, parts 2-5 (the readers' share of "one run, one answer in every format"), on hand-made files whose
right answers can be counted by hand."""

from __future__ import annotations

import numpy as np

from core.logs import read_log
from core.runs import find_target_crossing
from core.targets import accuracy_target


def _course_val_one_row_per_epoch(n_epochs: int = 100, reach: int = 58) -> bytes:
    """A course ``_val`` log of full-batch validation: ``step`` is 1 in every epoch; acc passes 0.92 at ``reach``."""
    rows = ["epoch, step, loss, acc"]
    for e in range(1, n_epochs + 1):
        acc = 0.5 + 0.4 * (e - 1) / (reach - 1) if e < reach else 0.93 + 0.0005 * (e - reach)
        rows.append(f"{e}, 1, {2.0 / e:.6f}, {min(acc, 0.99):.6f}")
    return ("\n".join(rows) + "\n").encode()


def test_a_course_log_with_one_row_per_epoch_keeps_every_epoch():
    log = read_log(_course_val_one_row_per_epoch(), "resnet8_V100_val.csv")
    assert log.n_points == 100 and log.frame["epoch"].tolist() == list(range(1, 101))
    assert log.frame["global_step"].tolist() == [float(e) for e in range(1, 101)]   # one step per epoch
    assert not any("duplicated" in f or "restarted" in f for f in log.flags)
    assert find_target_crossing(log, accuracy_target(0.92)).epoch == 58


def test_a_pollux_layout_trace_is_statistical_only_when_progress_differs_from_iteration():
    pollux = read_log(b"progress,iteration,metric\n391.0,390,0.44\n782.0,781,0.60\n1172.0,1171,0.66\n",
                      "cifar10/validation-128.csv")
    assert pollux.fmt == "metric-trace"
    plain = read_log(b"progress,iteration,metric\n64,64,0.44\n128,128,0.60\n192,192,0.66\n", "mine/validation-64.csv")
    assert plain.fmt == "epoch-trace" and plain.granularity == "epoch"
    assert plain.frame["global_step"].tolist() == [64.0, 128.0, 192.0] and plain.frame["epoch"].tolist() == [1, 2, 3]
    assert plain.steps_per_epoch == 64 and any("real epochs" in f for f in plain.flags)
    assert plain.frame["samples"].tolist() == [64.0 * 64, 128.0 * 64, 192.0 * 64]     # steps x the batch in the name
    assert pollux.frame["samples"].tolist() == [390.0 * 128, 781.0 * 128, 1171.0 * 128]


def test_the_trace_reader_gives_the_lr_role_to_an_lr_column():
    log = read_log(b"progress,iteration,metric,lr\n64,64,0.44,0.1\n128,128,0.60,0.1\n192,192,0.66,0.1\n",
                   "mine/validation-64.csv")
    assert log.roles.lr == "lr" and log.frame["lr"].tolist() == [0.1, 0.1, 0.1]


def test_lightning_rows_count_the_steps_done_not_the_zero_based_batch_index():
    # what a real Lightning 2 Trainer wrote (10 batches per epoch, log_every_n_steps=5, validation each epoch)
    csv = (b"epoch,step,train_loss,val_loss\n0,4,2.76,\n0,9,0.59,\n0,9,,1.32\n"
           b"1,14,2.58,\n1,19,0.56,\n1,19,,1.27\n")
    val = read_log(csv, "metrics.csv", roles={"loss": "val_loss"})
    assert val.frame["global_step"].tolist() == [10.0, 20.0]          # validation after 10 and 20 optimiser steps
    assert val.steps_per_epoch == 10 and val.frame["epoch"].tolist() == [1, 2]
    train = read_log(csv, "metrics.csv")
    assert train.frame["global_step"].tolist() == [5.0, 10.0, 15.0, 20.0]
    # a 1-based log of the same shape is left as it is
    one_based = read_log(csv.replace(b",4,", b",5,").replace(b",9,", b",10,").replace(b",14,", b",15,")
                         .replace(b",19,", b",20,"), "metrics.csv", roles={"loss": "val_loss"})
    assert one_based.frame["global_step"].tolist() == [10.0, 20.0]
    assert not any("0-based" in f for f in one_based.flags) and np.isfinite(one_based.frame["loss"]).all()


# what a real Lightning 2.6 Trainer wrote (LearningRateMonitor, log_every_n_steps=5, 10 batches an epoch):
# the rate on rows of its own, with no epoch
_LIGHTNING_LR = (b"epoch,lr-SGD,step,train_loss,val_acc,val_loss\n,0.1,0,,,\n,0.1,4,,,\n0,,4,0.91,,\n,0.1,9,,,\n"
                 b"0,,9,0.72,,\n0,,9,,0.625,0.68\n,0.1,10,,,\n,0.1,14,,,\n1,,14,0.75,,\n,0.1,19,,,\n1,,19,0.60,,\n"
                 b"1,,19,,0.625,0.63\n")


def test_lightning_rows_get_the_learning_rate_logged_on_rows_of_its_own():
    val = read_log(_LIGHTNING_LR, "metrics.csv", split="val")
    assert val.frame["global_step"].tolist() == [10.0, 20.0] and val.frame["lr"].tolist() == [0.1, 0.1]
    train = read_log(_LIGHTNING_LR, "metrics.csv")
    # the training rows every 5 steps: 0-based index + 1 (read from the validation rows, which end each epoch)
    assert train.frame["global_step"].tolist() == [5.0, 10.0, 15.0, 20.0] and train.steps_per_epoch == 10
    assert train.frame["lr"].tolist() == [0.1] * 4 and not any("partial" in f for f in train.flags)


def test_steps_per_epoch_of_a_log_that_keeps_every_tenth_step():
    # 63 steps an epoch, the loss logged at steps 10, 20, ...: the first logged steps of the epochs are 60 or 70 apart
    rows = "".join(f"{k},{-(-k // 63)},{2.0 / k:.6f}\n" for k in range(10, 1261, 10))
    log = read_log(("step,epoch,loss\n" + rows).encode(), "run.csv")
    assert log.steps_per_epoch == 63 and not any("partial" in f for f in log.flags)


def _course_val_batches(names: tuple[str, str] = ("loss", "acc")) -> bytes:
    """A course ``_val`` log: 4 validation batches an epoch, steps 1..40 over 10 epochs; each epoch's last
    running accuracy passes 0.93 in epoch 7, a single batch of epoch 5 does already (0.95 at its 2nd batch)."""
    rows = [f"epoch,step,{names[0]},{names[1]}"]
    step = 0
    for e in range(1, 11):
        for b in range(1, 5):
            step += 1
            acc = 0.95 if (e, b) == (5, 2) else 0.80 + 0.02 * e
            rows.append(f"{e},{step},{2.0 / e:.4f},{acc:.4f}")
    return ("\n".join(rows) + "\n").encode()


def test_a_course_val_log_with_val_column_names_is_read_as_the_course_format():
    from core.prediction.progress_measure import progress_unit

    plain = read_log(_course_val_batches(), "resnet8_V100-512_val.csv")
    named = read_log(_course_val_batches(("val_loss", "val_acc")), "resnet8_V100-512_val.csv")
    assert plain.fmt == named.fmt == "course" and any("validation batches" in f for f in named.flags)
    assert named.frame.equals(plain.frame) and "samples" not in named.frame      # never batches x 512 samples
    assert progress_unit(named) == progress_unit(plain) == "epochs"
    # the epoch's last running accuracy: 0.80 + 0.02 * 7 = 0.94 in epoch 7 (0.92 in epoch 6), not epoch 5's
    # single batch
    t = accuracy_target(0.93)
    assert find_target_crossing(named, t).epoch == find_target_crossing(plain, t).epoch == 7


def test_a_lightning_validation_only_log_keeps_its_training_steps():
    # val_ columns only, one row per epoch after 10 training steps each: Lightning's, read with split="val"
    log = read_log(b"epoch,step,val_loss,val_acc\n0,9,1.0,0.5\n1,19,0.8,0.6\n2,29,0.7,0.7\n", "metrics.csv",
                   split="val")
    assert log.fmt == "lightning" and log.frame["global_step"].tolist() == [10.0, 20.0, 30.0]


def test_a_lightning_log_with_one_step_an_epoch_stays_lightning():
    # full-batch training (one optimiser step an epoch): Lightning's 0-based step index goes 0, 1, 2, ...
    rows = "".join(f"{e},{e},{1.0 / (e + 1):.3f},{0.5 + 0.04 * e:.3f}\n" for e in range(10))
    log = read_log(b"epoch,step,val_loss,val_acc\n" + rows.encode(), "gcn_cora-2708_val.csv")
    assert log.fmt == "lightning" and log.frame["global_step"].tolist() == [float(k) for k in range(1, 11)]
    assert "samples" in log.frame                       # training steps x the batch in the name
