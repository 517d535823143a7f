"""core.prediction.forecast: the one call the pages use (prediction from the first epochs, widened by what the
other runs teach, combined with a prior)."""

from __future__ import annotations

import pytest

from core.datasets import builtin_datasets_by_file
from core.logs import read_log
from core.prediction import DEFAULT_POSTERIOR_METHOD, Prior, combine, forecast_epoch_at_target
from core.prediction.log_series import first_epochs
from core.prediction.predict import predict_epoch_at_target
from core.targets import accuracy_target
from tests.core.prediction.prediction_logs import course_csv


def halving_run(n: int = 24, name: str = "run.csv"):
    """Error 0.8·2^(−e/4): 0.08 (accuracy 0.92) at e = 4·log2(10) = 13.3, so epoch 14 is the first above it."""
    rows = "".join(f"{e},{e},{1 / e:.6f},{1 - 0.8 * 0.5 ** (e / 4):.6f}\n" for e in range(1, n + 1))
    return read_log(("epoch,step,loss,acc\n" + rows).encode(), name)


def test_the_first_epochs_alone_are_read_and_no_prior_gives_no_posterior():
    log = halving_run()
    f = forecast_epoch_at_target(log, [log], n_epochs_seen=10, target=accuracy_target(0.92), family="exp3")
    alone = predict_epoch_at_target(first_epochs(log, 10), target=accuracy_target(0.92), family="exp3")
    assert f.prediction.epoch == alone.epoch == 14.0 and f.prediction.n_epochs_observed == 10
    assert f.prior is None and f.posterior is None
    # the run itself is never one of the "other runs": nothing to learn a widening from
    assert f.inflation is None and f.n_cases == 0
    assert f.interval_source.startswith("from this run's own observed epochs only (only 0 cases")


def test_a_given_prior_is_combined_with_the_extrapolation_by_precision():
    log = halving_run()
    prior = Prior.from_interval(20.0, 15.0, 27.0, level=0.8)
    f = forecast_epoch_at_target(log, [], n_epochs_seen=10, target=accuracy_target(0.92), family="exp3", prior=prior)
    expected = combine(prior, f.prediction, n_epochs_observed=10, method=DEFAULT_POSTERIOR_METHOD)
    assert DEFAULT_POSTERIOR_METHOD == "precision" and f.prior is prior
    assert f.posterior.to_dict() == expected.to_dict()
    assert 14.0 <= f.posterior.epoch <= 20.0                           # between the extrapolation and the prior


def test_a_run_that_passed_the_target_is_its_measurement():
    log = halving_run()
    prior = Prior.from_interval(30.0, 20.0, 45.0, level=0.8)
    f = forecast_epoch_at_target(log, [], target=accuracy_target(0.92), family="exp3",
                                 prior=prior)   # all 24 epochs seen
    assert f.prediction.status == "reached"
    post = f.posterior
    assert (post.method, post.epoch, post.epoch_low, post.epoch_high) == ("measured", 14.0, 14.0, 14.0)


def test_a_declared_schedule_is_used_and_returned():
    log = halving_run()
    f = forecast_epoch_at_target(log, [], n_epochs_seen=10, target=accuracy_target(0.92), family="exp3",
                                 schedule="step:12,40")
    assert f.schedule.spec() == "step:12,40"
    # epoch 14 lies after the drop after epoch 12: no extrapolation across it
    assert f.prediction.status == "refused" and "learning-rate drop after epoch 12" in f.prediction.reason


@pytest.mark.slow
def test_unseen_epochs_change_neither_prior_nor_extrapolation_nor_posterior(builtin_logs):
    others = [lg for lg in builtin_logs if "resnet20" not in lg.source]
    clean = read_log(course_csv(), "resnet20_Intel Xeon Processor.csv")
    dirty = read_log(course_csv(poison_after=8), "resnet20_Intel Xeon Processor.csv")
    kw = dict(n_epochs_seen=8, target=accuracy_target(0.92), prior="auto", schedule="auto",
              datasets_by_file=builtin_datasets_by_file())
    a, b = (forecast_epoch_at_target(lg, others, **kw) for lg in (clean, dirty))
    assert a.prior.source == "calibration" and a.posterior is not None
    assert (a.prior.epoch, a.prior.log_sd) == (b.prior.epoch, b.prior.log_sd)
    for attr in ("status", "epoch", "epoch_low", "epoch_high", "family", "inflation"):
        assert getattr(a.prediction, attr) == getattr(b.prediction, attr)
    assert a.posterior.to_dict() == b.posterior.to_dict()



def test_the_interval_source_says_widened_or_narrowed_as_the_factor_is():
    from dataclasses import replace

    f = forecast_epoch_at_target(halving_run(), [], n_epochs_seen=10, target=accuracy_target(0.92), family="exp3")
    assert replace(f, inflation=1.4, n_cases=5).interval_source.startswith("widened ×1.40, learned from 5 predictions")
    assert replace(f, inflation=0.89, n_cases=5).interval_source.startswith("narrowed ×0.89, learned from 5")
