"""Run metadata from file names: model, depth, device, split.

The course names its logs ``<model>_<GPU name>[_val].csv`` (``resnet56_Quadro RTX 8000_val.csv``);
Pollux traces are ``<job>/validation-<global batch>.csv``.  A name is parsed only as far as it
matches one of these patterns: a model must name a layered architecture (``resnet20``) or
stand before a device name (``bert_Tesla V100.csv``); anything else (``metrics.csv``, a
TensorBoard export ``run-version_0-tag-train_loss.csv``) leaves the fields empty for the user
to fill in.  Everything parsed here is a default the user can edit in the dashboard.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import PurePosixPath

from core.devices import device_from_text

#: words that make the part after the first "_" a device name
_DEVICE_WORDS = r"(gpu|cpu|tesla|nvidia|quadro|geforce|rtx|radeon|amd|intel|xeon|epyc|processor|apple|tpu|cuda)"

_DEPTH_PATTERN = (r"(?:resnet|resnext|preactresnet|wrn|wide_?resnet|vgg|densenet|mlp|cnn|convnet|"
                  r"layers?|depth)[-_ ]?(\d+)")
#: what follows a file name that tells it apart (``core.logs.files.upload_label``, a library run's ``(library #3)``)
_LABEL = r" \([^()]*\)$"
_SPLIT_SUFFIXES = {"val": "val", "valid": "val", "validation": "val", "test": "val", "train": "train"}


@dataclass(frozen=True)
class RunMeta:
    """What a log's file name (or, for an MLLOG log, the log itself) says about the run.

    Each field may be unknown: ``None``.  The fields after ``global_batch`` come only from
    logs that describe themselves (MLCommons MLLOG, :mod:`core.logs.mllog`):
    ``samples_per_epoch`` (``train_samples``), ``status`` (``run_stop``: "success" or
    "aborted"), ``system`` (submitter and platform), ``n_nodes`` and ``n_devices`` (read from
    the platform name where it says them) and ``throughput`` (median of the logged
    ``tracked_stats`` throughput, samples per second) and ``schedule`` (the learning-rate
    schedule the optimiser events declare, as a ``core.prediction`` schedule spec such as
    ``poly:37:2``).  The language-model logs (MLLOG LLM benchmarks, NanoGPT speedrun, Hugging Face
    ``trainer_state.json``) add ``seq_len`` (tokens per sample), ``run_time_s`` (MLLOG
    ``run_stop − run_start``: MLPerf's time to train; a speedrun's final ``train_time``),
    ``accelerator`` (the device model, from the submitter's system description or the
    ``nvidia-smi`` table), ``max_steps``, ``warmup_steps`` and ``decay_steps`` (the declared
    learning-rate schedule, in optimiser steps), ``step_time_s`` (median logged step time) and ``lr_schedule``
    (the planned learning rate the log declares, as a ``core.schedules`` spec in optimiser steps: a speedrun
    script's ``get_lr``, an MLLOG log's optimiser keys).
    ``n_devices`` is the number of accelerators in all.
    """

    model: str | None
    depth: int | None
    gpu: str | None
    split: str  # "train" or "val"
    global_batch: int | None = None
    samples_per_epoch: int | None = None
    status: str | None = None
    system: str | None = None
    n_nodes: int | None = None
    n_devices: int | None = None
    throughput: float | None = None
    schedule: str | None = None
    seq_len: int | None = None
    run_time_s: float | None = None
    accelerator: str | None = None
    max_steps: int | None = None
    warmup_steps: float | None = None
    decay_steps: float | None = None
    step_time_s: float | None = None
    lr_schedule: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def depth_of(model: str | None) -> int | None:
    """The depth in a network's name (``resnet56`` → 56), else ``None``.

    Only names of layered architectures count, so a data set name such as ``cifar10`` has
    no depth.

    >>> depth_of("resnet56"), depth_of("ResNet-18"), depth_of("vgg16"), depth_of("cifar10"), depth_of(float("nan"))
    (56, 18, 16, None, None)
    """
    if not isinstance(model, str) or not model:
        return None
    m = re.search(_DEPTH_PATTERN, model, flags=re.IGNORECASE)
    return int(m.group(1)) if m else None


def gpu_short_name(gpu: str | None) -> str | None:
    """The GPU type in a full device name (``Tesla V100-PCIE-32GB`` → ``V100``): the family of the device
    :func:`core.devices.device_from_text` recognises in it.

    Names with no device of the table are returned unchanged.

    >>> gpu_short_name("NVIDIA A100-PCIE-40GB"), gpu_short_name("Quadro RTX 8000"), gpu_short_name("Tesla T4")
    ('A100', 'RTX 8000', 'Tesla T4')
    """
    if not isinstance(gpu, str):
        return None
    device = device_from_text(gpu)
    return device.type_name if device is not None else gpu


def parse_run_name(name: str) -> RunMeta:
    """Model, depth, device and split from a log's file name.

    Parameters
    ----------
    name : str
        The file name, optionally with folders (``cifar10/validation-128.csv``).

    A stem ending in ``-<digits>`` carries the run's global batch, as Pollux's traces do
    (``validation-128.csv``): ``resnet20_V100_val-512.csv`` is ResNet-20 on a V100,
    validation split, global batch 512; so is ``resnet20_V100-512_val.csv``.

    Examples
    --------
    >>> m = parse_run_name("resnet56_NVIDIA A100-PCIE-40GB_val.csv")
    >>> m.model, m.depth, m.gpu, m.split, m.global_batch
    ('resnet56', 56, 'NVIDIA A100-PCIE-40GB', 'val', None)
    >>> parse_run_name("cifar10/validation-128.csv").global_batch
    128
    >>> m = parse_run_name("resnet20_Tesla V100-SXM2-16GB_val-512.csv")
    >>> m.gpu, m.split, m.global_batch
    ('Tesla V100-SXM2-16GB', 'val', 512)
    >>> m = parse_run_name("resnet8_CPU-64_val.csv")          # the batch before the split suffix
    >>> m.gpu, m.split, m.global_batch
    ('CPU', 'val', 64)

    Lightning's ``CSVLogger`` writes ``<name>/version_<n>/metrics.csv``: the batch comes from ``<name>``'s
    ``-<digits>`` suffix, as from a file name (nothing else is read from the folder).

    >>> m = parse_run_name("logs/resnet8_CPU-64/version_0/metrics.csv")
    >>> m.model, m.split, m.global_batch
    (None, 'train', 64)

    >>> parse_run_name("resnet56_Tesla V100_val.csv (1f2e3d4c)") == parse_run_name("resnet56_Tesla V100_val.csv")
    True
    """
    name = re.sub(_LABEL, "", name)      # "result_0.txt (llama31_8b, SYS)": an upload told apart from its namesake
    path = PurePosixPath(name.replace("\\", "/"))
    stem = path.name
    if stem.lower() == "metrics.csv" and re.fullmatch(r"version_\d+", path.parent.name):
        batch = re.search(r"-(\d+)$", path.parent.parent.name)
        return RunMeta(model=None, depth=None, gpu=None, split="train",
                       global_batch=int(batch.group(1)) if batch and int(batch.group(1)) > 0 else None)
    if stem.lower().endswith(".csv"):
        stem = stem[:-4]
    pollux = re.fullmatch(r"validation-(\d+)", stem)
    if pollux:
        parent = path.parent.name or None
        return RunMeta(model=parent, depth=depth_of(parent), gpu=None, split="val",
                       global_batch=int(pollux.group(1)))
    batch = re.search(r"-(\d+)$", stem)
    global_batch = None
    if batch and int(batch.group(1)) > 0:
        global_batch, stem = int(batch.group(1)), stem[:batch.start()]
    split = "train"
    parts = stem.split("_")
    if len(parts) > 1 and parts[-1].lower() in _SPLIT_SUFFIXES:
        split = _SPLIT_SUFFIXES[parts[-1].lower()]
        parts = parts[:-1]
        before = re.search(r"-(\d+)$", parts[-1])          # resnet20_V100-512_val: the batch before the split
        if global_batch is None and len(parts) > 1 and before and int(before.group(1)) > 0:
            global_batch, parts[-1] = int(before.group(1)), parts[-1][:before.start()]
    model = parts[0].strip() or None
    gpu = "_".join(parts[1:]).strip() or None
    if gpu is not None and not is_device_name(gpu):
        gpu = None                 # "run-version_0-tag-train_loss": not <model>_<GPU>
        model = model if depth_of(model) is not None else None
    elif gpu is None and depth_of(model) is None:
        model = None               # "metrics.csv": no architecture in the name
    return RunMeta(model=model, depth=depth_of(model), gpu=gpu, split=split, global_batch=global_batch)


def is_device_name(text: str) -> bool:
    """Whether ``text`` names a device (one of the device table's, or words such as GPU, Tesla, Xeon, CPU).

    >>> is_device_name("Quadro RTX 8000"), is_device_name("Intel Xeon Processor"), is_device_name("0-tag-train_loss")
    (True, True, False)
    """
    return (device_from_text(text) is not None
            or re.search(rf"\b{_DEVICE_WORDS}", text, flags=re.IGNORECASE) is not None)
