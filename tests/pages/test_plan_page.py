"""The Plan page: built-in data, sliders, θ sources, steps sources, deadline, greedy (AppTest)."""

from __future__ import annotations

import base64

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from core.datasets import builtin_log_files
from core.defaults import DEFAULT_TARGET_ACC
from core.logs.reader import read_log_file
from core.plan import (
    best_workers,
    cheapest_config,
    default_run,
    duration_text,
    greedy_allocation,
    measured_step_time,
    plan_grid,
    steps_from_run,
)
from core.plan import typed_steps as core_typed_steps
from core.runs import analyse_run
from core.speed import SpeedModel, paper_speed_model, scale_to_step_time
from core.targets import DEFAULT_TARGET, accuracy_target
from tests.pages.conftest import APP, chart_specs, open_page, shown

PAGE = "pages/plan.py"
UNFINISHED_RUN = "resnet8_Intel Xeon Processor.csv"   # the first built-in run; never reaches 92 %
DEFAULT_RUN = "resnet14_Intel Xeon Processor.csv"      # the first built-in run that reaches 92 %
#: the page opens on the paper's θ scaled to the default run's measured step (median wall-clock time per step in its
#: log, 0.012 s) at p = 1, w = 1 (issue 33: the speed model and Paleo calibrated on the run's measured step)
RUN_STEP = measured_step_time(read_log_file(dict(builtin_log_files("mnist1d"))[DEFAULT_RUN], source=DEFAULT_RUN))
CALIBRATED = scale_to_step_time(paper_speed_model("sync"), RUN_STEP, 1, 1)
#: the course's example step, where the steps do not come from a run: 0.906 s at p = 2, w = 4
EXAMPLE = scale_to_step_time(paper_speed_model("sync"), 0.906, 2, 4)


@pytest.fixture(scope="module")
def builtin_analyses():
    return [analyse_run(read_log_file(p), target=DEFAULT_TARGET) for _, p in builtin_log_files("mnist1d")]


@pytest.fixture(scope="module")
def builtin_steps(builtin_analyses):
    """Steps to 92 % for the page's default run, computed by core alone: the page opens on the first
    built-in run that reached the target (issue 21: data that answers the question), measured."""
    name = default_run(builtin_analyses)
    assert name == "resnet14_Intel Xeon Processor.csv"          # resnet8, listed first, never reaches 92 %
    run = next(a for a in builtin_analyses if a.log.source == name)
    return steps_from_run(run, builtin_analyses, method="auto")


@pytest.fixture(scope="module")
def posterior_steps(builtin_analyses):
    """Steps to 92 % of the unfinished run: five other architectures are loaded, so the posterior (issue 12)."""
    run = next(a for a in builtin_analyses if a.log.source == UNFINISHED_RUN)
    return steps_from_run(run, builtin_analyses, method="posterior")


def figure(at, index: int = 0) -> dict:
    return chart_specs(at)[index]


def _plain(value):
    """Plotly's JSON writes numeric arrays as typed arrays ({"dtype", "bdata"}): decode to a list."""
    if isinstance(value, dict) and "bdata" in value:
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).tolist()
    return value


def trace(spec: dict, name: str) -> dict:
    """The trace called ``name``, with its x, y and text as plain lists."""
    found = next(t for t in spec["data"] if t["name"] == name)
    return {k: _plain(v) for k, v in found.items()}


def metrics(at) -> dict[str, str]:
    return {shown(m.label): m.value for m in at.metric}


def shown_grid(at) -> pd.DataFrame:
    return at.dataframe[0].value


def example_step(at) -> None:
    """Calibrate the speed model on the course's example step, 0.906 s at p = 2, w = 4 (the page opens on the
    default run's measured step)."""
    at.number_input(key="plan_cal_step_time").set_value(0.906)
    at.number_input(key="plan_cal_p").set_value(2)
    at.number_input(key="plan_cal_w").set_value(4).run()


def typed_steps(at, steps: float, low: float | None = None, high: float | None = None) -> None:
    at.radio(key="plan_steps_source").set_value("typed").run()
    at.number_input(key="plan_steps").set_value(steps)
    at.number_input(key="plan_steps_low").set_value(low)
    at.number_input(key="plan_steps_high").set_value(high).run()


def test_renders_on_builtin_data_with_the_core_numbers(builtin_steps):
    at = open_page(PAGE)
    assert at.title[0].value == "Plan"
    assert at.selectbox(key="plan_run").value == "resnet14_Intel Xeon Processor.csv"
    assert at.radio(key="plan_run_method").value == "auto"
    assert metrics(at)["Steps to target"] == "1,071" == f"{builtin_steps.steps:,.0f}"   # measured, passed 0.92
    assert builtin_steps.interval is None and builtin_steps.source == "measured"
    grid = plan_grid(CALIBRATED, builtin_steps.steps, ps=(2, 4), workers=range(1, 33),
                     price_worker=2.5, price_ps=0.5)
    best = best_workers(grid)
    # a run of seconds: the chart reads in seconds, not in thousandths of an hour
    assert figure(at, 0)["layout"]["yaxis"]["title"]["text"] == "time to target (seconds)"
    assert trace(figure(at, 0), "p = 2")["y"] == pytest.approx(grid[grid["p"] == 2]["time_s"].tolist(), rel=1e-9)
    assert not at.warning
    tta = figure(at, 0)
    assert [t["name"] for t in tta["data"]][:3] == ["p = 2", "p = 4", "best w"]
    # Paleo on the device the run was measured on, as far as Paleo knows it: a Xeon, so its one processor;
    # calibrated on the run's measured step, the one Optimus is calibrated to (0.012 s at p = 1, w = 1)
    assert RUN_STEP == pytest.approx(0.012)
    assert [t["name"] for t in tta["data"]][3:] == ["Paleo p = 2 (CPU_I7, ethernet; calibrated)",
                                                    "Paleo p = 4 (CPU_I7, ethernet; calibrated)"]
    assert any("resnet14" in shown(c.value) and "measured step: 0.012 s at p = 1, w = 1" in shown(c.value)
               for c in at.caption)
    assert any("makes Paleo's step at w = 1, p = 1 take the measured 0.012 s" in shown(c.value) for c in at.caption)
    assert trace(tta, "best w")["x"] == best["w"].tolist() == [7, 10]   # sqrt(130.56·p/4.92): 7, 10
    assert trace(tta, "best w")["text"] == ["w = 7", "w = 10"]
    assert metrics(at)["Best w for p = 2"] == "w = 7" and metrics(at)["Best w for p = 4"] == "w = 10"
    # a run of seconds reads in seconds, its hours beside (0.000999 hours alone reads as nothing)
    fastest = best.set_index("p").loc[2, "time_s"]
    assert fastest < 360 and any(shown(c.value).startswith(f"{duration_text(fastest)} (0.00") for c in at.caption)
    pd.testing.assert_frame_equal(shown_grid(at).reset_index(drop=True), grid, check_dtype=False)
    cost = figure(at, 1)
    assert [t["name"] for t in cost["data"]][:3] == ["p = 2", "p = 4", "Pareto frontier"]
    assert {"greedy path", "exhaustive optimum"} <= {t["name"] for t in cost["data"]}
    assert not at.error


def test_an_unfinished_run_takes_the_posterior_with_its_interval(posterior_steps):
    at = open_page(PAGE)
    at.selectbox(key="plan_run").set_value(UNFINISHED_RUN).run()
    assert at.radio(key="plan_run_method").options[0] == "posterior (other runs × its epochs)"
    at.radio(key="plan_run_method").set_value("posterior").run()
    assert metrics(at)["Steps to target"] == f"{posterior_steps.steps:,.0f}"
    assert posterior_steps.interval is not None and posterior_steps.source == "posterior"
    grid = plan_grid(CALIBRATED, posterior_steps.steps, ps=(2, 4), workers=range(1, 33),
                     steps_interval=posterior_steps.interval, price_worker=2.5, price_ps=0.5)
    assert [t["name"] for t in figure(at)["data"]][:5] == ["p = 2 range", "p = 2", "p = 4 range", "p = 4", "best w"]
    pd.testing.assert_frame_equal(shown_grid(at).reset_index(drop=True), grid, check_dtype=False)


def _in_page_order(node):
    """Every element of the page, depth first, in the order a browser shows them."""
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _in_page_order(child)


def test_the_headline_comes_first_and_its_title_is_not_cut():
    at = open_page(PAGE)
    spec = chart_specs(at)[0]
    assert spec["layout"]["title"]["text"] == "Time to target against workers"     # short: never cut off
    assert spec["layout"]["title"]["subtitle"]["text"].startswith("resnet14_Intel Xeon Processor.csv")
    kinds = [getattr(e, "type", None) for e in _in_page_order(at.main)]
    keys = [getattr(e, "key", None) for e in _in_page_order(at.main)]
    chart, best = kinds.index("plotly_chart"), kinds.index("metric")
    first_input = min(i for i, k in enumerate(keys) if k in ("plan_target_acc", "plan_max_workers", "plan_run"))
    assert chart < first_input and best < first_input          # the answer before every input
    assert at.metric[0].label == "Best w for p = 2"
    assert not at.exception


def test_worker_slider_and_ps_choice_move_the_best_w_as_core_says(builtin_steps):
    at = open_page(PAGE)
    at.slider(key="plan_max_workers").set_value(8).run()
    # p = 4 is best at w = 10 with room; capped at 8 workers it is best at the edge
    assert trace(figure(at), "best w")["text"] == ["w = 7", "w = 8"]
    at.multiselect(key="plan_ps").set_value([1, 8]).run()
    grid = plan_grid(CALIBRATED, builtin_steps.steps, ps=(1, 8), workers=range(1, 9),
                     steps_interval=builtin_steps.interval)
    expected = best_workers(grid)["w"].tolist()
    # p = 1: sqrt(130.56/4.92) = 5.15 -> 5; p = 8: sqrt(130.56·8/4.92) = 14.6, capped at 8
    assert expected == [5, 8]
    assert trace(figure(at), "best w")["x"] == expected
    assert metrics(at)["Best w for p = 1"] == "w = 5" and metrics(at)["Best w for p = 8"] == "w = 8"
    assert "Best w for p = 2" not in metrics(at)


def test_typed_theta_and_steps_give_the_optimum_worked_out_by_hand():
    at = open_page(PAGE)
    at.radio(key="plan_theta_source").set_value("typed").run()
    for name, value in zip(("theta0", "theta1", "theta2", "theta3", "theta4"), (1.0, 0.0, 1.0, 0.0, 0.0)):
        at.number_input(key=f"plan_theta_sync_{name}").set_value(value)
    at.number_input(key="plan_batch").set_value(32)
    at.multiselect(key="plan_ps").set_value([2, 8])
    typed_steps(at, 450)
    # 1/f = 32/w + w/p seconds per step: least at w = sqrt(32·p), i.e. w = 8 for p = 2 (4 + 4 = 8 s)
    # and w = 16 for p = 8 (2 + 2 = 4 s); 450 steps take 3600 s = 1 h and 1800 s = 0.5 h
    best = trace(figure(at), "best w")
    assert best["x"] == [8, 16] and best["y"] == pytest.approx([1.0, 0.5])
    assert metrics(at)["Best w for p = 2"] == "w = 8" and metrics(at)["Best w for p = 8"] == "w = 16"
    assert any(c.value.startswith("1 hours;") for c in at.caption)
    assert figure(at)["layout"]["yaxis"]["title"]["text"] == "time to target (hours)"
    assert not at.warning


def test_paper_theta_warns_of_paper_units_and_calibration_switches_to_hours(builtin_steps):
    at = open_page(PAGE)
    at.toggle(key="plan_calibrate").set_value(False).run()
    assert any("paper units" in shown(w.value) for w in at.warning)
    assert figure(at)["layout"]["yaxis"]["title"]["text"] == "time to target (paper units)"
    # no hours and no money in paper units: the table leaves them empty, the cost section says why
    assert shown_grid(at)["time_h"].isna().all() and shown_grid(at)["cost"].isna().all()
    assert any("Cost needs time in hours" in shown(i.value) for i in at.info) and len(chart_specs(at)) == 1
    at.toggle(key="plan_calibrate").set_value(True).run()
    at.number_input(key="plan_cal_step_time").set_value(0.906)
    at.number_input(key="plan_cal_p").set_value(2)
    at.number_input(key="plan_cal_w").set_value(4).run()
    assert not at.warning
    assert figure(at)["layout"]["yaxis"]["title"]["text"] == "time to target (minutes)"    # all under two hours
    grid = shown_grid(at).set_index(["p", "w"])
    # calibrated at p = 2, w = 4: one step there takes 0.906 s
    assert grid.loc[(2, 4), "time_s"] == pytest.approx(builtin_steps.steps * 0.906)
    assert grid.loc[(2, 4), "time_h"] == pytest.approx(builtin_steps.steps * 0.906 / 3600)
    assert (grid["time_unit"] == "s").all()
    assert trace(figure(at), "best w")["x"] == [7, 10]          # the shape of the curves is kept


def test_bad_speed_table_is_named_and_the_builtin_table_still_fits():
    at = open_page(PAGE)
    at.radio(key="plan_theta_source").set_value("table").run()
    at.file_uploader(key="plan_speed_upload").set_value([
        ("bad_speeds.csv", b"w,steps_per_s\n0,1.0\n2,1.5\n", "text/csv")]).run()
    assert not at.exception
    errors = [shown(e.value) for e in at.error]
    assert errors == ["bad_speeds.csv: expected w integers >= 1; got 0 in row 1. Fix or remove that row."]
    assert at.selectbox(key="plan_speed_table").value == "built-in: Pollux cifar10/scalability.csv"
    assert any("MAPE 12.53 %" in shown(c.value) for c in at.caption)          # docs/plan.md, cifar10
    names = [t["name"] for t in figure(at)["data"]]
    assert names[:2] == ["all-reduce", "best w"]                    # measured steps: no interval, no range
    # seconds: Paleo is drawn too (Xeon run), calibrated on the fitted model's own step at w = 1
    assert names[2:] == ["Paleo ring all-reduce (CPU_I7, ethernet; calibrated)"]
    assert "Best w (all-reduce)" in metrics(at)


def test_uploaded_ps_table_is_fitted_and_offers_sync_and_async():
    theta = (0.01, 0.1, 0.05, 0.002, 0.01)
    truth = SpeedModel("sync", theta, global_batch=128)
    rows = ["p,w,global_batch,steps_per_s"] + [f"{p},{w},128,{truth.steps_per_s(p, w)!r}"
                                                for p in (1, 2, 4) for w in (1, 2, 4, 8)]
    at = open_page(PAGE)
    at.radio(key="plan_theta_source").set_value("table").run()
    at.file_uploader(key="plan_speed_upload").set_value([
        ("ps_speeds.csv", ("\n".join(rows) + "\n").encode(), "text/csv")]).run()
    assert not at.error
    assert at.selectbox(key="plan_speed_table").value == "uploaded: ps_speeds.csv"
    assert at.radio(key="plan_mode").options == ["synchronous (Eq. 4)", "asynchronous (Eq. 3)"]
    best = best_workers(plan_grid(truth, 50_000, ps=(2, 4), workers=range(1, 33)))["w"].tolist()
    typed_steps(at, 50_000)
    assert trace(figure(at), "best w")["x"] == best
    assert any("MAPE 0.00 %" in shown(c.value) for c in at.caption)


def test_calibrate_prediction_is_offered_only_when_the_session_has_it():
    at = open_page(PAGE)
    assert "calibrate" not in at.radio(key="plan_steps_source").options
    at = AppTest.from_file(str(APP), default_timeout=600)
    # what the Calibrate page hands over: a StepsEstimate (core.plan.steps_from_calibration)
    at.session_state["calibrated_steps"] = core_typed_steps(60_000, low=45_000, high=80_000,
                                                            label="ResNet-50 on Tesla V100")
    at.run()
    at.switch_page(PAGE).run()
    source = at.radio(key="plan_steps_source")
    assert "the Calibrate page's prediction" in source.options
    source.set_value("calibrate").run()
    example_step(at)
    assert metrics(at)["Steps to target"] == "60,000"
    names = [t["name"] for t in figure(at)["data"]]
    assert names[:5] == ["p = 2 range", "p = 2", "p = 4 range", "p = 4", "best w"]
    grid = shown_grid(at).set_index(["p", "w"])
    assert grid.loc[(2, 4), "time_s_low"] == pytest.approx(45_000 * 0.906)   # 0.906 s per step at (2, 4)


def test_deadline_and_budget_choices_equal_core():
    at = open_page(PAGE)
    typed_steps(at, 10_000)
    example_step(at)
    at.number_input(key="plan_deadline_hours").set_value(2.0)
    at.number_input(key="plan_budget").set_value(12).run()
    model = scale_to_step_time(paper_speed_model("sync"), 0.906, 2, 4)
    grid = plan_grid(model, 10_000, ps=(2, 4), workers=range(1, 33), price_worker=2.5, price_ps=0.5)
    choice = cheapest_config(grid, deadline=2.0)
    assert choice.met
    assert metrics(at)["Cheapest within 2 hours"] == f"p = {choice.p}, w = {choice.w}"
    alloc = greedy_allocation(model, 10_000, budget=12, price_worker=2.5, price_ps=0.5)
    assert metrics(at)["Greedy allocation, 12 tasks"] == f"p = {alloc.greedy.p}, w = {alloc.greedy.w}"
    star = trace(figure(at, 1), "cheapest under deadline")
    assert star["text"] == [f"p = {choice.p}, w = {choice.w}"]


def test_async_mode_plans_with_the_async_equation(builtin_steps):
    at = open_page(PAGE)
    at.radio(key="plan_mode").set_value("async").run()
    model = scale_to_step_time(paper_speed_model("async"), 0.906, 2, 4)
    grid = plan_grid(model, builtin_steps.steps, ps=(2, 4), workers=range(1, 33),
                     steps_interval=builtin_steps.interval)
    assert trace(figure(at), "best w")["x"] == best_workers(grid)["w"].tolist()
    assert (shown_grid(at)["mode"] == "async").all()


def test_fitted_method_on_a_run_that_reached_the_target_uses_the_other_runs():
    at = open_page(PAGE)
    run = "resnet20_Intel Xeon Processor.csv"
    at.selectbox(key="plan_run").set_value(run).run()
    assert metrics(at)["Steps to target"] == "945"               # measured: epoch 15's last step
    at.radio(key="plan_run_method").set_value("fitted").run()
    assert "4 other train run(s)" in " ".join(shown(c.value) for c in at.caption)
    at.number_input(key="plan_loss_threshold").set_value(0.5).run()
    assert any("threshold typed in: L = 0.5" in shown(c.value) for c in at.caption)


def test_no_runs_loaded_falls_back_to_typed_steps():
    at = open_page(PAGE)
    at.sidebar.multiselect(key="builtin_sets_widget").set_value([]).run()
    assert not at.exception
    # the built-in batch-scaling fit needs no loaded run: it stays offered, after the typed number
    assert at.radio(key="plan_steps_source").options == ["a number typed in",
                                                         "a batch-scaling fit (runs at several batches)"]
    assert metrics(at)["Steps to target"] == "50,000" and chart_specs(at)


def test_builtin_runs_chosen_on_logs_survive_the_switch_to_plan():
    """Regression: the sidebar's built-in choice was dropped on a page switch (the widget id is per page)."""
    at = AppTest.from_file(str(APP), default_timeout=600).run()
    at.sidebar.multiselect(key="builtin_sets_widget").set_value(["mnist1d", "pollux"]).run()
    at.switch_page(PAGE).run()
    runs = at.selectbox(key="plan_run").options
    assert len(runs) == 12 + 13 and any(r.startswith("cifar10/validation-128.csv") for r in runs)


def test_mode_falls_back_when_the_theta_source_no_longer_offers_it():
    at = open_page(PAGE)
    at.radio(key="plan_theta_source").set_value("typed").run()
    at.radio(key="plan_mode").set_value("allreduce").run()
    assert [t["name"] for t in figure(at)["data"]][:2] == ["all-reduce", "best w"]
    assert at.multiselect(key="plan_ps").disabled
    at.radio(key="plan_theta_source").set_value("paper").run()       # the paper has no all-reduce θ
    assert not at.exception and not at.error
    assert at.radio(key="plan_mode").value == "sync"
    assert trace(figure(at), "best w")["x"] == [7, 10]


def test_paleo_estimate_is_drawn_beside_optimus_with_core_numbers():
    from core.paleo import load_net
    from core.plan.paleo_time import paleo_time_to_target

    at = open_page(PAGE)
    at.radio(key="plan_theta_source").set_value("typed").run()
    at.radio(key="plan_mode").set_value("sync").run()
    typed_steps(at, 20_000)
    at.selectbox(key="plan_paleo_net").set_value("torch:resnet50_cifar").run()
    assert not at.exception
    # the page's run was measured on a Xeon: Paleo's curve defaults to its one processor, not a V100
    assert at.selectbox(key="plan_paleo_device").value == "CPU_I7"
    assert any(t["name"] == "Paleo p = 2 (CPU_I7, ethernet; calibrated)" for t in figure(at, 0)["data"])
    # uncalibrated, one click away: Paleo's roofline at the TensorFlow PPP typed below
    at.toggle(key="plan_paleo_calibrated").set_value(False).run()
    at.selectbox(key="plan_paleo_device").set_value("V100").run()
    tta = figure(at, 0)
    names = [t["name"] for t in tta["data"]]
    assert names[-2:] == ["Paleo p = 2 (V100, ethernet)", "Paleo p = 4 (V100, ethernet)"]
    expected = paleo_time_to_target(load_net("torch:resnet50_cifar"), 20_000, workers=range(1, 33), ps=(2, 4),
                                    global_batch=128, device="V100", network="ethernet", ppp_comp=0.62,
                                    ppp_comm=0.72)
    p2 = expected[expected["p"] == 2].sort_values("w")
    assert trace(tta, "Paleo p = 2 (V100, ethernet)")["y"] == pytest.approx(p2["time_h"].tolist())
    at.toggle(key="plan_paleo_on").set_value(False).run()
    assert not any(t["name"].startswith("Paleo") for t in figure(at, 0)["data"])


def test_a_run_short_of_the_target_can_be_extrapolated_by_the_logs_family():
    from core.prediction import forecast_epoch_at_target
    from tests.conftest import ROOT

    at = open_page(PAGE)
    run = "resnet8_Intel Xeon Processor.csv"          # never reaches 92 % in its 24 epochs
    at.radio(key="plan_steps_source").set_value("run").run()
    at.selectbox(key="plan_run").set_value(run).run()
    at.radio(key="plan_run_method").set_value("family").run()
    assert not at.exception
    logs = [read_log_file(p) for p in sorted((ROOT / "data" / "logs").glob("*.csv"))]
    log = next(lg for lg in logs if lg.source == run)
    p = forecast_epoch_at_target(log, logs, target=accuracy_target(DEFAULT_TARGET_ACC), family="auto").prediction
    # epoch × 63 steps per epoch
    assert metrics(at)["Steps to target"] == f"{p.epoch * 63:,.0f}"


def test_step_time_from_a_gpu_transfer_scales_the_paper_theta(builtin_steps):
    from core.paleo import Measurement, calibrate_transfer, compare_devices, load_workload
    from pages.shared.transfer import TRANSFERRED_STEPS

    at = open_page(PAGE)
    at.radio(key="plan_theta_source").set_value("transfer").run()
    assert not at.exception and shown(at.error[0].value).startswith(
        "Step time from a GPU transfer: expected one sent from the Throughput page; got none.")
    # what the Throughput page sends: a DeviceComparison (core.paleo.compare_devices)
    workload = load_workload("resnet50")
    cal = calibrate_transfer([Measurement(workload, "A100_PCIE_80GB", "fp16", 408, 0.126)])
    at.session_state[TRANSFERRED_STEPS] = compare_devices(workload, cal, ["A100_PCIE_80GB", "H100_SXM"],
                                                          precision="fp16", batch_size=408)
    at.run()
    at.selectbox(key="plan_transfer_device").set_value("H100_SXM")
    at.number_input(key="plan_transfer_p").set_value(2)
    at.number_input(key="plan_transfer_w").set_value(4).run()
    assert not at.exception and not at.error
    step = at.session_state[TRANSFERRED_STEPS].step_time_s("H100_SXM")
    grid = shown_grid(at).set_index(["p", "w"])
    # the paper's θ scaled so that one step at p = 2, w = 4 takes the H100's transferred step time
    assert grid.loc[(2, 4), "time_s"] == pytest.approx(builtin_steps.steps * step)


# ---------------------------------------------------------------- issue 11: the batch follows the workers
def test_the_scaling_rule_changes_the_plotted_times_as_the_formula_says():
    at = open_page(PAGE)
    typed_steps(at, 50_000)                                          # measured at the page's M = 128
    example_step(at)
    fixed = trace(figure(at), "p = 2")
    at.radio(key="plan_scaling_rule").set_value("per-worker").run()
    at.number_input(key="plan_per_worker_batch").set_value(32)
    at.number_input(key="plan_b_noise").set_value(2000.0).run()
    assert not at.exception
    grown = trace(figure(at), "p = 2")
    w = grown["x"]
    # at w = 4 the batch is 4·32 = 128, where the steps were measured: the same time as the fixed rule
    assert grown["y"][w.index(4)] == pytest.approx(fixed["y"][w.index(4)], rel=1e-9)
    # at w = 8: M = 256, E_min = 50000·128/(1 + 128/2000), S = E_min·(1 + 256/2000)/256 = 26,503.8 steps;
    # a step at (2, 8) with M = 256 takes 0.0204·256/8 + 0.0556 + 0.0984·8/2 + 0.0004·2 = 1.1028 s
    steps = 50_000 * 128 / 1.064 * 1.128 / 256
    assert steps == pytest.approx(26_503.76, rel=1e-6)
    assert grown["y"][w.index(8)] == pytest.approx(steps * 1.1028 / 3600, rel=1e-9)
    # and the fixed rule at w = 8: 50,000 steps of 0.0204·16 + 0.0556 + 0.3936 + 0.0008 = 0.7764 s
    assert fixed["y"][w.index(8)] == pytest.approx(50_000 * 0.7764 / 3600, rel=1e-9)
    # the chart says the rule and shows the steps each w needs on its second axis
    spec = figure(at)
    assert "per-worker batch m = 32 (M = w·m)" in spec["layout"]["title"]["subtitle"]["text"]
    shown_steps = trace(spec, "steps to target")
    assert shown_steps["y"][shown_steps["x"].index(8)] == pytest.approx(steps, rel=1e-9)
    assert spec["layout"]["yaxis2"]["title"]["text"] == "steps to target"


def test_steps_from_the_builtin_batch_fit_under_the_best_batch_rule_follow_core():
    from core.batch import batch_study
    from core.datasets import batch_run_files
    from core.logs import read_log_files
    from core.plan import ScalingRule, batch_plan_grid

    at = open_page(PAGE)
    at.radio(key="plan_steps_source").set_value("batch").run()
    at.radio(key="plan_scaling_rule").set_value("best").run()
    assert not at.exception and not at.error
    assert "plan_b_noise" not in [n.key for n in at.number_input]     # the fit gives B_noise
    read = read_log_files([(n, p.read_bytes()) for n, p in batch_run_files("mnist1d_batch")])
    model = batch_study(read.logs, target=DEFAULT_TARGET, noise=read.noise).model
    grid = batch_plan_grid(CALIBRATED, model, ScalingRule("best", batch_min=32, batch_max=8192), ps=(2, 4),
                           workers=range(1, 33), price_worker=2.5, price_ps=0.5)
    spec = figure(at)
    for p in (2, 4):
        part = grid[grid["p"] == p]
        unit = spec["layout"]["yaxis"]["title"]["text"].removeprefix("time to target (").removesuffix(")")
        scale = {"hours": 1.0, "minutes": 60.0, "seconds": 3600.0}[unit]
        assert trace(spec, f"p = {p}")["y"] == pytest.approx((part["time_h"] * scale).tolist(), rel=1e-9)
        assert trace(spec, f"steps to target, p = {p}")["y"] == pytest.approx(part["steps"].tolist(), rel=1e-9)
    # the S(M) of the default M = 128 is the steps metric: E_min·(1 + 128/B_noise)/128
    assert metrics(at)["Steps to target"] == f"{model.steps(128):,.0f}"


def test_both_speed_families_are_fitted_and_the_better_one_planned():
    at = open_page(PAGE)
    at.radio(key="plan_theta_source").set_value("table").run()
    at.radio(key="plan_speed_family").set_value("auto").run()
    assert not at.exception
    fits = next(d.value for d in at.dataframe if "loo_mape_pct" in d.value.columns)
    # every family auto fitted is listed (a registered family is added to the table), Pollux the one chosen
    assert {"optimus", "pollux"} <= set(fits["family"]) and fits.loc[fits["chosen"], "family"].tolist() == ["pollux"]
    assert any(shown(c.value).startswith("Speed model: pollux (lower leave-one-out MAPE") for c in at.caption)


def test_a_batch_fit_of_loaded_runs_without_their_batches_says_what_is_missing():
    at = open_page(PAGE)
    at.radio(key="plan_steps_source").set_value("batch").run()
    at.selectbox(key="plan_batch_set").set_value("loaded").run()      # the built-in MNIST-1D depth logs
    assert not at.exception
    assert any("expected runs of one job at two or more global batches that reached the target; got 0 run(s)"
               in shown(e.value) for e in at.error)
    assert any("Nothing to plan" in i.value for i in at.info)
