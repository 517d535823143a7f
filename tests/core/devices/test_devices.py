"""The one device table (core.devices): every key and alias resolves in every consumer; real names are recognised.

The names are parametrised over the table itself (keys and aliases of ``core.devices.DEVICES``), never a
hand-typed list.  The recogniser is checked on real MLLOG ``submission_platform`` and systems-JSON
``accelerator_model_name`` values: those of the files under ``data/`` and ``tests/data/`` (read from the files,
and a few as literal strings), and some of MLCommons' training_results_v5.0/v5.1 systems copied as strings.
"""

from __future__ import annotations

import json
import re

import pytest

from core.devices import DEVICES, NAMES, NETWORKS, device_from_text, get_device, normalise
from core.devices.names import PATTERNS, device_key
from core.errors import InputError
from core.logs import gpu_short_name
from core.paleo import GPUS, MODERN_DEVICES, PALEO_DEVICES, roof_for
from core.paleo import get_device as paleo_device
from core.transformer import ACCELERATORS, accelerator_from_text, get_accelerator, system_from_json
from tests.conftest import ROOT

#: (name, table key) for every key and every alias of the table
EVERY_NAME = [(name, key) for key, d in DEVICES.items() for name in (key, *d.aliases)]


def _spellings(name: str) -> tuple[str, ...]:
    """The name as given, lower case, and with spaces or hyphens for ``_``."""
    return name, name.lower(), name.replace("_", " "), name.replace("_", "-").lower()


@pytest.mark.parametrize("name, key", EVERY_NAME)
def test_every_key_and_alias_resolves_in_the_table_and_the_transformer_model(name, key):
    for spelling in _spellings(name):
        assert device_key(spelling) == key
        assert get_device(spelling) is DEVICES[key]
        assert get_accelerator(spelling) is DEVICES[key]          # core.transformer's lookup is the same one


@pytest.mark.parametrize("name, key", EVERY_NAME)
def test_every_key_and_alias_is_recognised_in_text(name, key):
    for spelling in _spellings(name):
        assert device_from_text(spelling) is DEVICES[key]
        assert accelerator_from_text(spelling) is DEVICES[key]


@pytest.mark.parametrize("name, key", EVERY_NAME)
def test_every_key_and_alias_resolves_in_paleo_and_the_roofline(name, key):
    spec = DEVICES[key]
    if "fp32" in spec.peaks and spec.boost_clock is not None:
        device = paleo_device(name)                                 # Paleo's view: its short name, the FP32 peak
        assert device.name == spec.short_name
        assert device.peak_gflops == pytest.approx(spec.peak_tflops("fp32") * 1e3, rel=1e-12)
        assert device.mem_bandwidth_gbs == spec.mem_bandwidth.value and device.clock_mhz == spec.boost_clock.value
        roof = roof_for(name, "fp32")
        assert roof.name == key and roof.matrix_tflops == roof.vector_tflops == spec.peak_tflops("fp32")
    else:                                                           # recognised, and refused with the reason
        with pytest.raises(InputError, match=rf"no FP32 peak and no clock for {key}\. Use the roofline"):
            paleo_device(name)
        with pytest.raises(InputError, match=rf"for {key}; got 'fp32'\. It has no FP32 unit"):
            roof_for(name, "fp32")


def test_names_are_unique_and_the_views_are_the_table():
    assert len(NAMES) == len(EVERY_NAME)                            # no name means two devices
    assert all(GPUS[k] is DEVICES[k] for k in GPUS) and all(ACCELERATORS[k] is DEVICES[k] for k in ACCELERATORS)
    # each view is the table's devices of its kind (a device added to the table joins its views): the training
    # GPUs of the roofline have an FP32 peak and a tensor one, the accelerators a NIC; Paleo's own are Paleo's
    assert GPUS == {k: d for k, d in DEVICES.items() if "fp32" in d.peaks and len(d.peaks) > 1} and "V100_SXM2" in GPUS
    assert ACCELERATORS == {k: d for k, d in DEVICES.items() if d.scale_out_gbps is not None} and "B300" in ACCELERATORS
    assert list(PALEO_DEVICES) == [d.short_name for d in DEVICES.values() if d.paleo]
    assert {d.link for d in DEVICES.values()} - {None} <= set(NETWORKS)
    assert all(key is None or key in DEVICES for _, key in PATTERNS)


@pytest.mark.parametrize("key", list(DEVICES))
def test_every_figure_names_its_source_and_unit(key):
    spec = DEVICES[key]
    for what, fig in spec.figures:
        assert fig.source.strip() and fig.value > 0, (key, what)
        assert fig.unit in ("TFLOP/s", "GFLOP/s", "GB/s", "Gb/s", "GB", "MHz", "$/h"), (key, what)
    assert spec.price_per_hour is None          # no price is known to the table yet: none is guessed


def test_paleo_keeps_its_own_figures_and_the_modern_views_keep_theirs():
    # paleo/device.py at commit 984bbf5: (clock MHz, peak GFLOP/s, bandwidth) as Paleo has them
    paleo = {"TITAN_X": (1000, 6144, 336.5), "K20": (1000, 3520, 208), "K20X": (1000, 3935, 250),
             "K40": (745, 4290, 288), "K80": (560, 5600, 480), "GEFORCE_780_TI": (875, 5040, 336),
             "GEFORCE_750_M": (941, 722.7, 80), "CPU_I7": (210000, 289, 68)}
    assert {k: (d.clock_mhz, d.peak_gflops, d.mem_bandwidth_gbs) for k, d in PALEO_DEVICES.items()} == paleo
    assert not PALEO_DEVICES["CPU_I7"].is_gpu
    # the modern mode's list: same names and numbers as before the one table, from the datasheet records
    modern = {k: (d.clock_mhz, d.peak_gflops, d.mem_bandwidth_gbs, d.precision) for k, d in MODERN_DEVICES.items()}
    assert modern == {"P100": (1480, 10600, 732, "fp32"), "V100": (1530, 15700, 900, "fp32"),
                      "RTX_8000": (1770, 16300, 672, "fp32"), "A100": (1410, 19500, 1555, "fp32"),
                      "A100_TF32": (1410, 156000, 1555, "tf32-tensor"), "H100": (1980, 67000, 3350, "fp32"),
                      # the one change: 494.7 (the H100_SXM record, 989.4 / 2) where Paleo's list had 494.5
                      "H100_TF32": (1980, 494700, 3350, "tf32-tensor")}


def test_language_model_figures_are_the_records():
    h100, b200, gb200 = get_accelerator("H100"), get_accelerator("B200"), get_accelerator("GB200")
    assert (h100.bf16.value, h100.fp8.value, h100.peak_tflops("tf32")) == (989.4, 1978.9, 494.7)
    assert (h100.scale_up_gbs.value, h100.scale_out_gbps.value, h100.domain) == (900, 400, 8)
    assert h100.scale_up_bw == 450e9 and h100.scale_out_bw == 50e9 and h100.hbm_bw == 3350e9
    assert (b200.peak_tflops("fp32"), b200.bf16.value, b200.fp8.value, b200.link) == (75, 2250, 4500, "nvlink5")
    assert (gb200.domain, gb200.memory_gb.value) == (72, 186) and "fp32" not in gb200.peaks
    assert get_accelerator("A100").name == "A100_SXM4_40GB"          # the alias means what Paleo's A100 meant
    with pytest.raises(InputError, match=r"expected a scale-out NIC figure for L4"):
        _ = get_device("L4").scale_out_bw


# ------------------------------------------------------------------ the recogniser on real names
#: MLLOG submission_platform and systems-JSON accelerator_model_name values as spelled in data/ and tests/data/,
#: plus nvidia-smi names of tests/data's speedrun logs and the course logs' device names
REPO_NAMES = {
    "128xNVIDIA GB200": "GB200", "18xNVIDIA GB200": "GB200", "2xNVIDIA GB200": "GB200",
    "16xXE9712x4GB200": "GB200", "NVIDIA Blackwell GPU (GB200)": "GB200",
    "1xXE9680Lx8B200-SXM-180GB": "B200", "NVIDIA Blackwell GPU (B200-SXM-180GB)": "B200",
    "1xNVIDIA DGX H100": "H100_SXM", "64xNVIDIA HGX H100": "H100_SXM", "96xNVIDIA DGX H100": "H100_SXM",
    "NVIDIA H100-SXM5-80GB": "H100_SXM", "NVIDIA H100 80GB HBM3": "H100_SXM",
    "16xXE8545x4A100-SXM-40GB": "A100_SXM4_40GB", "1xR750xax4A100-PCIE-80GB": "A100_PCIE_80GB",
    "MI355X": "MI355X", "AMD Instinct MI355X": "MI355X",
    "Tesla V100-PCIE-32GB": "V100_PCIE", "Quadro RTX 8000": "RTX_8000", "NVIDIA A100-PCIE-40GB": "A100_PCIE_40GB",
}
#: mlcommons/training_results_v5.0 and v5.1 systems/*.json and MLLOG values (Apache-2.0), copied as strings
MLCOMMONS_NAMES = {
    "1xSR780aV3-8xB200_SXM_180GB": "B200", "1xNVIDIA HGX B200": "B200",
    "NVIDIA Blackwell Ultra GPU (B300-SXM-270GB)": "B300",
    "1xXE9680x8H200-SXM-141GB": "H200_SXM", "4xSR680Ax8H200-SXM-141GB": "H200_SXM",
    "NVIDIA H200-SXM5-141GB": "H200_SXM", "1024xNVIDIA HGX H100": "H100_SXM",
    "AMD Instinct MI300X 192GB HBM3": "MI300X", "1xMI300X": "MI300X",
    "AMD Instinct MI325X 256GB HBM3e": "MI325X", "AMD Instinct MI325X 256GB HBM3E DLC": "MI325X", "1xMI325X": "MI325X",
}
#: names of no device of the table: placeholders, CPUs, system names without a GPU, cards the table lacks
NO_DEVICE = ("8xSUBMISSION_PLATFORM_PLACEHOLDER", "AMD EPYC", "CPU", "1xAS-A126GS-TNBR", "2xESC-N8-E11",
             "1xXE7745x4H200-NVL-141GB", "NVIDIA H200-NVL-141GB", "Intel Xeon Processor", "NVIDIA A10G")


@pytest.mark.parametrize("text, key", [*REPO_NAMES.items(), *MLCOMMONS_NAMES.items()])
def test_real_system_names_are_recognised(text, key):
    assert device_from_text(text).name == key


@pytest.mark.parametrize("text", NO_DEVICE)
def test_names_of_no_device_give_none(text):
    assert device_from_text(text) is None


def _names_in_repo_files() -> set[str]:
    found = set()
    for folder in (ROOT / "data", ROOT / "tests" / "data"):
        for path in folder.rglob("*"):
            if path.suffix not in (".txt", ".json", ".log") or path.stat().st_size > 5_000_000:
                continue
            text = path.read_text(errors="replace")
            found |= set(re.findall(r'"submission_platform", "value": "([^"]*)"', text))
            found |= set(re.findall(r'"accelerator_model_name":\s*"([^"]*)"', text))
    return found


def test_every_system_name_in_the_repo_files_is_recognised_as_what_it_says():
    names = _names_in_repo_files()
    assert names >= {"128xNVIDIA GB200", "1xXE9680Lx8B200-SXM-180GB", "NVIDIA Blackwell GPU (GB200)"}
    for text in names:
        device = device_from_text(text)
        if text in NO_DEVICE:
            assert device is None, text
        else:                            # the device found is the one the name spells (its type in the text)
            assert device is not None, text
            assert normalise(device.type_name) in normalise(text), (text, device.name)


def test_systems_json_and_log_short_names_use_the_same_recogniser():
    system = json.loads((ROOT / "data/llm/mlperf_v5.1/systems/Dell__1xXE9680Lx8B200-SXM-180GB.json").read_text())
    assert system_from_json(system).accelerator is DEVICES["B200"]
    assert [gpu_short_name(t) for t in ("Tesla V100-PCIE-32GB", "Quadro RTX 8000", "NVIDIA A100-PCIE-40GB",
                                        "NVIDIA H100 80GB HBM3", "Intel Xeon Processor")] == [
        "V100", "RTX 8000", "A100", "H100", "Intel Xeon Processor"]
