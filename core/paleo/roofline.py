"""A roofline per op: each op's time from its FLOPs and its bytes, with efficiencies per kind.

For an op of kind ``k`` with ``F`` FLOPs and ``Q`` bytes on a device with peak ``P`` (the
precision's tensor-core peak for convolutions and matrix products, the FP32 CUDA-core peak
for the rest) and memory bandwidth ``W``::

    compute = F / (eta_compute[k] · P)        memory = Q / (eta_memory[k] · W)
    time    = max(compute, memory)            (form="max", the roofline)
            = compute + memory                (form="sum", Paleo's per-layer sum)

A step is the sum over its ops (forward, backward and the optimizer's update).  Unlike
Paleo's one PPP, the efficiencies depend on the kind of op, and an op is bound by whichever
of compute and memory is slower *on that device*: a device with a different
compute/bandwidth balance moves ops between the two, which is what lets a calibration on
one GPU transfer to another (:mod:`core.paleo.transfer`).

:data:`DEFAULT_EFFICIENCIES` are round prior values, fixed before any check against real
runs: GEMM-based convolutions at 60 % and matrix products at 70 % of the tensor peak,
streaming kernels (normalisation, element-wise, pooling) at 80 % of the memory bandwidth,
and 50 % of the CUDA-core peak for their little arithmetic.  A calibration rescales them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from core.devices import NAMES, DeviceSpec, normalise
from core.devices import get_device as table_device
from core.errors import InputError
from core.paleo.devices import Device, get_device
from core.paleo.gpus import check_precision
from core.paleo.workload import KINDS, MATRIX_KINDS, PHASES, Workload
from core.validation import check_scalar

FORMS = ("max", "sum")
_DEVICE_PRECISION = {"fp32": "fp32", "tf32-tensor": "tf32"}


@dataclass(frozen=True)
class Roof:
    """A device at one precision, as the roofline sees it.

    Attributes
    ----------
    name : str
    precision : str
        One of :data:`core.paleo.gpus.PRECISIONS`.
    matrix_tflops : float
        Dense peak of convolutions and matrix products at ``precision`` (TFLOP/s, 2 per multiply-add).
    vector_tflops : float
        Peak of the other ops (FP32 CUDA cores), TFLOP/s.
    mem_bandwidth_gbs : float
        Decimal GB/s.
    source : str
    """

    name: str
    precision: str
    matrix_tflops: float
    vector_tflops: float
    mem_bandwidth_gbs: float
    source: str

    def peak_flops(self, kind: str) -> float:
        """FLOP/s available to an op of ``kind``."""
        return (self.matrix_tflops if kind in MATRIX_KINDS else self.vector_tflops) * 1e12


def roof_for(device: str | DeviceSpec | Device | Roof, precision: str) -> Roof:
    """The roof of a device of the table (:data:`core.devices.DEVICES`, by key or alias) at ``precision``.

    A table device's roof takes the ``precision`` peak for matrix ops and the FP32 CUDA-core peak for
    the rest; a Paleo :class:`~core.paleo.devices.Device` (``"A100_TF32"``, or one passed as such) has
    one peak and is accepted only at its own precision.

    Examples
    --------
    >>> r = roof_for("H100_SXM", "bf16")
    >>> r.matrix_tflops, r.vector_tflops, r.mem_bandwidth_gbs
    (989.4, 67.0, 3350.0)
    >>> roof_for("A100", "fp16").name, roof_for("A100_TF32", "tf32").matrix_tflops
    ('A100_SXM4_40GB', 156.0)
    >>> roof_for("V100", "bf16")
    Traceback (most recent call last):
    ...
    core.errors.InputError: precision: expected one of fp32, fp16 for V100_SXM2; got 'bf16'. ...
    """
    check_precision(precision)
    if isinstance(device, Roof):
        if device.precision != precision:
            raise InputError(f"device: expected {device.precision} for {device.name}; got {precision!r}. "
                             "A measured device has one precision.")
        return device
    if isinstance(device, str):   # a key or alias of the table; else Paleo's spelling (A100_TF32) or an error
        device = table_device(device) if normalise(device) in NAMES else get_device(device)
    if isinstance(device, DeviceSpec):
        peak = device.peak_tflops(precision)
        if "fp32" not in device.peaks:
            raise InputError(f"device: expected an FP32 peak for {device.name} (the roofline's rate for "
                             "non-matrix ops); the device table has none. Use the transformer model for it.")
        return Roof(device.name, precision, float(peak), float(device.peak_tflops("fp32")),
                    float(device.mem_bandwidth.value), device.peaks[precision].source)
    own = _DEVICE_PRECISION.get(device.precision, "fp32")
    if own != precision:
        raise InputError(f"device: expected {own} for {device.name} (one peak, {own.upper()}); got {precision!r}. "
                         "For other precisions pick a device of the table by its name (A100_PCIE_80GB, "
                         "H100_SXM, ...; python -m core paleo --list).")
    peak = device.peak_gflops / 1e3
    return Roof(device.name, precision, peak, peak, float(device.mem_bandwidth_gbs), device.source)


@dataclass(frozen=True)
class Efficiencies:
    """Fractions of peak compute and of peak memory bandwidth reached, per kind of op.

    Attributes
    ----------
    compute, memory : tuple of float
        One value per kind, in the order of :data:`core.paleo.workload.KINDS`.
    """

    compute: tuple[float, ...]
    memory: tuple[float, ...]

    def __post_init__(self) -> None:
        for name, values in (("compute", self.compute), ("memory", self.memory)):
            if len(values) != len(KINDS):
                raise InputError(f"efficiencies {name}: expected {len(KINDS)} values ({', '.join(KINDS)}); "
                                 f"got {len(values)}. Give one per kind.")
            for kind, v in zip(KINDS, values):
                check_scalar(v, f"{name} efficiency of {kind}", min_val=0, include_boundaries="neither")

    @classmethod
    def from_dicts(cls, compute: dict[str, float], memory: dict[str, float]) -> Efficiencies:
        """Build from ``{kind: value}`` dicts (every kind given)."""
        return cls(tuple(float(compute[k]) for k in KINDS), tuple(float(memory[k]) for k in KINDS))

    def scaled(self, compute: float, memory: float) -> Efficiencies:
        """Every compute efficiency times ``compute`` and every memory efficiency times ``memory``."""
        return Efficiencies(tuple(v * compute for v in self.compute), tuple(v * memory for v in self.memory))

    def to_dict(self) -> dict:
        """``{"compute": {kind: value}, "memory": {kind: value}}``."""
        return {"compute": dict(zip(KINDS, self.compute)), "memory": dict(zip(KINDS, self.memory))}


#: prior efficiencies (module docstring): conv 0.6, matmul 0.7, others 0.5 of compute; 0.8 of memory
DEFAULT_EFFICIENCIES = Efficiencies(compute=(0.6, 0.7, 0.5, 0.5, 0.5), memory=(0.8, 0.8, 0.8, 0.8, 0.8))


@dataclass(frozen=True)
class OpArrays:
    """A workload at one batch and precision as numpy arrays (one entry per op)."""

    flops: np.ndarray
    bytes: np.ndarray
    kind: np.ndarray       # index into KINDS
    phase: np.ndarray      # index into PHASES
    matrix: np.ndarray     # bool: tensor-core op


@lru_cache(maxsize=64)
def op_arrays(workload: Workload, batch_size: float, precision: str) -> OpArrays:
    """FLOPs, bytes, kind and phase of every op at ``batch_size`` in ``precision`` (cached)."""
    ops = workload.ops
    kind = np.array([KINDS.index(o.kind) for o in ops], dtype=int)
    return OpArrays(flops=np.array([o.flops(batch_size) for o in ops], dtype=float),
                    bytes=np.array([o.bytes(batch_size, precision) for o in ops], dtype=float),
                    kind=kind, phase=np.array([PHASES.index(o.phase) for o in ops], dtype=int),
                    matrix=np.array([o.kind in MATRIX_KINDS for o in ops], dtype=bool))


def op_seconds(arrays: OpArrays, roof: Roof, efficiencies: Efficiencies, form: str = "max"
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(compute_s, memory_s, time_s)`` of every op (module docstring's formulas)."""
    peak = np.where(arrays.matrix, roof.matrix_tflops, roof.vector_tflops) * 1e12
    compute = arrays.flops / (np.asarray(efficiencies.compute)[arrays.kind] * peak)
    memory = arrays.bytes / (np.asarray(efficiencies.memory)[arrays.kind] * roof.mem_bandwidth_gbs * 1e9)
    time = np.maximum(compute, memory) if form == "max" else compute + memory
    return compute, memory, time


@dataclass(frozen=True)
class RooflineStep:
    """One training step of a workload on a device, by the per-op roofline.

    Attributes
    ----------
    device, precision, form : str
    batch_size : int
    forward_s, backward_s, update_s : float
        Time of each phase, seconds.
    compute_bound_share : float
        Share of the step's time spent in ops whose compute time is at least their memory time.
    flops, bytes : float
        FLOPs (2 per multiply-add) and bytes of the step.
    kind_s : tuple of (str, float)
        Time per kind of op, seconds.
    """

    device: str
    precision: str
    form: str
    batch_size: int
    forward_s: float
    backward_s: float
    update_s: float
    compute_bound_share: float
    flops: float
    bytes: float
    kind_s: tuple[tuple[str, float], ...]

    @property
    def total_s(self) -> float:
        """``forward + backward + update``, seconds."""
        return self.forward_s + self.backward_s + self.update_s


def check_form(form: str) -> str:
    """``form`` if it is ``"max"`` or ``"sum"``, else an ``InputError``."""
    if form not in FORMS:
        raise InputError(f"form: expected 'max' (roofline) or 'sum' (Paleo's compute + memory); got {form!r}. "
                         "Pick one.")
    return form


def roofline_step(workload: Workload, device: str | DeviceSpec | Device | Roof, *, precision: str, batch_size: int,
                  efficiencies: Efficiencies = DEFAULT_EFFICIENCIES, form: str = "max") -> RooflineStep:
    """Time of one training step of ``workload`` at ``batch_size`` on ``device`` in ``precision``.

    Parameters
    ----------
    workload : Workload
    device : str, DeviceSpec, Device or Roof
        A training GPU (``"H100_SXM"``), a single-precision device at its precision, or a roof.
    precision : {"fp32", "tf32", "fp16", "bf16"}
    batch_size : int
        Samples per step on this device.
    efficiencies : Efficiencies, default=DEFAULT_EFFICIENCIES
    form : {"max", "sum"}, default="max"

    Examples
    --------
    One convolution of 1e12 FLOPs and 2e9 elements (4e9 bytes in FP16) on a device with a
    100 TFLOP/s tensor peak and 1000 GB/s: compute 1e12 / (0.6 · 100e12) = 16.7 ms, memory
    4e9 / (0.8 · 1000e9) = 5 ms; the roofline takes the larger.

    >>> from core.paleo.workload import Op
    >>> w = Workload("toy", "hand", (Op("c", "convolution", "conv", "forward", 1e12, 0, 2e9, 0),), 0, "hand")
    >>> roof = Roof("toy GPU", "fp16", 100, 10, 1000, "hand")
    >>> s = roofline_step(w, roof, precision="fp16", batch_size=1)
    >>> round(s.total_s * 1e3, 2), s.compute_bound_share
    (16.67, 1.0)
    >>> round(roofline_step(w, roof, precision="fp16", batch_size=1, form="sum").total_s * 1e3, 2)
    21.67
    """
    check_scalar(batch_size, "batch_size", int, min_val=1)
    roof = roof_for(device, precision)
    check_form(form)
    arrays = op_arrays(workload, int(batch_size), precision)
    compute, memory, time = op_seconds(arrays, roof, efficiencies, form)
    phase = [float(time[arrays.phase == i].sum()) for i in range(len(PHASES))]
    total = float(time.sum())
    return RooflineStep(
        device=roof.name, precision=precision, form=form, batch_size=int(batch_size), forward_s=phase[0],
        backward_s=phase[1], update_s=phase[2],
        compute_bound_share=float(time[compute >= memory].sum() / total) if total > 0 else 0.0,
        flops=float(arrays.flops.sum()), bytes=float(arrays.bytes.sum()),
        kind_s=tuple((k, float(time[arrays.kind == i].sum())) for i, k in enumerate(KINDS)))


LAYER_COLUMNS = ("layer", "kind", "forward_ms", "backward_ms", "total_ms", "flops", "bytes", "bound")


def roofline_layers(workload: Workload, device: str | DeviceSpec | Device | Roof, *, precision: str, batch_size: int,
                    efficiencies: Efficiencies = DEFAULT_EFFICIENCIES, form: str = "max") -> pd.DataFrame:
    """Per-layer time of one step: forward and backward ms, FLOPs, bytes, and what bounds it.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`LAYER_COLUMNS`, one row per layer in execution order (the optimizer
        step last); ``kind`` is the kind taking most of the layer's time; ``bound`` is
        ``"compute"`` or ``"memory"``, whichever takes most of it.
    """
    check_scalar(batch_size, "batch_size", int, min_val=1)
    roof = roof_for(device, precision)
    check_form(form)
    arrays = op_arrays(workload, int(batch_size), precision)
    compute, memory, time = op_seconds(arrays, roof, efficiencies, form)
    frame = pd.DataFrame({
        "layer": [o.layer for o in workload.ops], "kind": [o.kind for o in workload.ops],
        "phase": [o.phase for o in workload.ops], "time": time, "flops": arrays.flops, "bytes": arrays.bytes,
        "compute_bound": np.where(compute >= memory, time, 0.0)})
    order = list(dict.fromkeys(frame["layer"]))
    grouped = frame.groupby("layer", sort=False)
    by_kind = frame.groupby(["layer", "kind"], sort=False)["time"].sum().reset_index()
    dominant = by_kind.sort_values("time", ascending=False).drop_duplicates("layer").set_index("layer")["kind"]
    phase_ms = frame.pivot_table(index="layer", columns="phase", values="time", aggfunc="sum", fill_value=0.0) * 1e3
    rows = []
    for layer in order:
        g = grouped.get_group(layer)
        fwd = float(phase_ms.loc[layer].get("forward", 0.0))
        bwd = float(phase_ms.loc[layer].get("backward", 0.0)) + float(phase_ms.loc[layer].get("update", 0.0))
        total = float(g["time"].sum())
        bound = "compute" if total > 0 and g["compute_bound"].sum() >= total / 2 else "memory"
        rows.append((layer, dominant[layer], fwd, bwd, fwd + bwd, float(g["flops"].sum()), float(g["bytes"].sum()),
                     bound))
    return pd.DataFrame(rows, columns=list(LAYER_COLUMNS))
