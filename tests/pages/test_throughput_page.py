"""The Throughput page (AppTest): every number shown is core.paleo's for the same settings."""

from __future__ import annotations

import pandas as pd
import pytest

from core.datasets import builtin_profiles
from core.figures.paleo import ESTIMATE, LINEAR, MEASURED, NAIVE_BOUND, PALEO, ROOFLINE
from core.paleo import (
    DEFAULT_DEVICES,
    DEFAULT_NETWORK,
    NETS_DIR,
    PALEO_DEVICES,
    PALEO_NETWORKS,
    PALEO_SCHEMES,
    PPP_PRESETS,
    Measurement,
    calibrate_ppp,
    calibrate_transfer,
    compare_devices,
    compare_profile,
    load_net,
    load_workload,
    read_profile,
    simulate,
    worker_counts,
)
from pages.shared.transfer import TRANSFERRED_STEPS
from tests.conftest import TEST_DATA
from tests.pages.conftest import chart_specs, open_page, shown

PAGE = "pages/throughput.py"
#: the page's opening settings: core's default device and network (batch 128, up to 32 workers: the page's
#: widgets' own defaults)
DEFAULTS = dict(device=DEFAULT_DEVICES[False], network=DEFAULT_NETWORK, batch_size=128, workers=worker_counts(32),
                scaling="weak", ppp_comp=1.0, ppp_comm=1.0, n_ps=(2, 4))


def metrics(at) -> dict[str, str]:
    return {shown(m.label): m.value for m in at.metric}


def traces(at, title_start: str) -> dict[str, dict]:
    """The traces of the chart whose title starts with ``title_start``, by name."""
    for spec in chart_specs(at):
        if spec["layout"]["title"]["text"].startswith(title_start):
            return {t["name"]: t for t in spec["data"]}
    raise AssertionError(f"no chart titled {title_start!r}")


def assert_shows(at, res) -> None:
    """Metrics and both scaling charts show ``res`` (a core PaleoScaling)."""
    one = res.rows[0]
    shown = metrics(at)
    assert shown["Iteration time, 1 worker"] == f"{one.time_comp_ms:,.2f} ms"
    assert shown["Images/s, 1 worker"] == f"{one.no_comm_throughput_img_s:,.1f}"
    assert shown["Naive bound, images/s"] == f"{one.naive_peak_img_s:,.1f}"
    thr, spd = traces(at, "Throughput"), traces(at, "Speed-up")
    assert list(thr) == [*res.schemes, NAIVE_BOUND] and list(spd) == [*res.schemes, LINEAR]
    for scheme in res.schemes:
        assert thr[scheme]["x"] == list(res.workers)
        assert thr[scheme]["y"] == pytest.approx(res.throughput(scheme), rel=1e-12)
        assert spd[scheme]["y"] == pytest.approx(res.speedup(scheme), rel=1e-12)
    assert thr[NAIVE_BOUND]["y"] == pytest.approx(res.naive_peak(), rel=1e-12)


def test_defaults_show_the_core_estimate_for_resnet50_on_v100():
    at = open_page(PAGE)
    assert at.title[0].value == "Throughput"
    res = simulate(load_net("resnet50"), **DEFAULTS)
    assert_shows(at, res)
    last = res.rows[-1]
    best = res.fastest_scheme(32, exact_only=True)
    assert metrics(at)["Images/s, 32 workers"] == f"{last.throughput_img_s[best]:,.1f}"
    assert at.metric[3].proto.delta == f"{res.headline().fastest_speedup:,.2f}× speed-up"
    assert any(c.value == f"Fastest scheme: {best}" for c in at.caption)
    # throughput, speed-up, layers, the transfer and the measured profile, then the transformer's split and memory
    assert len(chart_specs(at)) == 7
    layers = traces(at, "Slowest 15 layers")
    assert list(layers) == ["compute", "memory"] and len(layers["compute"]["y"]) == 15
    table = at.dataframe[1].value                            # results table = PaleoScaling.to_frame()
    pd.testing.assert_frame_equal(table.reset_index(drop=True), res.to_frame())
    captions = " ".join(shown(c.value) for c in at.caption)
    assert "Modern mode" in captions and "NVIDIA Tesla V100 datasheet" in captions


def test_paleo_compatible_alexnet_on_k80_reproduces_the_validation_sample():
    ref = pd.read_csv(TEST_DATA / "paleo" / "validation_sample.csv")
    ref = ref[ref["net"] == "alex_v2"].set_index("workers")
    at = open_page(PAGE)
    at.toggle(key="tp_paleo").set_value(True).run()
    assert at.selectbox(key="tp_device").value == "K80"       # V100 is not one of Paleo's devices
    # options are shown as "K80: 5,600 GFLOP/s, 480 GB/s", "ethernet: 10 Gbit/s"
    assert [o.split(":")[0] for o in at.selectbox(key="tp_device").options] == list(PALEO_DEVICES)
    assert [o.split(":")[0] for o in at.selectbox(key="tp_network").options] == list(PALEO_NETWORKS)
    assert "device V100 → K80" in shown(at.info[0].value)
    at.selectbox(key="tp_model").set_value("alex_v2")
    at.select_slider(key="tp_max_workers").set_value(8).run()
    assert not at.exception
    # K80, ethernet, batch 128, weak, PPP 1 / 1 are what the page now holds
    assert (at.selectbox(key="tp_network").value, at.number_input(key="tp_batch").value,
            at.radio(key="tp_scaling").value) == ("ethernet", 128, "weak")
    assert (at.number_input(key="tp_ppp_comp").value, at.number_input(key="tp_ppp_comm").value) == (1.0, 1.0)
    thr = traces(at, "Throughput")
    assert list(thr) == [*PALEO_SCHEMES, NAIVE_BOUND]
    for scheme in PALEO_SCHEMES:
        assert thr[scheme]["x"] == [1, 2, 4, 8]
        assert thr[scheme]["y"] == pytest.approx(ref[f"throughput_{scheme}_img_s"].tolist(), rel=1e-13)
    # 132.64620401292055 ms on one worker (validation_sample.csv, time_comp_ms)
    assert metrics(at)["Iteration time, 1 worker"] == "132.65 ms"
    assert ref.loc[1, "time_comp_ms"] == pytest.approx(132.64620401292055, rel=1e-15)


def test_switching_to_paleo_mode_resets_modern_only_choices():
    at = open_page(PAGE)
    at.selectbox(key="tp_device").set_value("H100")
    at.selectbox(key="tp_network").set_value("nvlink4")
    at.toggle(key="tp_overlap").set_value(True).run()
    res = simulate(load_net("resnet50"), **{**DEFAULTS, "device": "H100", "network": "nvlink4"},
                   overlap=True)
    assert_shows(at, res)
    at.toggle(key="tp_paleo").set_value(True).run()
    assert not at.exception
    assert at.selectbox(key="tp_device").value == "K80"
    assert at.selectbox(key="tp_network").value == "ethernet"
    assert at.toggle(key="tp_overlap").value is False and at.toggle(key="tp_overlap").disabled
    assert at.multiselect(key="tp_n_ps").disabled
    note = shown(at.info[0].value)
    assert "device H100 → K80" in note and "network nvlink4 → ethernet" in note and "overlap off" in note
    assert_shows(at, simulate(load_net("resnet50"), **{**DEFAULTS, "device": "K80"}, paleo_compatible=True))
    at.toggle(key="tp_paleo").set_value(False).run()           # back: K80 is valid in both modes
    assert at.selectbox(key="tp_device").value == "K80" and not at.info


def test_torch_model_strong_scaling_and_three_parameter_servers():
    at = open_page(PAGE)
    at.selectbox(key="tp_model").set_value("torch:resnet20")
    at.radio(key="tp_scaling").set_value("strong")
    at.number_input(key="tp_batch").set_value(512)
    at.multiselect(key="tp_n_ps").set_value([8, 2])
    at.toggle(key="tp_pipeline").set_value(True).run()
    assert not at.exception
    res = simulate(load_net("torch:resnet20"), **{**DEFAULTS, "scaling": "strong", "batch_size": 512,
                                                    "n_ps": (2, 8)}, pipeline=True)
    assert res.schemes[-2:] == ("ParameterServer_p2", "ParameterServer_p8")
    assert_shows(at, res)
    assert "resnet20 on V100" in chart_specs(at)[0]["layout"]["title"]["text"]


@pytest.mark.parametrize("name, data, problem", [
    ("broken.json", b"{not json", "expected a JSON document"),
    ("alex_v2_4gpu.json", (NETS_DIR / "alex_v2_4gpu.json").read_bytes(), "ModelParallel"),
])
def test_bad_upload_is_named_and_the_page_keeps_the_chosen_model(name, data, problem):
    at = open_page(PAGE)
    at.file_uploader(key="tp_upload").set_value((name, data, "application/json")).run()
    assert not at.exception
    assert len(at.error) == 1
    assert shown(at.error[0].value).startswith(f"{name}: ") and problem in shown(at.error[0].value)
    assert "The page shows resnet50 instead." in shown(at.error[0].value)
    assert_shows(at, simulate(load_net("resnet50"), **DEFAULTS))


def test_upload_the_faithful_mode_cannot_price_falls_back_to_the_chosen_model():
    # a 1x1 stride-3 convolution on 3x3 skips input rows: Paleo's dummy gradient convolution gives
    # 1x1, not 3x3 (the original program stops with an assertion); the modern mode prices it
    spec = (b'{"name": "skip", "layers": {"data": {"type": "Input", "parents": [], "tensor": [8, 3, 3, 1]},'
            b' "conv": {"type": "Convolution", "parents": ["data"], "filter": [1, 1, 1, 4],'
            b' "strides": [1, 3, 3, 1], "padding": "VALID"}}}')
    at = open_page(PAGE)
    at.file_uploader(key="tp_upload").set_value(("skip.json", spec, "application/json")).run()
    assert not at.error and "skip on V100" in chart_specs(at)[0]["layout"]["title"]["text"]
    at.toggle(key="tp_paleo").set_value(True).run()
    assert not at.exception
    assert len(at.error) == 1
    message = shown(at.error[0].value)
    assert message.startswith("skip.json: layer 'conv': expected a convolution whose gradient Paleo can model")
    assert message.endswith("The page shows resnet50 instead.")
    assert_shows(at, simulate(load_net("resnet50"), **{**DEFAULTS, "device": "K80"}, paleo_compatible=True))


def test_a_readable_upload_replaces_the_chosen_model():
    data = (NETS_DIR / "alex_v2.json").read_bytes()
    at = open_page(PAGE)
    at.file_uploader(key="tp_upload").set_value(("my_alexnet.json", data, "application/json")).run()
    assert not at.exception and not at.error
    assert_shows(at, simulate(load_net("alex_v2"), **DEFAULTS))
    assert "my_alexnet on V100" in chart_specs(at)[0]["layout"]["title"]["text"]


def test_software_preset_sets_both_ppps_and_editing_makes_it_custom():
    at = open_page(PAGE)
    at.selectbox(key="tp_preset").set_value("caffe").run()
    comp, comm = PPP_PRESETS["caffe"]                       # (0.21, 0.56)
    assert (at.number_input(key="tp_ppp_comp").value, at.number_input(key="tp_ppp_comm").value) == (comp, comm)
    assert_shows(at, simulate(load_net("resnet50"), **{**DEFAULTS, "ppp_comp": comp, "ppp_comm": comm}))
    at.number_input(key="tp_ppp_comm").set_value(0.9).run()
    assert at.selectbox(key="tp_preset").value == "custom"
    assert_shows(at, simulate(load_net("resnet50"), **{**DEFAULTS, "ppp_comp": comp, "ppp_comm": 0.9}))


def test_ppp_fitted_from_a_measured_step_is_shown_and_used():
    at = open_page(PAGE)
    at.selectbox(key="tp_model").set_value("alex_v2")
    at.number_input(key="tp_step_ms").set_value(50.0).run()
    at.button(key="tp_fit_ppp").click().run()
    assert not at.exception
    cal = calibrate_ppp(load_net("alex_v2"), 50.0, device="V100", batch_size=128)
    assert at.number_input(key="tp_ppp_comp").value == pytest.approx(cal.ppp_comp, rel=1e-12)
    assert f"Fitted PPP compute **{cal.ppp_comp:.4f}**" in at.success[0].value
    assert not cal.flags and not any("PPP" in w.value for w in at.warning)
    res = simulate(load_net("alex_v2"), **{**DEFAULTS, "ppp_comp": cal.ppp_comp})
    assert_shows(at, res)
    # the fitted PPP reproduces the measurement: one worker's iteration = 50 ms
    assert metrics(at)["Iteration time, 1 worker"] == "50.00 ms"


def test_a_step_faster_than_peak_is_fitted_with_its_flag():
    at = open_page(PAGE)
    at.number_input(key="tp_step_ms").set_value(100.0).run()   # resnet50 needs 222 ms at peak
    at.button(key="tp_fit_ppp").click().run()
    cal = calibrate_ppp(load_net("resnet50"), 100.0, device="V100", batch_size=128)
    assert cal.ppp_comp > 1 and cal.flags
    assert at.number_input(key="tp_ppp_comp").value == pytest.approx(cal.ppp_comp, rel=1e-12)
    assert [shown(w.value) for w in at.warning] == list(cal.flags)


def test_fitting_without_a_measurement_says_so():
    at = open_page(PAGE)
    at.button(key="tp_fit_ppp").click().run()
    assert not at.exception
    assert shown(at.error[0].value).startswith("Measured step time: expected a time in ms > 0; got none.")
    assert at.number_input(key="tp_ppp_comp").value == 1.0


# ---------------------------------------------------------------- transfer and measured profile
def _comparison(*, precision="fp16", batch=408, step_s=0.126, targets=("H100_SXM", "A100_SXM4_80GB", "L40S"),
                prices=None):
    workload = load_workload("resnet50")
    cal = calibrate_transfer([Measurement(workload, "A100_PCIE_80GB", precision, batch, step_s)])
    return compare_devices(workload, cal, ("A100_PCIE_80GB", *targets), precision=precision, batch_size=batch,
                           prices=prices)


def test_transfer_opens_on_the_mlperf_example_and_shows_the_core_comparison():
    at = open_page(PAGE)
    want = _comparison()
    shown = at.dataframe[2].value.reset_index(drop=True)
    pd.testing.assert_frame_equal(shown, want.to_frame(), check_dtype=False)
    bars = traces(at, "resnet50: images/s on each device")
    assert bars[ESTIMATE]["x"] == ["A100_PCIE_80GB", "H100_SXM", "A100_SXM4_80GB", "L40S"]
    assert bars[ESTIMATE]["y"] == pytest.approx([r.prediction.images_per_s for r in want.rows], rel=1e-12)
    assert bars[MEASURED]["y"] == pytest.approx([408 / 0.126])                  # the measurement, on device A
    assert "Interval from the compute/memory split" in " ".join(c.value for c in at.caption)


def test_transfer_skips_a_gpu_without_the_precision_and_prices_an_epoch():
    at = open_page(PAGE)
    at.selectbox(key="tp_tr_precision").set_value("bf16")
    at.multiselect(key="tp_tr_targets").set_value(["H100_SXM", "V100_SXM2"]).run()
    at.number_input(key="tp_tr_price_H100_SXM").set_value(4.0)
    at.radio(key="tp_tr_metric").set_value("cost_per_epoch").run()
    assert not at.exception
    assert [shown(w.value) for w in at.warning][0].startswith(
        "V100_SXM2 left out: precision: expected one of fp32, fp16")
    want = _comparison(precision="bf16", targets=("H100_SXM", "V100_SXM2"), prices={"H100_SXM": 4.0})
    table = at.dataframe[2].value.reset_index(drop=True)
    assert table.device.tolist() == ["A100_PCIE_80GB", "H100_SXM"]
    assert table.cost_per_epoch.iloc[1] == pytest.approx(want.rows[1].cost_per_epoch, rel=1e-12)
    # 1,281,167 images at the H100's estimated images/s, times 4 per hour
    assert want.rows[1].cost_per_epoch == pytest.approx(1_281_167 / want.rows[1].prediction.images_per_s / 3600 * 4)
    cost = traces(at, "resnet50: cost per epoch on each device")
    assert cost[ESTIMATE]["x"] == ["H100_SXM"]


def test_transfer_is_sent_to_the_plan_page():
    at = open_page(PAGE)
    at.button(key="tp_tr_send").click().run()
    assert not at.exception
    sent = at.session_state[TRANSFERRED_STEPS]
    assert sent.step_time_s("H100_SXM") == pytest.approx(_comparison().step_time_s("H100_SXM"), rel=1e-12)


def test_the_shipped_profile_is_shown_beside_both_estimates():
    at = open_page(PAGE)
    name, path = builtin_profiles()[0]
    profile = read_profile(path.read_bytes(), name)
    cmp = compare_profile(profile, load_workload(profile.net), load_net(profile.net))
    values = metrics(at)
    assert values["Time the roofline misplaces"] == f"{cmp.misplaced_share['roofline']:.0%}"
    assert values["Time Paleo misplaces"] == f"{cmp.misplaced_share['paleo']:.0%}"
    bars = traces(at, "torch:resnet20 on")
    assert list(bars) == [MEASURED, ROOFLINE, PALEO] and len(bars[MEASURED]["y"]) == 15


# --- the language-model section (pages/throughput_sections/transformer.py) --------------------------------
def test_transformer_section_renders_on_defaults_and_matches_the_transformer_command(capsys):
    import io

    from core.cli import main

    at = open_page(PAGE)
    assert not at.exception and not at.error
    table = next(df.value for df in at.dataframe if "comm_exposed_s" in df.value.columns)
    # the same inputs through the command line: llama31_8b, 8192 tokens, 32 sequences, H100, searched strategy
    assert main(["transformer", "--config", "llama31_8b", "--seq-len", "8192", "--global-batch", "32",
                 "--device", "H100", "--gpus", "8,16,32,64"]) == 0
    cli = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert table["gpus"].tolist() == cli["gpus"].tolist() == [8, 16, 32, 64]
    assert table["strategy"].tolist() == cli["strategy"].tolist()
    assert table["step_s"].tolist() == pytest.approx(cli["step_s"].tolist(), rel=1e-5)
    # the split chart's bars add up to the step time of each count
    split = traces(at, "Step time split")
    total = [sum(split[name]["y"][i] for name in split) for i in range(4)]
    assert total == pytest.approx(cli["step_s"].tolist(), rel=1e-5)
    assert metrics(at)["Step, 8 GPUs"] == f"{cli['step_s'][0]:.4g} s"
    memory = traces(at, "Memory per GPU")
    assert memory["usable memory"]["y"] == pytest.approx([72.0] * 4)      # 90 % of the H100's 80 GB


def test_transformer_section_calibrates_on_a_measured_step():
    at = open_page(PAGE)
    at.number_input(key="tf_measured_s").set_value(2.0).run()
    assert not at.exception and not at.error
    table = next(df.value for df in at.dataframe if "comm_exposed_s" in df.value.columns)
    assert table.loc[table["gpus"] == 8, "step_s"].iloc[0] == pytest.approx(2.0, rel=1e-3)   # measured on 8 × H100
