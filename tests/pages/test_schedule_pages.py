"""The forecast through the learning-rate schedule on the pages (AppTest): the Logs page's Prediction tab on the
built-in schedule curves, and the Plan page's Schedule section; every number shown equals core's for the same
input, and no error is shown."""

from __future__ import annotations

import pytest

from core.datasets import builtin_log_files
from core.logs import read_log_file
from core.prediction import (
    default_cooldown_target,
    forecast_progress,
    forecast_through_schedule,
    plan_cooldown,
)
from core.runs import amount_text, starting_target
from pages.plan_sections.schedule import EXAMPLE_RUN
from tests.pages.conftest import chart_specs, shown
from tests.pages.test_llm_targets import open_on, open_prediction


@pytest.fixture(scope="module")
def curves():
    return [read_log_file(p, source=n) for n, p in builtin_log_files("lr_schedules")]


def test_logs_prediction_tab_forecasts_through_the_schedule_as_core_does(curves):
    at = open_prediction(open_on("pages/logs.py", ["lr_schedules"]))
    target = starting_target(curves)
    assert target.metric == "loss" and target.direction == "<="          # loss curves: a falling default target
    run = at.selectbox(key="logs_progress_run").value
    log = next(lg for lg in curves if lg.source == run)
    f = forecast_progress(log, [lg for lg in curves if lg.source != run], target, observe=0.25)
    assert f.schedule is not None                                          # it opens on a run whose rate changes
    values = {m.label: m.value for m in at.metric}
    s = f.schedule
    assert values["loss at the schedule's end"] == f"{s.metric_at_end:.4g}"        # its step in the caption under it
    assert any(c.value.startswith(f"step {s.schedule.total_steps:,.0f} · 80 % band: ") for c in at.caption)
    assert values[f"Progress to loss ≤ {target.value:g}, steps"] == amount_text(f.progress.posterior.value)
    names = [t["name"] for t in chart_specs(at)[-1]["data"]]
    assert names[:3] == ["band low", "band high", "forecast"] and "learning rate" in names
    assert not at.error


def test_logs_prediction_tab_on_the_wsd_run_seen_to_half_its_steps(curves):
    at = open_prediction(open_on("pages/logs.py", ["lr_schedules"]))
    at.selectbox(key="logs_progress_run").set_value("csv_100/wsd_20000_24000.csv").run()
    at.selectbox(key="logs_progress_observe").set_value(0.5).run()
    assert not at.exception and not at.error
    log = next(lg for lg in curves if lg.source == "csv_100/wsd_20000_24000.csv")
    f = forecast_progress(log, [lg for lg in curves if lg is not log], starting_target(curves), observe=0.5)
    values = {m.label: m.value for m in at.metric}
    assert values["loss at the schedule's end"] == f"{f.schedule.metric_at_end:.4g}"
    band = f"step 23,904 · 80 % band: {f.schedule.metric_at_end_low:.4g} – {f.schedule.metric_at_end_high:.4g}"
    assert band in [c.value for c in at.caption]
    assert any(shown(c.value).startswith("Parameters: C from joint fit of 9 other runs") for c in at.caption)


def test_plan_schedule_section_shows_the_example_only_when_asked():
    at = open_on("pages/plan.py", ["mnist1d"])            # course runs: no planned schedule among them
    assert at.toggle(key="plan_schedule_example").value is False
    assert not any("shortest" in " ".join(t["name"] for t in spec["data"]) for spec in chart_specs(at))
    at.toggle(key="plan_schedule_example").set_value(True).run()
    assert not at.exception and not at.error
    assert at.selectbox(key="plan_schedule_run").value == EXAMPLE_RUN
    logs = [read_log_file(p, source=n) for n, p in builtin_log_files("lr_schedules")]
    log = next(lg for lg in logs if lg.source == EXAMPLE_RUN)
    others = [lg for lg in logs if lg is not log]
    target = default_cooldown_target(log, others, None)
    assert at.number_input(key=f"plan_schedule_target_{EXAMPLE_RUN}").value == pytest.approx(target.value)
    f = forecast_through_schedule(log, others, target, observe=0.5)
    per_step = at.number_input(key=f"plan_schedule_step_time_{EXAMPLE_RUN}").value
    plan = plan_cooldown(f, shapes=("1-sqrt", "linear", "exp"), decay_fractions=(0.1, 0.15, 0.2, 0.25, 0.3),
                         max_steps=1.5 * f.schedule.total_steps, step_time_s=per_step)
    values = {m.label: m.value for m in at.metric}
    label = next(k for k in values if k.startswith("Shortest plan reaching"))
    assert values[label] == f"{plan.shortest['total_steps']:,.0f} steps"
    spec = chart_specs(at)[-1]
    names = [t["name"] for t in spec["data"]]
    assert names[:2] == ["observed", "own plan"] and any(n.startswith("shortest: ") for n in names)


def test_plan_schedule_section_plans_a_loaded_speedrun_at_once():
    at = open_on("pages/plan.py", ["speedrun"])
    assert at.selectbox(key="plan_schedule_run").value.endswith(".txt")
    labels = [m.label for m in at.metric]
    assert any(label.startswith("Shortest plan reaching val_loss ≤ 3.28") for label in labels), labels
    assert any(label.startswith("Own plan (1,") for label in labels), labels
