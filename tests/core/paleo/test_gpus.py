"""Training GPUs (core.paleo.GPUS, a view of core.devices): every figure carries a source and says what it is."""

from __future__ import annotations

import pytest

from core.devices import DENSE, HALF_SPARSE, NO_SPARSITY, NOT_TENSOR, PEAK_PRECISIONS
from core.devices import get_device as get_gpu
from core.errors import InputError
from core.paleo import GPUS, MODERN_DEVICES, NETWORKS, get_network
from core.paleo.devices import MODERN_NETWORKS

REQUIRED = ("V100_SXM2", "V100_PCIE", "A100_PCIE_40GB", "A100_PCIE_80GB", "A100_SXM4_40GB", "A100_SXM4_80GB",
            "H100_PCIE", "H100_SXM", "H200_SXM", "L4", "L40S", "A10", "RTX_6000_ADA", "B200")


def test_the_issue_s_gpus_are_all_there():
    assert set(REQUIRED) <= set(GPUS)
    # Paleo's single-precision entries are views of the same records, under their short names
    assert {"V100", "A100", "A100_TF32", "H100", "H100_TF32"} <= set(MODERN_DEVICES)
    assert get_gpu("V100") is GPUS["V100_SXM2"] and get_gpu("A100") is GPUS["A100_SXM4_40GB"]
    assert get_gpu("H100") is GPUS["H100_SXM"]


@pytest.mark.parametrize("name", REQUIRED)
def test_every_figure_carries_a_source_a_unit_and_its_basis(name):
    gpu = GPUS[name]
    for what, figure in gpu.figures:
        assert figure.source.strip(), f"{name} {what} has no source"
        assert figure.unit in ("TFLOP/s", "GB/s", "Gb/s", "GB", "MHz"), (name, what)
        assert figure.value > 0, (name, what)
    for precision, figure in gpu.peaks.items():
        assert precision in PEAK_PRECISIONS
        assert "boost clock" in figure.basis                     # NVIDIA's peaks are at boost
        if precision == "fp32":
            assert figure.basis.startswith(NOT_TENSOR)
        else:                                                    # dense, said how
            assert figure.basis.startswith((DENSE, HALF_SPARSE, NO_SPARSITY, "dense = spec sheet"))
    assert "bidirectional" in gpu.scale_up_gbs.basis and gpu.link in NETWORKS


@pytest.mark.parametrize("name, precision, dense", [
    ("H100_SXM", "bf16", 1978.9 / 2),     # printed 1,979 with sparsity
    ("H100_PCIE", "fp16", 756),           # printed 1,513 with sparsity
    ("L4", "bf16", 121),                  # printed 242 with sparsity
    ("B200", "bf16", 2250),               # HGX B200: 36 PFLOPS sparse / 8 GPUs / 2
    ("A100_PCIE_80GB", "tf32", 156),      # printed dense | sparse
    ("L40S", "fp16", 362),
])
def test_dense_tensor_peaks_are_half_the_sparse_figure_where_only_that_is_printed(name, precision, dense):
    assert GPUS[name].peak_tflops(precision) == pytest.approx(dense, rel=1e-3)
    printed_sparse = name in ("H100_SXM", "H100_PCIE", "L4", "B200")
    assert (GPUS[name].peaks[precision].basis.startswith(HALF_SPARSE)) == printed_sparse


def test_the_mlperf_systems_figures():
    # Dell R750xa: A100-PCIe-80GB at 1410 MHz, PCIe 4.0 x16; DGX H100: H100-SXM5-80GB, NVLink 4 900 GB/s
    a, h = GPUS["A100_PCIE_80GB"], GPUS["H100_SXM"]
    assert (a.mem_bandwidth.value, a.boost_clock.value, a.link) == (1935, 1410, "pcie4")
    assert (h.mem_bandwidth.value, h.link, h.scale_up_gbs.value) == (3350, "nvlink4", 900)
    # the issue's ratios: tensor peaks 3.2, memory bandwidths 1.7
    assert h.peak_tflops("bf16") / a.peak_tflops("bf16") == pytest.approx(3.17, abs=0.01)
    assert h.mem_bandwidth.value / a.mem_bandwidth.value == pytest.approx(1.73, abs=0.01)


def test_nvlink_networks_are_half_the_gpus_bidirectional_link():
    for gpu in GPUS.values():
        if gpu.link.startswith("nvlink"):
            assert get_network(gpu.link).gbps / 8 == gpu.scale_up_gbs.value / 2, gpu.name


def test_networks_reach_ib_xdr_and_nvlink5_with_sources():
    assert get_network("infiniband_xdr").gbps == 800 and get_network("nvlink5").gbps == 900 * 8
    for name in ("infiniband_ndr", "infiniband_xdr", "nvlink4", "nvlink5"):
        assert MODERN_NETWORKS[name].source


def test_lookup_and_missing_units():
    assert get_gpu("h100 sxm").name == "H100_SXM" and get_gpu("rtx-6000-ada").name == "RTX_6000_ADA"
    assert "bf16" not in GPUS["V100_SXM2"].peaks and "tf32" not in GPUS["V100_SXM2"].peaks
    with pytest.raises(InputError, match=r"precision: expected one of fp32, fp16 for V100_SXM2; got 'bf16'"):
        GPUS["V100_SXM2"].peak_tflops("bf16")
    with pytest.raises(InputError, match=r"device: expected one of P100, V100_SXM2.*got 'K81'"):
        get_gpu("K81")


def test_unverified_figures_are_marked():
    assert not GPUS["H200_SXM"].boost_clock.verified and not GPUS["RTX_6000_ADA"].peaks["bf16"].verified
    assert GPUS["H100_SXM"].peaks["bf16"].verified
    assert "unverified" in GPUS["B200"].mem_bandwidth.text()
