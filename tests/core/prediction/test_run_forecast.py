"""The one call that forecasts a run (``core.prediction.forecast_run``) picks its route from the target and the run,
on hand-made logs of a known law; the ``predict`` command and the Logs page's call give the same numbers."""

from __future__ import annotations

import io
import math

import pandas as pd
import pytest

from core.cli import main
from core.errors import InputError
from core.logs import read_log, read_log_file
from core.prediction import (
    EPOCHS,
    PROGRESS,
    forecast_epoch_at_target,
    forecast_progress,
    forecast_run,
    prior_for_run,
    route_for,
    route_for_runs,
)
from core.prediction.run_backtest import backtest_route
from core.prediction.run_forecast import FORECAST_COLUMNS
from core.targets import DEFAULT_TARGET, Target, accuracy_target
from tests.conftest import ROOT

BUILTIN = sorted(str(p) for p in (ROOT / "data" / "logs").glob("*.csv"))
LOSS = Target("loss", "<=", 2.5)


def law(step: int) -> float:
    """The loss 2 + 30·(100·step)^-0.5: at or below 2.5 from step 36."""
    return 2.0 + 30 * (100 * step) ** -0.5


def course_run():
    """Error 1 − acc halving every 4 epochs from 0.8: acc >= 0.92 at epoch 4·log2(10) = 13.3, in epoch 14."""
    rows = "".join(f"{e},{e},{1 / e:.6f},{1 - 0.8 * 0.5 ** (e / 4):.6f}\n" for e in range(1, 25))
    return read_log(("epoch,step,loss,acc\n" + rows).encode(), "resnet20_cpu.csv")


def loss_run(name="llm.csv", lr=None):
    """80 steps of :func:`law`; with ``lr`` (a rate per step) an lr column: the planned schedule."""
    if lr is None:
        return read_log(("step,loss\n" + "".join(f"{s},{law(s):.6f}\n" for s in range(1, 81))).encode(), name)
    rows = "".join(f"{s},{lr(s):.6g},{law(s):.6f}\n" for s in range(1, 81))
    return read_log(("step,lr,loss\n" + rows).encode(), name)


def wsd(step: int) -> float:
    """A constant rate, then a linear cool-down over the last quarter of 80 steps."""
    return 1e-3 if step <= 60 else 1e-3 * (80 - step) / 20


def test_an_accuracy_on_a_log_of_epochs_takes_the_epoch_route():
    log = course_run()
    f = forecast_run(log, observe=10, family="exp3", prior=None)
    assert (f.route, f.target, f.n_epochs_seen) == (EPOCHS, DEFAULT_TARGET, 10) and f.progress is None
    assert f.epochs.prediction.epoch == 14.0        # the known law: epoch 14
    alone = forecast_epoch_at_target(log, [], n_epochs_seen=10, target=DEFAULT_TARGET, family="exp3")
    assert f.epochs.prediction.to_dict() == alone.prediction.to_dict()
    assert f.row()["extrapolated_epoch"] == 14.0 and f.row()["metric"] == "acc"


def test_a_falling_loss_with_a_planned_schedule_goes_through_the_schedule():
    f = forecast_run(loss_run("wsd.csv", lr=wsd), target=LOSS, observe=0.5)
    assert f.route == PROGRESS and f.epochs is None
    assert f.progress.route.startswith("through the schedule") and f.progress.schedule is not None
    assert f.row()["route"] == f.progress.route and f.row()["schedule"] == "the lr column of wsd.csv"
    assert f.row()["metric_at_end"] == f.progress.schedule.metric_at_end
    # the same answer as the progress route's own call
    same = forecast_progress(loss_run("wsd.csv", lr=wsd), target=LOSS, observe=0.5)
    assert f.progress.progress.posterior == same.progress.posterior


def test_a_falling_loss_without_a_schedule_is_a_power_law_in_steps():
    f = forecast_run(loss_run(), target=LOSS, observe=0.25)
    assert f.route == PROGRESS and f.progress.route == "power law in steps"
    assert f.progress.schedule is None and f.row()["metric_at_end"] is None
    assert round(f.progress.progress.extrapolation.value) == 36        # the law reaches 2.5 at step 36
    assert f.row()["unit"] == "steps" and f.row()["extrapolation_samples"] is None   # never steps called samples


def test_an_accuracy_on_a_log_without_epochs_is_forecast_in_its_own_unit():
    rows = "".join(f"{s},{law(s):.5f},{0.5 + s / 200:.4f}\n" for s in range(1, 81))
    log = read_log(("step,loss,acc\n" + rows).encode(), "steps.csv")
    assert route_for(log, accuracy_target(0.8))[0] == PROGRESS
    f = forecast_run(log, target=accuracy_target(0.8), observe=0.5)
    assert f.route == PROGRESS and f.row()["unit"] == "steps" and f.row()["target"] == 0.8
    assert f.progress.route == "power law in steps" and f.progress.progress.observed_progress == 40   # half of it


def test_the_target_is_target_fors_the_users_else_the_logs_else_the_default():
    log = course_run()
    assert forecast_run(log, observe=10, family="exp3", prior=None).target.origin == "default"
    f = forecast_run(log, target=Target("loss", "<=", 0.1), observe=0.5)      # the user's loss: the progress route
    assert f.route == PROGRESS and f.target == Target("loss", "<=", 0.1)


def test_a_route_named_by_a_page_and_its_refusals():
    # a page forecasting its runs by the progress route: the course run in its own unit to its own accuracy
    f = forecast_run(course_run(), observe=0.25, route=PROGRESS)
    assert f.route == PROGRESS and f.target == DEFAULT_TARGET and f.progress.progress.unit == "steps"
    with pytest.raises(InputError, match="llm.csv: cannot be forecast from its first epochs to loss<=2.5"):
        forecast_run(loss_run(), target=LOSS, route=EPOCHS)
    with pytest.raises(InputError, match="route: expected one of epochs, progress"):
        forecast_run(loss_run(), target=LOSS, route="steps")
    with pytest.raises(InputError, match="a planned schedule in optimiser steps is forecast through with a falling "
                                         "target; acc>=0.92 climbs"):
        forecast_run(course_run(), schedule="wsd:total=30,warmup=0,decay=0.2", prior=None)


def test_a_page_and_a_backtest_pick_one_route_for_their_runs():
    course, llm = course_run(), loss_run()
    assert route_for_runs([course, llm], DEFAULT_TARGET) == EPOCHS      # some run goes by the epochs
    assert route_for_runs([course, llm], LOSS) == PROGRESS
    assert route_for_runs([llm], DEFAULT_TARGET) == PROGRESS             # no accuracy to forecast in epochs
    assert backtest_route([course]) == EPOCHS and backtest_route([course], LOSS) == PROGRESS
    assert backtest_route([course], LOSS, target_rel=0.9) == EPOCHS     # a fraction of the final accuracy


def _cli_row(argv, capsys) -> pd.Series:
    assert main(argv) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert list(table.columns) == list(FORECAST_COLUMNS) and len(table) == 1
    return table.iloc[0]


def _same(cli: pd.Series, core: dict) -> None:
    """Every cell of the command's CSV row is the core row's, as the CSV writes it (6 significant digits)."""
    for column in FORECAST_COLUMNS:
        a, b = cli[column], core[column]
        if b is None or b == "" or (isinstance(b, float) and math.isnan(b)):
            assert pd.isna(a), column
        elif isinstance(b, str):
            assert a == b, column
        else:
            assert a == float(f"{b:.6g}"), column


def test_the_cli_and_the_pages_call_give_the_same_numbers_on_the_epoch_route(capsys):
    path = next(p for p in BUILTIN if p.endswith("resnet20_Intel Xeon Processor.csv"))
    cli = _cli_row(["predict", path, "--prior-from", *BUILTIN, "--observe", "0.5", "--dataset", "mnist1d"], capsys)
    run = read_log_file(path, source=path)
    others = [read_log_file(p, source=p) for p in BUILTIN]
    datasets = {p: "mnist1d" for p in BUILTIN}
    # the Logs page's call: its own cached prior, 12 of 24 epochs, the target its widget shows
    prior = prior_for_run(run, others, target=DEFAULT_TARGET, datasets_by_file=datasets)
    page = forecast_run(run, tuple(others), DEFAULT_TARGET, observe=12, family="auto", curve_route="accuracy",
                        schedule="auto", prior=prior)
    assert page.route == EPOCHS and cli["observed_epochs"] == 12
    _same(cli, page.row(file=path))


def test_the_cli_and_the_pages_call_give_the_same_numbers_on_the_progress_route(capsys, tmp_path):
    paths = []
    for name, scale in (("new", 30.0), ("o1", 28.0), ("o2", 32.0), ("o3", 30.5)):
        path = tmp_path / f"{name}-100.csv"      # a global batch of 100: progress in samples
        path.write_text("step,loss\n" + "".join(f"{s},{2 + scale * (100 * s) ** -0.5:.6f}\n" for s in range(1, 61)))
        paths.append(str(path))
    cli = _cli_row(["predict", paths[0], "--prior-from", *paths[1:], "--target", "loss<=2.5", "--observe", "0.25"],
                   capsys)
    logs = [read_log_file(p, source=p) for p in paths]
    # the Logs page's call on the progress route: the run and the others loaded beside it
    page = forecast_run(logs[0], tuple(logs[1:]), LOSS, observe=0.25, route=PROGRESS)
    assert page.row()["unit"] == cli["unit"] == "samples"
    _same(cli, page.row(file=paths[0]))
