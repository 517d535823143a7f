"""Figures of Paleo estimates: fixed trace names, data equal to the core values."""

from __future__ import annotations

import pandas as pd
import pytest

from core.datasets import builtin_profiles
from core.figures.paleo import (
    COMPUTE,
    ESTIMATE,
    LINEAR,
    MEASURED,
    MEMORY,
    NAIVE_BOUND,
    PALEO,
    ROOFLINE,
    device_comparison_figure,
    layer_breakdown_figure,
    paleo_speedup_figure,
    profile_comparison_figure,
    throughput_figure,
)
from core.paleo import (
    Measurement,
    Op,
    Roof,
    Workload,
    calibrate_transfer,
    compare_devices,
    compare_profile,
    layer_breakdown,
    load_net,
    load_workload,
    read_profile,
    simulate,
)
from core.paleo.simulate import BREAKDOWN_COLUMNS


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


# ---------------------------------------------------------------- transfer and profile figures
def _comparison(prices=None):
    w = Workload("toy", "hand", (Op("c", "convolution", "conv", "forward", 0, 1e11, 0, 1e7),), 0, "hand")
    slow, fast = Roof("slow", "fp16", 100, 10, 1000, "hand"), Roof("fast", "fp16", 200, 20, 1000, "hand")
    cal = calibrate_transfer([Measurement(w, slow, "fp16", 10, 0.03)])
    return compare_devices(w, cal, [slow, fast], precision="fp16", batch_size=10, samples_per_epoch=36_000,
                           prices=prices)


def test_device_comparison_figure_draws_the_estimate_its_interval_and_the_measurement():
    cmp = _comparison()
    frame = cmp.to_frame()
    fig = device_comparison_figure(cmp, metric="step_time_s")
    assert [t.name for t in fig.data] == [ESTIMATE, MEASURED]
    assert list(fig.data[0].y) == pytest.approx(frame.step_time_s.tolist())          # 0.03 and 0.015 s
    assert list(fig.data[0].error_y.array) == pytest.approx((frame.step_high_s - frame.step_time_s).tolist())
    assert list(fig.data[1].x) == ["slow"] and list(fig.data[1].y) == pytest.approx([0.03])
    assert fig.layout.yaxis.title.text == "time per step (s)"


def test_cost_chart_needs_a_price():
    assert device_comparison_figure(_comparison(), metric="cost_per_epoch").layout.annotations[0].text == (
        "no device has a price")
    fig = device_comparison_figure(_comparison({"fast": 2.0}), metric="cost_per_epoch")
    assert list(fig.data[0].x) == ["fast"] and list(fig.data[0].y) == pytest.approx([3600 * 0.015 / 3600 * 2.0])


def test_profile_comparison_figure_shows_the_slowest_measured_layers():
    name, path = builtin_profiles()[0]
    profile = read_profile(path.read_bytes(), name)
    cmp = compare_profile(profile, load_workload(profile.net), load_net(profile.net))
    fig = profile_comparison_figure(cmp, top=4)
    assert [t.name for t in fig.data] == [MEASURED, ROOFLINE, PALEO]
    frame = cmp.to_frame()
    top = frame[frame.layer != "(not attributed)"].nlargest(4, "measured_ms")
    assert list(fig.data[0].y) == top.layer.tolist()[::-1]                          # slowest on top
    assert list(fig.data[0].x) == pytest.approx(top.measured_ms.tolist()[::-1])
    assert list(fig.data[2].x) == pytest.approx(top.paleo_ms.tolist()[::-1])
