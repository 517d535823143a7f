"""Paleo's devices: its cost model's view of the one device table (:mod:`core.devices`).

Paleo's model reads one peak (GFLOP/s), a clock and a memory bandwidth per device (:class:`Device`).
Each :class:`Device` here is a view of one record of :data:`core.devices.DEVICES` at one precision:
``fp32`` (the CUDA-core rate), or ``tf32`` when the name ends in ``_TF32`` (the dense TF32 tensor-core
rate; TF32 keeps 4-byte tensors in memory, so the model's byte counts stay right).  Any key or alias of
the table is a device here (``"H100"``, ``"H100_SXM"``, ``"a100-tf32"``, ``"K80"``); a device the table
knows no FP32 peak or clock for (the AMD accelerators, B300, GB200, GB300) is refused with the reason.

Paleo's own entries (``paleo/device.py`` at commit 984bbf5) keep their numbers and units: its memory
bandwidths are used as GiB/s in the faithful mode.  :data:`MODERN_DEVICES` is the list the modern mode
offers first (the menu, not a second table); the networks are :mod:`core.devices.networks`'.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from core.devices import DEVICES as TABLE
from core.devices import (
    MODERN_NETWORKS,
    NETWORKS,
    PALEO_NETWORKS,
    DeviceSpec,
    Network,
    get_network,
)
from core.devices import get_device as table_device
from core.errors import InputError

__all__ = ["DEFAULT_DEVICES", "DEFAULT_NETWORK", "DEVICES", "MODERN_DEVICES", "MODERN_NETWORKS", "NETWORKS",
           "PALEO_DEVICES", "PALEO_NETWORKS", "Device", "ModeSettings", "Network", "devices_for", "get_device",
           "get_network", "networks_for", "paleo_view", "settings_for_mode"]


@dataclass(frozen=True)
class Device:
    """One accelerator (or CPU) as Paleo's cost model sees it: a view of a device table record.

    Attributes
    ----------
    name : str
        The device's short name (:attr:`core.devices.DeviceSpec.short_name`), ``_TF32`` appended for
        the TF32 view: ``"K80"``, ``"H100"``, ``"A100_TF32"``.
    clock_mhz : float
        Clock in MHz; one cycle is the floor of every time term.
    peak_gflops : float
        Peak arithmetic rate in GFLOP/s (see ``precision``).
    mem_bandwidth_gbs : float
        Device-memory bandwidth: GB/s on the datasheet (Paleo's own entries: its numbers).
    is_gpu : bool
    precision : str
        Which peak: ``"fp32"`` (non-tensor) or ``"tf32-tensor"`` (dense).
    source : str
        Where the peak comes from.
    """

    name: str
    clock_mhz: float
    peak_gflops: float
    mem_bandwidth_gbs: float
    is_gpu: bool = True
    precision: str = "fp32"
    source: str = "Paleo paleo/device.py"

    def to_dict(self) -> dict:
        return asdict(self)


def paleo_view(spec: DeviceSpec, precision: str = "fp32") -> Device:
    """The :class:`Device` Paleo's model reads of a table record at ``"fp32"`` or ``"tf32"``.

    Examples
    --------
    >>> from core.devices import get_device as table_device
    >>> d = paleo_view(table_device("A100_SXM4_40GB"), "tf32")
    >>> d.name, d.peak_gflops, d.mem_bandwidth_gbs, d.precision
    ('A100_TF32', 156000.0, 1555, 'tf32-tensor')
    >>> paleo_view(table_device("MI300X"))
    Traceback (most recent call last):
    ...
    core.errors.InputError: device: expected an FP32 peak and a clock for Paleo's model; the device table has ...
    """
    peak, clock = spec.peaks.get(precision), spec.boost_clock
    if peak is None or clock is None:
        lacks = " and ".join(w for w, f in ((f"no {precision.upper()} peak", peak), ("no clock", clock)) if f is None)
        raise InputError(f"device: expected an {precision.upper()} peak and a clock for Paleo's model; the device "
                         f"table has {lacks} for {spec.name}. Use the roofline transfer (--to-device "
                         f"{spec.name} --precision bf16) or the transformer model for it.")
    gflops = peak.value if peak.unit == "GFLOP/s" else round(peak.value * 1e3, 6)
    tf32 = precision == "tf32"
    return Device(spec.short_name + ("_TF32" if tf32 else ""), clock.value, gflops, spec.mem_bandwidth.value,
                  spec.is_gpu, "tf32-tensor" if tf32 else "fp32", peak.source)


def get_device(name: str | Device | DeviceSpec) -> Device:
    """Paleo's view of a device by table key or alias, ``_TF32`` appended for the TF32 peak; case, spaces,
    ``_`` and ``-`` are ignored.

    Examples
    --------
    >>> get_device("rtx 8000").name, get_device("K80").peak_gflops, get_device("h100_sxm").name
    ('RTX_8000', 5600, 'H100')
    >>> get_device("a100-tf32").peak_gflops == 8 * get_device("A100").peak_gflops
    True
    """
    if isinstance(name, Device):
        return name
    if isinstance(name, DeviceSpec):
        return paleo_view(name)
    if not isinstance(name, str):
        raise TypeError(f"device must be a str or Device, not {type(name).__name__}.")
    tf32 = re.fullmatch(r"(.+?)[\s_\-]*tf32", name.strip(), flags=re.IGNORECASE)
    if tf32:
        return paleo_view(table_device(tf32.group(1)), "tf32")
    return paleo_view(table_device(name))


#: Paleo's devices, unchanged (peak GFLOPS, "GB/s" used as GiB/s in the faithful mode)
PALEO_DEVICES: dict[str, Device] = {d.name: d for d in (paleo_view(s) for s in TABLE.values() if s.paleo)}
#: the current GPUs the modern mode lists first: names resolved in the one table
MODERN_DEVICES: dict[str, Device] = {d.name: d for d in map(get_device, (
    "P100", "V100", "RTX_8000", "A100", "A100_TF32", "H100", "H100_TF32"))}
#: what Paleo lists: a view of the table (any other key or alias of it is accepted too, :func:`get_device`)
DEVICES: dict[str, Device] = {**PALEO_DEVICES, **MODERN_DEVICES}

#: the device each mode starts on (keyed by ``paleo_compatible``); K80 is one of Paleo's
DEFAULT_DEVICES: dict[bool, str] = {False: "V100", True: "K80"}
#: Paleo's 10 GbE: valid in both modes
DEFAULT_NETWORK = "ethernet"


def devices_for(*, paleo_compatible: bool) -> dict[str, Device]:
    """The devices a mode offers, in the order to list them.

    The faithful mode has only Paleo's devices; the modern mode has the current GPUs first,
    then Paleo's.

    Examples
    --------
    >>> list(devices_for(paleo_compatible=True)) == list(PALEO_DEVICES)
    True
    >>> list(devices_for(paleo_compatible=False))[:3], len(devices_for(paleo_compatible=False))
    (['P100', 'V100', 'RTX_8000'], 15)
    """
    return dict(PALEO_DEVICES) if paleo_compatible else {**MODERN_DEVICES, **PALEO_DEVICES}


def networks_for(*, paleo_compatible: bool) -> dict[str, Network]:
    """The networks a mode offers: Paleo's only in the faithful mode, all in the modern one.

    Examples
    --------
    >>> list(networks_for(paleo_compatible=True))
    ['aws', 'ethernet', 'ethernet20', 'infiniband', 'pcie2', 'pcie3']
    """
    return dict(PALEO_NETWORKS) if paleo_compatible else dict(NETWORKS)


@dataclass(frozen=True)
class ModeSettings:
    """Device, network and overlap made valid for a mode (see :func:`settings_for_mode`).

    Attributes
    ----------
    device, network : str
    overlap : bool
    changes : tuple of str
        What had to change, e.g. ``("device V100 → K80", "overlap off")``; empty when
        nothing did.
    """

    device: str
    network: str
    overlap: bool
    changes: tuple[str, ...] = ()

    @property
    def note(self) -> str | None:
        """One sentence saying what changed, or None when nothing did."""
        if not self.changes:
            return None
        return ("Paleo-compatible mode has only Paleo's devices, networks and schemes: "
                f"{', '.join(self.changes)}.")


def settings_for_mode(*, paleo_compatible: bool, device: str, network: str,
                      overlap: bool) -> ModeSettings:
    """Keep the device, network and overlap valid for the mode just chosen.

    A device or network the mode does not offer (:func:`devices_for`,
    :func:`networks_for`) becomes the mode's default (:data:`DEFAULT_DEVICES`,
    :data:`DEFAULT_NETWORK`); overlap is turned off in the faithful mode (Paleo never
    overlaps). Names are compared as given (the table keys).

    Examples
    --------
    >>> s = settings_for_mode(paleo_compatible=True, device="H100", network="nvlink4", overlap=True)
    >>> s.device, s.network, s.overlap
    ('K80', 'ethernet', False)
    >>> s.note
    "Paleo-compatible mode has only Paleo's devices, networks and schemes: device H100 → K80, ..."
    >>> settings_for_mode(paleo_compatible=False, device="K80", network="ethernet", overlap=False).changes
    ()
    """
    changes = []
    if device not in devices_for(paleo_compatible=paleo_compatible):
        changes.append(f"device {device} → {DEFAULT_DEVICES[paleo_compatible]}")
        device = DEFAULT_DEVICES[paleo_compatible]
    if network not in networks_for(paleo_compatible=paleo_compatible):
        changes.append(f"network {network} → {DEFAULT_NETWORK}")
        network = DEFAULT_NETWORK
    if paleo_compatible and overlap:
        changes.append("overlap off")
        overlap = False
    return ModeSettings(device=device, network=network, overlap=bool(overlap), changes=tuple(changes))
