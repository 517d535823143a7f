"""core.calibrate.methods: the methods' inputs (parameter counts from the torch definitions)."""

from __future__ import annotations

from core.calibrate import (
    architecture_parameters,
)


def test_parameter_counts_come_from_the_torch_definitions():
    assert architecture_parameters("resnet20", "cifar10") == 269_722  # He et al. option A
    assert architecture_parameters("resnet18", "cifar10") == architecture_parameters("resnet18_cifar", "other")
    assert architecture_parameters("resnet8", "mnist1d") is not None
    assert architecture_parameters("resnet8", "other") is None
