"""The device table: one record per device, every figure with its source (docs/devices.md).

One :class:`core.devices.spec.DeviceSpec` per device, keyed by its table name.  Three tables stood here
before (Paleo's ``DEVICES``, the training GPUs ``GPUS``, the language-model ``ACCELERATORS``); each is now
a view of this one (:mod:`core.paleo.devices`, :data:`core.paleo.GPUS`, :data:`core.transformer.ACCELERATORS`).

Conventions
-----------
* FLOP/s count a fused multiply-add as **2 FLOPs**, as NVIDIA's peaks and ``torch.utils.flop_counter`` do.
* ``fp32`` is the non-tensor (CUDA core) rate; ``tf32``, ``fp16``, ``bf16`` and ``fp8`` are dense
  tensor-core rates.  NVIDIA prints Hopper and Blackwell tensor rates only with sparsity: dense = half,
  and the basis says so.  Memory bandwidth is decimal GB/s.
* ``scale_up_gbs`` is the datasheet's NVLink / Infinity Fabric / PCIe figure per device, both directions
  together; ``scale_out_gbps`` the per-device network card in Gb/s, one direction.
* Paleo's own devices (``paleo/device.py`` at commit 984bbf5) are copied as they are, units included: peaks
  in GFLOP/s, memory bandwidths used as GiB/s in its faithful mode.
* No price is known to the table yet: ``price_per_hour`` is None everywhere rather than a guess.
"""

from __future__ import annotations

from core.devices.figures import (
    BOOST,
    DENSE,
    DENSE_AMD,
    HALF_SPARSE,
    NO_SPARSITY,
    NOT_TENSOR,
    PALEO_BASIS,
    Figure,
)
from core.devices.spec import DeviceSpec

# ---------------------------------------------------------------- sources (docs/paleo.md, "Training GPUs")
_P100 = "NVIDIA Tesla P100 datasheet (SXM2): 10.6 TFLOPS FP32, 732 GB/s, boost 1480 MHz"
_RTX8000 = "NVIDIA Quadro RTX 8000 datasheet: 16.3 TFLOPS FP32, 672 GB/s, boost 1770 MHz"
_V100 = "NVIDIA Tesla V100 datasheet, via NVIDIA developer blog 'Programming Tensor Cores in CUDA 9' (125 TFLOPS)"
_V100_PCIE = "NVIDIA Tesla V100 PCIe figures via io-tech.fi and sysrqmts.com (datasheet copies)"
_A100 = ("NVIDIA A100 datasheet (nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf / 2188504.MAY22) via "
         "glennklockwood.com/garden/processors/A100")
_A100_80_PCIE = "NVIDIA A100 datasheet 2188504.MAY22 (A100 80GB PCIe column); thundercompute.com A100 guide"
_H100 = "NVIDIA H100 datasheet via glennklockwood.com/garden/processors/h100 and hmc-tech.com"
_H100_PCIE = "NVIDIA H100 PCIe product brief PB-11133-001_v02 (manuals.plus copy); hmc-tech.com"
_H200 = "NVIDIA H200 datasheet 3367400.JUL24 (megware-hosted copy); mlcommons inference_results_v4.1 H200 system"
_L4 = "NVIDIA L4 datasheet via store.sourcecode.com and fpsbench.com"
_L40S = "NVIDIA L40S datasheet 2841316.AUG23 (PNY-hosted copy; mullet.se product table)"
_A10 = "NVIDIA A10 figures via sysrqmts.com, baseten.co and nucleusbox.com"
_RTX6000 = "NVIDIA RTX 6000 Ada figures via grafikkarten.com and cputronic.com (spec sheet: 1,457 TFLOPS FP8 sparse)"
_B200 = "NVIDIA HGX B200 datasheet (8-GPU board, per GPU) via glennklockwood.com and hmc-tech.com"
_NVLINK = "NVIDIA {gpu} datasheet: NVLink {gbs} GB/s bidirectional per GPU"
_PCIE = "PCIe Gen{gen} x16: {gbs} GB/s bidirectional (PCI-SIG; {gpu} datasheet)"
# FP8, the scale-up domain and the NIC (docs/transformer.md)
_NV_H100 = "NVIDIA H100 Tensor Core GPU datasheet (H100 SXM column); FP8 3,958 TFLOPS with sparsity"
_NV_H100_PCIE = "NVIDIA H100 PCIe product brief PB-11133-001 (FP8 3,026 TFLOPS with sparsity)"
_NV_H200 = "NVIDIA H200 Tensor Core GPU datasheet 3367400.JUL24 (H200 SXM column)"
_NV_HGX_B200 = "NVIDIA HGX B200 datasheet (8 GPUs: FP8 72 PFLOPS, BF16 36 PFLOPS with sparsity; 1.4 TB HBM3e)"
_NV_HGX_B300 = ("NVIDIA HGX B300 datasheet (8 GPUs: FP8 72 PFLOPS, BF16 36 PFLOPS with sparsity; 2.3 TB HBM3e); "
                "per-GPU 270 GB in MLPerf v5.1 systems JSON 'B300-SXM-270GB'; 7.7 TB/s via verda.com GB300 table")
_NV_GB200 = ("NVIDIA GB200 NVL72 datasheet (72 GPUs: FP8 720 PFLOPS, BF16 360 PFLOPS with sparsity, 13.4 TB HBM3e "
             "at 576 TB/s, NVLink 130 TB/s)")
_NV_GB300 = ("NVIDIA GB300 NVL72 datasheet (72 GPUs: FP8 720 PFLOPS, BF16 360 PFLOPS with sparsity, up to 20 TB "
             "HBM3e at 576 TB/s, NVLink 130 TB/s, 72 ConnectX-8 800 Gb/s)")
_AMD_MI300X = "AMD Instinct MI300X data sheet (BF16 1,307.4 TFLOPS, FP8 2,614.9 TFLOPS dense; 192 GB HBM3 5.3 TB/s)"
_AMD_MI325X = "AMD Instinct MI325X data sheet (BF16 1,307.4 TFLOPS, FP8 2,614.9 TFLOPS dense; 256 GB HBM3E 6 TB/s)"
_AMD_MI350X = "AMD Instinct MI350X data sheet (BF16 2.3 PFLOPS, FP8 4.6 PFLOPS dense; 288 GB HBM3E 8 TB/s)"
_AMD_MI355X = "AMD Instinct MI355X data sheet (BF16 2.5 PFLOPS, FP8 5.0 PFLOPS dense; 288 GB HBM3E 8 TB/s)"
_IF3 = "AMD MI300 series data sheet: 7 Infinity Fabric links, 896 GB/s peak aggregate (bidirectional)"
_IF4 = "AMD MI350 series data sheet: 7 Infinity Fabric links, 1,075 GB/s peak aggregate (bidirectional)"
_NVL5 = "NVLink 5: 1,800 GB/s bidirectional per GPU (NVIDIA Blackwell datasheets)"
_CX6 = "ConnectX-6 200 Gb/s per GPU (DGX A100 reference design: 8 HDR InfiniBand ports)"
_CX7 = "ConnectX-7 400 Gb/s per GPU (DGX/HGX reference design; MLPerf systems JSON '4x/8x ConnectX-7 IB NDR 400Gb/s')"
_CX8 = "ConnectX-8 800 Gb/s per GPU (HGX B300 / GB300 NVL72 datasheets; Nebius B300 systems JSON)"
_NIC_AMD = "400 Gb/s per GPU NIC (AMD Pollara 400 / ConnectX-7 class reference platform); assumed, not a datasheet"
_PALEO = "Paleo paleo/device.py (commit 984bbf5)"


def _tf(value: float, source: str, basis: str, verified: bool = True) -> Figure:
    return Figure(value, "TFLOP/s", source, basis, verified)


def _nic(gbps: float | None, source: str, verified: bool = True) -> Figure | None:
    return None if gbps is None else Figure(gbps, "Gb/s", source, "one direction, per GPU", verified)


def _gpu(name: str, label: str, *, fp32: float, tf32: float | None, fp16: float | None, bf16: float | None,
         source: str, sparse_printed: bool, memory_gb: float | None, bandwidth: float, clock: float,
         link: str | None, link_gbs: float | None, link_source: str = "", fp8: float | None = None,
         fp8_source: str = "", nic: float | None = None, nic_source: str = "", domain: int = 1,
         aliases: tuple[str, ...] = (), family: str = "", unverified: tuple[str, ...] = (),
         tensor_basis: str | None = None) -> DeviceSpec:
    """An NVIDIA GPU with a CUDA-core FP32 peak and a boost clock; ``sparse_printed`` marks datasheets that
    print tensor rates only with sparsity."""
    if tensor_basis is None:
        tensor_basis = HALF_SPARSE if sparse_printed else (NO_SPARSITY if tf32 is None else DENSE)
    peaks = {"fp32": _tf(fp32, source, NOT_TENSOR + ", " + BOOST, "fp32" not in unverified)}
    for precision, value in (("tf32", tf32), ("fp16", fp16), ("bf16", bf16)):
        if value is not None:
            peaks[precision] = _tf(value, source, f"{tensor_basis}, {BOOST}", precision not in unverified)
    if fp8 is not None:
        peaks["fp8"] = _tf(fp8, fp8_source, f"{HALF_SPARSE}, {BOOST}")
    return DeviceSpec(
        name=name, label=label, vendor="NVIDIA", peaks=peaks,
        mem_bandwidth=Figure(bandwidth, "GB/s", source, "decimal GB/s", "bandwidth" not in unverified),
        memory_gb=None if memory_gb is None else Figure(memory_gb, "GB", source),
        boost_clock=Figure(clock, "MHz", source, BOOST, "clock" not in unverified),
        link=link, scale_up_gbs=None if link_gbs is None else Figure(
            link_gbs, "GB/s", link_source, "bidirectional, per GPU", "link" not in unverified),
        scale_out_gbps=_nic(nic, nic_source), domain=domain, aliases=aliases, family=family)


def _acc(name: str, label: str, *, bf16: float, fp8: float, mem: float, bw: float, up: float, nic: float,
         source: str, up_source: str, nic_source: str, domain: int, vendor: str, link: str | None = None,
         basis: str = HALF_SPARSE, aliases: tuple[str, ...] = (), unverified: tuple[str, ...] = ()) -> DeviceSpec:
    """An accelerator known by its dense BF16/FP8 peaks (no FP32 figure or clock in the table)."""
    return DeviceSpec(
        name=name, label=label, vendor=vendor,
        peaks={"bf16": _tf(bf16, source, basis, "bf16" not in unverified),
               "fp8": _tf(fp8, source, basis, "fp8" not in unverified)},
        mem_bandwidth=Figure(bw, "GB/s", source, "decimal GB/s", "bandwidth" not in unverified),
        memory_gb=Figure(mem, "GB", source, "", "memory" not in unverified),
        link=link, scale_up_gbs=Figure(up, "GB/s", up_source, "bidirectional, per GPU"),
        scale_out_gbps=_nic(nic, nic_source, "nic" not in unverified), domain=domain, aliases=aliases)


def _paleo(name: str, label: str, family: str, clock: float, gflops: float, bandwidth: float,
           is_gpu: bool = True) -> DeviceSpec:
    """One of Paleo's own devices, as its program has it."""
    return DeviceSpec(
        name=name, label=label, vendor="Intel" if not is_gpu else "NVIDIA",
        peaks={"fp32": Figure(gflops, "GFLOP/s", _PALEO, PALEO_BASIS)},
        mem_bandwidth=Figure(bandwidth, "GB/s", _PALEO, PALEO_BASIS + "; used as GiB/s in the faithful mode"),
        boost_clock=Figure(clock, "MHz", _PALEO, PALEO_BASIS), family=family, is_gpu=is_gpu, paleo=True)


#: every device, by table key: current GPUs and accelerators first, then Paleo's own
DEVICES: dict[str, DeviceSpec] = {d.name: d for d in (
    _gpu("P100", "NVIDIA Tesla P100 SXM2", fp32=10.6, tf32=None, fp16=None, bf16=None, source=_P100,
         sparse_printed=False, memory_gb=None, bandwidth=732, clock=1480, link=None, link_gbs=None),
    _gpu("V100_SXM2", "NVIDIA Tesla V100 SXM2 32GB", fp32=15.7, tf32=None, fp16=125, bf16=None, source=_V100,
         sparse_printed=False, memory_gb=32, bandwidth=900, clock=1530, link="nvlink2", link_gbs=300,
         link_source=_NVLINK.format(gpu="Tesla V100 (SXM2)", gbs=300), aliases=("V100",), family="V100"),
    _gpu("V100_PCIE", "NVIDIA Tesla V100 PCIe 32GB", fp32=14, tf32=None, fp16=112, bf16=None, source=_V100_PCIE,
         sparse_printed=False, memory_gb=32, bandwidth=900, clock=1380, link="pcie3", link_gbs=32,
         link_source=_PCIE.format(gen=3, gbs=32, gpu="V100 PCIe"), unverified=("link",), family="V100"),
    _gpu("RTX_8000", "NVIDIA Quadro RTX 8000", fp32=16.3, tf32=None, fp16=None, bf16=None, source=_RTX8000,
         sparse_printed=False, memory_gb=None, bandwidth=672, clock=1770, link=None, link_gbs=None,
         family="RTX 8000"),
    _gpu("A100_PCIE_40GB", "NVIDIA A100 PCIe 40GB", fp32=19.5, tf32=156, fp16=312, bf16=312, source=_A100,
         sparse_printed=False, memory_gb=40, bandwidth=1555, clock=1410, link="pcie4", link_gbs=64,
         link_source=_PCIE.format(gen=4, gbs=64, gpu="A100"), family="A100"),
    _gpu("A100_PCIE_80GB", "NVIDIA A100 PCIe 80GB", fp32=19.5, tf32=156, fp16=312, bf16=312, source=_A100_80_PCIE,
         sparse_printed=False, memory_gb=80, bandwidth=1935, clock=1410, link="pcie4", link_gbs=64,
         link_source=_PCIE.format(gen=4, gbs=64, gpu="A100"), nic=200, nic_source=_CX6, domain=8, family="A100"),
    _gpu("A100_SXM4_40GB", "NVIDIA A100 SXM4 40GB", fp32=19.5, tf32=156, fp16=312, bf16=312, source=_A100,
         sparse_printed=False, memory_gb=40, bandwidth=1555, clock=1410, link="nvlink3", link_gbs=600,
         link_source=_NVLINK.format(gpu="A100 (SXM4)", gbs=600), nic=200, nic_source=_CX6, domain=8,
         aliases=("A100",), family="A100"),
    _gpu("A100_SXM4_80GB", "NVIDIA A100 SXM4 80GB", fp32=19.5, tf32=156, fp16=312, bf16=312, source=_A100,
         sparse_printed=False, memory_gb=80, bandwidth=2039, clock=1410, link="nvlink3", link_gbs=600,
         link_source=_NVLINK.format(gpu="A100 (SXM4)", gbs=600), nic=200, nic_source=_CX6, domain=8, family="A100"),
    _gpu("H100_PCIE", "NVIDIA H100 PCIe 80GB", fp32=51, tf32=378, fp16=756, bf16=756, source=_H100_PCIE,
         sparse_printed=True, memory_gb=80, bandwidth=2000, clock=1755, link="pcie5", link_gbs=128,
         link_source=_PCIE.format(gen=5, gbs=128, gpu="H100 PCIe"), fp8=1513, fp8_source=_NV_H100_PCIE,
         nic=400, nic_source=_CX7, domain=8, family="H100"),
    _gpu("H100_SXM", "NVIDIA H100 SXM5 80GB", fp32=67, tf32=494.7, fp16=989.4, bf16=989.4, source=_H100,
         sparse_printed=True, memory_gb=80, bandwidth=3350, clock=1980, link="nvlink4", link_gbs=900,
         link_source=_NVLINK.format(gpu="H100 (SXM5)", gbs=900), fp8=1978.9, fp8_source=_NV_H100,
         nic=400, nic_source=_CX7, domain=8, aliases=("H100", "H100_SXM5", "H100_SXM5_80GB"), family="H100"),
    _gpu("H200_SXM", "NVIDIA H200 SXM 141GB", fp32=67, tf32=494.7, fp16=989.4, bf16=989.4, source=_H200,
         sparse_printed=True, memory_gb=141, bandwidth=4800, clock=1980, link="nvlink4", link_gbs=900,
         link_source=_NVLINK.format(gpu="H200", gbs=900), fp8=1978.9, fp8_source=_NV_H200, nic=400,
         nic_source=_CX7, domain=8, aliases=("H200", "H200_SXM5"), family="H200", unverified=("clock",)),
    _gpu("L4", "NVIDIA L4 24GB", fp32=30.3, tf32=60, fp16=121, bf16=121, source=_L4, sparse_printed=True,
         memory_gb=24, bandwidth=300, clock=2040, link="pcie4", link_gbs=64,
         link_source=_PCIE.format(gen=4, gbs=64, gpu="L4")),
    _gpu("L40S", "NVIDIA L40S 48GB", fp32=91.6, tf32=183, fp16=362, bf16=362, source=_L40S, sparse_printed=False,
         memory_gb=48, bandwidth=864, clock=2520, link="pcie4", link_gbs=64,
         link_source=_PCIE.format(gen=4, gbs=64, gpu="L40S")),
    _gpu("A10", "NVIDIA A10 24GB", fp32=31.2, tf32=62.5, fp16=125, bf16=125, source=_A10, sparse_printed=False,
         memory_gb=24, bandwidth=600, clock=1695, link="pcie4", link_gbs=64,
         link_source=_PCIE.format(gen=4, gbs=64, gpu="A10"), unverified=("tf32",)),
    _gpu("RTX_6000_ADA", "NVIDIA RTX 6000 Ada Generation 48GB", fp32=91.1, tf32=182, fp16=364, bf16=364,
         source=_RTX6000, sparse_printed=False, memory_gb=48, bandwidth=960, clock=2505, link="pcie4", link_gbs=64,
         link_source=_PCIE.format(gen=4, gbs=64, gpu="RTX 6000 Ada"), unverified=("tf32", "fp16", "bf16"),
         tensor_basis="dense = spec sheet's 1,457 TFLOPS FP8 with sparsity / 4 (TF32: / 8) (derived)",
         family="RTX 6000 Ada"),
    _gpu("B200", "NVIDIA B200 (HGX B200, 1000 W)", fp32=75, tf32=1125, fp16=2250, bf16=2250, source=_B200,
         sparse_printed=True, memory_gb=180, bandwidth=7700, clock=1980, link="nvlink5", link_gbs=1800,
         link_source=_NVLINK.format(gpu="HGX B200", gbs=1800), fp8=4500, fp8_source=_NV_HGX_B200, nic=400,
         nic_source=_CX7, domain=8, aliases=("B200_SXM",), unverified=("clock", "bandwidth")),
    _acc("B300", "NVIDIA B300 (HGX B300)", bf16=2250, fp8=4500, mem=270, bw=7700, up=1800, nic=800,
         source=_NV_HGX_B300, up_source=_NVL5, nic_source=_CX8, domain=8, vendor="NVIDIA", link="nvlink5",
         aliases=("B300_SXM",), unverified=("bandwidth",)),
    _acc("GB200", "NVIDIA GB200 NVL72 (per Blackwell GPU)", bf16=2500, fp8=5000, mem=186, bw=8000, up=1800, nic=400,
         source=_NV_GB200, up_source=_NVL5, nic_source=_CX7, domain=72, vendor="NVIDIA", link="nvlink5"),
    _acc("GB300", "NVIDIA GB300 NVL72 (per Blackwell Ultra GPU)", bf16=2500, fp8=5000, mem=279, bw=8000, up=1800,
         nic=800, source=_NV_GB300, up_source=_NVL5, nic_source=_CX8, domain=72, vendor="NVIDIA", link="nvlink5"),
    _acc("MI300X", "AMD Instinct MI300X 192GB", bf16=1307.4, fp8=2614.9, mem=192, bw=5300, up=896, nic=400,
         source=_AMD_MI300X, up_source=_IF3, nic_source=_NIC_AMD, domain=8, vendor="AMD", basis=DENSE_AMD,
         unverified=("nic",)),
    _acc("MI325X", "AMD Instinct MI325X 256GB", bf16=1307.4, fp8=2614.9, mem=256, bw=6000, up=896, nic=400,
         source=_AMD_MI325X, up_source=_IF3, nic_source=_NIC_AMD, domain=8, vendor="AMD", basis=DENSE_AMD,
         unverified=("nic",)),
    _acc("MI350X", "AMD Instinct MI350X 288GB", bf16=2307.2, fp8=4614.4, mem=288, bw=8000, up=1075.2, nic=400,
         source=_AMD_MI350X, up_source=_IF4, nic_source=_NIC_AMD, domain=8, vendor="AMD", basis=DENSE_AMD,
         unverified=("nic",)),
    _acc("MI355X", "AMD Instinct MI355X 288GB", bf16=2516.6, fp8=5033.2, mem=288, bw=8000, up=1075.2, nic=400,
         source=_AMD_MI355X, up_source=_IF4, nic_source=_NIC_AMD, domain=8, vendor="AMD", basis=DENSE_AMD,
         unverified=("nic",)),
    # Paleo's devices, unchanged (peak GFLOPS; "GB/s" used as GiB/s in the faithful mode)
    _paleo("TITAN_X", "NVIDIA GeForce GTX TITAN X", "TITAN X", 1000, 6144, 336.5),
    _paleo("K20", "NVIDIA Tesla K20", "K20", 1000, 3520, 208),
    _paleo("K20X", "NVIDIA Tesla K20X", "K20X", 1000, 3935, 250),
    _paleo("K40", "NVIDIA Tesla K40", "K40", 745, 4290, 288),
    _paleo("K80", "NVIDIA Tesla K80 (the whole dual-GPU board at base clock)", "K80", 560, 5600, 480),
    _paleo("GEFORCE_780_TI", "NVIDIA GeForce GTX 780 Ti", "GTX 780 Ti", 875, 5040, 336),
    _paleo("GEFORCE_750_M", "NVIDIA GeForce GT 750M", "GT 750M", 941, 722.7, 80),
    _paleo("CPU_I7", "Intel Core i7 (Paleo's processor)", "Core i7", 6 * 35000, 289, 68, is_gpu=False),
)}
