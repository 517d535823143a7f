"""A target on a loss (val_loss ≤ 3.28, log-perplexity ≤ 3.3) on every page, on the built-in LLM runs (AppTest).

Each page opens on the built-in NanoGPT speedrun or MLPerf Llama 3.1 8B logs alone: no exception, no
error shown, the target the runs declare is the default, and one value a reader can check against the CLI.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core.datasets import builtin_log_files
from core.logs import read_log_file
from core.prediction import forecast_progress, predict_progress, progress_showcase, progress_to_target
from core.runs import amount_text, analyse_run, find_target_crossing, fits_table
from core.targets import Target
from pages.shared.common import plain
from tests.pages.conftest import APP, chart_specs, shown


def open_on(page: str, sets: list[str]) -> AppTest:
    at = AppTest.from_file(str(APP.parent / page), default_timeout=600)
    at.session_state["builtin_sets"] = sets
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def open_prediction(at: AppTest) -> AppTest:
    """Open the Logs page's Prediction tab, as a click on it does."""
    at.session_state["logs_details"] = "Prediction"
    at.run()
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    return at


def _cli_table(key: str):
    """What ``python -m core fit`` gives for the built-in files (its default target: the log's own)."""
    return fits_table([analyse_run(read_log_file(p, source=n)) for n, p in builtin_log_files(key)]).set_index("file")


def test_logs_page_on_speedrun_uses_val_loss_328_and_matches_the_cli():
    at = open_on("pages/logs.py", ["speedrun"])
    assert at.selectbox(key="logs_target_acc_metric").value == "val_loss"
    assert at.number_input(key="logs_target_acc_val_loss").value == pytest.approx(3.28)
    table = at.dataframe[0].value
    expected = _cli_table("speedrun").loc[table.index]
    assert list(table["metric"]) == ["val_loss"] * 4 and list(table["direction"]) == ["<="] * 4
    assert table["tokens_to_target"].to_numpy() == pytest.approx(expected["tokens_to_target"].to_numpy(), rel=1e-9)
    assert table["time_to_target_s"].to_numpy() == pytest.approx(expected["time_to_target_s"].to_numpy(), rel=1e-9)
    # the prediction for a falling target (its tab opened): a speedrun declares its schedule (get_lr: stable, then a
    # linear cool-down), so the forecast goes through it: the loss at the schedule's end and the tokens to target
    open_prediction(at)
    values = {m.label: m.value for m in at.metric}
    run = at.selectbox(key="logs_progress_run").value
    logs = [read_log_file(p, source=n) for n, p in builtin_log_files("speedrun")]
    log = next(lg for lg in logs if lg.source == run)
    f = forecast_progress(log, [lg for lg in logs if lg.source != run], Target("val_loss", "<=", 3.28), observe=0.25)
    assert f.route.startswith("through the schedule") and f.schedule is not None
    assert values["val_loss at the schedule's end"] == f"{f.schedule.metric_at_end:.4g}"
    step = f"step {f.schedule.schedule.total_steps:,.0f} · 80 % band: "
    assert any(c.value.startswith(step) for c in at.caption)                 # the plan's last step, under it
    # amounts in one format: the whole log's tokens exactly as the table has them, estimates never in e-notation
    assert values["What the whole log shows, tokens"] == f"{table.loc[run, 'tokens_to_target']:,.0f}"
    assert not [v for v in values.values() if "e+" in v], values
    # the estimate is its number alone (an interval beside it overflowed the column), its 80 % interval under it
    assert values["Progress to val_loss ≤ 3.28, tokens"] == amount_text(f.progress.posterior.value)
    captions = [c.value for c in at.caption]
    hi = "never" if f.progress.posterior.high == float("inf") else amount_text(f.progress.posterior.high)
    assert any(c.startswith(f"80 % interval: {amount_text(f.progress.posterior.low)} – {hi}") for c in captions), \
        captions
    # the time goes with that answer, at the run's logged pace (core's sentence, its number included)
    assert f.progress.time_text.startswith("time to target at the logged pace ")
    assert any(plain(f" {f.progress.time_text.capitalize()}.") in c for c in captions), captions
    spec = chart_specs(at)[-1]
    assert [t["name"] for t in spec["data"]][:4] == ["band low", "band high", "forecast", "observed"]


def test_logs_page_on_llama_reads_the_system_description_and_a_user_target_applies():
    at = open_on("pages/logs.py", ["mlperf_llama8b"])
    assert at.selectbox(key="logs_target_acc_metric").value == "eval_accuracy"
    table = at.dataframe[0].value
    expected = _cli_table("mlperf_llama8b").loc[table.index]
    assert table["samples_to_target"].to_numpy() == pytest.approx(expected["samples_to_target"].to_numpy())
    # built-in MLLOG files are read from their path: the system description gives the accelerator
    assert set(table["gpu"]) == set(expected["gpu"])
    # a looser target (3.5): every run reaches it earlier, as core says
    at.number_input(key="logs_target_acc_eval_accuracy").set_value(3.5).run()
    assert not at.exception and not at.error
    looser = at.dataframe[0].value
    assert (looser["samples_to_target"] <= table["samples_to_target"]).all()
    assert (looser["target"] == 3.5).all()


def _plan_table(at: AppTest):
    """The plan's table (the last table with a GPU count; the Schedule section's table of cool-downs follows it)."""
    return [df.value for df in at.dataframe if "w" in df.value.columns][-1]


def test_plan_page_gives_the_cli_answer_for_the_llama_logs(capsys):
    """Page and CLI on the built-in Llama 3.1 8B logs: the same speed family and the same numbers (issue 33)."""
    import io

    import pandas as pd

    from core.cli import main
    from core.plan import duration_text, knee_value, plan_decisions, plan_from_logs

    at = open_on("pages/plan.py", ["mlperf_llama8b"])
    assert at.radio(key="plan_how").value == "logs"
    assert at.selectbox(key="plan_logs_batch").value == 64.0
    assert at.selectbox(key="plan_logs_model").value == "auto"
    table = _plan_table(at)
    files = builtin_log_files("mlperf_llama8b")
    workers = ",".join(str(int(w)) for w in table["w"])
    assert main(["plan", "--from-logs", *(str(p) for _, p in files), "--mode", "allreduce", "--workers", workers,
                 "--batch", "64"]) == 0
    cli = pd.read_csv(io.StringIO(capsys.readouterr().out), keep_default_na=False)
    assert cli["speed_model"].tolist() == table["speed_model"].tolist()
    assert cli["samples_source"].tolist() == table["samples_source"].tolist()
    for column in ("time_s", "time_low", "time_high", "step_time_s", "samples_to_target"):
        assert cli[column].to_numpy() == pytest.approx(table[column].to_numpy(), rel=1e-5), column
    # the headline: the time at the count chosen (the largest measured, 512), the knee, no deadline yet
    logs = [read_log_file(p, source=n) for n, p in files]
    expected = plan_from_logs(logs, table["w"].tolist(), global_batch=64.0).table
    decisions = plan_decisions(expected, w=512)
    assert at.metric[0].label == "Time to target on 512 GPUs"
    assert at.metric[0].value == duration_text(decisions.chosen.time_s)
    assert at.metric[1].label == "Efficiency knee"
    assert at.metric[1].value == knee_value(decisions.knee, expected)
    # the built-in set mixes one B200 log with the GB200 ones: a step's time is the device's, so the step-time
    # fit keeps the GB200 logs (the samples keep all) and says so
    plan = plan_from_logs(logs, [512], global_batch=64.0)
    assert any("left out of the step-time fit" in f and "B200: 1" in f for f in plan.flags)
    b200_step = 0.4506                        # the B200 log's measured step at 8 GPUs, batch 16
    assert not any(abs(v - b200_step) < 1e-3 for v in plan.speed.scores["measured_s"])
    assert len(plan.speed.scores) == 3 * plan.speed.scores["family"].nunique()     # one row per GB200 size
    # 512 GPUs at batch 64: samples to target the median of the two built-in 512-GPU runs, from the logs
    row = table.set_index("w").loc[512]
    assert row["samples_to_target"] == pytest.approx((221184 + 245760) / 2) and row["samples_source"] == "logs"
    # another device: the transformer model on B200 (core's one choice there, whatever family was chosen before)
    at.selectbox(key="plan_logs_model").set_value("bracket").run()
    at.selectbox(key="plan_logs_device").set_value("B200").run()
    assert not at.exception and not at.error
    assert len(at.selectbox(key="plan_logs_model").options) == 1                # the one family that knows devices
    assert at.selectbox(key="plan_logs_model").value == "transformer"
    on_b200 = _plan_table(at)
    assert set(on_b200["device"]) == {"B200"} and set(on_b200["speed_model"]) == {"transformer"}

def test_library_page_with_a_loss_target_refuses_the_accuracy_column_and_draws_the_loss():
    from core.library import Library, add_paths

    lib = Library()                                    # TTA_LIBRARY_DB: this test's own file (tests/conftest.py)
    add_paths(lib, [p for _, p in builtin_log_files("speedrun")][:2])
    at = open_on("pages/library.py", ["speedrun"])
    assert at.selectbox(key="library_target_acc_metric").value == "val_loss"
    table = at.dataframe[0].value
    assert table["reached_target"].isna().all()        # never a loss read as an accuracy
    assert any("whether a run reached val_loss ≤ 3.28" in shown(c.value) for c in at.caption)
    ids = table["run_id"].astype(int).tolist()
    at.multiselect(key="library_selected").set_value(ids).run()
    assert not at.exception and not at.error
    spec = next(s for s in chart_specs(at) if s["layout"]["title"]["text"].startswith("Runs chosen"))
    target = next(t for t in spec["data"] if t["name"] == "target")
    assert target["y"] == [3.28, 3.28]
    assert spec["layout"]["yaxis"]["title"]["text"] == "val_loss"


def test_calibrate_page_refuses_a_loss_target_with_words():
    at = open_on("pages/calibrate.py", ["speedrun"])
    assert at.selectbox(key="cal_target_acc_metric").value == "val_loss"
    texts = [shown(i.value) for i in at.info]
    assert any("the target val_loss ≤ 3.28 is not an accuracy" in t for t in texts), texts
    # back to the accuracy: the course table's calibration runs as before
    at.selectbox(key="cal_target_acc_metric").set_value("acc").run()
    assert not at.exception and not at.error
    assert at.slider(key="cal_target_acc").value == pytest.approx(0.92)


def test_calibrate_page_calibrates_the_mnist1d_runs_to_a_loss_target():
    from core.calibrate import calibrate, normalise_fits
    from core.datasets import builtin_datasets_by_file
    from core.targets import Target

    at = open_on("pages/calibrate.py", ["mnist1d"])
    at.selectbox(key="cal_target_acc_metric").set_value("loss").run()
    at.radio(key="cal_source").set_value("logs").run()
    at.number_input(key="cal_target_acc_loss").set_value(0.8).run()
    at.selectbox(key="cal_method").set_value("course").run()
    assert not at.exception and not at.error
    assert any("Epochs to loss ≤ 0.8" in shown(c.value) for c in at.caption)
    # what core calibrates on the same runs fitted to loss <= 0.8 (as `fit --target 'loss<=0.8'` then `calibrate`)
    target = Target("loss", "<=", 0.8)
    logs = [read_log_file(p, source=n) for n, p in builtin_log_files("mnist1d")]
    fits = normalise_fits(fits_table([analyse_run(log, target=target) for log in logs]), source="Logs page",
                          target=target, datasets_by_file=builtin_datasets_by_file())
    assert set(fits["target_spec"]) == {"loss<=0.8"}
    cal = calibrate(fits, holdout="resnet56", method="course")
    row = cal.predictions.iloc[0]
    assert row["epoch_actual"] == 6             # resnet56's train log first meets loss <= 0.8 in epoch 6
    value = {m.label: m.value for m in at.metric}[row["gpu"]]
    assert value.startswith(f"{row['epoch_pred']:.0f} epochs")


def test_scaling_page_fits_batch_scaling_to_the_llama_log_perplexity_target():
    from core.batch import batch_study
    from core.logs import read_log_files
    from core.targets import Target

    at = open_on("pages/scaling.py", ["mlperf_llama8b"])
    at.selectbox(key="scaling_batch_source").set_value("loaded").run()
    assert not at.exception and not at.error
    assert at.selectbox(key="scaling_target_acc_metric").value == "eval_accuracy"
    assert at.number_input(key="scaling_target_acc_eval_accuracy").value == pytest.approx(3.3)
    # the page fits what core fits: the 7 runs (batches 16, 36, 64) each to log-perplexity <= 3.3
    read = read_log_files([(n, p.read_bytes()) for n, p in builtin_log_files("mlperf_llama8b")])
    model = batch_study(read.logs, target=Target("eval_accuracy", "<=", 3.3)).model
    assert len(model.used) == 7
    labels = {m.label: m.value for m in at.metric}
    assert labels["E_min (samples)"] == f"{model.e_min:,.0f}"
    assert labels["B_noise"] == f"{model.b_noise:,.0f}"
    fig = next(s for s in chart_specs(at) if s["layout"]["title"]["text"].startswith("Samples to target"))
    measured = next(t for t in fig["data"] if t["name"] == "measured")
    # the 8-GPU run 0 (batch 16) first met 3.3 at 172,032 samples (its MLLOG samples_count)
    assert 172032 in measured["y"] and sorted(set(measured["x"])) == [16, 36, 64]
    # a looser target (3.5): every run gets there in fewer samples, so E_min falls
    at.number_input(key="scaling_target_acc_eval_accuracy").set_value(3.5).run()
    assert not at.exception and not at.error
    looser = batch_study(read.logs, target=Target("eval_accuracy", "<=", 3.5)).model
    assert looser.e_min < model.e_min
    assert {m.label: m.value for m in at.metric}["E_min (samples)"] == f"{looser.e_min:,.0f}"


def test_logs_page_on_mixed_sets_measures_each_run_against_its_own_target():
    at = open_on("pages/logs.py", ["mnist1d", "speedrun"])
    table = at.dataframe[0].value
    # the speedrun logs declare val_loss <= 3.28; the MNIST-1D logs declare none: acc >= 0.92 (core.targets.target_for)
    assert set(table.loc[table["metric"] == "val_loss", "target"]) == {3.28}
    assert set(table["metric"]) == {"val_loss", "acc"}
    assert set(table.loc[table["metric"] == "acc", "target"]) == {0.92}


def _trainer_state() -> bytes:
    """A Trainer checkpoint's state by hand: 4 epochs of 10 steps, eval_loss 2.0, 1.5, 1.2, 1.0 at each epoch end."""
    import json

    history = []
    for epoch, eval_loss in enumerate((2.0, 1.5, 1.2, 1.0), start=1):
        for half in (1, 2):
            step = 10 * (epoch - 1) + 5 * half
            history.append({"epoch": step / 10, "step": step, "loss": eval_loss + 0.2 / half, "learning_rate": 1e-4})
        history.append({"epoch": float(epoch), "step": 10 * epoch, "eval_loss": eval_loss, "eval_runtime": 1.0})
    return json.dumps({"max_steps": 40, "num_train_epochs": 4, "train_batch_size": 8,
                       "log_history": history}).encode()


def test_logs_page_reads_an_uploaded_trainer_state_and_words_the_criterion_by_the_loss_target():
    at = open_on("pages/logs.py", [])
    label = at.get("file_uploader")[0].proto.label
    for fmt in ("CSV", "MLLOG", "speedrun", "trainer_state.json"):
        assert fmt in label, label
    at.file_uploader(key="logs_upload_0").set_value([("checkpoint-40/trainer_state.json", _trainer_state(),
                                                      "application/json")]).run()
    assert not at.exception and not at.error
    at.selectbox(key="logs_target_acc_metric").set_value("eval_loss").run()
    at.number_input(key="logs_target_acc_eval_loss").set_value(1.25).run()
    assert not at.exception and not at.error
    row = at.dataframe[0].value.iloc[0]
    # eval_loss 1.2 <= 1.25 first at the third evaluation: step 30, epoch 3
    assert (row["metric"], row["direction"], row["target"]) == ("eval_loss", "<=", 1.25)
    assert row["step_to_target"] == 30 and row["epoch_to_target"] == 3
    captions = [shown(c.value) for c in at.caption]
    assert any("Criterion in use: epoch-level: first epoch whose mean eval_loss is ≤ 1.25" in c for c in captions)
    assert not any("accuracy" in c for c in captions if c.startswith("Criterion in use")), captions


def test_plan_page_batch_fit_of_the_loaded_llama_runs_uses_the_log_perplexity_target():
    from core.batch import batch_study
    from core.logs import read_log_files
    from core.plan import steps_from_batch_scaling
    from core.targets import Target

    at = open_on("pages/plan.py", ["mlperf_llama8b"])
    at.radio(key="plan_how").set_value("model").run()
    at.radio(key="plan_steps_source").set_value("batch").run()
    at.selectbox(key="plan_batch_set").set_value("loaded").run()
    assert not at.exception and not at.error
    assert any("Their target: eval_accuracy ≤ 3.3" in shown(c.value) for c in at.caption)
    read = read_log_files([(n, p.read_bytes()) for n, p in builtin_log_files("mlperf_llama8b")])
    model = batch_study(read.logs, target=Target("eval_accuracy", "<=", 3.3)).model
    steps = steps_from_batch_scaling(model, 128.0, label="loaded").steps     # the default global batch M = 128
    assert {m.label: m.value for m in at.metric}["Steps to target"] == f"{steps:,.0f}"


def test_beside_an_llm_log_each_course_run_is_predicted_in_its_own_unit_against_its_own_target():
    """The speedrun declares val_loss <= 3.28; the MNIST-1D runs keep acc >= 0.92: a training log counts in
    steps at its epoch-level crossing (as the fit table), a _val log in epochs, never in validation batches."""
    at = open_prediction(open_on("pages/logs.py", ["speedrun", "mnist1d"]))
    # it opens on a run of the page's target (the speedrun's val_loss) that met it after its first quarter
    speedrun = [read_log_file(p, source=n) for n, p in builtin_log_files("speedrun")]
    opened = at.selectbox(key="logs_progress_run").value
    assert opened in {lg.source for lg in speedrun}, opened
    assert opened == progress_showcase(speedrun, metric="val_loss").source
    assert {m.label: m.value for m in at.metric}["What the whole log shows, tokens"] != "never reached"
    logs = {n: read_log_file(p, source=n) for n, p in builtin_log_files("mnist1d")}
    for run, unit in (("resnet14_Intel Xeon Processor.csv", "steps"),
                      ("resnet14_Intel Xeon Processor_val.csv", "epochs")):
        at.selectbox(key="logs_progress_run").set_value(run).run()
        assert not at.exception and not at.error, [e.value for e in at.error]
        values = {m.label: m.value for m in at.metric}
        crossing = find_target_crossing(logs[run], Target("acc", ">=", 0.92))
        whole = crossing.step if unit == "steps" else crossing.epoch
        assert values[f"What the whole log shows, {unit}"] == f"{whole:,.0f}", values
        others = [lg for n, lg in logs.items() if n != run]
        f = predict_progress(logs[run], others, Target("acc", ">=", 0.92), observe=0.25)
        assert f.unit == unit
        # the prior pools the runs counted in the same unit only: within their measured range
        pooled = [progress_to_target(lg, f.target) for lg in others if ("_val" in lg.source) == (unit == "epochs")]
        assert min(v for v in pooled if v) <= f.prior.value <= max(v for v in pooled if v)
