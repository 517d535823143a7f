"""The accelerators a language-model step runs on: a view of the one device table (:mod:`core.devices`).

Every figure (dense BF16/FP8 peaks, HBM, the scale-up link and domain, the per-GPU NIC) is a cited
:class:`core.devices.Figure` of a :class:`core.devices.DeviceSpec`; names are looked up and recognised in
text by :mod:`core.devices` (:func:`get_accelerator` and :func:`accelerator_from_text` are its
:func:`~core.devices.get_device` and :func:`~core.devices.device_from_text`).  This module adds what an MLPerf
``systems/*.json`` says about a machine (:func:`system_from_json`).

Conventions (docs/devices.md)
-----------------------------
* Peaks are **dense** (no 2:4 sparsity) TFLOP/s, a multiply-add = 2 FLOPs.
* ``scale_up_gbs`` is the datasheet's NVLink / Infinity Fabric bandwidth per GPU, both directions
  together; a collective uses one direction: :attr:`~core.devices.DeviceSpec.scale_up_bw` is half.
* ``scale_out_gbps`` is the per-GPU network card (InfiniBand / Ethernet) in Gb/s, one direction.
* ``domain`` is how many GPUs share the scale-up fabric: 8 on an HGX/OAM board, 72 in an NVL72 rack.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.devices import DEVICES, DeviceSpec, device_from_text, get_device
from core.errors import InputError

#: the record type of an accelerator: the device table's
Accelerator = DeviceSpec
#: the devices the transformer model can plan across nodes: those with a per-GPU NIC in the table
ACCELERATORS: dict[str, DeviceSpec] = {k: d for k, d in DEVICES.items() if d.scale_out_gbps is not None}
#: a device by table key or alias (:func:`core.devices.get_device`)
get_accelerator = get_device
#: the device a log or system description names, or None (:func:`core.devices.device_from_text`)
accelerator_from_text = device_from_text


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
        raise InputError(f"{source}: expected an accelerator_model_name naming a device of the table "
                         f"({', '.join(ACCELERATORS)}, ...); got {name!r}. Give --device.")
    try:
        nodes, per_node = int(data["number_of_nodes"]), int(data["accelerators_per_node"])
    except (KeyError, TypeError, ValueError):
        raise InputError(f"{source}: expected number_of_nodes and accelerators_per_node as numbers; got "
                         f"{data.get('number_of_nodes')!r}, {data.get('accelerators_per_node')!r}.") from None
    domain = min(acc.domain, nodes * per_node) if acc.domain > per_node else per_node
    return SystemInfo(acc, nodes, per_node, domain)
