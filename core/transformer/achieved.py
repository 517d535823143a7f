"""How far each GPU architecture runs from its datasheet, measured on public results: the transfer's correction.

A step transferred from device A to device B on datasheet peaks alone assumes both reach the same fraction of
their peak. They do not: on MLPerf Training v5.1's Llama 3.1 8B at 8 GPUs, Blackwell Ultra (B300) runs faster
than its peaks (the same as B200's) say, and AMD's CDNA4 (MI355X) slower.  An architecture's **achieved
efficiency** (``data/transformer/achieved_efficiency.csv``, made by ``data/make_achieved_efficiency.py``: the
median calibrated compute factor of its systems over Blackwell's) corrects a transfer's compute (matmuls,
attention, memory-bound ops; communication is not corrected) in :func:`core.transformer.predict`:

    compute_B = compute_B(datasheet) × efficiency(A) / efficiency(B)

The devices of one architecture share its factor (one silicon generation and one software stack: MI350X is
MI355X's, GB300 is B300's); an architecture without a measured system keeps 1, the datasheet alone.  The factors
are fitted on the shared MLPerf runs: a check of a transfer between those systems reuses them and is not a
validation.
"""

from __future__ import annotations

import csv
import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

#: every architecture the table knows, and the devices of the one device table that belong to it
ARCHITECTURES: dict[str, tuple[str, ...]] = {
    "Hopper": ("H100_SXM", "H100_PCIE", "H200_SXM"),
    "Blackwell": ("B200", "GB200"),
    "Blackwell Ultra": ("B300", "GB300"),
    "CDNA3": ("MI300X", "MI325X"),
    "CDNA4": ("MI350X", "MI355X"),
}
TABLE = Path(__file__).resolve().parents[2] / "data" / "transformer" / "achieved_efficiency.csv"


@dataclass(frozen=True)
class Achieved:
    """A device's achieved efficiency relative to its datasheet (1: as the datasheet says) and where it came from."""

    device: str
    architecture: str | None
    efficiency: float
    source: str


@functools.cache
def _table() -> dict[str, tuple[float, str]]:
    with TABLE.open(encoding="utf-8") as fh:
        return {row["architecture"]: (float(row["efficiency"]), row["source"]) for row in csv.DictReader(fh)}


def achieved_efficiency(device: str) -> Achieved:
    """The achieved efficiency of ``device`` (a key of the one device table).

    >>> a = achieved_efficiency("MI350X")
    >>> a.architecture, a.efficiency == achieved_efficiency("MI355X").efficiency < 1
    ('CDNA4', True)
    >>> achieved_efficiency("B200").efficiency, achieved_efficiency("A100_SXM4_40GB").efficiency
    (1.0, 1.0)
    """
    arch = next((a for a, devices in ARCHITECTURES.items() if device in devices), None)
    if arch is None or arch not in _table():
        return Achieved(device, arch, 1.0, "no measured architecture: the datasheet alone")
    value, source = _table()[arch]
    return Achieved(device, arch, value, source)


def transfer_factor(sources: Iterable[str], target: str) -> tuple[float, str]:
    """The factor on the compute time of a step transferred from devices ``sources`` (the calibration's; geometric
    mean of their efficiencies) to ``target``, and a note saying it; ``(1.0, "")`` when nothing changes.

    >>> f, note = transfer_factor(["B200"], "MI355X")
    >>> f > 1, note.startswith("achieved efficiency")
    (True, True)
    >>> transfer_factor(["GB200"], "B200")
    (1.0, '')
    """
    src = [achieved_efficiency(d) for d in sources]
    tgt = achieved_efficiency(target)
    if not src:
        return 1.0, ""
    mean = math.exp(sum(math.log(a.efficiency) for a in src) / len(src))
    factor = mean / tgt.efficiency
    if abs(factor - 1.0) < 1e-12:
        return 1.0, ""
    names = ", ".join(dict.fromkeys(f"{a.device} {a.efficiency:.3g}" for a in src))
    return factor, (f"achieved efficiency (measured against the datasheet): {names} → {tgt.device} "
                    f"{tgt.efficiency:.3g}: the step × {factor:.3f} ({tgt.source})")
