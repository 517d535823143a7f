"""The precisions a training step runs in, and the training GPUs the roofline prices: a view of the device table.

The GPUs themselves (peaks per precision, memory, clock, link, each a cited
:class:`core.devices.Figure`) are records of :data:`core.devices.DEVICES`; :data:`GPUS` lists those with
a CUDA-core FP32 peak (the roofline's vector rate) and at least one tensor-core peak.  The research
behind the figures is summarised in docs/paleo.md, "Training GPUs", and docs/devices.md.
"""

from __future__ import annotations

from core.devices import DEVICES, DeviceSpec
from core.validation import check_option

#: precisions a training step runs in, and the bytes one activation/gradient element takes
PRECISIONS: dict[str, int] = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2}
#: what each precision's peak is
PRECISION_TEXT = {"fp32": "FP32 (CUDA cores, no tensor cores)", "tf32": "TF32 tensor cores, dense",
                  "fp16": "FP16 tensor cores, dense", "bf16": "BF16 tensor cores, dense"}

#: the training GPUs of the roofline transfer: table records with an FP32 peak and a tensor-core peak
GPUS: dict[str, DeviceSpec] = {k: d for k, d in DEVICES.items() if "fp32" in d.peaks and len(d.peaks) > 1}


def check_precision(precision: str) -> str:
    """``precision`` if it is one of :data:`PRECISIONS`, else an ``InputError``.

    >>> check_precision("fp8")
    Traceback (most recent call last):
    ...
    core.errors.InputError: precision: expected one of fp32, tf32, fp16, bf16; got 'fp8'. Pick one.
    """
    return check_option(precision, "precision", PRECISIONS, fix="Pick one")
