"""The Logs page: built-in runs, upload, bad files, target slider, views, edits (AppTest)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from core.defaults import DEFAULT_TARGET_ACC
from core.logs import MIN_FIT_POINTS, read_log
from core.logs.reader import read_log_file
from core.runs.analysis import analyse_run, fits_table
from core.targets import DEFAULT_TARGET, accuracy_target
from tests.pages.conftest import chart_specs, open_page, shown

ROOT = Path(__file__).resolve().parents[2]
BUILTIN = sorted((ROOT / "data" / "logs").glob("*.csv"))


def shown_table(at) -> pd.DataFrame:
    return at.dataframe[0].value


def course_log(name_acc_end: float = 0.95) -> bytes:
    rows = ["epoch, step, loss, acc"]
    for e in range(1, 6):
        for s in range(1, 21):
            k = (e - 1) * 20 + s
            rows.append(f"{e}, {s}, {1 / (0.02 * k + 0.5) + 0.05:.6f}, {0.6 + (name_acc_end - 0.6) * e / 5:.4f}")
    return ("\n".join(rows) + "\n").encode()


def test_opens_on_the_builtin_runs_with_the_core_numbers():
    at = open_page()
    assert at.title[0].value == "Logs"
    table = shown_table(at)
    assert len(table) == len(BUILTIN)
    expected = fits_table([analyse_run(read_log_file(p), target=DEFAULT_TARGET)
                           for p in BUILTIN]).set_index("file")
    expected = expected.loc[table.index]
    assert table["b0"].to_numpy() == pytest.approx(expected["b0"].to_numpy(), rel=1e-9)
    pd.testing.assert_series_equal(table["epoch_to_target"], expected["epoch_to_target"], check_dtype=False)
    assert table["epoch_to_target"].isna().sum() == 2  # ResNet-8 (train, val) never reaches 92 %
    specs = chart_specs(at)
    # the details below the answer are tabs, only the open one computed: first the fits table
    assert [t.label for t in at.tabs] == ["Fitted runs", "Prediction"]
    assert len(specs) == 2  # loss, accuracy
    assert specs[0]["layout"]["xaxis"]["title"]["text"] == "global step k"
    open_prediction(at)
    assert len(chart_specs(at)) == 4   # + prediction band, prediction convergence
    assert not at.error, [e.value for e in at.error]


def open_prediction(at):
    """Open the Prediction tab, as a click on it does."""
    at.session_state["logs_details"] = "Prediction"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_upload_adds_a_run_and_a_bad_file_is_named_while_others_stay():
    at = open_page()
    n = len(shown_table(at))
    at.file_uploader(key="logs_upload_0").set_value([
        ("resnet99_Tesla V100-PCIE-32GB.csv", course_log(), "text/csv"),
        ("garbage.csv", b"\x00\x01binary", "text/csv"),
    ]).run()
    assert not at.exception
    table = shown_table(at)
    assert len(table) == n + 1
    row = table.loc["resnet99_Tesla V100-PCIE-32GB.csv"]
    assert row["b0"] == pytest.approx(0.02, rel=1e-3) and row["depth"] == 99
    # epoch-end accuracy 0.6 + 0.07*e > 0.92 first at e = 5 -> step 100
    assert row["epoch_to_target"] == 5 and row["step_to_target"] == 100
    errors = [shown(e.value) for e in at.error]
    assert len(errors) == 1 and errors[0].startswith("garbage.csv: expected a CSV text file; got binary data")


def test_moving_the_target_slider_updates_the_table_as_core_says():
    at = open_page()
    at.slider(key="logs_target_acc").set_value(0.80).run()
    table = shown_table(at)
    expected = fits_table([analyse_run(read_log_file(p), target=accuracy_target(0.80))
                           for p in BUILTIN]).set_index("file")
    pd.testing.assert_series_equal(table["epoch_to_target"], expected.loc[table.index, "epoch_to_target"],
                                   check_dtype=False)
    at2 = open_page()
    both = pd.concat([shown_table(at2)["epoch_to_target"], table["epoch_to_target"]], axis=1).dropna()
    assert (both.iloc[:, 0] >= both.iloc[:, 1]).all() and len(both) >= 10
    target_trace = [t for t in chart_specs(at)[1]["data"] if t["name"] == "target"][0]
    assert target_trace["y"] == [0.8, 0.8]


def test_first_row_criterion_is_stated_and_fires_no_later():
    at = open_page()
    epoch_level = shown_table(at)["epoch_to_target"]
    at.radio(key="logs_criterion").set_value("first-row").run()
    assert any("first row" in shown(c.value) for c in at.caption)
    both = pd.concat([shown_table(at)["epoch_to_target"], epoch_level], axis=1).dropna()
    assert (both.iloc[:, 0] <= both.iloc[:, 1]).all() and len(both) >= 10


def test_single_run_view_shows_its_fit_report_and_log_axes():
    at = open_page()
    name = BUILTIN[0].name
    at.selectbox(key="logs_view").set_value(name).run()
    at.toggle(key="logs_log_x").set_value(True).run()
    assert "[[Variables]]" in at.code[0].value
    loss = chart_specs(at)[0]
    assert [t["name"] for t in loss["data"]] == ["measured", "smoothed", "fitted"]
    assert loss["layout"]["xaxis"]["type"] == "log"


def open_edit(at):
    """Open the edit expander, as a click on it does (its widgets are made only while it is open)."""
    at.session_state["logs_edit"] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_editing_metadata_changes_the_table():
    at = open_page()
    name = BUILTIN[0].name
    assert "logs_edit_file" not in [s.key for s in at.selectbox]      # closed: no widgets made (issue 35)
    open_edit(at)
    at.selectbox(key="logs_edit_file").set_value(name).run()
    at.text_input(key=f"edit_gpu_{name}").set_value("Tesla V100-PCIE-32GB").run()
    at.button(key="logs_apply_edit").click().run()
    assert shown_table(at).loc[name, "gpu"] == "Tesla V100-PCIE-32GB"


def test_no_runs_shows_one_message():
    at = open_page()
    at.sidebar.multiselect(key="builtin_sets_widget").set_value([]).run()
    assert not at.exception
    assert at.info and "No runs loaded" in shown(at.info[0].value)


def test_prediction_from_the_first_epochs_is_cores():
    from core.datasets import builtin_datasets_by_file
    from core.prediction import family_scores, forecast_epoch_at_target, prior_for_run

    at = open_prediction(open_page())
    run = "resnet20_Intel Xeon Processor.csv"
    at.selectbox(key="logs_pred_run").set_value(run).run()
    at.selectbox(key="logs_pred_family").set_value("weibull").run()
    at.slider(key=f"logs_pred_n_{run}").set_value(10).run()
    assert not at.exception
    logs = [read_log_file(p) for p in BUILTIN]
    log = next(lg for lg in logs if lg.source == run)
    target = accuracy_target(DEFAULT_TARGET_ACC)
    prior = prior_for_run(log, logs, target=target, datasets_by_file=builtin_datasets_by_file())
    f = forecast_epoch_at_target(log, logs, n_epochs_seen=10, target=target, family="weibull",
                                 prior=prior, schedule="auto")
    p, post = f.prediction, f.posterior
    values = {shown(m.label): m.value for m in at.metric}
    assert values["Extrapolation (first N epochs)"].startswith(f"{p.epoch:.0f} ({p.epoch_low:.0f} – ")
    assert values["Posterior (both)"] == f"{post.epoch:.0f} ({post.epoch_low:.0f} – {post.epoch_high:.0f})"
    assert values["Prior (other runs)"].startswith(f"{prior.epoch:.0f} (")
    assert values["What the whole log shows"] == "epoch 15"
    # one chart: the extrapolation's band, the prior's and the posterior's (traces named by core)
    band = chart_specs(at)[2]["data"]
    names = [t.get("name") for t in band]
    assert {"band", "prior", "posterior", "prior epoch", "posterior epoch", "schedule"} <= set(names)
    posterior_marker = band[names.index("posterior epoch")]
    assert posterior_marker["x"] == [post.epoch]
    assert at.session_state["curve_family"] == "weibull"  # shared with the Plan and Calibrate pages
    # the backtest of every family runs on request only, and shows core's numbers
    n_tables = len(at.dataframe)
    at.toggle(key="logs_family_scores_on").set_value(True).run()
    assert len(at.dataframe) == n_tables + 1
    scores = family_scores(logs, fractions=(0.5,), target=accuracy_target(DEFAULT_TARGET_ACC)).set_index("family")
    shown_scores = at.dataframe[-1].value.set_index("family")
    assert shown_scores.loc["weibull", "median_abs_error_pct"] == scores.loc["weibull", "median_abs_error_pct"]
    assert list(shown_scores.index) == list(scores.index)


def test_a_lightning_and_a_tensorboard_export_get_fitted_curves_with_no_help():
    # Lightning CSVLogger: sparse rows, global step, 0-based epochs; loss = 1/(0.01 k + 0.5) + 0.1
    rows = ["epoch,step,train_loss_step,train_acc_step,val_loss,val_acc"]
    for k in range(10, 1010, 10):
        rows.append(f"{(k - 1) // 100},{k},{1 / (0.01 * k + 0.5) + 0.1:.8f},{min(0.99, 0.5 + k / 1500):.4f},,")
        if k % 100 == 0:
            rows.append(f"{(k - 1) // 100},{k},,,0.5,0.8")
    lightning = ("\n".join(rows) + "\n").encode()
    tb = ("Wall time,Step,Value\n" + "".join(f"{1.6e9 + k},{k},{1 / (0.02 * k + 0.4) + 0.2:.8f}\n"
                                             for k in range(5, 2005, 5))).encode()
    at = open_page()
    at.file_uploader(key="logs_upload_0").set_value([("metrics.csv", lightning, "text/csv"),
                                                   ("run-resnet20-tag-train_loss.csv", tb, "text/csv")]).run()
    assert not at.exception and not at.error
    table = shown_table(at)
    assert table.loc["metrics.csv", "b0"] == pytest.approx(0.01, rel=1e-3)
    assert table.loc["metrics.csv", "steps_per_epoch"] == 100
    assert table.loc["run-resnet20-tag-train_loss.csv", "b0"] == pytest.approx(0.02, rel=1e-3)
    assert table.loc["run-resnet20-tag-train_loss.csv", "b2"] == pytest.approx(0.2, rel=1e-3)


def test_the_answer_comes_first_how_many_runs_reached_the_target_and_which_first():
    """The headline above the uploader is ``core.runs.summarize_targets`` of the loaded runs (issue 21 part 4):
    the built-in MNIST-1D runs against acc >= 0.92."""
    from core.datasets import builtin_log_files
    from core.runs import summarize_targets

    at = open_page("pages/logs.py")
    want = summarize_targets([analyse_run(read_log_file(p, source=n), target=DEFAULT_TARGET)
                              for n, p in builtin_log_files("mnist1d")])
    assert 0 < want.n_reached < want.n_runs == 12 and want.unit == "s"
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Runs that reached the target"] == f"{want.n_reached} of {want.n_runs}"
    assert metrics["First to the target"] == f"{want.at:,.0f} s"
    assert any(shown(c.value) == want.headline() for c in at.caption)



def _session_memo(at, name: str) -> list:
    """The keys of what the session remembers for itself under ``name`` (``pages.shared.cached._session_memo``,
    a ``core.serving.ByteBoundedCache``)."""
    key = f"_memo_{name}"
    return list(at.session_state[key].keys()) if key in at.session_state else []


def test_builtin_runs_are_analysed_once_per_server_and_an_upload_in_its_own_session():
    # issue 35: the built-in runs' analyses are shared by every session (none in a session's own memo); an
    # upload's lives in the session that uploaded it (one entry: the one uploaded run)
    first = open_page()
    assert len(shown_table(first)) == len(BUILTIN) and _session_memo(first, "analyses") == []
    name = "resnet99_Tesla V100-PCIE-32GB.csv"
    first.file_uploader(key="logs_upload_0").set_value([(name, course_log(), "text/csv")]).run()
    assert len(shown_table(first)) == len(BUILTIN) + 1
    uploaded = read_log(course_log(), name, min_points=MIN_FIT_POINTS)
    assert [key[0] for key in _session_memo(first, "analyses")] == [uploaded.fingerprint()]
    second = open_page()                                       # a new session: the built-in runs, no upload
    pd.testing.assert_frame_equal(shown_table(second), shown_table(first).drop(name))
    assert _session_memo(second, "analyses") == []
