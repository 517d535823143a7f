"""Run metadata from file names: model, depth, device, split.

The course names its logs ``<model>_<GPU name>[_val].csv`` (``resnet56_Quadro RTX 8000_val.csv``);
Pollux traces are ``<job>/validation-<global batch>.csv``.  Everything parsed here is a
default the user can edit in the dashboard.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import PurePosixPath

#: short names of GPU types, by a pattern found in the full device name
_GPU_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"RTX\s*8000", "RTX 8000"),
    (r"RTX\s*6000", "RTX 6000"),
    (r"H200", "H200"),
    (r"H100", "H100"),
    (r"A100", "A100"),
    (r"A10G", "A10G"),
    (r"V100", "V100"),
    (r"P100", "P100"),
    (r"T4\b", "T4"),
    (r"K80", "K80"),
    (r"L4\b", "L4"),
)

_DEPTH_PATTERN = (r"(?:resnet|resnext|preactresnet|wrn|wide_?resnet|vgg|densenet|mlp|cnn|convnet|"
                  r"layers?|depth)[-_ ]?(\d+)")
_SPLIT_SUFFIXES = {"val": "val", "valid": "val", "validation": "val", "test": "val", "train": "train"}


@dataclass(frozen=True)
class RunMeta:
    """What a log's file name says about the run (each field may be unknown: ``None``)."""

    model: str | None
    depth: int | None
    gpu: str | None
    split: str  # "train" or "val"
    global_batch: int | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def depth_of(model: str | None) -> int | None:
    """The depth in a network's name (``resnet56`` → 56), else ``None``.

    Only names of layered architectures count, so a data set name such as ``cifar10`` has
    no depth.

    >>> depth_of("resnet56"), depth_of("ResNet-18"), depth_of("vgg16"), depth_of("cifar10")
    (56, 18, 16, None)
    """
    if not model:
        return None
    m = re.search(_DEPTH_PATTERN, model, flags=re.IGNORECASE)
    return int(m.group(1)) if m else None


def gpu_short_name(gpu: str | None) -> str | None:
    """The GPU type in a full device name (``Tesla V100-PCIE-32GB`` → ``V100``).

    Names with no known GPU type are returned unchanged.

    >>> gpu_short_name("NVIDIA A100-PCIE-40GB"), gpu_short_name("Quadro RTX 8000")
    ('A100', 'RTX 8000')
    """
    if gpu is None:
        return None
    for pattern, short in _GPU_PATTERNS:
        if re.search(pattern, gpu, flags=re.IGNORECASE):
            return short
    return gpu


def parse_run_name(name: str) -> RunMeta:
    """Model, depth, device and split from a log's file name.

    Parameters
    ----------
    name : str
        The file name, optionally with folders (``cifar10/validation-128.csv``).

    Examples
    --------
    >>> parse_run_name("resnet56_NVIDIA A100-PCIE-40GB_val.csv")
    RunMeta(model='resnet56', depth=56, gpu='NVIDIA A100-PCIE-40GB', split='val', global_batch=None)
    >>> parse_run_name("cifar10/validation-128.csv").global_batch
    128
    """
    path = PurePosixPath(name.replace("\\", "/"))
    stem = path.name
    if stem.lower().endswith(".csv"):
        stem = stem[:-4]
    pollux = re.fullmatch(r"validation-(\d+)", stem)
    if pollux:
        parent = path.parent.name or None
        return RunMeta(model=parent, depth=depth_of(parent), gpu=None, split="val",
                       global_batch=int(pollux.group(1)))
    split = "train"
    parts = stem.split("_")
    if len(parts) > 1 and parts[-1].lower() in _SPLIT_SUFFIXES:
        split = _SPLIT_SUFFIXES[parts[-1].lower()]
        parts = parts[:-1]
    model = parts[0] or None
    gpu = "_".join(parts[1:]).strip() or None
    return RunMeta(model=model, depth=depth_of(model), gpu=gpu, split=split)
