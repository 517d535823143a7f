"""The Scaling page (AppTest): each tab renders, inputs change the numbers as core says, bad
tables are named while the rest of the page keeps working."""

from __future__ import annotations

import base64
import importlib.machinery
import sys
import types

import numpy as np
import pandas as pd
import pytest

from core.batch import TUNED_NOTE
from core.defaults import DEFAULT_TARGET_ACC
from core.scaling import (
    POLLUX_DIR,
    PSJob,
    allreduce_bytes,
    async_schedule,
    batch_size_plan,
    crossover_machines,
    filter_rows,
    local_then_send,
    parse_scaling_table,
    ps_rounds,
    ps_time_vs_machines,
    read_pollux_trace,
    scaling_analysis,
    sync_schedule,
)
from core.targets import accuracy_target
from tests.pages.conftest import chart_specs, open_page, shown

PAGE = "pages/scaling.py"
TABS = ["Parameter-server rounds", "Sync vs async", "Measured scaling", "Batch size"]
CHARTS = ["Parameter-server rounds: the first rounds and the last", "Total time against worker machines",
          "Train locally, send the model back once", "Synchronous vs asynchronous updates",
          "Speed-up against GPUs", "Parallel efficiency against GPUs", "Where the time goes (estimate)",
          "All-reduce bandwidth achieved", "Samples to target against the global batch",
          "Statistical efficiency and goodput against the global batch", "Learning rate with gradual warm-up"]
# The hand example of docs/scaling.md: 1000 samples, 32 a minibatch, 3 workers, 2 epochs,
# broadcast 1 s, compute 5 s, gather 1 s, aggregate 0.5 s.
HAND = dict(scaling_ps_samples=1000, scaling_ps_batch=32, scaling_ps_epochs=2, scaling_ps_machines=3,
            scaling_ps_broadcast=1.0, scaling_ps_compute=5.0, scaling_ps_gather=1.0,
            scaling_ps_aggregate=0.5)
# docs/scaling.md's illustrative cluster table (the "Edit a table" example)
CLUSTER = b"gpus,nodes,batch_per_gpu,epoch_time_s\n1,1,128,120\n2,1,64,70\n4,1,32,45\n2,1,128,64\n4,2,128,40\n"


@pytest.fixture
def no_models(monkeypatch):
    """This tree without core.models (None in sys.modules makes find_spec return None)."""
    monkeypatch.setitem(sys.modules, "core.models", None)


@pytest.fixture
def fake_models(monkeypatch):
    """A stand-in for core.models with the agreed API (MODEL_NAMES, parameter_count)."""
    module = types.ModuleType("core.models")
    module.__spec__ = importlib.machinery.ModuleSpec("core.models", None)
    module.MODEL_NAMES = ("resnet8", "resnet20")
    module.parameter_count = {"resnet8": 78_042, "resnet20": 272_474}.__getitem__
    monkeypatch.setitem(sys.modules, "core.models", module)
    return module


def metric(at, label: str) -> str:
    hits = [m.value for m in at.metric if shown(m.label) == label]
    assert len(hits) == 1, (label, [m.label for m in at.metric])
    return hits[0]


def spec(at, title: str) -> dict:
    hits = [s for s in chart_specs(at) if s["layout"]["title"]["text"] == title]
    assert len(hits) == 1, title
    return hits[0]


def _plain(value):
    """plotly >= 6 sends numpy arrays as {"dtype", "bdata"} (base64): back to a list."""
    if isinstance(value, dict) and "bdata" in value:
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).tolist()
    return value


def trace(fig: dict, name: str) -> dict:
    """The trace called ``name``, its x / y / text as plain lists."""
    found = next(t for t in fig["data"] if t.get("name") == name)
    return {k: _plain(v) for k, v in found.items()}


#: a column only each shown table has (st.dataframe without selection carries no key)
TABLES = {"scaling_async_table": "applied_to_version", "scaling_speedup_table": "ideal_speedup",
          "scaling_split_table": "achieved_GB_per_s"}


def table(at, name: str) -> pd.DataFrame:
    hits = [d.value for d in at.dataframe if TABLES[name] in d.value.columns]
    assert len(hits) == 1, name
    return hits[0]


def set_inputs(at, values: dict):
    for key, value in values.items():
        at.number_input(key=key).set_value(value)
    return at.run()


def others_render(at) -> None:
    """The PS, sync/async and batch-size sections still show their numbers."""
    assert metric(at, "Rounds") == "49" and metric(at, "Total time") == "8.815 s"
    assert metric(at, "Stale gradients") == "5 of 6"
    assert metric(at, "Warm-up steps") == "245"


# ---------------------------------------------------------------- every section
def test_each_section_renders_on_the_defaults(no_models):
    at = open_page(PAGE)
    assert at.title[0].value == "Scaling"
    assert [t.label for t in at.tabs] == TABS
    assert not at.error and not at.exception
    assert [s["layout"]["title"]["text"] for s in chart_specs(at)] == CHARTS
    # docs/scaling.md's CLI example (50,000 samples, 128 a worker, 8 workers, 0.02/0.1/0.02/0.005 s)
    others_render(at)
    assert metric(at, "Crossover m*") == "13" and metric(at, "Train locally, send once") == "4.98 s"
    assert metric(at, "Strong-scaling comparisons") == "12"        # built-in cifar10 trace
    assert bound_text_shown(at)
    assert "scaling_model" not in [s.key for s in at.selectbox]     # no core.models in this tree
    assert len(at.get("download_button")) >= 9 * 2 + 4              # HTML + PNG per chart, CSVs


def bound_text_shown(at) -> bool:
    from core.scaling.sync_async import STALENESS_BOUND_SOURCES, STALENESS_BOUND_TEXT

    captions = " ".join(shown(c.value) for c in at.caption)
    return (any(i.value == STALENESS_BOUND_TEXT for i in at.info)
            and all(src in captions for src in STALENESS_BOUND_SOURCES))


# ---------------------------------------------------------------- 1. parameter-server rounds
def test_ps_numbers_are_the_hand_example_and_core():
    at = set_inputs(open_page(PAGE), HAND)
    # 32 minibatches, 11 rounds an epoch (last with 2 workers), 22 rounds; 10*8.5 + 8 = 93 s an
    # epoch, 186 s; 2 + 0.5 m > 5 first at m = 7; locally 1 + 22*5 + 1 + 3*0.5 = 113.5 s
    assert metric(at, "Rounds") == "22"
    assert metric(at, "Total time") == "186 s"
    assert metric(at, "Crossover m*") == "7"
    assert metric(at, "Train locally, send once") == "113.5 s"
    job = PSJob(1000, batch=32, epochs=2, machines=3, broadcast_s=1.0, compute_s=5.0, gather_s=1.0,
                aggregate_s=0.5)
    r = ps_rounds(job)
    assert metric(at, "Total time") == f"{r.total_time_s:,.6g} s"
    assert metric(at, "Local training, total") == f"{local_then_send(job).total_time_s:,.6g} s"
    curve = spec(at, "Total time against worker machines")
    expected = ps_time_vs_machines(job)
    assert trace(curve, "round model")["x"] == expected["machines"].tolist()
    assert trace(curve, "round model")["y"] == pytest.approx(expected["total_time_s"].tolist())
    assert trace(curve, "crossover")["x"] == [7]
    gantt = spec(at, "Parameter-server rounds: the first rounds and the last")
    assert [a["text"] for a in gantt["layout"]["annotations"]] == ["first 2 rounds",
                                                                   "last round (run round 22)"]


def test_more_machines_and_a_global_batch_follow_core():
    at = open_page(PAGE)
    at.number_input(key="scaling_ps_machines").set_value(20).run()
    job = PSJob(50_000, batch=128, epochs=1, machines=20, broadcast_s=0.02, compute_s=0.1, gather_s=0.02,
                aggregate_s=0.005)
    r = ps_rounds(job)
    assert metric(at, "Rounds") == f"{r.total_rounds:,}" == "20"     # ceil(391/20)
    assert metric(at, "Total time") == f"{r.total_time_s:,.6g} s"
    at.radio(key="scaling_ps_batch_kind").set_value("global").run()
    g = PSJob(50_000, batch=128, epochs=1, machines=20, broadcast_s=0.02, compute_s=0.1, gather_s=0.02,
              aggregate_s=0.005, batch_kind="global")
    assert metric(at, "Crossover m*") == str(crossover_machines(g))
    assert metric(at, "Total time") == f"{ps_rounds(g).total_time_s:,.6g} s"
    # 128 over 20 workers is not even: core's flag is shown as it is
    assert [shown(w.value) for w in at.warning] == list(ps_rounds(g).flags)


# the course's worked case: 76,800 samples, minibatch 1,536, 10 epochs, 6 machines, 1.5/4/1.5 s, 0.015 s
COURSE = dict(scaling_ps_samples=76_800, scaling_ps_batch=1536, scaling_ps_epochs=10, scaling_ps_machines=6,
              scaling_ps_broadcast=1.5, scaling_ps_compute=4.0, scaling_ps_gather=1.5,
              scaling_ps_aggregate=0.015)


def test_rounds_radio_switches_between_per_epoch_and_continuous_rounds():
    at = set_inputs(open_page(PAGE), COURSE)
    assert at.radio(key="scaling_ps_rounds").value == "per-epoch"
    # 50 minibatches an epoch, 9 rounds each (the 9th with 2 workers): 90 rounds, 10 * (8*7.09 + 7.03)
    assert metric(at, "Rounds") == "90" and metric(at, "Total time") == "637.5 s"
    assert "7.03 s for the last round of an epoch (2 workers); 9 rounds" in " ".join(shown(c.value) for c in at.caption)
    at.radio(key="scaling_ps_rounds").set_value("continuous").run()
    assert not at.exception and not at.error
    # 500 minibatches: 83 full rounds of 7.09 s and one of 2 workers, 7.03 s
    assert metric(at, "Rounds") == "84" and metric(at, "Total time") == "595.5 s"
    captions = " ".join(shown(c.value) for c in at.caption)
    assert "7.03 s for the last round of the run (2 workers); 8.40 rounds and 59.55 s an epoch on average" in captions
    job = PSJob(76_800, batch=1536, epochs=10, machines=6, broadcast_s=1.5, compute_s=4.0, gather_s=1.5,
                aggregate_s=0.015, rounds="continuous")
    curve = spec(at, "Total time against worker machines")
    assert trace(curve, "round model")["y"] == pytest.approx(ps_time_vs_machines(job)["total_time_s"].tolist())
    gantt = spec(at, "Parameter-server rounds: the first rounds and the last")
    assert [a["text"] for a in gantt["layout"]["annotations"]] == ["first 2 rounds", "last round (run round 84)"]
    assert metric(at, "Round model, total") == "595.5 s"


# ---------------------------------------------------------------- 2. sync vs async
def test_editing_a_worker_changes_both_schedules_as_core_says():
    at = open_page(PAGE)
    at.session_state["scaling_workers"] = {"edited_rows": {0: {"compute_1_s": 5.0}}, "added_rows": [],
                                           "deleted_rows": []}
    at.number_input(key="scaling_sync_aggregate").set_value(0.5)
    at.number_input(key="scaling_sync_update").set_value(1.0)
    at.run()
    starts, durations = [0.0, 1.0, 0.5], [[5.0, 2.0], [1.0, 1.0], [2.0, 2.0]]
    sync = sync_schedule(starts, durations, aggregate_s=0.5, update_s=1.0)
    async_ = async_schedule(starts, durations)
    # step 1: arrivals 2, 2.5, 5 -> aggregations end 2.5, 3, 5.5; update -> 6.5 s
    assert metric(at, "Sync step 1 completes") == "6.5 s" == f"{sync.step_end_s[0]:,.6g} s"
    assert metric(at, "Sync finishes") == f"{sync.finish_s:,.6g} s"
    assert metric(at, "Async finishes") == f"{async_.finish_s:,.6g} s"
    assert metric(at, "Stale gradients") == f"{async_.n_stale} of 6"
    found = table(at, "scaling_async_table")
    assert found["staleness"].tolist() == async_.updates["staleness"].tolist()
    fig = spec(at, "Synchronous vs asynchronous updates")
    assert trace(fig, "sync step completes")["x"] == pytest.approx(list(sync.step_end_s))
    assert trace(fig, "update applied")["text"] == [f"τ={s}" for s in async_.updates["staleness"]]


def test_a_bad_worker_table_is_named_and_the_rest_renders():
    at = open_page(PAGE)
    at.session_state["scaling_workers"] = {"edited_rows": {1: {"start_s": -1.0}}, "added_rows": [],
                                           "deleted_rows": []}
    at.run()
    assert not at.exception
    assert [shown(e.value) for e in at.error] == [
        "worker table: expected start_s >= 0 (seconds) in every filled row; got -1.0 in row 2. Fix that cell."]
    assert "Synchronous vs asynchronous updates" not in [s["layout"]["title"]["text"] for s in chart_specs(at)]
    assert metric(at, "Rounds") == "49" and metric(at, "Warm-up steps") == "245"
    assert metric(at, "Strong-scaling comparisons") == "12"


# ---------------------------------------------------------------- 3. measured scaling
def test_builtin_cifar10_trace_shows_core_rows_with_the_default_filters():
    at = open_page(PAGE)
    result = scaling_analysis(read_pollux_trace(POLLUX_DIR / "cifar10"), n_params=11_173_962, itemsize=4,
                              link_gbps=25.0)
    # over 40 fastest comparisons, so the per-GPU batch filter starts on the smallest batch (32)
    assert at.selectbox(key="scaling_filter_batch").value == 32
    expected = filter_rows(result, batch_per_gpu=32, fastest_only=True).rows
    found = table(at, "scaling_speedup_table")
    assert found["config"].tolist() == expected["config"].tolist()
    assert found["speedup"].to_numpy() == pytest.approx(expected["speedup"].to_numpy(), rel=1e-12)
    split = table(at, "scaling_split_table")
    assert split["achieved_GB_per_s"].to_numpy() == pytest.approx(expected["achieved_GB_per_s"].to_numpy(),
                                                                  rel=1e-12, nan_ok=True)
    assert metric(at, "Nominal link") == "3.125 GB/s"                  # 25 Gb/s / 8
    assert any("Strong scaling (same global batch): 12 comparisons" in shown(i.value) for i in at.info)
    eff = spec(at, "Parallel efficiency against GPUs")
    assert [t["name"] for t in eff["data"]][:2] == ["ideal", "break-even (speed-up 1)"]


def test_slower_than_one_gpu_placement_renders(no_models):
    # Pollux cifar10: 2 GPUs on 2 nodes at 32 each against 1 GPU at 64: speed-up 0.58
    at = open_page(PAGE)
    at.toggle(key="scaling_fastest").set_value(False)
    at.radio(key="scaling_filter_kind").set_value("strong")
    at.selectbox(key="scaling_filter_batch").set_value("all")
    at.selectbox(key="scaling_filter_global").set_value(64)
    at.run()
    assert not at.exception and not at.error
    found = table(at, "scaling_speedup_table").set_index("config")
    slow = found.loc["placement 11"]
    assert slow["speedup"] == pytest.approx(0.5762, abs=5e-4) and slow["efficiency"] < 1 / 2
    assert slow["flags"].startswith("slower than the 1-GPU baseline")
    eff = trace(spec(at, "Parallel efficiency against GPUs"), "strong, global batch 64")
    assert min(eff["y"]) == pytest.approx(slow["efficiency"])
    split = trace(spec(at, "Where the time goes (estimate)"), "communication (estimate)")
    assert len(split["y"]) == len(found) == 2


def test_choosing_another_job_sets_its_dataset_size():
    at = open_page(PAGE)
    at.selectbox(key="scaling_job").set_value("imagenet").run()
    assert at.number_input(key="scaling_n_samples").value == 1_281_167
    at.selectbox(key="scaling_job").set_value("bert").run()
    assert at.number_input(key="scaling_n_samples").value == 0            # unknown: per-step only
    assert not at.exception and not at.error
    assert any("Per-epoch values need the dataset size" in shown(i.value) for i in at.info)
    assert "No per-epoch" not in str(spec(at, "Where the time goes (estimate)"))


def test_edited_table_gives_the_documented_cli_numbers():
    at = open_page(PAGE)
    at.radio(key="scaling_source").set_value("edit").run()
    at.selectbox(key="scaling_link_preset").set_value("100 GbE").run()
    assert at.number_input(key="scaling_link_gbps").value == 100.0
    assert at.number_input(key="scaling_n_samples").value == 50_000
    found = table(at, "scaling_split_table")
    speed = table(at, "scaling_speedup_table")
    first = speed.iloc[0]
    # docs/scaling.md: 120/70 = 1.714; 44.7 MB over 0.0256 s = 1.75 GB/s of 12.5 GB/s (14 %)
    assert (first["scaling"], first["gpus"], first["batch_per_gpu"]) == ("strong", 2, 64)
    assert first["speedup"] == pytest.approx(1.71429, rel=1e-5)
    assert found.iloc[0]["achieved_GB_per_s"] == pytest.approx(1.74761, rel=1e-5)
    assert found.iloc[0]["link_utilisation"] == pytest.approx(0.139809, rel=1e-5)
    assert metric(at, "Nominal link") == "12.5 GB/s"
    expected = scaling_analysis(parse_scaling_table(CLUSTER, n_samples=50_000), n_params=11_173_962,
                                link_gbps=100.0).rows
    assert found["communication_est_s"].to_numpy() == pytest.approx(expected["communication_est_s"].to_numpy())


def test_a_typed_bandwidth_switches_the_preset_to_custom():
    at = open_page(PAGE)
    at.number_input(key="scaling_link_gbps").set_value(40.0).run()
    assert at.selectbox(key="scaling_link_preset").value == "custom"
    assert metric(at, "Nominal link") == "5 GB/s"


def test_a_bad_upload_is_named_and_every_other_section_renders():
    at = open_page(PAGE)
    at.radio(key="scaling_source").set_value("upload").run()
    assert any("Upload a CSV" in shown(i.value) for i in at.info)
    at.file_uploader(key="scaling_upload").set_value([("cluster_bad.csv", b"gpu,batch,time\n1,2,3\n",
                                                       "text/csv")]).run()
    assert not at.exception
    errors = [shown(e.value) for e in at.error]
    assert len(errors) == 1 and errors[0].startswith("cluster_bad.csv: expected columns gpus, batch_per_gpu")
    others_render(at)
    assert "Speed-up against GPUs" not in [s["layout"]["title"]["text"] for s in chart_specs(at)]


def test_an_upload_with_nothing_to_compare_is_named():
    at = open_page(PAGE)
    at.radio(key="scaling_source").set_value("upload").run()
    at.file_uploader(key="scaling_upload").set_value([("one_gpu.csv", b"gpus,batch_per_gpu,epoch_time_s\n1,64,10\n",
                                                       "text/csv")]).run()
    errors = [shown(e.value) for e in at.error]
    assert len(errors) == 1 and errors[0].startswith("one_gpu.csv: table: expected rows at two or more GPU counts")
    others_render(at)


def test_a_good_upload_is_analysed_like_core():
    at = open_page(PAGE)
    at.radio(key="scaling_source").set_value("upload").run()
    at.file_uploader(key="scaling_upload").set_value([("cluster.csv", CLUSTER, "text/csv")]).run()
    at.number_input(key="scaling_n_samples").set_value(50_000).run()
    assert not at.error
    expected = scaling_analysis(parse_scaling_table(CLUSTER, n_samples=50_000), n_params=11_173_962,
                                link_gbps=25.0).rows
    assert table(at, "scaling_speedup_table")["efficiency"].to_numpy() == pytest.approx(
        expected["efficiency"].to_numpy())
    speedup = spec(at, "Speed-up against GPUs")
    assert trace(speedup, "weak, 128 per GPU")["y"] == pytest.approx([1.875, 3.0])   # 120/64, 120/40


def test_model_selectbox_fills_the_parameter_count_when_core_models_exists(fake_models):
    at = open_page(PAGE)
    assert at.selectbox(key="scaling_model").options == ["(typed in)", "resnet8", "resnet20"]
    at.radio(key="scaling_source").set_value("edit").run()
    at.selectbox(key="scaling_model").set_value("resnet8").run()
    assert at.number_input(key="scaling_params").value == 78_042
    found = table(at, "scaling_split_table")
    # 2 GPUs: 2 * 1/2 * 78042 * 4 bytes = 312,168 bytes per all-reduce
    assert found.iloc[0]["allreduce_bytes_per_step"] == pytest.approx(312_168)
    assert found["allreduce_bytes_per_step"].tolist() == pytest.approx(
        [allreduce_bytes(78_042, int(g)) for g in found["gpus"]])
    at.number_input(key="scaling_params").set_value(1000).run()         # typing goes back to typed in
    assert at.selectbox(key="scaling_model").value == "(typed in)"


# ---------------------------------------------------------------- 4. batch size
def test_batch_size_helper_follows_core():
    at = set_inputs(open_page(PAGE), dict(scaling_bs_batch=8192, scaling_bs_samples=1_281_167))
    plan = batch_size_plan(8192, n_samples=1_281_167)
    # k = 8192/256 = 32, lr 3.2, ceil(1281167/8192) = 157 steps, 5*157 = 785 warm-up steps
    assert metric(at, "Scale k = B / B0") == "32" and metric(at, "Learning rate k·η") == "3.2"
    assert metric(at, "Steps per epoch") == f"{plan.steps_per_epoch:,}" == "157"
    assert metric(at, "Warm-up steps") == f"{plan.warmup_steps:,}" == "785"
    lr = trace(spec(at, "Learning rate with gradual warm-up"), "learning rate")
    assert lr["x"][:2] == [0, 785] and lr["y"][:2] == pytest.approx([0.1, 3.2])
    from core.scaling.batch_size import LARGE_BATCH_TEXT
    assert any(i.value == LARGE_BATCH_TEXT for i in at.info)


# ---------------------------------------------------------------- 4b. batch scaling (issue 11)
def _study(key: str, target: float, samples: int | None):
    from core.batch import batch_study
    from core.datasets import batch_run_files
    from core.logs import read_log_files

    read = read_log_files([(n, p.read_bytes()) for n, p in batch_run_files(key)])
    return batch_study(read.logs, target=accuracy_target(target), noise=read.noise, samples_per_epoch=samples)


def test_batch_view_opens_on_the_builtin_mnist1d_runs_with_the_core_fit():
    at = open_page(PAGE)
    model = _study("mnist1d_batch", DEFAULT_TARGET_ACC, None).model
    assert metric(at, "E_min (samples)") == f"{model.e_min:,.0f}"
    assert metric(at, "B_noise") == f"{model.b_noise:,.0f}"
    assert metric(at, "Fit error (MAPE)") == f"{model.mape_pct:.1f} %"
    fig = spec(at, "Samples to target against the global batch")
    measured = trace(fig, "measured")
    assert measured["x"] == [16, 32, 64, 128, 256, 512, 1024]
    used = sorted(model.used, key=lambda r: r.global_batch)
    assert measured["y"] == pytest.approx([r.samples_to_target for r in used])
    assert trace(fig, "B_noise")["x"] == pytest.approx([model.b_noise] * 2)
    assert any(i.value == TUNED_NOTE for i in at.info)
    # goodput of the runs' own (CPU) throughput
    good = spec(at, "Statistical efficiency and goodput against the global batch")
    runs = trace(good, "runs")
    assert runs["y"] == pytest.approx([r.samples_per_s / (1 + r.global_batch / model.b_noise) for r in model.runs])


def test_pollux_cifar10_sets_its_target_and_draws_goodput_from_its_speed_table():
    at = open_page(PAGE)
    at.selectbox(key="scaling_batch_source").set_value("pollux_cifar10").run()
    assert at.number_input(key="scaling_batch_target").value == pytest.approx(0.93)
    assert at.number_input(key="scaling_batch_samples").value == 50_000
    model = _study("pollux_cifar10", 0.93, 50_000).model
    assert metric(at, "B_noise") == f"{model.b_noise:,.0f}"
    good = spec(at, "Statistical efficiency and goodput against the global batch")
    assert [t["name"] for t in good["data"]][2:] == ["w = 4", "w = 16", "w = 64"]


def test_mlperf_runs_name_the_aborted_one_and_fit_the_rest():
    at = open_page(PAGE)
    at.selectbox(key="scaling_batch_source").set_value("mlperf").run()
    assert not at.exception and not at.error
    assert any("dgxh100_n64_ngc23.04_mxnet/result_1.txt: aborted run" in shown(c.value) for c in at.caption)
    model = _study("mlperf", 0.759, None).model
    assert len(model.used) == 25 and metric(at, "E_min (samples)") == f"{model.e_min:,.0f}"
