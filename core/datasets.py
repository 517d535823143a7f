"""The built-in example data shipped in ``data/`` (the product never reads outside the repo)."""

from __future__ import annotations

from pathlib import Path

#: the repository's data folder
DATA_DIR = Path(__file__).resolve().parent.parent / "data"

#: built-in log sets: key -> (label, glob patterns relative to DATA_DIR)
BUILTIN_LOG_SETS: dict[str, tuple[str, tuple[str, ...]]] = {
    "mnist1d": ("MNIST-1D ResNets, per-step train + val logs (CPU)", ("logs/*.csv",)),
    "pollux": ("Pollux CIFAR-10 / ImageNet validation accuracy per epoch",
               ("pollux_traces/cifar10/validation-*.csv", "pollux_traces/imagenet/validation-*.csv")),
}


#: what each built-in set trained on (picks parameter counts in ``core.calibrate``)
BUILTIN_DATASETS: dict[str, str] = {"mnist1d": "mnist1d", "pollux": "other"}


def builtin_datasets_by_file(*, data_dir: Path = DATA_DIR) -> dict[str, str]:
    """Source name of every built-in log → the data set it trained on."""
    return {name: BUILTIN_DATASETS[key] for key in BUILTIN_LOG_SETS
            for name, _ in builtin_log_files(key, data_dir=data_dir)}


def builtin_log_files(set_key: str, *, data_dir: Path = DATA_DIR) -> list[tuple[str, Path]]:
    """``(source name, path)`` of the logs in a built-in set, in a stable order.

    Pollux traces are named ``<job>/validation-<batch>.csv`` so that the job is the model.
    """
    if set_key not in BUILTIN_LOG_SETS:
        raise KeyError(f"built-in log set: expected one of {', '.join(BUILTIN_LOG_SETS)}; got {set_key!r}")
    files: list[tuple[str, Path]] = []
    for pattern in BUILTIN_LOG_SETS[set_key][1]:
        paths = sorted(data_dir.glob(pattern), key=_natural_key)
        for p in paths:
            name = f"{p.parent.name}/{p.name}" if set_key == "pollux" else p.name
            files.append((name, p))
    return files


def _natural_key(path: Path) -> tuple:
    import re

    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", path.name))


def builtin_speed_tables(*, data_dir: Path = DATA_DIR) -> list[tuple[str, Path]]:
    """``(name, path)`` of the built-in measured-speed tables: Pollux's all-reduce step times.

    The name is ``<job>/scalability.csv`` (Pollux, OSDI 2021; see data/README.md).

    >>> [name for name, _ in builtin_speed_tables()][:2]
    ['bert/scalability.csv', 'cifar10/scalability.csv']
    """
    paths = sorted((data_dir / "pollux_traces").glob("*/scalability.csv"))
    return [(f"{p.parent.name}/{p.name}", p) for p in paths]


def course_fits_path(*, data_dir: Path = DATA_DIR) -> Path:
    """The course's table of 36 fitted CIFAR-10 ResNet runs."""
    return data_dir / "cifar10_resnet_optimus_fits.csv"


def builtin_profiles(*, data_dir: Path = DATA_DIR) -> list[tuple[str, Path]]:
    """``(name, path)`` of the measured per-layer profiles shipped in ``data/paleo/profiles``.

    >>> [name for name, _ in builtin_profiles()]
    ['resnet20_cpu_b32.csv']
    """
    return [(p.name, p) for p in sorted((data_dir / "paleo" / "profiles").glob("*.csv"))]
