"""A choice stays chosen when the user visits another page and comes back (issue 21, part 8).

Streamlit drops a widget's value when its page is not shown; the pages' choices persist for the
session (``pages.shared.state.KEPT``).  Each test picks values other than the defaults, goes to
another page through the app's navigation, comes back, and finds them as picked.
"""

from __future__ import annotations

from tests.pages.conftest import open_page

LOGS = "pages/logs.py"


def _away_and_back(at, page: str):
    at.switch_page(LOGS).run()
    assert not at.exception
    at.switch_page(page).run()
    assert not at.exception
    return at


def test_plan_keeps_run_batch_prices_and_workers():
    at = open_page("pages/plan.py", via_app=True)
    at.selectbox(key="plan_run").set_value("resnet20_Intel Xeon Processor.csv").run()
    at.number_input(key="plan_batch").set_value(256).run()
    at.number_input(key="plan_price_worker").set_value(3.1).run()
    at.number_input(key="plan_price_ps").set_value(0.7).run()
    at.slider(key="plan_max_workers").set_value(48).run()
    at.multiselect(key="plan_ps").set_value([1, 8]).run()
    _away_and_back(at, "pages/plan.py")
    assert at.selectbox(key="plan_run").value == "resnet20_Intel Xeon Processor.csv"
    assert at.number_input(key="plan_batch").value == 256
    assert at.number_input(key="plan_price_worker").value == 3.1
    assert at.number_input(key="plan_price_ps").value == 0.7
    assert at.slider(key="plan_max_workers").value == 48
    assert at.multiselect(key="plan_ps").value == [1, 8]


def test_throughput_keeps_device_and_network():
    at = open_page("pages/throughput.py", via_app=True)
    device = next(d for d in at.selectbox(key="tp_device").options if d != at.selectbox(key="tp_device").value)
    network = next(n for n in at.selectbox(key="tp_network").options if n != at.selectbox(key="tp_network").value)
    at.selectbox(key="tp_device").set_value(device.split(":")[0]).run()
    at.selectbox(key="tp_network").set_value(network.split(":")[0]).run()
    _away_and_back(at, "pages/throughput.py")
    assert at.selectbox(key="tp_device").value == device.split(":")[0]
    assert at.selectbox(key="tp_network").value == network.split(":")[0]


def test_calibrate_keeps_the_held_out_model():
    at = open_page("pages/calibrate.py", via_app=True)
    assert at.selectbox(key="cal_holdout").value == "resnet50"
    at.selectbox(key="cal_holdout").set_value("resnet32").run()
    _away_and_back(at, "pages/calibrate.py")
    assert at.selectbox(key="cal_holdout").value == "resnet32"
