"""Figures of the Logs page: trace names, values from core, legends, empty input."""

from __future__ import annotations

import numpy as np
import pytest

from core.curves import optimus_loss
from core.figures.logs import accuracy_figure, loss_curve_figure
from core.logs.reader import read_log
from core.runs.analysis import analyse_run
from core.targets import accuracy_target
from tests.core.runs.test_runs import synthetic_log


@pytest.fixture(scope="module")
def runs():
    return [analyse_run(read_log(synthetic_log(), "resnet32_Tesla V100-PCIE-32GB.csv")),
            analyse_run(read_log(synthetic_log(b=(4e-3, 0.5, 0.1)), "resnet56_NVIDIA A100-PCIE-40GB.csv"))]


def test_one_run_has_measured_smoothed_fitted(runs):
    fig = loss_curve_figure(runs[:1])
    assert [t.name for t in fig.data] == ["measured", "smoothed", "fitted"]
    fitted = fig.data[2]
    np.testing.assert_allclose(fitted.y, optimus_loss(np.asarray(fitted.x), 2e-3, 0.5, 0.1), rtol=1e-5)
    assert fig.layout.xaxis.title.text == "global step k" and fig.layout.yaxis.title.text == "loss"


def test_overlay_has_one_legend_entry_per_run_and_log_axes(runs):
    fig = loss_curve_figure(runs, log_x=True, log_y=True)
    legend = [t.name for t in fig.data if t.showlegend is not False]
    assert legend == ["resnet32 · V100", "resnet56 · A100"]
    assert "resnet56 · A100 · fitted" in [t.name for t in fig.data]
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"


def test_accuracy_figure_marks_the_crossing_and_the_target(runs):
    fig = accuracy_figure(runs[:1], target=accuracy_target(0.92))
    assert [t.name for t in fig.data] == ["measured", "reached", "target"]
    reached = fig.data[1]
    # acc>=0.92 includes equality: epoch 12 ends at 0.8 + 0.12 = 0.92 (logged 0.920000), its last step 600
    assert reached.x == (600.0,) and reached.y[0] == pytest.approx(0.92)
    assert fig.data[-1].y == (0.92, 0.92)


def test_no_loss_or_accuracy_gives_a_titled_note():
    trace = b"progress,iteration,metric,grad_sqr,grad_var\n391,390,0.5,1,1\n782,781,0.93,1,1\n"
    a = analyse_run(read_log(trace, "cifar10/validation-128.csv"))
    fig = loss_curve_figure([a])
    assert len(fig.data) == 0 and "No run with a loss column" in fig.layout.annotations[0].text
