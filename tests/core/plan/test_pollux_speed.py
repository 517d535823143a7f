"""Pollux's throughput model and the choice between speed families (core.speed.pollux, speed_select)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import nnls

from core.datasets import DATA_DIR
from core.errors import InputError
from core.speed import build_speed_model, fit_speed, scale_to_step_time
from core.speed.optimus import SpeedModel, speed_features
from core.speed.pollux import PolluxSpeedModel, pollux_step_time
from core.speed.pollux_fit import _objective, fit_pollux_speed, pollux_data

POLLUX = DATA_DIR / "pollux_traces"
TRUE = (0.02, 0.001, 0.03, 0.004, 0.0, 0.01, 0.002, 2.0)


def _table(params=TRUE, placements=((1, 1), (1, 2), (1, 4), (2, 8), (4, 16)), local=(16, 32, 64, 128)):
    rows = [(n, k, m) for n, k in placements for m in local]
    t = [pollux_step_time(params, n, k, m) for n, k, m in rows]
    return pd.DataFrame(rows, columns=["num_nodes", "num_replicas", "local_bsz"]).assign(step_time=t)


def test_step_time_on_hand_values():
    # T_c = 0.02 + 0.001·64 = 0.084; 2 nodes, 8 replicas: T_n = 0.03 + 0.004·6 = 0.054;
    # γ = 2: sqrt(0.084² + 0.054²) = 0.09986
    assert pollux_step_time(TRUE, 2, 8, 64) == pytest.approx(np.hypot(0.084, 0.054), rel=1e-12)
    # one node, 4 replicas: intra-node T_n = 0.01 + 0.002·2 = 0.014
    assert pollux_step_time(TRUE, 1, 4, 64) == pytest.approx(np.hypot(0.084, 0.014), rel=1e-12)
    # γ = 1: no overlap, the times add; the node term δ_n·(N − 2) counts from the third node
    no_overlap = (0.02, 0.001, 0.03, 0.004, 0.005, 0.01, 0.002, 1.0)
    assert pollux_step_time(no_overlap, 4, 16, 64) == pytest.approx(0.084 + 0.03 + 0.004 * 14 + 0.005 * 2)


def test_the_gradient_of_the_fit_objective_matches_finite_differences():
    d, _ = pollux_data(pd.read_csv(POLLUX / "cifar10" / "scalability.csv"))
    x = np.array([0.03, 0.002, 0.1, 0.004, 0.003, 0.05, 0.002, 1.7])
    _, grad = _objective(x, d)
    h = 1e-7
    numeric = [(_objective(x + e, d)[0] - _objective(x - e, d)[0]) / (2 * h) for e in np.eye(8) * h]
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-8)


def test_fit_reproduces_noiseless_step_times():
    model = fit_pollux_speed(_table())
    assert model.mape_pct < 0.5
    assert model.gpus_per_node == 4                    # 16 replicas on 4 nodes
    # the plan at a configuration it did not see: 2 nodes of 4 GPUs at local batch 48, by hand from TRUE:
    # T_c = 0.02 + 0.001·48 = 0.068; T_n = 0.03 + 0.004·(8 − 2) = 0.054 (no node term at 2 nodes); γ = 2
    assert 1 / model.steps_per_s_at(0, 8, 8 * 48) == pytest.approx(np.hypot(0.068, 0.054), rel=0.02)   # 0.0868 s


def test_parameters_the_table_cannot_show_are_pinned_and_flagged():
    one_batch = _table(local=(64,))
    model = fit_pollux_speed(one_batch)
    assert any("α_c pinned" in f for f in model.flags)
    only_multi_node = _table(placements=((2, 8), (4, 16), (8, 32)))
    model = fit_pollux_speed(only_multi_node)
    p = model.named_params
    assert (p["alpha_r"], p["beta_r"]) == (p["alpha_n"], p["beta_n"])
    assert any("intra-node all-reduce taken as the inter-node one" in f for f in model.flags)


def test_a_table_with_parameter_servers_is_refused():
    tab = pd.DataFrame({"p": [1, 2, 2], "w": [1, 2, 4], "global_batch": 128, "steps_per_s": [1.0, 1.5, 2.0]})
    with pytest.raises(InputError, match=r"s\.csv: expected an all-reduce table.*--model optimus"):
        fit_pollux_speed(tab, source="s.csv")


@pytest.mark.parametrize("job", ["bert", "cifar10", "deepspeech2", "imagenet", "ncf", "yolov3"])
def test_every_pollux_scalability_trace_fits_within_10_pct(job):
    model = fit_pollux_speed(pd.read_csv(POLLUX / job / "scalability.csv"))
    assert model.mape_pct <= 10.0          # measured 3.95 to 8.97 % (bench/speed_models.py)


def test_calibrating_a_pollux_model_to_a_step_time_scales_every_time_term():
    model = PolluxSpeedModel(TRUE, global_batch=512, gpus_per_node=4)
    cal = scale_to_step_time(model, 0.5, 0, 8)
    assert cal.step_time_s(0, 8) == pytest.approx(0.5, rel=1e-12)
    assert cal.params[-1] == TRUE[-1]                                # γ unchanged
    assert cal.step_time_s(0, 16) / cal.step_time_s(0, 8) == pytest.approx(
        model.step_time_s(0, 16) / model.step_time_s(0, 8), rel=1e-12)


# ---------------------------------------------------------------- the choice
def test_auto_keeps_the_family_with_the_smaller_leave_one_out_error():
    fit = fit_speed(_table(), family="auto")
    table = fit.table().set_index("family")
    assert fit.chosen == "pollux" and table.loc["pollux", "chosen"]
    assert table.loc["pollux", "loo_mape_pct"] < table.loc["optimus", "loo_mape_pct"]
    lo, hi = fit.model.time_band
    assert lo <= 1.0 <= hi


def test_optimus_leave_one_out_equals_refitting_without_each_point():
    w = np.array([1, 2, 4, 8, 16, 32])
    t = 0.001 * 256 / w + 0.05 + 0.002 * w * (1 + 0.05 * np.sin(w))      # not exactly the model
    tab = pd.DataFrame({"w": w, "global_batch": 256, "step_time_s": t})
    fit = fit_speed(tab, family="optimus")
    X = speed_features("allreduce", 0, w, 256)
    misses = []
    for i in range(len(w)):
        keep = np.arange(len(w)) != i
        theta, _ = nnls(X[keep], t[keep])
        misses.append(abs(1 / (X[i] @ theta) - 1 / t[i]) * t[i])
    assert fit.model.loo_mape_pct == pytest.approx(100 * np.mean(misses), rel=1e-9)


def test_a_table_with_parameter_servers_gets_optimus_and_says_why_not_pollux():
    P, W = (a.ravel() for a in np.meshgrid([1, 2, 4], [1, 2, 4, 8]))
    f = SpeedModel("sync", (0.01, 0.2, 0.05, 0.003, 0.02), global_batch=128).steps_per_s(P, W)
    tab = pd.DataFrame({"p": P, "w": W, "global_batch": 128, "steps_per_s": f})
    fit = fit_speed(tab, family="auto")
    assert fit.chosen == "optimus" and fit.model.mode == "sync"
    assert fit.problems[0][0] == "pollux" and "no parameter servers" in fit.problems[0][1]
    with pytest.raises(InputError, match="no parameter servers"):
        fit_speed(tab, family="pollux")


@pytest.mark.parametrize("job", ["cifar10", "ncf"])     # the two traces where Optimus alone misses 10 %
def test_auto_meets_10_pct_leave_one_out_where_optimus_alone_does_not(job):
    fit = fit_speed(pd.read_csv(POLLUX / job / "scalability.csv"), family="auto")
    optimus = fit.table().set_index("family").loc["optimus"]
    assert optimus["mape_pct"] > 10 and fit.model.loo_mape_pct <= 10 and fit.chosen == "pollux"


def test_build_speed_model_fits_the_family_asked_for():
    tab = _table()
    assert build_speed_model("table", mode="allreduce", table=tab, family="pollux").family == "pollux"
    assert build_speed_model("table", mode="allreduce", table=tab, global_batch=256).family == "optimus"
