"""The torch side of :mod:`core.models`: each architecture's builder, an example input, and counting
parameters and FLOPs by building a model on the meta device. Only this module (and
``core.paleo.torch_bridge``) imports torch; ``core.models`` loads it on first use of a name defined here,
so reading the registry and its counted tables never pays torch's import (seconds in a fresh process).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch
from torch import nn

from core.models.inception_vgg import VGG, VGG16_CFG, InceptionV3
from core.models.registry import FAMILY_BLOCKS, entry
from core.models.resnets import BasicBlock, BasicBlock1d, Bottleneck, CifarResNet, ResNet, ResNet1d

__all__ = ["BasicBlock", "BasicBlock1d", "Bottleneck", "CifarResNet", "InceptionV3", "ResNet", "ResNet1d", "VGG",
           "build_model", "count_architecture", "count_flops_per_sample", "example_input"]


def _cifar_resnet(depth: int) -> nn.Module:
    return CifarResNet(depth, num_classes=10)


def _wide_resnet(depth: int, *, cifar: bool) -> nn.Module:
    block, layers = {18: (BasicBlock, (2, 2, 2, 2)), 50: (Bottleneck, (3, 4, 6, 3))}[depth]
    return ResNet(block, layers, num_classes=10 if cifar else 1000,
                  stem="cifar" if cifar else "imagenet")


#: each registered name's builder (the registry, ``core.models.registry``, says what each is)
_BUILDERS: dict[str, Callable[[], nn.Module]] = {
    **{f"resnet{d}": partial(_cifar_resnet, d) for d in (20, 32, 44, 56)},
    **{f"resnet{d}": partial(_wide_resnet, d, cifar=False) for d in (18, 50)},
    **{f"resnet{d}_cifar": partial(_wide_resnet, d, cifar=True) for d in (18, 50)},
    "vgg16": partial(VGG, VGG16_CFG, num_classes=1000),
    "inception_v3": partial(InceptionV3, num_classes=1000),
    **{f"resnet{d}_1d": partial(ResNet1d, d) for d in (8, 14, 20, 32, 44, 56)},
}


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
    entry(name)
    return _BUILDERS[name]()


def example_input(name: str, batch_size: int = 1, *, device: str = "meta") -> torch.Tensor:
    """An input batch of the shape the model's ``forward`` takes (``(N, 40)`` for 1-D nets).

    Examples
    --------
    >>> tuple(example_input("resnet20", 2).shape), tuple(example_input("resnet8_1d", 2).shape)
    ((2, 3, 32, 32), (2, 40))
    """
    e = entry(name)
    shape = e.input_shape[1:] if e.family == "resnet1d" else e.input_shape
    return torch.empty((batch_size, *shape), device=device)


def count_flops_per_sample(name: str) -> int:
    """Forward FLOPs of one sample counted by ``torch.utils.flop_counter.FlopCounterMode`` on the meta device
    (no memory): convolutions and matrix products, 2 per multiply-add.

    >>> count_flops_per_sample("resnet8_1d")
    742400
    """
    from torch.utils.flop_counter import FlopCounterMode

    with torch.device("meta"):
        model = build_model(name)
    with FlopCounterMode(display=False) as counter:
        model(example_input(name, 1))
    return int(counter.get_total_flops())


def count_architecture(name: str) -> tuple[int, str, int]:
    """``(parameters, block type, first-stage width)`` of a registered model, found by building it on the
    meta device (no memory).

    >>> count_architecture("resnet20")
    (269722, 'basic', 16)
    """
    e = entry(name)
    with torch.device("meta"):
        model = build_model(name)
    if e.family == "imagenet-resnet":
        block = "bottleneck" if any(isinstance(m, Bottleneck) for m in model.modules()) else "basic"
    else:
        block = FAMILY_BLOCKS[e.family]
    first_conv = next(m for m in model.modules() if isinstance(m, (nn.Conv1d, nn.Conv2d)))
    return int(sum(p.numel() for p in model.parameters() if p.requires_grad)), block, int(first_conv.out_channels)
