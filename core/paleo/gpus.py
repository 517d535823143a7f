"""Training GPUs as they are used today: peaks per precision, memory, intra-node link, sources.

Every figure is a :class:`Figure` that carries its value, its unit, where it comes from and
its *basis*: whether a tensor rate is the datasheet's dense number or half of its "with
sparsity" number (NVIDIA prints H100, H200, L4 and B200 tensor rates only with sparsity),
and whether a rate is at the boost clock (every NVIDIA peak is).  Figures not confirmed by a
datasheet copy are marked ``unverified``.  The research behind the table (with every
citation) is summarised in docs/paleo.md, "Training GPUs".

Conventions
-----------
* FLOP/s count a fused multiply-add as **2 FLOPs**, as NVIDIA's peaks and
  ``torch.utils.flop_counter`` do (ptflops, thop and fvcore count multiply-adds, half of it).
* ``fp32`` is the non-tensor (CUDA core) rate; ``tf32``, ``fp16`` and ``bf16`` are dense
  tensor-core rates.  Memory bandwidth is decimal GB/s.
* ``link`` names the intra-node network of :data:`core.paleo.devices.NETWORKS` a GPU talks to
  its neighbours over (NVLink per direction, or the PCIe slot); ``link_gbs`` is the
  datasheet's bidirectional figure per GPU.

The existing single-precision entries of :mod:`core.paleo.devices` (``V100``, ``A100``,
``H100`` ...) and Paleo's own devices are untouched; the names here are distinct
(``A100_PCIE_80GB``, ``H100_SXM`` ...).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.errors import InputError
from core.validation import check_option

#: precisions a training step runs in, and the bytes one activation/gradient element takes
PRECISIONS: dict[str, int] = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2}
#: what each precision's peak is
PRECISION_TEXT = {"fp32": "FP32 (CUDA cores, no tensor cores)", "tf32": "TF32 tensor cores, dense",
                  "fp16": "FP16 tensor cores, dense", "bf16": "BF16 tensor cores, dense"}

DENSE = "dense (datasheet)"
HALF_SPARSE = "dense = datasheet 'with sparsity' figure / 2 (derived)"
NO_SPARSITY = "dense (this generation has no sparsity)"
NOT_TENSOR = "CUDA cores (no sparsity applies)"
BOOST = "boost clock"


@dataclass(frozen=True)
class Figure:
    """One datasheet number with its provenance.

    Attributes
    ----------
    value : float
    unit : str
        ``"TFLOP/s"``, ``"GB/s"``, ``"GB"`` or ``"MHz"``.
    source : str
        Where it comes from (datasheet, and the copy it was read in).
    basis : str
        Dense or derived from the sparse figure, the clock it assumes, or what the unit counts.
    verified : bool
        False when only third-party figures or arithmetic back it.
    """

    value: float
    unit: str
    source: str
    basis: str = ""
    verified: bool = True

    def text(self) -> str:
        """``"989.4 TFLOP/s (dense = ... / 2 (derived); source)"``."""
        note = f"{self.basis}; " if self.basis else ""
        flag = "; unverified" if not self.verified else ""
        return f"{self.value:g} {self.unit} ({note}{self.source}{flag})"


@dataclass(frozen=True)
class GpuSpec:
    """One GPU model: peaks per precision, memory, clock and intra-node link.

    Attributes
    ----------
    name : str
        Table key, e.g. ``"H100_SXM"``.
    label : str
        Its full name, e.g. ``"NVIDIA H100 SXM5 80GB"``.
    peaks : dict of str to Figure
        TFLOP/s per precision (keys of :data:`PRECISIONS`); a precision the GPU lacks is absent.
    memory_gb, mem_bandwidth, boost_clock : Figure
    link : str
        Intra-node network key in :data:`core.paleo.devices.NETWORKS`.
    link_gbs : Figure
        The datasheet's bidirectional link bandwidth per GPU.
    """

    name: str
    label: str
    peaks: dict[str, Figure]
    memory_gb: Figure
    mem_bandwidth: Figure
    boost_clock: Figure
    link: str
    link_gbs: Figure

    @property
    def figures(self) -> tuple[tuple[str, Figure], ...]:
        """Every figure with what it is, for listing and for the provenance test."""
        return (*((f"{p} peak", f) for p, f in self.peaks.items()), ("memory", self.memory_gb),
                ("memory bandwidth", self.mem_bandwidth), ("boost clock", self.boost_clock),
                ("intra-node link", self.link_gbs))

    def peak_tflops(self, precision: str) -> float:
        """The dense peak of ``precision`` in TFLOP/s.

        Raises
        ------
        InputError
            If the precision is unknown or the GPU has no such unit (V100: no BF16, no TF32).

        Examples
        --------
        >>> GPUS["H100_SXM"].peak_tflops("bf16")
        989.4
        >>> GPUS["V100_SXM2"].peak_tflops("bf16")
        Traceback (most recent call last):
        ...
        core.errors.InputError: precision: expected one of fp32, fp16 for V100_SXM2; got 'bf16'. ...
        """
        check_precision(precision)
        if precision not in self.peaks:
            raise InputError(f"precision: expected one of {', '.join(self.peaks)} for {self.name}; got "
                             f"{precision!r}. This GPU has no {precision.upper()} unit; pick another precision.")
        return self.peaks[precision].value


def check_precision(precision: str) -> str:
    """``precision`` if it is one of :data:`PRECISIONS`, else an ``InputError``.

    >>> check_precision("fp8")
    Traceback (most recent call last):
    ...
    core.errors.InputError: precision: expected one of fp32, tf32, fp16, bf16; got 'fp8'. Pick one.
    """
    return check_option(precision, "precision", PRECISIONS, fix="Pick one")


# ---------------------------------------------------------------- sources (docs/paleo.md, "Training GPUs")
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


def _tf(value: float, source: str, basis: str = DENSE, verified: bool = True) -> Figure:
    return Figure(value, "TFLOP/s", source, basis, verified)


def _gpu(name: str, label: str, *, fp32: float, tf32: float | None, fp16: float, bf16: float | None,
         source: str, sparse_printed: bool, memory_gb: float, bandwidth: float, clock: float, link: str,
         link_gbs: float, link_source: str, unverified: tuple[str, ...] = (),
         tensor_basis: str | None = None) -> GpuSpec:
    """One entry; ``sparse_printed`` marks datasheets that print tensor rates only with sparsity."""
    if tensor_basis is None:
        tensor_basis = HALF_SPARSE if sparse_printed else (NO_SPARSITY if tf32 is None else DENSE)
    peaks = {"fp32": _tf(fp32, source, NOT_TENSOR + ", " + BOOST, "fp32" not in unverified)}
    for precision, value in (("tf32", tf32), ("fp16", fp16), ("bf16", bf16)):
        if value is not None:
            peaks[precision] = _tf(value, source, f"{tensor_basis}, {BOOST}", precision not in unverified)
    return GpuSpec(
        name=name, label=label, peaks=peaks,
        memory_gb=Figure(memory_gb, "GB", source),
        mem_bandwidth=Figure(bandwidth, "GB/s", source, "decimal GB/s", "bandwidth" not in unverified),
        boost_clock=Figure(clock, "MHz", source, BOOST, "clock" not in unverified),
        link=link, link_gbs=Figure(link_gbs, "GB/s", link_source, "bidirectional, per GPU", "link" not in unverified))


#: the training GPUs, dense peaks per precision (TFLOP/s, 2 FLOPs per multiply-add)
GPUS: dict[str, GpuSpec] = {g.name: g for g in (
    _gpu("V100_SXM2", "NVIDIA Tesla V100 SXM2 32GB", fp32=15.7, tf32=None, fp16=125, bf16=None, source=_V100,
         sparse_printed=False, memory_gb=32, bandwidth=900, clock=1530, link="nvlink2", link_gbs=300,
         link_source=_NVLINK.format(gpu="Tesla V100 (SXM2)", gbs=300)),
    _gpu("V100_PCIE", "NVIDIA Tesla V100 PCIe 32GB", fp32=14, tf32=None, fp16=112, bf16=None, source=_V100_PCIE,
         sparse_printed=False, memory_gb=32, bandwidth=900, clock=1380, link="pcie3", link_gbs=32,
         link_source=_PCIE.format(gen=3, gbs=32, gpu="V100 PCIe"), unverified=("link",)),
    _gpu("A100_PCIE_40GB", "NVIDIA A100 PCIe 40GB", fp32=19.5, tf32=156, fp16=312, bf16=312, source=_A100,
         sparse_printed=False, memory_gb=40, bandwidth=1555, clock=1410, link="pcie4", link_gbs=64,
         link_source=_PCIE.format(gen=4, gbs=64, gpu="A100")),
    _gpu("A100_PCIE_80GB", "NVIDIA A100 PCIe 80GB", fp32=19.5, tf32=156, fp16=312, bf16=312, source=_A100_80_PCIE,
         sparse_printed=False, memory_gb=80, bandwidth=1935, clock=1410, link="pcie4", link_gbs=64,
         link_source=_PCIE.format(gen=4, gbs=64, gpu="A100")),
    _gpu("A100_SXM4_40GB", "NVIDIA A100 SXM4 40GB", fp32=19.5, tf32=156, fp16=312, bf16=312, source=_A100,
         sparse_printed=False, memory_gb=40, bandwidth=1555, clock=1410, link="nvlink3", link_gbs=600,
         link_source=_NVLINK.format(gpu="A100 (SXM4)", gbs=600)),
    _gpu("A100_SXM4_80GB", "NVIDIA A100 SXM4 80GB", fp32=19.5, tf32=156, fp16=312, bf16=312, source=_A100,
         sparse_printed=False, memory_gb=80, bandwidth=2039, clock=1410, link="nvlink3", link_gbs=600,
         link_source=_NVLINK.format(gpu="A100 (SXM4)", gbs=600)),
    _gpu("H100_PCIE", "NVIDIA H100 PCIe 80GB", fp32=51, tf32=378, fp16=756, bf16=756, source=_H100_PCIE,
         sparse_printed=True, memory_gb=80, bandwidth=2000, clock=1755, link="pcie5", link_gbs=128,
         link_source=_PCIE.format(gen=5, gbs=128, gpu="H100 PCIe")),
    _gpu("H100_SXM", "NVIDIA H100 SXM5 80GB", fp32=67, tf32=494.7, fp16=989.4, bf16=989.4, source=_H100,
         sparse_printed=True, memory_gb=80, bandwidth=3350, clock=1980, link="nvlink4", link_gbs=900,
         link_source=_NVLINK.format(gpu="H100 (SXM5)", gbs=900)),
    _gpu("H200_SXM", "NVIDIA H200 SXM 141GB", fp32=67, tf32=494.7, fp16=989.4, bf16=989.4, source=_H200,
         sparse_printed=True, memory_gb=141, bandwidth=4800, clock=1980, link="nvlink4", link_gbs=900,
         link_source=_NVLINK.format(gpu="H200", gbs=900), unverified=("clock",)),
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
         tensor_basis="dense = spec sheet's 1,457 TFLOPS FP8 with sparsity / 4 (TF32: / 8) (derived)"),
    _gpu("B200", "NVIDIA B200 (HGX B200, 1000 W)", fp32=75, tf32=1125, fp16=2250, bf16=2250, source=_B200,
         sparse_printed=True, memory_gb=180, bandwidth=7700, clock=1980, link="nvlink5", link_gbs=1800,
         link_source=_NVLINK.format(gpu="HGX B200", gbs=1800), unverified=("clock", "bandwidth")),
)}


def _key(name: str) -> str:
    return re.sub(r"[\s_\-]", "", name).upper()


def get_gpu(name: str | GpuSpec) -> GpuSpec:
    """A training GPU by name; case, spaces, ``_`` and ``-`` are ignored.

    Examples
    --------
    >>> g = get_gpu("a100 pcie 80gb")
    >>> g.name, g.peak_tflops("fp16"), g.mem_bandwidth.value, g.link
    ('A100_PCIE_80GB', 312, 1935, 'pcie4')
    >>> get_gpu("H100")
    Traceback (most recent call last):
    ...
    core.errors.InputError: gpu: expected one of V100_SXM2, ...; got 'H100'. Pick a listed name ...
    """
    if isinstance(name, GpuSpec):
        return name
    if not isinstance(name, str):
        raise InputError(f"gpu: expected a name such as 'H100_SXM'; got {name!r} ({type(name).__name__}).")
    by_key = {_key(k): v for k, v in GPUS.items()}
    try:
        return by_key[_key(name)]
    except KeyError:
        raise InputError(f"gpu: expected one of {', '.join(GPUS)}; got {name!r}. "
                         "Pick a listed name (python -m core paleo --list).") from None
