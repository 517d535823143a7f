"""Links between workers: Paleo's networks as its program has them, and current interconnects with sources.

A device's ``link`` (:class:`core.devices.spec.DeviceSpec`) names one of these: the intra-node network
it talks to its neighbours over (NVLink per direction, or the PCIe slot).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from core.devices.names import lookup_in


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


PALEO = "Paleo paleo/device.py (commit 984bbf5)"
#: Paleo's networks, unchanged (Gbit/s; PCIe entries are 8 and 16 GB/s written as Gbit/s)
PALEO_NETWORKS: dict[str, Network] = {
    "aws": Network("aws", 2, PALEO),
    "ethernet": Network("ethernet", 10, PALEO),
    "ethernet20": Network("ethernet20", 20, PALEO),
    "infiniband": Network("infiniband", 70, PALEO),
    "pcie2": Network("pcie2", 8 * 8, PALEO),
    "pcie3": Network("pcie3", 16 * 8, PALEO),
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


def get_network(name: str | Network) -> Network:
    """Look a network up by name (case, spaces, ``_`` and ``-`` ignored).

    Examples
    --------
    >>> get_network("ethernet").gbps, get_network("InfiniBand_HDR").gbps
    (10, 200)
    """
    return lookup_in(name, NETWORKS, Network, "network")
