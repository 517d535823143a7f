"""The course's architectures, torchvision style: their registry, and their torch definitions (``build``).

Each family has one private builder, bound to each registered name in ``build``.  Callers normally go
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

Only ``core.models.build`` (and ``core.paleo.torch_bridge``) imports torch: this registry, its counted
tables (``counted``) and the features calibration reads are torch-free, and a torch-backed name
(``build_model``, ``example_input``, ``count_*``, the module classes) loads ``build`` on first use.
Modules: ``build`` (builders, counting), ``resnets`` (1-D, CIFAR and wide ResNets), ``inception_vgg``
(VGG-16, Inception v3).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache

from core.models.counted import ARCHITECTURE_SHAPES, FLOPS_PER_SAMPLE
from core.models.registry import MODEL_NAMES, REGISTRY, entry

#: ModelInfo, ArchitectureFeatures and flops_per_sample stay though no other area imports them: defined here
__all__ = [
    'DATASETS', 'MODEL_NAMES', 'ArchitectureFeatures', 'ModelInfo', 'ResNet1d', 'architecture_features', 'build_model',
    'example_input', 'flops_per_sample', 'model_info', 'parameter_count', 'registry_name',
]


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
    from core.models.build import count_architecture

    return count_architecture(name)[0]


#: how a run's model name maps to a registry name, per data set it trained on
_DATASET_PATTERNS: dict[str, tuple[str, ...]] = {
    "cifar10": ("{m}_cifar", "{m}"),
    "mnist1d": ("{m}_1d",),
}


#: the data sets a run's model name is looked up for (``--dataset``, a calibration prior's parameter counts): those
#: with a naming rule, then ``other`` (the name as it is)
DATASETS: tuple[str, ...] = (*_DATASET_PATTERNS, "other")


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
        if name in REGISTRY:
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
    e = entry(name)
    return ModelInfo(name=name, family=e.family, depth=e.depth, input_shape=e.input_shape,
                     num_classes=e.num_classes, n_params=parameter_count(name))


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
    from core.models.build import count_flops_per_sample

    return count_flops_per_sample(name)


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
    e = entry(name)
    if name not in ARCHITECTURE_SHAPES:
        from core.models.build import count_architecture
    n_params, block, width = ARCHITECTURE_SHAPES.get(name) or count_architecture(name)
    return ArchitectureFeatures(name=name, depth=e.depth, n_params=n_params,
                                flops_per_sample=flops_per_sample(name), block=block, width=width)


#: names defined in ``core.models.build`` (torch): loaded on first use
_TORCH_NAMES = frozenset({"BasicBlock", "BasicBlock1d", "Bottleneck", "CifarResNet", "InceptionV3", "ResNet",
                          "ResNet1d", "VGG", "build_model", "count_architecture", "count_flops_per_sample",
                          "example_input"})


def __getattr__(name: str):
    if name in _TORCH_NAMES:
        import importlib

        return getattr(importlib.import_module("core.models.build"), name)
    raise AttributeError(f"module 'core.models' has no attribute {name!r}")
