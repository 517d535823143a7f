"""The record of one device (:class:`DeviceSpec`): what every step-time model reads of a GPU or CPU."""

from __future__ import annotations

from dataclasses import dataclass, field

from core.devices.figures import PEAK_PRECISIONS, Figure
from core.errors import InputError
from core.validation import check_option


@dataclass(frozen=True)
class DeviceSpec:
    """One device: peaks per precision, memory, clock, interconnect and price, each a cited :class:`Figure`.

    Attributes
    ----------
    name : str
        Table key, e.g. ``"H100_SXM"``.
    label : str
        Its full name, e.g. ``"NVIDIA H100 SXM5 80GB"``.
    vendor : str
    peaks : dict of str to Figure
        Peak rate per precision (keys of :data:`core.devices.figures.PEAK_PRECISIONS`): ``fp32`` on the
        CUDA cores, the others dense tensor-core rates; a precision the device lacks (or the table does
        not know) is absent.
    mem_bandwidth : Figure
        Device-memory bandwidth, decimal GB/s (Paleo's own devices: its numbers, used as GiB/s in its
        faithful mode).
    memory_gb, boost_clock : Figure or None
        Memory capacity (GB) and boost clock (MHz; Paleo's model floors each time term at one cycle).
    link : str or None
        The intra-node network (:data:`core.devices.networks.NETWORKS` key) the device talks to its
        neighbours over.
    scale_up_gbs : Figure or None
        That link per device, GB/s, both directions together (NVLink / Infinity Fabric / PCIe slot).
    scale_out_gbps : Figure or None
        The per-device network card, Gb/s, one direction.
    domain : int
        Devices on one scale-up fabric: 8 on an HGX/OAM board, 72 in an NVL72 rack, 1 for a PCIe card.
    price_per_hour : Figure or None
        Rental price per device-hour where the table knows one.
    aliases : tuple of str
        Other names the device goes by (``"H100"`` for ``H100_SXM``); each names only this device.
    family : str
        The type name runs are grouped by (``"V100"`` for both V100s); :attr:`short_name` if empty.
    is_gpu : bool
    paleo : bool
        One of Paleo's own devices (``paleo/device.py``), its figures copied unchanged.
    """

    name: str
    label: str
    vendor: str
    peaks: dict[str, Figure]
    mem_bandwidth: Figure
    memory_gb: Figure | None = None
    boost_clock: Figure | None = None
    link: str | None = None
    scale_up_gbs: Figure | None = None
    scale_out_gbps: Figure | None = None
    domain: int = 1
    price_per_hour: Figure | None = None
    aliases: tuple[str, ...] = ()
    family: str = field(default="")
    is_gpu: bool = True
    paleo: bool = False

    def __hash__(self) -> int:  # the peaks are a dict; the key names the device
        return hash(self.name)

    @property
    def short_name(self) -> str:
        """The shortest of the key and its aliases (``"H100"`` for ``H100_SXM``): what a Paleo listing shows."""
        return min((self.name, *self.aliases), key=len)

    @property
    def type_name(self) -> str:
        """The family runs on this device are grouped by (``"V100"``, ``"RTX 8000"``)."""
        return self.family or self.short_name

    @property
    def bf16(self) -> Figure | None:
        """The dense BF16 peak, or None."""
        return self.peaks.get("bf16")

    @property
    def fp8(self) -> Figure | None:
        """The dense FP8 peak, or None (no FP8 tensor cores, or not in the table)."""
        return self.peaks.get("fp8")

    def peak_tflops(self, precision: str) -> float:
        """The peak of ``precision`` in TFLOP/s (dense for tensor-core precisions).

        Raises
        ------
        InputError
            If the precision is unknown or the device has no such peak in the table (V100: no BF16).

        Examples
        --------
        >>> from core.devices import get_device
        >>> get_device("H100").peak_tflops("bf16"), get_device("K80").peak_tflops("fp32")
        (989.4, 5.6)
        >>> get_device("V100").peak_tflops("bf16")
        Traceback (most recent call last):
        ...
        core.errors.InputError: precision: expected one of fp32, fp16 for V100_SXM2; got 'bf16'. ...
        """
        check_option(precision, "precision", PEAK_PRECISIONS, fix="Pick one")
        if precision not in self.peaks:
            raise InputError(f"precision: expected one of {', '.join(self.peaks)} for {self.name}; got "
                             f"{precision!r}. It has no {precision.upper()} unit in the device table; pick another "
                             "precision or device.")
        return self.peaks[precision].tflops

    def peak_flops(self, precision: str = "bf16") -> float:
        """The peak of ``precision`` in FLOP/s (see :meth:`peak_tflops`)."""
        return self.peak_tflops(precision) * 1e12

    @property
    def hbm_bw(self) -> float:
        """Device-memory bandwidth in bytes/s."""
        return self.mem_bandwidth.value * 1e9

    @property
    def scale_up_bw(self) -> float:
        """One direction of the scale-up link, bytes/s."""
        return self._needed(self.scale_up_gbs, "scale-up link").value / 2 * 1e9

    @property
    def scale_out_bw(self) -> float:
        """The per-device NIC, bytes/s."""
        return self._needed(self.scale_out_gbps, "scale-out NIC").value / 8 * 1e9

    def _needed(self, figure: Figure | None, what: str) -> Figure:
        if figure is None:
            raise InputError(f"device: expected a {what} figure for {self.name}; the device table has none. "
                             "Pick a device that lists one (python -m core paleo --list).")
        return figure

    @property
    def figures(self) -> tuple[tuple[str, Figure], ...]:
        """Every figure with what it is, for listing and for the provenance tests."""
        named = [(f"{p} peak", f) for p, f in self.peaks.items()]
        for what, fig in (("memory", self.memory_gb), ("memory bandwidth", self.mem_bandwidth),
                          ("boost clock", self.boost_clock), ("scale-up link", self.scale_up_gbs),
                          ("scale-out NIC", self.scale_out_gbps), ("price", self.price_per_hour)):
            if fig is not None:
                named.append((what, fig))
        return tuple(named)
