"""The registry of :mod:`core.models`' architectures: each name's family, depth, input shape and classes, and
each family's block type. A leaf module (no torch): the facade and ``core.models.build`` both read it."""

from __future__ import annotations

from dataclasses import dataclass

from core.validation import check_option


@dataclass(frozen=True)
class Entry:
    """What the registry knows of one architecture before building it."""

    family: str
    depth: int
    input_shape: tuple[int, ...]
    num_classes: int


_CIFAR, _IMAGENET, _INCEPTION, _SIGNAL = (3, 32, 32), (3, 224, 224), (3, 299, 299), (1, 40)
REGISTRY: dict[str, Entry] = {
    **{f"resnet{d}": Entry("cifar-resnet", d, _CIFAR, 10) for d in (20, 32, 44, 56)},
    "resnet18": Entry("imagenet-resnet", 18, _IMAGENET, 1000),
    "resnet50": Entry("imagenet-resnet", 50, _IMAGENET, 1000),
    "resnet18_cifar": Entry("imagenet-resnet", 18, _CIFAR, 10),
    "resnet50_cifar": Entry("imagenet-resnet", 50, _CIFAR, 10),
    "vgg16": Entry("vgg", 16, _IMAGENET, 1000),
    "inception_v3": Entry("inception", 48, _INCEPTION, 1000),
    **{f"resnet{d}_1d": Entry("resnet1d", d, _SIGNAL, 10) for d in (8, 14, 20, 32, 44, 56)},
}

#: every architecture ``build_model`` knows, in a fixed order
MODEL_NAMES: tuple[str, ...] = tuple(REGISTRY)


def entry(name: str) -> Entry:
    """The registry's entry of ``name``; an unknown name is refused with the list."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, not {type(name).__name__}.")
    return REGISTRY[check_option(name, "model name", MODEL_NAMES, fix="Pick a listed name")]


#: block type of each family (the wide ResNets by their block class)
FAMILY_BLOCKS = {"cifar-resnet": "basic", "resnet1d": "basic", "vgg": "plain", "inception": "inception"}
