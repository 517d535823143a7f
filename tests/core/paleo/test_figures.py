"""Figures of Paleo estimates: fixed trace names, data equal to the core values."""

from __future__ import annotations

import pandas as pd
import pytest

from core.figures.paleo import (
    COMPUTE,
    LINEAR,
    MEMORY,
    NAIVE_BOUND,
    layer_breakdown_figure,
    paleo_speedup_figure,
    throughput_figure,
)
from core.paleo import BREAKDOWN_COLUMNS, layer_breakdown, load_net, simulate


@pytest.fixture(scope="module")
def result():
    return simulate(load_net("alex_v2"), device="V100", network="ethernet100",
                    workers=(1, 2, 4, 8, 16))


def test_throughput_figure_has_one_trace_per_scheme_then_the_bound(result):
    fig = throughput_figure(result)
    assert [t.name for t in fig.data] == [*result.schemes, NAIVE_BOUND]
    for trace, scheme in zip(fig.data, result.schemes):
        assert list(trace.x) == [1, 2, 4, 8, 16]
        assert list(trace.y) == pytest.approx(result.throughput(scheme))
    assert list(fig.data[-1].y) == pytest.approx(result.naive_peak())
    assert fig.layout.xaxis.title.text == "workers"
    assert fig.layout.yaxis.title.text == "throughput (images/s)"


def test_throughput_figure_subset_and_no_bound(result):
    fig = throughput_figure(result, schemes=["RingAllReduce", "Nope", "OneToAll"],
                            show_bound=False)
    assert [t.name for t in fig.data] == ["RingAllReduce", "OneToAll"]


def test_paleo_speedup_figure_ends_with_linear(result):
    fig = paleo_speedup_figure(result, schemes=["ParameterServer_p2"])
    assert [t.name for t in fig.data] == ["ParameterServer_p2", LINEAR]
    assert list(fig.data[0].y) == pytest.approx(result.speedup("ParameterServer_p2"))
    assert list(fig.data[1].y) == [1, 2, 4, 8, 16]
    assert fig.data[0].y[0] == 1.0


def test_layer_breakdown_figure_stacks_compute_and_memory_of_the_slowest():
    df = layer_breakdown(load_net("vgg16"), device="K80", paleo_compatible=True)
    fig = layer_breakdown_figure(df, top=5)
    comp, mem = fig.data
    assert (comp.name, mem.name) == (COMPUTE, MEMORY) and fig.layout.barmode == "stack"
    top = df.nlargest(5, "total_ms")
    assert list(comp.y) == list(top.layer)[::-1]
    assert list(comp.x) == pytest.approx(list((top.fwd_comp_ms + top.bwd_comp_ms)[::-1]))
    assert list(mem.x) == pytest.approx(list((top.fwd_mem_ms + top.bwd_mem_ms)[::-1]))
    assert fig.layout.xaxis.title.text == "time per iteration (ms)"


def test_layer_breakdown_figure_of_nothing_is_a_titled_note():
    fig = layer_breakdown_figure(pd.DataFrame(columns=list(BREAKDOWN_COLUMNS)))
    assert len(fig.data) == 0 and fig.layout.annotations[0].text == "no layer with a cost"


@pytest.mark.parametrize("build", [throughput_figure, paleo_speedup_figure])
def test_worker_axis_is_linear_by_default_and_log_on_request(result, build):
    assert build(result).layout.xaxis.type == "linear"
    fig = build(result, log_x=True)
    assert fig.layout.xaxis.type == "log"
    assert list(fig.layout.xaxis.tickvals) == [1, 2, 4, 8, 16]      # a tick at every worker count
    assert list(fig.data[0].x) == [1, 2, 4, 8, 16]                   # data unchanged
