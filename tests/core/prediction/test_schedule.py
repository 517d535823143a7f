"""Learning-rate schedules: declared, from an lr column, detected from curves with known drops."""

from __future__ import annotations

import numpy as np
import pytest

from core.errors import InputError
from core.logs import read_log, read_log_file
from core.prediction.log_series import first_epochs
from core.prediction.schedule import (
    POLLUX_SCHEDULES,
    Schedule,
    detect_drops,
    detected_schedule,
    parse_schedule,
    resolve_schedule,
    schedule_from_lr,
)
from tests.conftest import ROOT


def stepped_error(epochs, drops=(30, 60), factors=(0.7, 0.55)):
    """Error 1 − acc of a step-schedule run: a slow creep to a plateau, divided at each drop."""
    e = np.asarray(epochs, dtype=float)
    err = 0.3 * np.exp(-e / 6) + 0.42
    for d, f in zip(drops, factors):
        err = np.where(e > d, err * f, err)
    return err


@pytest.mark.parametrize("seed", range(10))
def test_drops_of_a_noisy_stepped_curve_are_found_where_they_are(seed):
    rng = np.random.default_rng(seed)
    e = np.arange(1, 91)
    err = stepped_error(e) * np.exp(rng.normal(0, 0.01, e.size))      # 1 % multiplicative noise
    assert detect_drops(e, 1 - err) == (30.0, 60.0), f"seed {seed}"


@pytest.mark.parametrize("seed", range(10))
def test_a_smooth_noisy_curve_has_no_drop(seed):
    rng = np.random.default_rng(seed)
    e = np.arange(1, 91)
    err = (0.8 * np.exp(-e / 12) + 0.06) * np.exp(rng.normal(0, 0.01, e.size))
    assert detect_drops(e, 1 - err) == (), f"seed {seed}"


def test_a_single_lucky_epoch_is_not_a_drop():
    e = np.arange(1, 31)
    err = 0.3 + 0 * e
    err[14] = 0.2            # one epoch far better, then back: a jump that does not stay
    assert detect_drops(e, 1 - err) == ()


def test_the_imagenet_trace_shows_its_declared_drops():
    log = read_log_file(ROOT / "data" / "pollux_traces" / "imagenet" / "validation-200.csv",
                        source="imagenet/validation-200.csv")
    s = detected_schedule(log)
    assert s.drops == parse_schedule(POLLUX_SCHEDULES["imagenet"]).drops == (30.0, 60.0)
    assert s.source == "detected from the curve"
    # only what the observed part shows: after 45 epochs, the drop after epoch 30
    assert detected_schedule(first_epochs(log, 45)).drops == (30.0,)


def test_declared_schedules_parse_and_describe_themselves():
    s = parse_schedule("step:60,30")
    assert s.drops == (30.0, 60.0) and s.phase_start(45) == 30.0 and s.next_drop(45) == 60.0
    assert s.describe() == "step: the rate drops after epochs 30 and 60 (declared)"
    assert parse_schedule(s.spec()) == s
    c = parse_schedule("cosine:100")
    assert c.smooth and c.decaying_after(50) and not c.decaying_after(100) and c.markers() == (100.0,)
    assert parse_schedule("poly:90:2").power == 2.0 and parse_schedule("poly:90").power == 1.0
    assert parse_schedule("none") == Schedule("none")
    for bad in ("step:", "step:-3", "linear:5", "cosine:10:2", "exp:0"):
        with pytest.raises(InputError, match="schedule: expected step:E1,E2"):
            parse_schedule(bad)


def _lr_log(lrs, name="resnet20_V100.csv"):
    rows = "".join(f"{e},{e},{1 / e:.5f},{0.5 + 0.01 * e:.4f},{lr}\n" for e, lr in enumerate(lrs, 1))
    return read_log(("epoch,step,loss,acc,lr-SGD\n" + rows).encode(), name)


def test_an_lr_column_is_read_and_its_drops_found():
    log = _lr_log([0.1] * 5 + [0.01] * 5 + [0.001] * 3)
    assert log.roles.lr == "lr-SGD"
    s = schedule_from_lr(log)
    assert (s.kind, s.drops, s.source) == ("step", (5.0, 10.0), "lr column")
    smooth = schedule_from_lr(_lr_log([0.1 * 0.9**e for e in range(10)]))
    assert smooth.kind == "exp" and smooth.end_epoch is None and "decays smoothly" in smooth.note
    # the declared schedule wins over the column, the column over detection
    assert resolve_schedule(log, "cosine:50").kind == "cosine"
    assert resolve_schedule(log).source == "lr column"


def test_the_mlperf_logs_declare_their_learning_rate_schedule(mlperf_logs):
    from core.prediction import known_schedule
    from core.prediction.schedule import resolve_schedule

    log = next(lg for lg in mlperf_logs if lg.source.startswith("dgxh100_n96_"))
    # :::MLLOG lars_opt_learning_rate_decay_steps 58 and ..._decay_poly_power 2 in the log
    assert log.meta.schedule == "poly:58:2"
    assert known_schedule(log).spec() == "poly:58:2" and resolve_schedule(log).spec() == "poly:58:2"

