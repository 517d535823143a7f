"""core.prediction.phases: predicting within the phases of a learning-rate schedule (the epochs after the last
drop, renumbered; no extrapolation across the next drop; the interval opened while a smooth decay goes on)."""

from __future__ import annotations

import numpy as np

from core.logs import read_log
from core.prediction.log_series import first_epochs
from core.prediction.phases import epochs_after
from core.prediction.predict import predict_epoch_at_target
from core.targets import accuracy_target


def halving_run(n: int = 24):
    """Error 0.8·2^(−e/4): accuracy 0.92 first at epoch 14 (e = 4·log2(10) = 13.3); step = 10·epoch."""
    rows = "".join(f"{e},{10 * e},{1 / e:.6f},{1 - 0.8 * 0.5 ** (e / 4):.6f}\n" for e in range(1, n + 1))
    return read_log(("epoch,step,loss,acc\n" + rows).encode(), "run.csv")


def test_epochs_after_renumbers_epochs_and_steps_from_the_end_of_the_drop_epoch():
    log = halving_run(6)
    after = epochs_after(log, 4)
    assert after.frame["epoch"].tolist() == [1, 2]                      # epochs 5 and 6
    assert after.frame["global_step"].tolist() == [10.0, 20.0]         # 50 − 40 and 60 − 40
    assert after.frame["acc"].tolist() == log.frame["acc"].iloc[4:].tolist()
    assert log.frame["epoch"].tolist() == [1, 2, 3, 4, 5, 6]            # the log itself is unchanged
    assert epochs_after(log, 0).frame["epoch"].tolist() == [1, 2, 3, 4, 5, 6]


def test_a_target_beyond_the_next_drop_is_refused_and_one_before_it_is_predicted():
    seen = first_epochs(halving_run(), 10)
    plain = predict_epoch_at_target(seen, target=accuracy_target(0.92), family="exp3")
    assert plain.status == "predicted" and plain.epoch == 14.0
    refused = predict_epoch_at_target(seen, target=accuracy_target(0.92), family="exp3", schedule="step:12,40")
    assert refused.status == "refused" and refused.epoch is None
    assert "reaches it only at epoch 14, after the learning-rate drop after epoch 12" in refused.reason
    later = predict_epoch_at_target(seen, target=accuracy_target(0.92), family="exp3", schedule="step:20,40")
    assert later.status == "predicted" and later.epoch == 14.0 and later.flags == ()


def test_a_smooth_decay_still_going_opens_the_interval_down_to_the_next_epoch():
    seen = first_epochs(halving_run(), 10)
    plain = predict_epoch_at_target(seen, target=accuracy_target(0.92), family="exp3")
    decaying = predict_epoch_at_target(seen, target=accuracy_target(0.92), family="exp3", schedule="cosine:100")
    assert decaying.epoch == plain.epoch == 14.0 and plain.epoch_low > 11.0
    assert decaying.epoch_low == 11.0 and decaying.epoch_high == plain.epoch_high
    assert "keeps decaying until epoch 100" in decaying.flags[0]


def test_a_run_that_passed_the_target_is_not_changed_by_its_schedule():
    log = halving_run()
    plain = predict_epoch_at_target(log, target=accuracy_target(0.92), family="exp3")
    stepped = predict_epoch_at_target(log, target=accuracy_target(0.92), family="exp3", schedule="step:12,40")
    assert plain.status == stepped.status == "reached"
    assert (stepped.epoch, stepped.flags) == (plain.epoch, plain.flags)


def test_epochs_after_a_drop_are_renumbered_and_the_prediction_shifted_back():
    # error 0.3·exp(−e/20) + 0.3 before the drop after epoch 30, × 0.7 after it
    e = np.arange(1, 46)
    err = (0.3 * np.exp(-e / 20) + 0.3) * np.where(e > 30, 0.7, 1.0)
    csv = "epoch,step,loss,acc\n" + "".join(f"{i},{i},{1 / i:.5f},{1 - x:.6f}\n" for i, x in zip(e, err))
    log = read_log(csv.encode(), "job_V100.csv")
    phase = epochs_after(log, 30)
    assert phase.frame["epoch"].tolist() == list(range(1, 16)) and phase.frame["global_step"].iloc[0] == 1.0
    # the new phase's floor is 0.7·0.3 = 0.21 (accuracy 0.79): 0.8 needs the next drop (after 60)
    p = predict_epoch_at_target(log, target=accuracy_target(0.8), schedule="step:30,60")
    assert p.status == "refused" and "learning-rate drop after epoch 60" in p.reason and p.epoch is None
    # 0.77: 0.7·(0.3·exp(−e/20) + 0.3) <= 0.23 at e = 20·ln 10.5 = 47.0, epoch 48, before the next drop;
    # predicted from epochs 31-45 only, on the log's own epoch numbers
    q = predict_epoch_at_target(log, target=accuracy_target(0.77), family="exp3", schedule="step:30,60")
    assert q.status == "predicted" and q.epoch_offset == 30.0 and q.epoch == 48.0
    assert q.flags[0].startswith("fitted on epochs 31–45 only")
    too_soon = predict_epoch_at_target(first_epochs(log, 33), target=accuracy_target(0.8), schedule="step:30,60")
    assert too_soon.status == "refused" and "only 3 epochs since the learning-rate drop" in too_soon.reason
