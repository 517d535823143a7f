"""The one device table: peaks per precision, memory, interconnect and price, each figure with its source.

One record per device (:class:`DeviceSpec` in :data:`DEVICES`), one key normaliser (:func:`normalise`,
:func:`device_key`), one lookup (:func:`get_device`, keys and aliases) and one recogniser of device names in
free text (:func:`device_from_text`: MLLOG ``submission_platform``, systems-JSON ``accelerator_model_name``,
``nvidia-smi`` names, course log names, Paleo's names).  Paleo (:mod:`core.paleo`), the roofline, the
transformer model (:mod:`core.transformer`), the log readers (:mod:`core.logs`) and the pages read devices
through this package; the networks a device's ``link`` names are here too (:data:`NETWORKS`).

Modules: ``figures`` (Figure and the basis words), ``spec`` (DeviceSpec), ``table`` (DEVICES), ``names``
(normaliser, lookup, recogniser), ``networks`` (Network, NETWORKS).  See docs/devices.md.
"""

from core.devices.figures import DENSE, HALF_SPARSE, NO_SPARSITY, NOT_TENSOR, PEAK_PRECISIONS, Figure
from core.devices.names import NAMES, device_from_text, device_key, get_device, normalise
from core.devices.networks import MODERN_NETWORKS, NETWORKS, PALEO_NETWORKS, Network, get_network
from core.devices.spec import DeviceSpec
from core.devices.table import DEVICES

__all__ = [
    'device_key',
    "DENSE", "DEVICES", "HALF_SPARSE", "MODERN_NETWORKS", "NAMES", "NETWORKS", "NOT_TENSOR",
    "NO_SPARSITY", "PALEO_NETWORKS", "PEAK_PRECISIONS", "DeviceSpec", "Figure", "Network",
    "device_from_text", "get_device", "get_network", "normalise",
]
