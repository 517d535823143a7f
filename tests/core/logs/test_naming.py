"""Metadata from file names."""

import pytest

from core.logs.naming import depth_of, gpu_short_name, parse_run_name


@pytest.mark.parametrize("name,expected", [
    ("resnet56_NVIDIA A100-PCIE-40GB_val.csv", ("resnet56", 56, "NVIDIA A100-PCIE-40GB", "val")),
    ("resnet18_Quadro RTX 8000.csv", ("resnet18", 18, "Quadro RTX 8000", "train")),
    ("resnet20_Intel Xeon Processor.csv", ("resnet20", 20, "Intel Xeon Processor", "train")),
    ("metrics.csv", (None, None, None, "train")),                       # no architecture: left empty
    ("run-version_0-tag-train_loss.csv", (None, None, None, "train")),  # a TensorBoard export
    ("resnet99.csv", ("resnet99", 99, None, "train")),
    ("bert_Tesla V100-SXM2-16GB.csv", ("bert", None, "Tesla V100-SXM2-16GB", "train")),
    ("vgg16_V100_train.csv", ("vgg16", 16, "V100", "train")),
    ("cifar10/validation-512.csv", ("cifar10", None, None, "val")),
])
def test_parse_run_name(name, expected):
    m = parse_run_name(name)
    assert (m.model, m.depth, m.gpu, m.split) == expected


def test_depth_and_gpu_short_names():
    assert depth_of("ResNet-50") == 50 and depth_of("bert") is None and depth_of("cifar10") is None
    assert gpu_short_name("Tesla V100-PCIE-32GB") == "V100"
    assert gpu_short_name("Quadro RTX 8000") == "RTX 8000"
    assert gpu_short_name("Intel Xeon Processor") == "Intel Xeon Processor"
