"""The Calibrate page (AppTest): every method renders, the numbers are core's, sources, held-out model."""

from __future__ import annotations

import pytest

from core.calibrate import CALIBRATION_METHODS, calibrate, method_scores, read_fits_table, recommend_method
from core.datasets import course_fits_path
from tests.pages.conftest import chart_specs, open_page, shown

FITS = read_fits_table(course_fits_path(), source="course table")


def metrics(at) -> dict[str, str]:
    return {shown(m.label): m.value for m in at.metric}


@pytest.fixture(scope="module")
def scores():
    return method_scores(FITS, holdout="resnet50")


def test_default_view_recommends_by_loao_and_shows_the_course_baseline(scores):
    at = open_page("pages/calibrate.py")
    assert at.title[0].value == "Calibrate"
    best = recommend_method(scores, outside=True)    # ResNet-50 lies outside the other five's range
    text = " ".join(shown(m.value) for m in at.markdown)
    assert f"Recommended method: {CALIBRATION_METHODS[best].label}" in text
    assert f"{scores.set_index('method').loc['course', 'loao_mape_pct']:.1f} % for the course baseline" in text
    cal = calibrate(FITS, holdout="resnet50", method=best)
    values = metrics(at)
    for _, row in cal.predictions.iterrows():
        assert values[row["gpu"]].startswith(f"{row['epoch_pred']:.0f} epochs")
    assert any("hardware-independent" in shown(i.value) for i in at.info)
    # the details below the answer are tabs, only the open one computed: first the prediction table
    assert [t.label for t in at.tabs] == ["Prediction table", "Curves", "Leave-one-architecture-out"]
    assert len(chart_specs(at)) == 1  # the answer's epochs chart
    [table] = [d.value for d in at.dataframe]          # the prediction table (chosen and companion method)
    mine = table[table["method"] == best]
    assert mine["epoch_pred"].tolist() == cal.predictions["epoch_pred"].tolist()
    at.session_state["cal_details"] = "Curves"          # what a click on the tab sends
    at.run()
    assert not at.exception and len(chart_specs(at)) == 5  # + parameters, curves, 2 loss errors
    at.session_state["cal_details"] = "Leave-one-architecture-out"
    at.run()
    assert not at.exception and len(chart_specs(at)) == 2  # + method scores
    assert set(at.dataframe[1].value["method"]) == {best, "course"}    # the summary, then each architecture
    # where the held-out architecture lies, in the words of core
    assert shown(at.warning[0].value) == cal.where()
    assert "block type bottleneck not among the calibration architectures (basic)" in shown(at.warning[0].value)


def test_nested_loao_shows_each_held_out_interval_and_inside_or_outside():
    from core.calibrate import nested_loao, nested_summary

    at = open_page("pages/calibrate.py")
    at.session_state["cal_details"] = "Leave-one-architecture-out"
    at.run()
    at.toggle(key="cal_nested_on").set_value(True).run()
    assert not at.exception
    expected = nested_loao(FITS)
    shown = at.dataframe[-1].value          # the summary, then the table (no run of the train split is left out)
    assert shown["epoch_pred_low"].tolist() == expected["epoch_pred_low"].tolist()
    assert shown["inside_calibration_set"].tolist() == expected["inside_calibration_set"].tolist()
    summary = at.dataframe[-2].value.set_index("model")
    assert summary.loc["all", "coverage"] == nested_summary(expected).set_index("model").loc["all", "coverage"]


@pytest.mark.parametrize("method", list(CALIBRATION_METHODS))
def test_each_method_renders_the_core_prediction(method):
    at = open_page("pages/calibrate.py")
    at.selectbox(key="cal_method").set_value(method).run()
    assert not at.exception
    cal = calibrate(FITS, holdout="resnet50", method=method)
    values = metrics(at)
    for _, row in cal.predictions.iterrows():
        assert values[row["gpu"]].startswith(f"{row['epoch_pred']:.0f} epochs")
        assert f"vs actual {row['epoch_actual']:.0f}" in str(at.metric[list(values).index(row["gpu"])].proto.delta)
    names = [t["name"] for t in chart_specs(at)[0]["data"]]  # epochs chart: actual + two routes
    assert names[0] == "actual" and method in names


def test_choosing_another_held_out_model_and_split():
    at = open_page("pages/calibrate.py")
    at.selectbox(key="cal_holdout").set_value("resnet32").run()
    at.selectbox(key="cal_method").set_value("course").run()
    cal = calibrate(FITS, holdout="resnet32", method="course")
    assert set(metrics(at)) == set(cal.predictions["gpu"])
    at.radio(key="cal_split").set_value("val").run()
    assert not at.exception
    assert "resnet18" not in at.selectbox(key="cal_holdout").options  # degenerate val fits are left out


def test_logs_page_runs_as_the_source():
    at = open_page("pages/calibrate.py")
    at.radio(key="cal_source").set_value("logs").run()
    assert not at.exception
    expected = ["resnet8", "resnet14", "resnet20", "resnet32", "resnet44", "resnet56"]
    assert at.selectbox(key="cal_holdout").options == expected


def test_bad_uploaded_fits_table_is_named():
    at = open_page("pages/calibrate.py")
    at.radio(key="cal_source").set_value("upload").run()
    at.file_uploader(key="cal_upload").set_value(("odd.csv", b"x,y\n1,2\n", "text/csv")).run()
    assert not at.exception
    assert shown(at.error[0].value).startswith("odd.csv: expected the course's columns")


def test_send_prediction_to_plan():
    at = open_page("pages/calibrate.py")
    at.selectbox(key="cal_method").set_value("course").run()
    assert "calibrated_steps" not in at.session_state          # nothing is sent until the user asks
    gpu = at.selectbox(key="cal_send_gpu").options[1]
    at.selectbox(key="cal_send_gpu").set_value(gpu)
    at.button(key="cal_send").click().run()
    sent = at.session_state["calibrated_steps"]
    cal = calibrate(FITS, holdout="resnet50", method="course")
    row = cal.predictions[cal.predictions["gpu"] == gpu].iloc[0]
    assert sent.steps == pytest.approx(row["step_pred"]) and gpu in sent.label and sent.source == "calibrate"
    assert sent.interval == pytest.approx((row["step_pred_low"], row["step_pred_high"]))


def test_held_out_runs_short_of_the_target_are_extrapolated_with_the_logs_family():
    at = open_page("pages/calibrate.py")
    at.radio(key="cal_source").set_value("logs").run()
    at.selectbox(key="cal_holdout").set_value("resnet8").run()      # never reaches 92 % in its log
    at.selectbox(key="cal_method").set_value("ridge").run()
    assert not at.exception
    names = [t["name"] for t in chart_specs(at)[0]["data"]]
    assert names[:2] == ["actual", "extrapolated from its log"]
    assert any("a reference, not a measurement" in shown(c.value) for c in at.caption)
