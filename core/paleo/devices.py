"""Device and network tables: Paleo's own, plus current GPUs and interconnects.

Paleo's entries (``paleo/device.py`` at commit 984bbf5) are copied as they are, including
their units: its memory bandwidths are used as GiB/s in the faithful mode.  The modern
entries quote vendor datasheets (decimal GB/s and TFLOPS); the peak is the **FP32
non-tensor** rate unless the name says ``_TF32`` (dense TF32 tensor-core rate, i.e. half
the "with sparsity" figure on the datasheet).  TF32 keeps 4-byte tensors in memory, so the
model's byte counts stay right; FP16 tensor-core rates are not listed because the model
counts 4 bytes per element.  ``clock_mhz`` (boost clock) only sets the one-cycle floor of
each time term.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from core.errors import InputError


@dataclass(frozen=True)
class Device:
    """One accelerator (or CPU) as the cost model sees it.

    Attributes
    ----------
    name : str
        Table key, e.g. ``"K80"`` or ``"A100_TF32"``.
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
        Where the figures come from.
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


@dataclass(frozen=True)
class Network:
    """A link between workers: bandwidth per direction in Gbit/s, no latency term (as Paleo).

    Attributes
    ----------
    name : str
    gbps : float
        Gigabits per second (decimal); bytes/s = gbps / 8 · 1e9.
    source : str
    """

    name: str
    gbps: float
    source: str = "Paleo paleo/device.py"

    def to_dict(self) -> dict:
        return asdict(self)


_PALEO = "Paleo paleo/device.py (commit 984bbf5)"
#: Paleo's devices, unchanged (peak GFLOPS, "GB/s" used as GiB/s in the faithful mode)
PALEO_DEVICES: dict[str, Device] = {
    "TITAN_X": Device("TITAN_X", 1000, 6144, 336.5, source=_PALEO),
    "K20": Device("K20", 1000, 3520, 208, source=_PALEO),
    "K20X": Device("K20X", 1000, 3935, 250, source=_PALEO),
    "K40": Device("K40", 745, 4290, 288, source=_PALEO),
    # the whole dual-GPU K80 board at base clock
    "K80": Device("K80", 560, 5600, 480, source=_PALEO),
    "GEFORCE_780_TI": Device("GEFORCE_780_TI", 875, 5040, 336, source=_PALEO),
    "GEFORCE_750_M": Device("GEFORCE_750_M", 941, 722.7, 80, source=_PALEO),
    "CPU_I7": Device("CPU_I7", 6 * 35000, 289, 68, is_gpu=False, source=_PALEO),
}

#: current GPUs; each figure from the vendor datasheet named in ``source``
MODERN_DEVICES: dict[str, Device] = {
    # NVIDIA Tesla P100 datasheet (SXM2/NVLink): 10.6 TFLOPS FP32, 732 GB/s HBM2,
    # boost 1480 MHz.
    "P100": Device("P100", 1480, 10_600, 732,
                   source="NVIDIA Tesla P100 datasheet (SXM2): 10.6 TFLOPS FP32, 732 GB/s"),
    # NVIDIA Tesla V100 datasheet (SXM2): 15.7 TFLOPS FP32 (125 TFLOPS FP16 tensor, not
    # used), 900 GB/s HBM2, boost 1530 MHz.
    "V100": Device("V100", 1530, 15_700, 900,
                   source="NVIDIA Tesla V100 datasheet (SXM2): 15.7 TFLOPS FP32, 900 GB/s"),
    # NVIDIA Quadro RTX 8000 datasheet: 16.3 TFLOPS FP32 (130.5 TFLOPS FP16 tensor, not
    # used), 672 GB/s GDDR6, boost 1770 MHz.
    "RTX_8000": Device("RTX_8000", 1770, 16_300, 672,
                       source="NVIDIA Quadro RTX 8000 datasheet: 16.3 TFLOPS FP32, 672 GB/s"),
    # NVIDIA A100 Tensor Core GPU datasheet (SXM4 40 GB): 19.5 TFLOPS FP32, 156 TFLOPS
    # TF32 tensor (312 with sparsity), 1555 GB/s HBM2, boost 1410 MHz.
    "A100": Device("A100", 1410, 19_500, 1555,
                   source="NVIDIA A100 datasheet (SXM4 40GB): 19.5 TFLOPS FP32, 1555 GB/s"),
    "A100_TF32": Device("A100_TF32", 1410, 156_000, 1555, precision="tf32-tensor",
                        source="NVIDIA A100 datasheet (SXM4 40GB): 156 TFLOPS TF32 dense, 1555 GB/s"),
    # NVIDIA H100 Tensor Core GPU datasheet (SXM5 80 GB): 67 TFLOPS FP32, 989 TFLOPS TF32
    # tensor with sparsity (494.5 dense), 3.35 TB/s HBM3, boost 1980 MHz.
    "H100": Device("H100", 1980, 67_000, 3350,
                   source="NVIDIA H100 datasheet (SXM5): 67 TFLOPS FP32, 3.35 TB/s"),
    "H100_TF32": Device("H100_TF32", 1980, 494_500, 3350, precision="tf32-tensor",
                        source="NVIDIA H100 datasheet (SXM5): 989 TFLOPS TF32 sparse / 2, 3.35 TB/s"),
}

DEVICES: dict[str, Device] = {**PALEO_DEVICES, **MODERN_DEVICES}

#: Paleo's networks, unchanged (Gbit/s; PCIe entries are 8 and 16 GB/s written as Gbit/s)
PALEO_NETWORKS: dict[str, Network] = {
    "aws": Network("aws", 2, _PALEO),
    "ethernet": Network("ethernet", 10, _PALEO),
    "ethernet20": Network("ethernet20", 20, _PALEO),
    "infiniband": Network("infiniband", 70, _PALEO),
    "pcie2": Network("pcie2", 8 * 8, _PALEO),
    "pcie3": Network("pcie3", 16 * 8, _PALEO),
}

_NVLINK = "NVIDIA {gpu} datasheet: NVLink {total} GB/s bidirectional, half per direction"
#: current interconnects, bandwidth per direction
MODERN_NETWORKS: dict[str, Network] = {
    "ethernet25": Network("ethernet25", 25, "IEEE 802.3by 25GBASE"),
    "ethernet100": Network("ethernet100", 100, "IEEE 802.3bj/ba 100GBASE"),
    "ethernet200": Network("ethernet200", 200, "IEEE 802.3bs 200GBASE"),
    "ethernet400": Network("ethernet400", 400, "IEEE 802.3bs 400GBASE"),
    "infiniband_edr": Network("infiniband_edr", 100, "InfiniBand EDR 4x, 100 Gb/s (IBTA)"),
    "infiniband_hdr": Network("infiniband_hdr", 200, "InfiniBand HDR 4x, 200 Gb/s (IBTA)"),
    "infiniband_ndr": Network("infiniband_ndr", 400, "InfiniBand NDR 4x, 400 Gb/s (IBTA)"),
    "infiniband_xdr": Network("infiniband_xdr", 800, "InfiniBand XDR 4x, 800 Gb/s (ConnectX-8 / Quantum-X800; "
                              "third-party copies of the NVIDIA product pages)"),
    "pcie4": Network("pcie4", 32 * 8, "PCIe 4.0 x16, 32 GB/s per direction (PCI-SIG)"),
    "pcie5": Network("pcie5", 64 * 8, "PCIe 5.0 x16, 64 GB/s per direction (PCI-SIG)"),
    "nvlink2": Network("nvlink2", 150 * 8, _NVLINK.format(gpu="V100 (SXM2)", total=300)),
    "nvlink3": Network("nvlink3", 300 * 8, _NVLINK.format(gpu="A100 (SXM4)", total=600)),
    "nvlink4": Network("nvlink4", 450 * 8, _NVLINK.format(gpu="H100 (SXM5)", total=900)),
    "nvlink5": Network("nvlink5", 900 * 8, _NVLINK.format(gpu="HGX B200", total=1800)
                       + " (18 links x 100 GB/s, NVIDIA NVLink page)"),
}

NETWORKS: dict[str, Network] = {**PALEO_NETWORKS, **MODERN_NETWORKS}

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


def _key(name: str) -> str:
    return re.sub(r"[\s_\-]", "", name).upper()


def get_device(name: str | Device) -> Device:
    """Look a device up by name; case, spaces, ``_`` and ``-`` are ignored.

    Examples
    --------
    >>> get_device("rtx 8000").name, get_device("K80").peak_gflops
    ('RTX_8000', 5600)
    """
    return _lookup(name, DEVICES, Device, "device")


def get_network(name: str | Network) -> Network:
    """Look a network up by name (case, spaces, ``_`` and ``-`` ignored).

    Examples
    --------
    >>> get_network("ethernet").gbps
    10
    """
    return _lookup(name, NETWORKS, Network, "network")


def _lookup(name, table, cls, what):
    if isinstance(name, cls):
        return name
    if not isinstance(name, str):
        raise TypeError(f"{what} must be a str or {cls.__name__}, not {type(name).__name__}.")
    by_key = {_key(k): v for k, v in table.items()}
    try:
        return by_key[_key(name)]
    except KeyError:
        raise InputError(f"{what}: expected one of {', '.join(table)}; got {name!r}. "
                         "Pick a listed name (python -m core paleo --list).") from None
