"""Communication of data-parallel training: the bytes of an all-reduce (its lower bound), achieved
bandwidth, and nominal link rates.

Each of ``N`` processes must send at least ``2 (N − 1) / N · X · itemsize`` bytes per
all-reduce of ``X`` items; bandwidth is in GB/s with **GB = 1e9 bytes**, a link's nominal rate
in Gbit/s. :mod:`core.scaling.measured` sets these against measured step times.
"""

from __future__ import annotations

import math

from core.validation import check_scalar

GB = 1e9
#: nominal link rates in Gbit/s (per direction) for the page's presets; ``link_gbps`` takes
#: any positive number. Ethernet and InfiniBand 4x rates as marketed; PCIe x16 after
#: line coding (8 GT/s · 16 lanes · 128/130 = 126 Gbit/s for 3.0, twice that for 4.0).
LINK_PRESETS_GBPS: dict[str, float] = {
    "10 GbE": 10.0,
    "25 GbE": 25.0,
    "50 GbE": 50.0,
    "100 GbE": 100.0,
    "InfiniBand EDR 4x (100 Gb/s)": 100.0,
    "InfiniBand HDR 4x (200 Gb/s)": 200.0,
    "InfiniBand NDR 4x (400 Gb/s)": 400.0,
    "PCIe 3.0 x16 (126 Gb/s)": 126.0,
    "PCIe 4.0 x16 (252 Gb/s)": 252.0,
}
#: the model whose parameter count the all-reduce analysis starts from (``core.models``' name), and
#: that count: ResNet-18 for CIFAR-10 (10 classes); ``tests/core/scaling/test_measured.py`` checks it
#: against the model itself
DEFAULT_MODEL = "resnet18_cifar"
DEFAULT_PARAMS = 11_173_962


def allreduce_bytes(n_params: int, n_procs: int, *, itemsize: int = 4) -> float:
    """Lower bound on the bytes each process sends in one all-reduce.

    Parameters
    ----------
    n_params : int
        X, items reduced (the model's parameter count), >= 1.
    n_procs : int
        N, processes taking part, >= 1.
    itemsize : int, default=4
        Bytes per item (4 for float32, 2 for float16).

    Returns
    -------
    float
        ``2 · (N − 1) / N · X · itemsize`` (0 for one process).

    Notes
    -----
    Each process must send its ``X/N`` share of the reduce-scatter ``N − 1`` times and the
    same again in the all-gather; ring all-reduce meets the bound.

    Examples
    --------
    >>> allreduce_bytes(1_000_000, 4)   # 2 * 3/4 * 1e6 * 4
    6000000.0
    >>> allreduce_bytes(1_000_000, 1)
    0.0
    """
    x = check_scalar(n_params, "n_params", int, min_val=1)
    n = check_scalar(n_procs, "n_procs", int, min_val=1)
    size = check_scalar(itemsize, "itemsize", int, min_val=1)
    return 2.0 * (n - 1) / n * x * size


def bandwidth_gb_per_s(n_bytes: float, seconds: float) -> float:
    """``n_bytes / seconds / 1e9`` (GB = 1e9 bytes); NaN when ``seconds <= 0``.

    Examples
    --------
    >>> bandwidth_gb_per_s(6e6, 0.003)
    2.0
    """
    return float(n_bytes) / seconds / GB if seconds > 0 else math.nan
