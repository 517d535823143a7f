"""Torch definitions of the course's architectures, torchvision style.

Each family has one private builder and one-line public factories.  Callers normally go
through the registry:

>>> from core.models import MODEL_NAMES, model_info, parameter_count
>>> "resnet50" in MODEL_NAMES
True
>>> parameter_count("resnet18")         # torchvision's resnet18
11689512
>>> model_info("resnet20").family, model_info("resnet20").input_shape
('cifar-resnet', (3, 32, 32))

Families
--------
``cifar-resnet``
    He et al. 2016 (Deep Residual Learning, sec. 4.2): 3x3 stem with 16 channels, three
    stages of n basic blocks with 16/32/64 channels, depth 6n+2.  Shortcuts are **option A**
    (identity, with stride-2 subsampling and zero-padded extra channels; no parameters),
    as in the paper's CIFAR-10 experiments, so ResNet-20 has 0.27 M parameters.
``imagenet-resnet``
    The wide ResNets (64/128/256/512 channels, basic or bottleneck blocks), layer for layer
    torchvision's ``resnet18``/``resnet50`` (bottleneck stride on the 3x3 conv, "v1.5";
    projection shortcuts, option B).  ``*_cifar`` variants are the common CIFAR-10
    adaptation (kuangliu/pytorch-cifar): 3x3 stride-1 stem, no max-pool, 10 classes.
``vgg``
    VGG-16 (configuration D) without batch norm, as torchvision's ``vgg16``.
``inception``
    Inception v3 as torchvision's ``inception_v3`` with ``aux_logits=False`` (299x299).
``resnet1d``
    The CIFAR-style ResNets on 1-D signals that produced the built-in logs
    (``data/make_logs.py``); option B shortcuts.  Their forward takes ``(N, 40)`` and adds
    the channel axis itself; ``input_shape`` is given as ``(C, L) = (1, 40)``.

Only this package (and ``core.paleo.torch_bridge``) imports torch.  Modules: ``resnets``
(1-D, CIFAR and wide ResNets), ``inception_vgg`` (VGG-16, Inception v3).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import lru_cache

import torch
from torch import nn

from core.errors import InputError
from core.models.counted import ARCHITECTURE_SHAPES, FLOPS_PER_SAMPLE
from core.models.inception_vgg import VGG, VGG16_CFG, InceptionV3
from core.models.resnets import BasicBlock, BasicBlock1d, Bottleneck, CifarResNet, ResNet, ResNet1d

__all__ = ["ARCHITECTURE_SHAPES", "FLOPS_PER_SAMPLE", "MODEL_NAMES", "ArchitectureFeatures", "BasicBlock",
           "BasicBlock1d", "Bottleneck", "CifarResNet", "InceptionV3", "ModelInfo", "ResNet", "ResNet1d", "VGG",
           "architecture_features", "build_model", "count_architecture", "count_flops_per_sample", "example_input",
           "flops_per_sample", "model_info", "parameter_count", "registry_name"]


# --------------------------------------------------------------------------- registry
@dataclass(frozen=True)
class ModelInfo:
    """What the registry knows about one architecture.

    Attributes
    ----------
    name : str
        Registry name, e.g. ``"resnet56"``.
    family : str
        ``"cifar-resnet"``, ``"imagenet-resnet"``, ``"vgg"``, ``"inception"`` or ``"resnet1d"``.
    depth : int
        Number of weighted layers counted the usual way (conv + fc on the main path).
    input_shape : tuple of int
        One sample's shape: ``(C, H, W)``, or ``(C, L)`` for the 1-D family.
    num_classes : int
        Width of the classifier.
    n_params : int
        Trainable parameters (batch-norm weights and biases included, running stats not).
    """

    name: str
    family: str
    depth: int
    input_shape: tuple[int, ...]
    num_classes: int
    n_params: int

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class _Entry:
    family: str
    depth: int
    input_shape: tuple[int, ...]
    num_classes: int
    build: Callable[[], nn.Module]


def _cifar_resnet(depth: int) -> nn.Module:
    return CifarResNet(depth, num_classes=10)


def _wide_resnet(depth: int, *, cifar: bool) -> nn.Module:
    block, layers = {18: (BasicBlock, (2, 2, 2, 2)), 50: (Bottleneck, (3, 4, 6, 3))}[depth]
    return ResNet(block, layers, num_classes=10 if cifar else 1000,
                  stem="cifar" if cifar else "imagenet")


def resnet20() -> nn.Module:
    return _cifar_resnet(20)


def resnet32() -> nn.Module:
    return _cifar_resnet(32)


def resnet44() -> nn.Module:
    return _cifar_resnet(44)


def resnet56() -> nn.Module:
    return _cifar_resnet(56)


def resnet18() -> nn.Module:
    return _wide_resnet(18, cifar=False)


def resnet50() -> nn.Module:
    return _wide_resnet(50, cifar=False)


def resnet18_cifar() -> nn.Module:
    return _wide_resnet(18, cifar=True)


def resnet50_cifar() -> nn.Module:
    return _wide_resnet(50, cifar=True)


def vgg16() -> nn.Module:
    return VGG(VGG16_CFG, num_classes=1000)


def inception_v3() -> nn.Module:
    return InceptionV3(num_classes=1000)


def resnet8_1d() -> nn.Module:
    return ResNet1d(8)


def resnet14_1d() -> nn.Module:
    return ResNet1d(14)


def resnet20_1d() -> nn.Module:
    return ResNet1d(20)


def resnet32_1d() -> nn.Module:
    return ResNet1d(32)


def resnet44_1d() -> nn.Module:
    return ResNet1d(44)


def resnet56_1d() -> nn.Module:
    return ResNet1d(56)


_CIFAR, _IMAGENET, _INCEPTION, _SIGNAL = (3, 32, 32), (3, 224, 224), (3, 299, 299), (1, 40)
_REGISTRY: dict[str, _Entry] = {
    **{f"resnet{d}": _Entry("cifar-resnet", d, _CIFAR, 10, f)
       for d, f in ((20, resnet20), (32, resnet32), (44, resnet44), (56, resnet56))},
    "resnet18": _Entry("imagenet-resnet", 18, _IMAGENET, 1000, resnet18),
    "resnet50": _Entry("imagenet-resnet", 50, _IMAGENET, 1000, resnet50),
    "resnet18_cifar": _Entry("imagenet-resnet", 18, _CIFAR, 10, resnet18_cifar),
    "resnet50_cifar": _Entry("imagenet-resnet", 50, _CIFAR, 10, resnet50_cifar),
    "vgg16": _Entry("vgg", 16, _IMAGENET, 1000, vgg16),
    "inception_v3": _Entry("inception", 48, _INCEPTION, 1000, inception_v3),
    **{f"resnet{d}_1d": _Entry("resnet1d", d, _SIGNAL, 10, f)
       for d, f in ((8, resnet8_1d), (14, resnet14_1d), (20, resnet20_1d), (32, resnet32_1d),
                    (44, resnet44_1d), (56, resnet56_1d))},
}

#: every architecture ``build_model`` knows, in a fixed order
MODEL_NAMES: tuple[str, ...] = tuple(_REGISTRY)


def _entry(name: str) -> _Entry:
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, not {type(name).__name__}.")
    try:
        return _REGISTRY[name]
    except KeyError:
        raise InputError(f"model name: expected one of {', '.join(MODEL_NAMES)}; got {name!r}. "
                         "Pick a listed name.") from None


def build_model(name: str) -> nn.Module:
    """Build a fresh, randomly initialised model by registry name.

    Parameters
    ----------
    name : str
        One of :data:`MODEL_NAMES`.

    Returns
    -------
    torch.nn.Module
        Build it inside ``with torch.device("meta"):`` to get shapes without memory.

    Raises
    ------
    InputError
        If the name is not registered.

    Examples
    --------
    >>> sum(p.numel() for p in build_model("resnet20").parameters())
    269722
    """
    return _entry(name).build()


@lru_cache(maxsize=None)
def parameter_count(name: str) -> int:
    """Trainable parameters of a registered model (``ARCHITECTURE_SHAPES``, else :func:`count_architecture`).

    Examples
    --------
    >>> parameter_count("resnet50")       # torchvision's resnet50
    25557032
    """
    if name in ARCHITECTURE_SHAPES:
        return ARCHITECTURE_SHAPES[name][0]
    return count_architecture(name)[0]


#: how a run's model name maps to a registry name, per data set it trained on
_DATASET_PATTERNS: dict[str, tuple[str, ...]] = {
    "cifar10": ("{m}_cifar", "{m}"),
    "mnist1d": ("{m}_1d",),
}


def registry_name(model: str, dataset: str = "cifar10") -> str | None:
    """The registered architecture a run of ``model`` on ``dataset`` used, or ``None``.

    CIFAR-10 runs of ``resnet18``/``resnet50`` use the CIFAR adaptation of the wide ResNets;
    ``resnet20``..``resnet56`` the thin CIFAR ResNets; MNIST-1D runs the 1-D ResNets; any
    other data set looks the name up as it is.

    >>> registry_name("resnet50"), registry_name("resnet20"), registry_name("resnet8", "mnist1d")
    ('resnet50_cifar', 'resnet20', 'resnet8_1d')
    >>> registry_name("resnet8", "other") is None
    True
    """
    for pattern in _DATASET_PATTERNS.get(dataset, ("{m}",)):
        name = pattern.format(m=str(model).lower())
        if name in _REGISTRY:
            return name
    return None


def model_info(name: str) -> ModelInfo:
    """Family, depth, input shape, classes and parameter count of a registered model.

    Examples
    --------
    >>> info = model_info("resnet56")
    >>> info.depth, info.num_classes, info.n_params
    (56, 10, 853018)
    """
    e = _entry(name)
    return ModelInfo(name=name, family=e.family, depth=e.depth, input_shape=e.input_shape,
                     num_classes=e.num_classes, n_params=parameter_count(name))


def example_input(name: str, batch_size: int = 1, *, device: str = "meta") -> torch.Tensor:
    """An input batch of the shape the model's ``forward`` takes (``(N, 40)`` for 1-D nets).

    Examples
    --------
    >>> tuple(example_input("resnet20", 2).shape), tuple(example_input("resnet8_1d", 2).shape)
    ((2, 3, 32, 32), (2, 40))
    """
    e = _entry(name)
    shape = e.input_shape[1:] if e.family == "resnet1d" else e.input_shape
    return torch.empty((batch_size, *shape), device=device)


# --------------------------------------------------------------------------- features for calibration
@dataclass(frozen=True)
class ArchitectureFeatures:
    """What calibration knows about an architecture beyond its depth.

    Attributes
    ----------
    name : str
        Registry name.
    depth : int
    n_params : int
        Trainable parameters.
    flops_per_sample : int
        Forward FLOPs of one sample (2 per multiply-add, ``FlopCounterMode``).
    block : str
        ``"basic"`` (two 3x3 convs), ``"bottleneck"`` (1x1, 3x3, 1x1), ``"plain"`` (VGG) or
        ``"inception"``.
    width : int
        Channels of the first stage (16 for the thin CIFAR ResNets, 64 for the wide ones).
    """

    name: str
    depth: int
    n_params: int
    flops_per_sample: int
    block: str
    width: int

    def to_dict(self) -> dict:
        return asdict(self)


#: block type of each family (the wide ResNets by their block class)
_BLOCKS = {"cifar-resnet": "basic", "resnet1d": "basic", "vgg": "plain", "inception": "inception"}


@lru_cache(maxsize=None)
def flops_per_sample(name: str) -> int:
    """Forward FLOPs of one sample (convolutions and matrix products, 2 per multiply-add).

    From ``FLOPS_PER_SAMPLE`` for the registered models, else counted (:func:`count_flops_per_sample`).

    Examples
    --------
    ResNet-20's first conv alone: 2·(3·3·3)·16 outputs per pixel · 32·32 pixels = 884,736.

    >>> flops_per_sample("resnet20")
    81102080
    """
    if name in FLOPS_PER_SAMPLE:
        return FLOPS_PER_SAMPLE[name]
    return count_flops_per_sample(name)


def count_flops_per_sample(name: str) -> int:
    """Forward FLOPs of one sample counted by ``torch.utils.flop_counter.FlopCounterMode`` on the meta device
    (no memory): convolutions and matrix products, 2 per multiply-add.

    >>> count_flops_per_sample("resnet8_1d")
    742400
    """
    from torch.utils.flop_counter import FlopCounterMode

    with torch.device("meta"):
        model = _entry(name).build()
    with FlopCounterMode(display=False) as counter:
        model(example_input(name, 1))
    return int(counter.get_total_flops())


def count_architecture(name: str) -> tuple[int, str, int]:
    """``(parameters, block type, first-stage width)`` of a registered model, found by building it on the
    meta device (no memory).

    >>> count_architecture("resnet20")
    (269722, 'basic', 16)
    """
    e = _entry(name)
    with torch.device("meta"):
        model = e.build()
    if e.family == "imagenet-resnet":
        block = "bottleneck" if any(isinstance(m, Bottleneck) for m in model.modules()) else "basic"
    else:
        block = _BLOCKS[e.family]
    first_conv = next(m for m in model.modules() if isinstance(m, (nn.Conv1d, nn.Conv2d)))
    return int(sum(p.numel() for p in model.parameters() if p.requires_grad)), block, int(first_conv.out_channels)


@lru_cache(maxsize=None)
def architecture_features(name: str) -> ArchitectureFeatures:
    """Depth, parameters, FLOPs per sample, block type and width of a registered model.

    Examples
    --------
    >>> f = architecture_features("resnet50_cifar")
    >>> f.block, f.width, f.depth, f.n_params
    ('bottleneck', 64, 50, 23520842)
    >>> architecture_features("resnet56").block, architecture_features("resnet56").width
    ('basic', 16)
    """
    e = _entry(name)
    n_params, block, width = ARCHITECTURE_SHAPES.get(name) or count_architecture(name)
    return ArchitectureFeatures(name=name, depth=e.depth, n_params=n_params,
                                flops_per_sample=flops_per_sample(name), block=block, width=width)
