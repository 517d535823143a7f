"""One key normaliser, one lookup and one recogniser of device names in free text.

* :func:`normalise` is the one spelling rule: case, spaces, ``_`` and ``-`` are ignored (``"h100 sxm"`` is
  ``H100_SXM``).
* :func:`get_device` finds a device by its table key or one of its aliases (``"H100"`` → ``H100_SXM``).
* :func:`device_from_text` recognises the device a log or system description names: MLLOG
  ``submission_platform`` (``"128xNVIDIA GB200"``, ``"1xXE9680Lx8B200-SXM-180GB"``), a systems JSON's
  ``accelerator_model_name`` (``"NVIDIA H100-SXM5-80GB"``), ``nvidia-smi`` names (``"NVIDIA H100 80GB HBM3"``),
  course log names (``"Tesla V100-PCIE-32GB"``) and Paleo's (``"K80"``, ``"TITAN X"``).

Paleo, the roofline, the transformer model, the log readers and the pages all read names through these.
"""

from __future__ import annotations

import re

from core.devices.spec import DeviceSpec
from core.devices.table import DEVICES
from core.errors import InputError


def normalise(name: str) -> str:
    """The form names are compared in: upper case without spaces, ``_`` or ``-``.

    >>> normalise("rtx-6000 Ada"), normalise("H100_SXM")
    ('RTX6000ADA', 'H100SXM')
    """
    return re.sub(r"[\s_\-]", "", name).upper()


def _names() -> dict[str, str]:
    """Normalised key and alias → table key; a name that would mean two devices fails here, at import."""
    out: dict[str, str] = {}
    for key, spec in DEVICES.items():
        for name in (key, *spec.aliases):
            if out.setdefault(normalise(name), key) != key:
                raise RuntimeError(f"device table: {name!r} names both {out[normalise(name)]} and {key}.")
    return out


#: every key and alias of the table, normalised, → the table key (made at import; a device added to the table
#: later is found too, :func:`_key`)
NAMES: dict[str, str] = _names()


def _key(normalised: str) -> str | None:
    """The table key of a normalised name, or None; names missing from :data:`NAMES` are looked up in the table
    as it is now (a device registered after import, a test's throwaway entry)."""
    key = NAMES.get(normalised)
    return key if key is not None else _names().get(normalised)


def lookup_in(name, table: dict, cls: type, what: str):
    """``table[name]`` with names compared by :func:`normalise`; ``name`` may already be a ``cls``."""
    if isinstance(name, cls):
        return name
    if not isinstance(name, str):
        raise TypeError(f"{what} must be a str or {cls.__name__}, not {type(name).__name__}.")
    by_key = {normalise(k): v for k, v in table.items()}
    try:
        return by_key[normalise(name)]
    except KeyError:
        raise InputError(f"{what}: expected one of {', '.join(table)}; got {name!r}. "
                         "Pick a listed name (python -m core paleo --list).") from None


def device_key(name: str) -> str:
    """The table key of a key or alias (``"h100"`` → ``"H100_SXM"``).

    >>> device_key("h100"), device_key("Titan X"), device_key("mi-355x")
    ('H100_SXM', 'TITAN_X', 'MI355X')
    >>> device_key("TPUv5")
    Traceback (most recent call last):
    ...
    core.errors.InputError: device: expected one of P100, V100_SXM2, ... (or an alias: ...); got 'TPUv5'. ...
    """
    if not isinstance(name, str):
        raise TypeError(f"device must be a str or DeviceSpec, not {type(name).__name__}.")
    key = _key(normalise(name))
    if key is None:
        aliases = [a for spec in DEVICES.values() for a in spec.aliases]
        raise InputError(f"device: expected one of {', '.join(DEVICES)} (or an alias: {', '.join(aliases)}); "
                         f"got {name!r}. Pick a listed name (python -m core paleo --list).")
    return key


def get_device(name: str | DeviceSpec) -> DeviceSpec:
    """A device by table key or alias; case, spaces, ``_`` and ``-`` are ignored.

    Examples
    --------
    >>> d = get_device("a100 pcie 80gb")
    >>> d.name, d.peak_tflops("fp16"), d.mem_bandwidth.value, d.link
    ('A100_PCIE_80GB', 312, 1935, 'pcie4')
    >>> get_device("h100").name, get_device("MI355X").bf16.value, get_device("gb200").domain
    ('H100_SXM', 2516.6, 72)
    """
    return name if isinstance(name, DeviceSpec) else DEVICES[device_key(name)]


#: (pattern, table key), checked in order on the upper-cased text with ``_`` and ``-`` read as spaces; a key of
#: None says the text names a device that is not in the table (an H100 or H200 NVL card: another memory, clock
#: and link than the SXM parts)
PATTERNS: tuple[tuple[str, str | None], ...] = (
    (r"H[12]00\s*NVL", None),
    (r"GB300", "GB300"), (r"GB200", "GB200"), (r"(?<!G)B300", "B300"), (r"(?<!G)B200", "B200"),
    (r"MI355X", "MI355X"), (r"MI350X", "MI350X"), (r"MI325X", "MI325X"), (r"MI300X", "MI300X"),
    (r"H200", "H200_SXM"), (r"H100.*PCIE", "H100_PCIE"), (r"H100", "H100_SXM"),
    (r"A100.*PCIE.*40\s*GB|A100.*40\s*GB.*PCIE", "A100_PCIE_40GB"), (r"A100.*PCIE", "A100_PCIE_80GB"),
    (r"A100.*40\s*GB", "A100_SXM4_40GB"), (r"A100.*80\s*GB", "A100_SXM4_80GB"), (r"A100", "A100_SXM4_40GB"),
    (r"(?<![A-Z0-9])A10(?![0-9A-Z])", "A10"), (r"L40S", "L40S"), (r"(?<![A-Z0-9])L4(?![0-9A-Z])", "L4"),
    (r"RTX\s*6000\s*ADA", "RTX_6000_ADA"), (r"RTX\s*8000", "RTX_8000"),
    (r"V100.*PCIE", "V100_PCIE"), (r"V100", "V100_SXM2"), (r"P100", "P100"),
    (r"TITAN\s*X(?![A-Z0-9])", "TITAN_X"), (r"K20\s*X", "K20X"), (r"K20", "K20"), (r"K40", "K40"), (r"K80", "K80"),
    (r"780\s*TI", "GEFORCE_780_TI"), (r"750\s*M(?![A-Z0-9])", "GEFORCE_750_M"),
    (r"CORE\s*I7(?![0-9])|(?<![A-Z0-9])I7\s\d{3,}", "CPU_I7"),
)


def device_from_text(text: str | None) -> DeviceSpec | None:
    """The device a log, file name or system description names, or None if it names none of the table.

    A table key or alias is recognised as itself; otherwise :data:`PATTERNS` are tried in order.
    Placeholders (``SUBMISSION_PLATFORM_PLACEHOLDER``), system names without a GPU and cards the table
    lacks (``H200-NVL``) give None.

    >>> [device_from_text(t).name for t in ("NVIDIA H100-SXM5-80GB", "64xNVIDIA HGX H100",
    ...     "NVIDIA Blackwell GPU (GB200)", "NVIDIA Blackwell Ultra GPU (B300-SXM-270GB)",
    ...     "AMD Instinct MI325X 256GB HBM3E DLC", "1xXE9680Lx8B200-SXM-180GB", "NVIDIA H100 80GB HBM3",
    ...     "Tesla V100-PCIE-32GB", "GeForce GTX TITAN X", "K80")]
    ['H100_SXM', 'H100_SXM', 'GB200', 'B300', 'MI325X', 'B200', 'H100_SXM', 'V100_PCIE', 'TITAN_X', 'K80']
    >>> device_from_text("8xSUBMISSION_PLATFORM_PLACEHOLDER") is None, device_from_text("1xXE7745x4H200-NVL-141GB")
    (True, None)
    """
    if not isinstance(text, str) or not text.strip():
        return None
    key = _key(normalise(text))
    if key is not None:
        return DEVICES[key]
    spaced = re.sub(r"[_\-]", " ", text.upper())
    for pattern, key in PATTERNS:
        if re.search(pattern, spaced):
            return DEVICES[key] if key is not None else None
    return None
