"""Every log axis in core.figures reads as whole values (1, 2, 5 per decade), never Plotly's shortened minor
labels: one helper, ``core.figures.style.log_axis``."""

from __future__ import annotations

import inspect

import pandas as pd
import plotly.graph_objects as go
import pytest

from core.batch import typed_batch_scaling
from core.figures import batch, logs, paleo, plan, style
from core.figures.batch import batch_samples_figure, efficiency_goodput_figure
from core.figures.plan import tta_vs_workers_figure
from core.figures.style import log_axis, whole_log_ticks


def _plan_table() -> pd.DataFrame:
    """GPU counts 1 to 2,048 taking 16/w hours (0.0078 to 16 h), a band of 14/w to 18/w."""
    w = [1, 8, 64, 512, 2048]
    return pd.DataFrame({"mode": "allreduce", "p": 0, "time_unit": "s", "w": w, "time_s": [3600.0 * 16 / n for n in w],
                         "time_h": [16.0 / n for n in w], "time_low": [3600.0 * 14 / n for n in w],
                         "time_high": [3600.0 * 18 / n for n in w]})


def test_time_to_target_against_gpus_is_labelled_at_whole_hours_and_counts():
    fig = tta_vs_workers_figure(_plan_table())
    y, x = fig.layout.yaxis, fig.layout.xaxis
    assert (x.type, y.type) == ("log", "log")
    # hours 14/2048 = 0.0068 (the band's low end) to 18 (its high end): 0.01, 0.02, 0.05 … 10 fit in one label each
    assert list(y.ticktext) == ["0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1", "2", "5", "10"]
    assert list(y.tickvals) == [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0]
    assert list(x.ticktext) == ["1", "2", "5", "10", "20", "50", "100", "200", "500", "1,000", "2,000"]


def test_a_narrow_log_range_gets_round_evenly_spaced_labels():
    table = _plan_table().assign(time_h=lambda t: 0.2 + 0.01 * (t["w"] == 1), time_s=lambda t: 3600 * t["time_h"])
    fig = tta_vs_workers_figure(table.drop(columns=["time_low", "time_high"]))
    assert fig.layout.yaxis.title.text == "time to target (minutes)"            # 0.2–0.21 h: 12–12.6 min
    assert list(fig.layout.yaxis.ticktext) == ["12", "12.2", "12.4", "12.6"]


@pytest.mark.parametrize(("low", "high", "texts"), [
    (0.15, 25.0, ["0.2", "0.5", "1", "2", "5", "10", "20"]),
    (3.0, 9.0, ["4", "6", "8"]),                  # only 5 of 1-2-5: even round steps of 2
    (1.0, 1e6, ["1", "10", "100", "1,000", "10,000", "100,000", "1,000,000"]),   # 19 of 1-2-5: one per decade
])
def test_whole_log_ticks(low, high, texts):
    assert whole_log_ticks(low, high)[1] == texts


def test_other_log_axes_use_the_same_helper():
    model = typed_batch_scaling(1e5, 1000)
    samples = batch_samples_figure(model)
    assert samples.layout.xaxis.type == "log" and samples.layout.yaxis.type == "log"
    assert all(t[0] in "125" and set(t.replace(",", "")) <= set("0125") for t in samples.layout.xaxis.ticktext)
    goodput = efficiency_goodput_figure(model)
    assert goodput.layout.xaxis.ticktext is not None and goodput.layout.xaxis2.type == "log"
    workers = log_axis(go.Figure(), "x", ticks=[1, 2, 4])
    assert list(workers.layout.xaxis.ticktext) == ["1", "2", "4"]
    for module in (batch, logs, paleo, plan):          # no log axis set by hand
        source = inspect.getsource(module)
        assert 'type="log"' not in source and "_type=\"log\"" not in source, module.__name__
    assert "log_axis" in inspect.getsource(style)
