"""Accelerators for language-model training: dense BF16/FP8 peaks, HBM, scale-up and scale-out links.

Each number is a :class:`core.paleo.gpus.Figure` (value, unit, source, basis, verified), the record
type of the course's GPU table; H100, H200 and B200 reuse that table's figures
(:data:`core.paleo.gpus.GPUS`) and add FP8, the scale-up domain and the per-GPU NIC.

Conventions
-----------
* Peaks are **dense** (no 2:4 sparsity) TFLOP/s, a multiply-add = 2 FLOPs.  NVIDIA prints
  Hopper/Blackwell tensor rates with sparsity: dense = half (basis says so).
* ``scale_up_gbs`` is the datasheet's NVLink / Infinity Fabric bandwidth per GPU, both
  directions together; a collective uses one direction: :attr:`Accelerator.scale_up_bw` is half.
* ``scale_out_gbps`` is the per-GPU network card (InfiniBand / Ethernet) in Gb/s, one direction.
* ``domain`` is how many GPUs share the scale-up fabric: 8 on an HGX/OAM board, 72 in an NVL72 rack.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.errors import InputError
from core.paleo import GPUS, HALF_SPARSE, Figure

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
_NVL4 = "NVLink 4: 900 GB/s bidirectional per GPU (NVIDIA H100/H200 datasheets)"
_NVL5 = "NVLink 5: 1,800 GB/s bidirectional per GPU (NVIDIA Blackwell datasheets)"
_CX7 = "ConnectX-7 400 Gb/s per GPU (DGX/HGX reference design; MLPerf systems JSON '4x/8x ConnectX-7 IB NDR 400Gb/s')"
_CX6 = "ConnectX-6 200 Gb/s per GPU (DGX A100 reference design: 8 HDR InfiniBand ports)"
_NVL3 = "NVLink 3: 600 GB/s bidirectional per GPU (NVIDIA A100 datasheet)"
_CX8 = "ConnectX-8 800 Gb/s per GPU (HGX B300 / GB300 NVL72 datasheets; Nebius B300 systems JSON)"
_NIC_AMD = "400 Gb/s per GPU NIC (AMD Pollara 400 / ConnectX-7 class reference platform); assumed, not a datasheet"
DENSE_AMD = "dense (AMD prints dense and sparse separately)"


@dataclass(frozen=True)
class Accelerator:
    """One accelerator as a language-model step sees it.

    Attributes
    ----------
    name, label : str
    bf16, fp8 : Figure
        Dense peaks, TFLOP/s (``fp8`` None on GPUs without FP8 tensor cores: A100).
    memory_gb, mem_bandwidth : Figure
        HBM capacity (GB) and bandwidth (GB/s).
    scale_up_gbs : Figure
        NVLink / Infinity Fabric per GPU, GB/s, both directions.
    scale_out_gbps : Figure
        Per-GPU network card, Gb/s, one direction.
    domain : int
        GPUs on one scale-up fabric (the default ``--gpus-per-node``).
    vendor : str
    """

    name: str
    label: str
    bf16: Figure
    fp8: Figure | None
    memory_gb: Figure
    mem_bandwidth: Figure
    scale_up_gbs: Figure
    scale_out_gbps: Figure
    domain: int
    vendor: str

    def peak_flops(self, precision: str = "bf16") -> float:
        """Dense peak in FLOP/s (``"bf16"`` or ``"fp8"``)."""
        if precision not in ("bf16", "fp8"):
            raise InputError(f"precision: expected bf16 or fp8; got {precision!r}. Pick one.")
        if precision == "fp8" and self.fp8 is None:
            raise InputError(f"--precision: expected bf16 on {self.name} (no FP8 tensor cores); got fp8. Use bf16.")
        return (self.bf16 if precision == "bf16" else self.fp8).value * 1e12

    @property
    def hbm_bw(self) -> float:
        """HBM bandwidth in bytes/s."""
        return self.mem_bandwidth.value * 1e9

    @property
    def scale_up_bw(self) -> float:
        """One direction of the scale-up link, bytes/s."""
        return self.scale_up_gbs.value / 2 * 1e9

    @property
    def scale_out_bw(self) -> float:
        """The per-GPU NIC, bytes/s."""
        return self.scale_out_gbps.value / 8 * 1e9

    @property
    def figures(self) -> tuple[tuple[str, Figure], ...]:
        fp8 = (("FP8 dense peak", self.fp8),) if self.fp8 is not None else ()
        return (("BF16 dense peak", self.bf16), *fp8, ("HBM capacity", self.memory_gb),
                ("HBM bandwidth", self.mem_bandwidth), ("scale-up link", self.scale_up_gbs),
                ("scale-out NIC", self.scale_out_gbps))


def _tf(value: float, source: str, basis: str = HALF_SPARSE, verified: bool = True) -> Figure:
    return Figure(value, "TFLOP/s", source, basis, verified)


def _from_paleo(key: str, name: str, fp8: float | None, fp8_source: str, up_source: str, nic: float,
                nic_source: str, domain: int = 8) -> Accelerator:
    g = GPUS[key]
    fig8 = _tf(fp8, fp8_source) if fp8 is not None else None
    return Accelerator(name, g.label, g.peaks["bf16"], fig8, g.memory_gb, g.mem_bandwidth,
                       Figure(g.link_gbs.value, "GB/s", up_source if g.link.startswith("nvlink") else g.link_gbs.source,
                              "bidirectional, per GPU", g.link_gbs.verified),
                       Figure(nic, "Gb/s", nic_source, "one direction, per GPU"), domain, "NVIDIA")


def _acc(name: str, label: str, *, bf16: float, fp8: float, mem: float, bw: float, up: float, nic: float,
         source: str, up_source: str, nic_source: str, domain: int, vendor: str, basis: str = HALF_SPARSE,
         unverified: tuple[str, ...] = ()) -> Accelerator:
    return Accelerator(
        name, label, _tf(bf16, source, basis, "bf16" not in unverified),
        _tf(fp8, source, basis, "fp8" not in unverified),
        Figure(mem, "GB", source, "", "memory" not in unverified),
        Figure(bw, "GB/s", source, "decimal GB/s", "bandwidth" not in unverified),
        Figure(up, "GB/s", up_source, "bidirectional, per GPU"),
        Figure(nic, "Gb/s", nic_source, "one direction, per GPU", "nic" not in unverified), domain, vendor)


#: the accelerators, by table key
ACCELERATORS: dict[str, Accelerator] = {a.name: a for a in (
    _from_paleo("A100_SXM4_80GB", "A100_SXM4_80GB", None, "", _NVL3, 200, _CX6),
    _from_paleo("A100_SXM4_40GB", "A100_SXM4_40GB", None, "", _NVL3, 200, _CX6),
    _from_paleo("A100_PCIE_80GB", "A100_PCIE_80GB", None, "", "", 200, _CX6),
    _from_paleo("H100_SXM", "H100_SXM", 1978.9, _NV_H100, _NVL4, 400, _CX7),
    _from_paleo("H100_PCIE", "H100_PCIE", 1513, _NV_H100_PCIE, "", 400, _CX7),
    _from_paleo("H200_SXM", "H200_SXM", 1978.9, _NV_H200, _NVL4, 400, _CX7),
    _from_paleo("B200", "B200", 4500, _NV_HGX_B200, _NVL5, 400, _CX7),
    _acc("B300", "NVIDIA B300 (HGX B300)", bf16=2250, fp8=4500, mem=270, bw=7700, up=1800, nic=800,
         source=_NV_HGX_B300, up_source=_NVL5, nic_source=_CX8, domain=8, vendor="NVIDIA",
         unverified=("bandwidth",)),
    _acc("GB200", "NVIDIA GB200 NVL72 (per Blackwell GPU)", bf16=2500, fp8=5000, mem=186, bw=8000, up=1800, nic=400,
         source=_NV_GB200, up_source=_NVL5, nic_source=_CX7, domain=72, vendor="NVIDIA"),
    _acc("GB300", "NVIDIA GB300 NVL72 (per Blackwell Ultra GPU)", bf16=2500, fp8=5000, mem=279, bw=8000, up=1800,
         nic=800, source=_NV_GB300, up_source=_NVL5, nic_source=_CX8, domain=72, vendor="NVIDIA"),
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
)}

#: the plain names people use -> table key
ALIASES: dict[str, str] = {
    "A100": "A100_SXM4_80GB", "H100": "H100_SXM", "H100SXM5": "H100_SXM", "H100SXM580GB": "H100_SXM",
    "H200": "H200_SXM", "H200SXM5": "H200_SXM", "B200SXM": "B200", "B300SXM": "B300"}


def _key(name: str) -> str:
    return re.sub(r"[\s_\-]", "", name).upper()


def get_accelerator(name: str | Accelerator) -> Accelerator:
    """An accelerator by table key or plain name; case, spaces, ``_`` and ``-`` are ignored.

    Examples
    --------
    >>> get_accelerator("h100").name, get_accelerator("MI355X").bf16.value, get_accelerator("gb200").domain
    ('H100_SXM', 2516.6, 72)
    >>> get_accelerator("TPUv5")
    Traceback (most recent call last):
    ...
    core.errors.InputError: --device: expected one of A100_SXM4_80GB, A100_SXM4_40GB, A100_PCIE_80GB, H100_SXM, \
H100_PCIE, H200_SXM, B200, B300, GB200, GB300, \
MI300X, MI325X, MI350X, MI355X (or A100, H100, H200); got 'TPUv5'. Pick a listed name.
    """
    if isinstance(name, Accelerator):
        return name
    key = _key(str(name))
    table = {_key(k): v for k, v in ACCELERATORS.items()}
    if key in table:
        return table[key]
    if key in ALIASES:
        return ACCELERATORS[ALIASES[key]]
    raise InputError(f"--device: expected one of {', '.join(ACCELERATORS)} (or A100, H100, H200); got {name!r}. "
                     "Pick a listed name.")


# MLLOG `submission_platform` and systems-JSON `accelerator_model_name` spellings, checked in order
_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"GB300", "GB300"), (r"GB200", "GB200"), (r"B300", "B300"), (r"B200", "B200"),
    (r"MI355X", "MI355X"), (r"MI350X", "MI350X"), (r"MI325X", "MI325X"), (r"MI300X", "MI300X"),
    (r"H200", "H200_SXM"), (r"H100.*PCIE", "H100_PCIE"), (r"H100", "H100_SXM"),
    (r"A100.*PCIE", "A100_PCIE_80GB"), (r"A100.*40GB", "A100_SXM4_40GB"), (r"A100", "A100_SXM4_80GB"),
)


def accelerator_from_text(text: str) -> Accelerator | None:
    """The accelerator a log or system description names, or None if it names none we know.

    Reads ``accelerator_model_name`` of an MLPerf systems JSON or MLLOG ``submission_platform``
    (``"64xNVIDIA HGX H100"``, ``"2xNVIDIA GB200"``, ``"1xMI300X"``); placeholders
    (``SUBMISSION_PLATFORM_PLACEHOLDER``) and system names without a GPU give None.

    >>> [accelerator_from_text(t).name for t in ("NVIDIA H100-SXM5-80GB", "64xNVIDIA HGX H100",
    ...     "NVIDIA Blackwell GPU (GB200)", "NVIDIA Blackwell Ultra GPU (B300-SXM-270GB)",
    ...     "AMD Instinct MI325X 256GB HBM3E DLC", "1xXE9680Lx8B200-SXM-180GB")]
    ['H100_SXM', 'H100_SXM', 'GB200', 'B300', 'MI325X', 'B200']
    >>> accelerator_from_text("8xSUBMISSION_PLATFORM_PLACEHOLDER") is None
    True
    """
    upper = text.upper()
    if "NVL" in upper and "H200" in upper:  # H200 NVL (PCIe card): not in the table
        return None
    for pattern, key in _PATTERNS:
        if re.search(pattern, upper):
            return ACCELERATORS[key]
    return None


@dataclass(frozen=True)
class SystemInfo:
    """What an MLPerf systems JSON says about the machine a log ran on."""

    accelerator: Accelerator
    nodes: int
    per_node: int
    domain: int

    @property
    def gpus(self) -> int:
        return self.nodes * self.per_node


def system_from_json(data: dict, source: str = "<systems json>") -> SystemInfo:
    """The accelerator, node count and GPUs per node of an MLPerf ``systems/*.json``.

    ``domain`` (GPUs on one scale-up fabric) is the accelerator's (72 for an NVL72 rack) when the
    nodes are GB200/GB300 trays, else the GPUs per node.

    >>> s = system_from_json({"accelerator_model_name": "NVIDIA H100-SXM5-80GB", "number_of_nodes": "64",
    ...                       "accelerators_per_node": "8"})
    >>> s.accelerator.name, s.gpus, s.domain
    ('H100_SXM', 512, 8)
    """
    name = str(data.get("accelerator_model_name", ""))
    acc = accelerator_from_text(name)
    if acc is None:
        raise InputError(f"{source}: expected an accelerator_model_name naming one of {', '.join(ACCELERATORS)}; "
                         f"got {name!r}. Give --device.")
    try:
        nodes, per_node = int(data["number_of_nodes"]), int(data["accelerators_per_node"])
    except (KeyError, TypeError, ValueError):
        raise InputError(f"{source}: expected number_of_nodes and accelerators_per_node as numbers; got "
                         f"{data.get('number_of_nodes')!r}, {data.get('accelerators_per_node')!r}.") from None
    domain = min(acc.domain, nodes * per_node) if acc.domain > per_node else per_node
    return SystemInfo(acc, nodes, per_node, domain)
