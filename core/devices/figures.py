"""One datasheet number with its provenance (:class:`Figure`), and the words that say what a peak counts.

Every number of the device table (:mod:`core.devices.table`) is a :class:`Figure`: its value, its unit,
where it comes from and its *basis*: whether a tensor rate is the datasheet's dense number or half of
its "with sparsity" number (NVIDIA prints Hopper and Blackwell tensor rates only with sparsity), and
whether a rate is at the boost clock (every NVIDIA peak is).  Figures not confirmed by a datasheet
copy are marked ``verified=False``.
"""

from __future__ import annotations

from dataclasses import dataclass

#: the precisions a peak is given for, and what each peak counts
PEAK_PRECISIONS: dict[str, str] = {
    "fp32": "FP32 (CUDA cores, no tensor cores)", "tf32": "TF32 tensor cores, dense",
    "fp16": "FP16 tensor cores, dense", "bf16": "BF16 tensor cores, dense", "fp8": "FP8 tensor cores, dense"}

DENSE = "dense (datasheet)"
HALF_SPARSE = "dense = datasheet 'with sparsity' figure / 2 (derived)"
NO_SPARSITY = "dense (this generation has no sparsity)"
NOT_TENSOR = "CUDA cores (no sparsity applies)"
DENSE_AMD = "dense (AMD prints dense and sparse separately)"
BOOST = "boost clock"
#: the basis of Paleo's own figures, copied as its program has them
PALEO_BASIS = "Paleo's own number, unchanged"


@dataclass(frozen=True)
class Figure:
    """One datasheet number with its provenance.

    Attributes
    ----------
    value : float
    unit : str
        ``"TFLOP/s"`` (``"GFLOP/s"`` for Paleo's own devices, as Paleo wrote them), ``"GB/s"``,
        ``"Gb/s"``, ``"GB"``, ``"MHz"`` or ``"$/h"``.
    source : str
        Where it comes from (datasheet, and the copy it was read in).
    basis : str
        Dense or derived from the sparse figure, the clock it assumes, or what the unit counts.
    verified : bool
        False when only third-party figures or arithmetic back it.

    Examples
    --------
    >>> Figure(989.4, "TFLOP/s", "NVIDIA H100 datasheet", HALF_SPARSE).text()
    "989.4 TFLOP/s (dense = datasheet 'with sparsity' figure / 2 (derived); NVIDIA H100 datasheet)"
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

    @property
    def tflops(self) -> float:
        """A rate in TFLOP/s whichever unit it was written in (Paleo's devices: GFLOP/s)."""
        if self.unit == "GFLOP/s":
            return self.value / 1e3
        if self.unit != "TFLOP/s":
            raise ValueError(f"figure: expected a rate in TFLOP/s or GFLOP/s; got {self.unit!r}.")
        return self.value
