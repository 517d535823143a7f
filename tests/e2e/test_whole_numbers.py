"""Whole numbers on every page (issue 36, item 10): in Chromium at 1280×800, on the built-in data, no metric's
value, label or delta is cut off ("28 epochs (18–…", "RingAllReduce: 18.68× spe…"), each value the page's
answer shows is core's own, each page's answer lies above the fold before any scrolling, and no page shows
an error.

One server (a library of its own, so that the Library page opens on an empty one whatever other tests
saved) and one browser page for the whole module: the pages are visited one after the other.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from core.calibrate import CALIBRATION_METHODS, calibrate, method_scores, read_fits_table, recommend_method
from core.datasets import builtin_log_files, course_fits_path
from core.logs import read_log_file
from core.paleo import DEFAULT_DEVICES, DEFAULT_NETWORK, load_net, simulate, worker_counts
from core.plan import best_workers, default_run, measured_step_time, plan_grid, steps_from_run
from core.runs import analyse_run, summarize_targets
from core.scaling import PSJob, ps_rounds
from core.speed import paper_speed_model, scale_to_step_time
from core.targets import DEFAULT_TARGET
from tests.e2e.conftest import WAIT_MS, goto_page, no_exception, streamlit_server, wait_idle

WIDTH, HEIGHT = 1280, 800

#: every element of every metric and widget label whose text is wider than its box (cut with "…"); [] when whole
#: (a radio's or toggle's own input, 1 px wide and hidden, is not text)
_CUT = """() => [...document.querySelectorAll(
    '[data-testid=stMetricValue], [data-testid=stMetricLabel], [data-testid=stMetricDelta], [data-testid=stWidgetLabel]'
  )].flatMap(e =>
  [e, ...e.querySelectorAll('*')].filter(k => k.clientWidth > 2 && k.scrollWidth > k.clientWidth + 1)
    .map(k => `${e.dataset.testid} ${JSON.stringify(e.innerText)}: ${k.scrollWidth} px of text in ${k.clientWidth}`))"""


# ---------------------------------------------------------------- what core says each page's answer shows
def _logs() -> dict[str, str]:
    """The Logs page's headline on its default data (the MNIST-1D runs, acc >= 0.92)."""
    summary = summarize_targets([analyse_run(read_log_file(p, source=n), target=DEFAULT_TARGET)
                                 for n, p in builtin_log_files("mnist1d")])
    return {"Runs that reached the target": summary.reached_value(), "First to the target": summary.first_value()}


def _calibrate() -> dict[str, str]:
    """Calibrate's answer: ResNet-50 held out of the course table, the recommended method, epochs per GPU."""
    fits = read_fits_table(course_fits_path(), source="course table")
    best = recommend_method(method_scores(fits, holdout="resnet50"), outside=True)
    assert best in CALIBRATION_METHODS
    cal = calibrate(fits, holdout="resnet50", method=best)
    return {row["gpu"]: f"{row['epoch_pred']:.0f} epochs" for _, row in cal.predictions.iterrows()}


def _plan() -> dict[str, str]:
    """Plan's answer on its default data: the first built-in run that reached 92 %, its steps to target, the paper's
    θ scaled to its measured step at p = 1, w = 1, the page's default grid (p = 2, 4; w = 1..32; prices 2.5 / 0.5)."""
    analyses = [analyse_run(read_log_file(p, source=n), target=DEFAULT_TARGET)
                for n, p in builtin_log_files("mnist1d")]
    run = next(a for a in analyses if a.log.source == default_run(analyses))
    steps = steps_from_run(run, analyses, method="auto").steps
    speed = scale_to_step_time(paper_speed_model("sync"), measured_step_time(run.log), 1, 1)
    best = best_workers(plan_grid(speed, steps, ps=(2, 4), workers=range(1, 33), price_worker=2.5, price_ps=0.5))
    return {f"Best w for p = {p}": f"w = {w}" for p, w in zip(best["p"], best["w"])}


def _throughput() -> dict[str, str]:
    """Throughput's headline: ResNet-50 on the default device and network, batch 128, up to 32 workers."""
    res = simulate(load_net("resnet50"), device=DEFAULT_DEVICES[False], network=DEFAULT_NETWORK, batch_size=128,
                   workers=worker_counts(32), scaling="weak", ppp_comp=1.0, ppp_comm=1.0, n_ps=(2, 4))
    head = res.headline()
    one = head.smallest
    return {"Iteration time, 1 worker": f"{one.time_comp_ms:,.2f} ms",
            "Images/s, 1 worker": f"{one.no_comm_throughput_img_s:,.1f}",
            "Naive bound, images/s": f"{one.naive_peak_img_s:,.1f}",
            f"Images/s, {head.largest.workers} workers": f"{head.fastest_throughput_img_s:,.1f}"}


def _scaling() -> dict[str, str]:
    """Scaling's first tab: docs/scaling.md's parameter-server example (50,000 samples, batch 128, 8 workers)."""
    r = ps_rounds(PSJob(50_000, batch=128, epochs=1, machines=8, broadcast_s=0.02, compute_s=0.1, gather_s=0.02,
                        aggregate_s=0.005))
    return {"Rounds": f"{r.total_rounds:,}", "Total time": f"{r.total_time_s:,.6g} s",
            "Crossover m*": f"{r.crossover_machines:,}"}


#: the first input of a page whose answer is drawn above its inputs (the answer must end before it starts)
INPUTS = {"Logs": lambda page: page.get_by_test_id("stFileUploader").first,
          "Calibrate": lambda page: page.get_by_test_id("stRadio").filter(has_text="Fitted runs to learn from").first,
          "Scaling": lambda page: page.get_by_test_id("stNumberInput").filter(has_text="Dataset size").first}
#: page → (how its answer is found, the values core says it shows: label → value)
PAGES = {
    "Logs": (lambda page: _metric(page, "Runs that reached the target"), _logs),
    "Calibrate": (lambda page: page.get_by_test_id("stMetric").first, _calibrate),
    "Plan": (lambda page: _metric(page, "Best w for p = 2"), _plan),
    "Throughput": (lambda page: _metric(page, "workers"), _throughput),
    "Scaling": (lambda page: _metric(page, "Total time"), _scaling),
    "Library": (lambda page: page.get_by_test_id("stAlert").filter(has_text="No library file yet"), dict),
}


def _metric(page, label: str):
    return page.get_by_test_id("stMetric").filter(has_text=label).first


# ---------------------------------------------------------------- one server, one browser page
@pytest.fixture(scope="module")
def whole_url(tmp_path_factory):
    folder = tmp_path_factory.mktemp("whole_numbers")
    with streamlit_server(folder / "library.duckdb", folder / "streamlit.log") as url:
        yield url


@pytest.fixture(scope="module")
def window(browser):
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    context.set_default_timeout(WAIT_MS)
    expect.set_options(timeout=WAIT_MS)
    page = context.new_page()
    yield page
    context.close()


@pytest.mark.parametrize("title", list(PAGES))
def test_every_number_whole_the_answer_above_the_fold(window, whole_url, title, tmp_path):
    page = window
    goto_page(page, whole_url, title)
    answer_of, core_values = PAGES[title]
    answer = answer_of(page)
    expect(answer).to_be_visible()
    wait_idle(page)
    shots = Path(os.environ.get("WHOLE_NUMBERS_PNG_DIR") or tmp_path)    # set it to keep the screenshots
    page.screenshot(path=str(shots / f"{title.lower()}_1280x800.png"))
    # (c) no error: no traceback, no st.error
    no_exception(page)
    expect(page.get_by_test_id("stAlertContentError")).to_have_count(0)
    # (a) no metric cut off, and the answer's numbers are core's
    assert page.evaluate(_CUT) == []
    shown = {m.get_by_test_id("stMetricLabel").inner_text().strip(): m.get_by_test_id("stMetricValue").inner_text()
             for m in page.get_by_test_id("stMetric").all()}
    assert not [text for text in (*shown, *shown.values()) if "…" in text], shown
    for label, want in core_values().items():
        assert label in shown, (label, shown)
        assert shown[label] == want, (label, shown[label], want)
    # (b) the answer lies above the fold, the page unscrolled
    assert page.evaluate("() => [...document.querySelectorAll('*')].every(e => e.scrollTop === 0)")
    box = answer.bounding_box()
    assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= HEIGHT, (title, box)
    if title in INPUTS:                     # the answer first, its inputs below it
        assert box["y"] + box["height"] <= INPUTS[title](page).bounding_box()["y"], title


def test_calibrate_interval_is_written_whole_under_its_metric(window, whole_url):
    """The interval that was cut inside the metric ("28 epochs (18–…") is a caption under it, whole."""
    goto_page(window, whole_url, "Calibrate")
    first = window.get_by_test_id("stMetric").first
    expect(first).to_be_visible()
    caption = window.get_by_test_id("stCaptionContainer").filter(has_text=re.compile(r"% interval: \d+ – \d+ epochs"))
    expect(caption.first).to_be_visible()
    assert caption.first.bounding_box()["y"] + caption.first.bounding_box()["height"] <= HEIGHT


@contextlib.contextmanager
def logs_with(browser, url: str, built_in: str):
    """The Logs page in a browser context of its own (a session of its own: the built-in choice stays out of the
    other tests), with the built-in set whose label holds ``built_in`` added in the sidebar."""
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    context.set_default_timeout(WAIT_MS)
    try:
        page = context.new_page()
        goto_page(page, url, "Logs")
        page.get_by_role("combobox", name="Built-in example runs").click()
        page.get_by_role("option").filter(has_text=built_in).click()
        page.keyboard.press("Escape")
        wait_idle(page)
        yield page
    finally:
        context.close()


def test_logs_runs_of_other_targets_and_units_are_not_ranked(browser, whole_url):
    """MNIST-1D (acc ≥ 0.92, counted in steps) and the NanoGPT speedrun (val_loss ≤ 3.28, counted in tokens):
    the headline ranks neither against the other, names the first of each, and names both targets."""
    runs = [analyse_run(read_log_file(p, source=n)) for key in ("mnist1d", "speedrun")
            for n, p in builtin_log_files(key)]
    want = summarize_targets(runs)
    assert want.first_value() == "not ranked" and want.targets_text().startswith("Targets differ: ")
    with logs_with(browser, whole_url, "NanoGPT speedrun") as page:
        first = _metric(page, "First to the target")
        expect(first.get_by_test_id("stMetricValue")).to_have_text(want.first_value())
        expect(_metric(page, "Runs that reached the target").get_by_test_id("stMetricValue")).to_have_text(
            want.reached_value())
        for text in (want.headline(), want.targets_text()):
            expect(page.get_by_test_id("stCaptionContainer").filter(has_text=text)).to_have_count(1)
        assert page.evaluate(_CUT) == []
        box = first.bounding_box()
        assert box["y"] + box["height"] <= HEIGHT
        no_exception(page)


@pytest.mark.parametrize("tab, label", [("Sync vs async", None), ("Measured scaling", "Baseline GPUs N0"),
                                        ("Batch size", "E_min (samples)")])
def test_each_scaling_tab_answer_above_the_fold(window, whole_url, tab, label):
    """Every tab of Scaling, not only the opening one, shows its metrics whole and above the fold."""
    page = window
    goto_page(page, whole_url, "Scaling")
    page.get_by_role("tab", name=tab).click()
    wait_idle(page)
    panel = page.get_by_role("tabpanel", name=tab)
    metric = panel.get_by_test_id("stMetric").filter(has_text=label).first if label else \
        panel.get_by_test_id("stMetric").first
    expect(metric).to_be_visible()
    no_exception(page)
    expect(page.get_by_test_id("stAlertContentError")).to_have_count(0)
    assert page.evaluate(_CUT) == []
    assert page.evaluate("() => [...document.querySelectorAll('*')].every(e => e.scrollTop === 0)")
    box = metric.bounding_box()
    assert box is not None and box["y"] + box["height"] <= HEIGHT, (tab, box)


@pytest.mark.parametrize("built_in", ["NanoGPT speedrun", "MLPerf Training v5.1 Llama 3.1 8B",
                                      "loss under learning-rate schedules"])
def test_logs_prediction_tab_numbers_whole(browser, whole_url, built_in):
    """The Prediction tab of Logs on language-model runs (through the schedule, or prior × extrapolation in samples):
    its metrics and labels are whole ("val_loss at the schedule's end (step 5,1…", "not within the …" were cut)."""
    with logs_with(browser, whole_url, built_in) as page:
        page.get_by_role("button", name=re.compile("^Remove MNIST-1D")).click()     # the set's runs alone
        wait_idle(page)
        page.get_by_role("tab", name="Prediction").click()
        wait_idle(page)
        expect(page.get_by_test_id("stTabPanel").get_by_test_id("stMetric").first).to_be_visible()
        no_exception(page)
        expect(page.get_by_test_id("stAlertContentError")).to_have_count(0)
        assert page.evaluate(_CUT) == []
        metrics = [m.inner_text() for m in page.get_by_test_id("stTabPanel").get_by_test_id("stMetric").all()]
        assert len(metrics) >= 3 and not [m for m in metrics if "…" in m], metrics
