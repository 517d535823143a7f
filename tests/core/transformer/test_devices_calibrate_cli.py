"""Device names from the MLPerf logs, the device table's provenance, calibration and its interval, the CLI verb."""

from __future__ import annotations

import json

import pytest

from core.cli import main
from core.errors import InputError
from core.transformer.calibrate import PRIOR_SPREAD, Measurement, calibrate, predict
from core.transformer.config import TransformerConfig, load_config
from core.transformer.devices import ACCELERATORS, accelerator_from_text, get_accelerator, system_from_json
from core.transformer.parallel import Efficiency, Strategy, estimate_step

# accelerator_model_name of MLPerf Training v5.0/v5.1 systems/*.json, and MLLOG submission_platform values
# (mlcommons/training_results_v5.0 and v5.1, Apache-2.0), as they are spelled there
REAL_NAMES = {
    "NVIDIA H100-SXM5-80GB": "H100_SXM",
    "64xNVIDIA HGX H100": "H100_SXM",
    "NVIDIA H200-SXM5-141GB": "H200_SXM",
    "NVIDIA Blackwell GPU (B200-SXM-180GB)": "B200",
    "1xNVIDIA HGX B200": "B200",
    "NVIDIA Blackwell GPU (GB200)": "GB200",
    "128xNVIDIA GB200": "GB200",
    "NVIDIA Blackwell Ultra GPU (B300-SXM-270GB)": "B300",
    "AMD Instinct MI300X 192GB HBM3": "MI300X",
    "1xMI300X": "MI300X",
    "AMD Instinct MI325X 256GB HBM3e": "MI325X",
    "AMD Instinct MI325X 256GB HBM3E DLC": "MI325X",
    "AMD Instinct MI355X": "MI355X",
    "MI355X": "MI355X",
}


@pytest.mark.parametrize("text", REAL_NAMES)
def test_real_names_map_onto_the_table(text):
    assert accelerator_from_text(text).name == REAL_NAMES[text]


@pytest.mark.parametrize("text", ["8xSUBMISSION_PLATFORM_PLACEHOLDER", "2xESC-N8-E11", "NVIDIA H200-NVL-141GB"])
def test_placeholders_and_unknown_cards_give_none(text):
    assert accelerator_from_text(text) is None


def test_systems_json_gb200_nodes_share_an_nvl72_domain():
    s = system_from_json({"accelerator_model_name": "NVIDIA Blackwell GPU (GB200)", "number_of_nodes": "128",
                          "accelerators_per_node": "4"})
    assert (s.accelerator.name, s.gpus, s.domain) == ("GB200", 512, 72)
    with pytest.raises(InputError, match="accelerator_model_name"):
        system_from_json({"accelerator_model_name": "TPU v5p", "number_of_nodes": 1, "accelerators_per_node": 4})


def test_every_device_number_names_its_source():
    for acc in ACCELERATORS.values():
        for what, fig in acc.figures:
            assert fig.source, f"{acc.name} {what}"
            assert fig.value > 0
        if acc.fp8 is not None:  # FP8 doubles BF16 on all that have it
            assert acc.fp8.value == pytest.approx(2 * acc.bf16.value, rel=0.01)
    with pytest.raises(InputError, match="has no FP8 unit"):
        get_accelerator("A100").peak_flops("fp8")


def test_plain_names():
    assert get_accelerator("H100").name == "H100_SXM" and get_accelerator("h200").name == "H200_SXM"
    assert get_accelerator("mi-355x").name == "MI355X"
    assert get_accelerator("A100_SXM4_80GB").name == "A100_SXM4_80GB"  # the Paleo table's keys too
    assert get_accelerator("a100").bf16.value == 312


CFG = TransformerConfig("small", 8, 1024, 16, 4, 4096, 32000)
H100, B200 = get_accelerator("H100"), get_accelerator("B200")


def _synthetic(device, gpus, factor, s):
    """A step time the model itself gives with the compute fractions scaled by ``factor``."""
    p = Efficiency()
    eff = Efficiency(matmul=p.matmul * factor, attention=p.attention * factor, memory=p.memory * factor)
    t = estimate_step(CFG, device, s, global_batch=64, seq_len=2048, eff=eff).time
    return Measurement(t, device, gpus, 64, 2048, s)


def test_one_measurement_recovers_the_factor_and_states_the_prior_spread():
    cal = calibrate(CFG, [_synthetic(H100, 8, 0.8, Strategy(dp=8))])
    assert cal.compute_factor == pytest.approx(0.8, rel=1e-4)
    assert cal.spread == PRIOR_SPREAD and "assumed prior spread" in cal.spread_source


def test_leave_one_out_on_consistent_measurements_is_tight():
    ms = [_synthetic(H100, 8, 0.8, Strategy(dp=8)), _synthetic(H100, 16, 0.8, Strategy(dp=16)),
          _synthetic(H100, 32, 0.8, Strategy(dp=16, tp=2))]
    cal = calibrate(CFG, ms)
    assert cal.compute_factor == pytest.approx(0.8, rel=1e-3)
    assert cal.spread < 0.01 and "leave-one-out over 3" in cal.spread_source


def test_transfer_keeps_fractions_and_names_the_assumption():
    cal = calibrate(CFG, [_synthetic(H100, 8, 0.8, Strategy(dp=8))])
    p = predict(CFG, B200, 8, global_batch=64, seq_len=2048, calibration=cal, strategy=Strategy(dp=8))
    assert p.estimate.compute["matmul"] < estimate_step(CFG, H100, Strategy(dp=8), global_batch=64, seq_len=2048,
                                                        eff=cal.efficiency).compute["matmul"]
    assert p.low == pytest.approx(p.time * 0.85) and p.high == pytest.approx(p.time * 1.15)
    assert any("transfer unchanged" in n for n in p.notes) and any("datasheet" in n for n in p.notes)


def test_config_from_a_local_folder(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama", "hidden_size": 256,
                                                      "num_hidden_layers": 3, "num_attention_heads": 4,
                                                      "num_key_value_heads": 2, "intermediate_size": 512,
                                                      "vocab_size": 1000}))
    c = load_config(tmp_path)
    assert (c.layers, c.hidden, c.kv_heads, c.ffn, c.gated_mlp) == (3, 256, 2, 512, True)
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(InputError, match="expected a JSON model configuration"):
        load_config(tmp_path / "bad.json")


def test_cli_table_and_refusal(capsys):
    status = main(["transformer", "--config", "llama31_8b", "--seq-len", "8192", "--global-batch", "16",
                   "--device", "H100", "--gpus", "8,16", "--parallel", "tp=2", "--measured-step", "1.5@H100,8"])
    out, err = capsys.readouterr()
    assert status == 0
    lines = out.strip().splitlines()
    assert lines[0].startswith("gpus,device,model,strategy,step_s,step_low_s,step_high_s,tokens_per_s")
    assert lines[1].startswith("8,H100_SXM,llama31_8b,\"dp=4,tp=2") and lines[1].split(",")[11] == "1.5"
    assert "# interval: assumed prior spread" in err
    status = main(["transformer", "--config", "llama31_405b", "--seq-len", "8192", "--global-batch", "8",
                   "--device", "H100", "--gpus", "8", "--parallel", "dp=8"])
    out, err = capsys.readouterr()
    assert status == 2 and "GB too much" in err and out == ""
