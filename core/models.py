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

Only this module (and ``core.paleo.torch_bridge``) imports torch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import lru_cache

import torch
from torch import nn
from torch.nn import functional as F

from core.errors import InputError


# --------------------------------------------------------------------------- 1-D ResNets
# Moved unchanged from data/make_logs.py: same layer creation order, so a seeded
# initialisation gives the same weights as the runs that made data/logs/.
class BasicBlock1d(nn.Module):
    """The CIFAR ResNet basic block (He et al. 2016, option B shortcut), on 1-D signals."""

    def __init__(self, c_in: int, c_out: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv1d(c_in, c_out, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm1d(c_out)
        self.conv2 = nn.Conv1d(c_out, c_out, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm1d(c_out)
        self.shortcut: nn.Module = nn.Identity()
        if stride != 1 or c_in != c_out:
            self.shortcut = nn.Sequential(nn.Conv1d(c_in, c_out, 1, stride=stride, bias=False),
                                          nn.BatchNorm1d(c_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class ResNet1d(nn.Module):
    """CIFAR-style ResNet of depth 6n+2 with 16/32/64 channels, for 1-D input."""

    def __init__(self, depth: int, n_classes: int = 10) -> None:
        super().__init__()
        if (depth - 2) % 6:
            raise ValueError(f"depth must be 6n+2 (8, 14, 20, ...); got {depth}")
        n = (depth - 2) // 6
        self.stem = nn.Sequential(nn.Conv1d(1, 16, 3, padding=1, bias=False), nn.BatchNorm1d(16),
                                  nn.ReLU())
        layers: list[nn.Module] = []
        c_in = 16
        for c_out, stride in ((16, 1), (32, 2), (64, 2)):
            for i in range(n):
                layers.append(BasicBlock1d(c_in, c_out, stride if i == 0 else 1))
                c_in = c_out
        self.blocks = nn.Sequential(*layers)
        self.head = nn.Linear(64, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.blocks(self.stem(x.unsqueeze(1)))
        return self.head(x.mean(dim=2))


# --------------------------------------------------------------------------- CIFAR ResNets
class _ShortcutA(nn.Module):
    """Option A shortcut: subsample by 2 and zero-pad the new channels (no parameters)."""

    def __init__(self, extra_channels: int) -> None:
        super().__init__()
        self.extra = extra_channels

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        half = self.extra // 2
        return F.pad(x[:, :, ::2, ::2], (0, 0, 0, 0, half, self.extra - half))


class _CifarBlock(nn.Module):
    def __init__(self, c_in: int, c_out: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.shortcut: nn.Module = nn.Identity()
        if stride != 1 or c_in != c_out:
            self.shortcut = _ShortcutA(c_out - c_in)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class CifarResNet(nn.Module):
    """He et al. 2016 CIFAR-10 ResNet of depth 6n+2 (16/32/64 channels, option A)."""

    def __init__(self, depth: int, num_classes: int = 10) -> None:
        super().__init__()
        if depth < 8 or (depth - 2) % 6:
            raise InputError(f"depth: expected 6n+2 (20, 32, 44, 56, ...); got {depth!r}. "
                             "Pick a depth of that form.")
        n = (depth - 2) // 6
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        blocks: list[nn.Module] = []
        c_in = 16
        for c_out, stride in ((16, 1), (32, 2), (64, 2)):
            for i in range(n):
                blocks.append(_CifarBlock(c_in, c_out, stride if i == 0 else 1))
                c_in = c_out
        self.blocks = nn.Sequential(*blocks)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(64, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.blocks(F.relu(self.bn1(self.conv1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


# --------------------------------------------------------------------------- wide ResNets
def _conv_bn(c_in: int, c_out: int, k: int, stride: int = 1) -> list[nn.Module]:
    return [nn.Conv2d(c_in, c_out, k, stride=stride, padding=k // 2, bias=False),
            nn.BatchNorm2d(c_out)]


class BasicBlock(nn.Module):
    """torchvision's ResNet basic block (two 3x3 convs)."""

    expansion = 1

    def __init__(self, c_in: int, planes: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1, self.bn1 = _conv_bn(c_in, planes, 3, stride)
        self.conv2, self.bn2 = _conv_bn(planes, planes, 3)
        self.downsample: nn.Module | None = None
        if stride != 1 or c_in != planes:
            self.downsample = nn.Sequential(*_conv_bn(c_in, planes, 1, stride))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity = x if self.downsample is None else self.downsample(x)
        return F.relu(out + identity)


class Bottleneck(nn.Module):
    """torchvision's bottleneck block (1x1, 3x3 with the stride, 1x1; expansion 4)."""

    expansion = 4

    def __init__(self, c_in: int, planes: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1, self.bn1 = _conv_bn(c_in, planes, 1)
        self.conv2, self.bn2 = _conv_bn(planes, planes, 3, stride)
        self.conv3, self.bn3 = _conv_bn(planes, planes * 4, 1)
        self.downsample: nn.Module | None = None
        if stride != 1 or c_in != planes * 4:
            self.downsample = nn.Sequential(*_conv_bn(c_in, planes * 4, 1, stride))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        identity = x if self.downsample is None else self.downsample(x)
        return F.relu(out + identity)


class ResNet(nn.Module):
    """Wide ResNet; ``stem="imagenet"`` (7x7/2 + max-pool) or ``"cifar"`` (3x3/1, no pool)."""

    def __init__(self, block: type[BasicBlock] | type[Bottleneck], layers: tuple[int, ...], *,
                 num_classes: int = 1000, stem: str = "imagenet") -> None:
        super().__init__()
        if stem == "imagenet":
            self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
            self.maxpool: nn.Module = nn.MaxPool2d(3, stride=2, padding=1)
        else:
            self.conv1 = nn.Conv2d(3, 64, 3, stride=1, padding=1, bias=False)
            self.maxpool = nn.Identity()
        self.bn1 = nn.BatchNorm2d(64)
        c_in = 64
        stages: list[nn.Module] = []
        for i, (planes, n_blocks) in enumerate(zip((64, 128, 256, 512), layers)):
            blocks: list[nn.Module] = []
            for j in range(n_blocks):
                blocks.append(block(c_in, planes, 2 if (i > 0 and j == 0) else 1))
                c_in = planes * block.expansion
            stages.append(nn.Sequential(*blocks))
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(512 * block.expansion, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(F.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


# --------------------------------------------------------------------------- VGG-16
_VGG16_CFG = (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M",
              512, 512, 512, "M")


class VGG(nn.Module):
    """VGG without batch norm (torchvision layout: features, 7x7 average pool, classifier)."""

    def __init__(self, cfg: tuple[int | str, ...], num_classes: int = 1000) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        c_in = 3
        for v in cfg:
            if v == "M":
                layers.append(nn.MaxPool2d(2, 2))
            else:
                layers += [nn.Conv2d(c_in, int(v), 3, padding=1), nn.ReLU(inplace=True)]
                c_in = int(v)
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(7)
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(),
            nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(),
            nn.Linear(4096, num_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.flatten(self.avgpool(self.features(x)), 1)
        return self.classifier(x)


# --------------------------------------------------------------------------- Inception v3
class _Conv(nn.Sequential):
    """Conv (no bias) + batch norm (eps 0.001) + ReLU, torchvision's ``BasicConv2d``."""

    def __init__(self, c_in: int, c_out: int, k: int | tuple[int, int], stride: int = 1,
                 padding: int | tuple[int, int] = 0) -> None:
        super().__init__(nn.Conv2d(c_in, c_out, k, stride=stride, padding=padding, bias=False),
                         nn.BatchNorm2d(c_out, eps=0.001), nn.ReLU(inplace=True))


class _Branches(nn.Module):
    """Run parallel branches on one input and concatenate their outputs on channels."""

    def __init__(self, *branches: nn.Module) -> None:
        super().__init__()
        self.branches = nn.ModuleList(branches)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([b(x) for b in self.branches], 1)


class _Split(nn.Module):
    """A 1x3 and a 3x1 conv on the same input, concatenated (Inception E)."""

    def __init__(self, c_in: int, c_out: int) -> None:
        super().__init__()
        self.a = _Conv(c_in, c_out, (1, 3), padding=(0, 1))
        self.b = _Conv(c_in, c_out, (3, 1), padding=(1, 0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.a(x), self.b(x)], 1)


def _pool_branch(c_in: int, c_out: int) -> nn.Sequential:
    return nn.Sequential(nn.AvgPool2d(3, stride=1, padding=1), _Conv(c_in, c_out, 1))


def _inception_a(c_in: int, pool: int) -> _Branches:
    return _Branches(_Conv(c_in, 64, 1),
                     nn.Sequential(_Conv(c_in, 48, 1), _Conv(48, 64, 5, padding=2)),
                     nn.Sequential(_Conv(c_in, 64, 1), _Conv(64, 96, 3, padding=1),
                                   _Conv(96, 96, 3, padding=1)),
                     _pool_branch(c_in, pool))


def _inception_b(c_in: int) -> _Branches:
    return _Branches(_Conv(c_in, 384, 3, stride=2),
                     nn.Sequential(_Conv(c_in, 64, 1), _Conv(64, 96, 3, padding=1),
                                   _Conv(96, 96, 3, stride=2)),
                     nn.MaxPool2d(3, stride=2))


def _inception_c(c_in: int, c7: int) -> _Branches:
    k17, k71 = dict(kernel_size=(1, 7), padding=(0, 3)), dict(kernel_size=(7, 1), padding=(3, 0))

    def conv(a: int, b: int, kw: dict) -> _Conv:
        return _Conv(a, b, kw["kernel_size"], padding=kw["padding"])

    return _Branches(_Conv(c_in, 192, 1),
                     nn.Sequential(_Conv(c_in, c7, 1), conv(c7, c7, k17), conv(c7, 192, k71)),
                     nn.Sequential(_Conv(c_in, c7, 1), conv(c7, c7, k71), conv(c7, c7, k17),
                                   conv(c7, c7, k71), conv(c7, 192, k17)),
                     _pool_branch(c_in, 192))


def _inception_d(c_in: int) -> _Branches:
    return _Branches(nn.Sequential(_Conv(c_in, 192, 1), _Conv(192, 320, 3, stride=2)),
                     nn.Sequential(_Conv(c_in, 192, 1), _Conv(192, 192, (1, 7), padding=(0, 3)),
                                   _Conv(192, 192, (7, 1), padding=(3, 0)),
                                   _Conv(192, 192, 3, stride=2)),
                     nn.MaxPool2d(3, stride=2))


def _inception_e(c_in: int) -> _Branches:
    return _Branches(_Conv(c_in, 320, 1),
                     nn.Sequential(_Conv(c_in, 384, 1), _Split(384, 384)),
                     nn.Sequential(_Conv(c_in, 448, 1), _Conv(448, 384, 3, padding=1),
                                   _Split(384, 384)),
                     _pool_branch(c_in, 192))


class InceptionV3(nn.Module):
    """Inception v3 (Szegedy et al. 2016), torchvision layout without the auxiliary head."""

    def __init__(self, num_classes: int = 1000) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            _Conv(3, 32, 3, stride=2), _Conv(32, 32, 3), _Conv(32, 64, 3, padding=1),
            nn.MaxPool2d(3, stride=2), _Conv(64, 80, 1), _Conv(80, 192, 3),
            nn.MaxPool2d(3, stride=2))
        self.mixed = nn.Sequential(
            _inception_a(192, 32), _inception_a(256, 64), _inception_a(288, 64),
            _inception_b(288),
            _inception_c(768, 128), _inception_c(768, 160), _inception_c(768, 160),
            _inception_c(768, 192),
            _inception_d(768), _inception_e(1280), _inception_e(2048))
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.dropout = nn.Dropout(0.5)
        self.fc = nn.Linear(2048, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.flatten(self.avgpool(self.mixed(self.stem(x))), 1)
        return self.fc(self.dropout(x))


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


def resnet20() -> nn.Module: return _cifar_resnet(20)  # noqa: E704
def resnet32() -> nn.Module: return _cifar_resnet(32)  # noqa: E704
def resnet44() -> nn.Module: return _cifar_resnet(44)  # noqa: E704
def resnet56() -> nn.Module: return _cifar_resnet(56)  # noqa: E704
def resnet18() -> nn.Module: return _wide_resnet(18, cifar=False)  # noqa: E704
def resnet50() -> nn.Module: return _wide_resnet(50, cifar=False)  # noqa: E704
def resnet18_cifar() -> nn.Module: return _wide_resnet(18, cifar=True)  # noqa: E704
def resnet50_cifar() -> nn.Module: return _wide_resnet(50, cifar=True)  # noqa: E704
def vgg16() -> nn.Module: return VGG(_VGG16_CFG, num_classes=1000)  # noqa: E704
def inception_v3() -> nn.Module: return InceptionV3(num_classes=1000)  # noqa: E704
def resnet8_1d() -> nn.Module: return ResNet1d(8)  # noqa: E704
def resnet14_1d() -> nn.Module: return ResNet1d(14)  # noqa: E704
def resnet20_1d() -> nn.Module: return ResNet1d(20)  # noqa: E704
def resnet32_1d() -> nn.Module: return ResNet1d(32)  # noqa: E704
def resnet44_1d() -> nn.Module: return ResNet1d(44)  # noqa: E704
def resnet56_1d() -> nn.Module: return ResNet1d(56)  # noqa: E704


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
    """Trainable parameters of a registered model (built on the meta device, no memory).

    Examples
    --------
    >>> parameter_count("resnet50")       # torchvision's resnet50
    25557032
    """
    with torch.device("meta"):
        model = _entry(name).build()
    return int(sum(p.numel() for p in model.parameters() if p.requires_grad))


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
