"""Tests of core.models: architectures, parameter counts a reader can check, the registry."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch
from torch import nn

from core.errors import InputError
from core.models import (
    MODEL_NAMES,
    ResNet1d,
    build_model,
    example_input,
    model_info,
    parameter_count,
)
from core.models.build import BasicBlock1d, CifarResNet

ROOT = Path(__file__).resolve().parents[3]


def test_registry_lists_every_required_architecture():
    assert MODEL_NAMES == (
        "resnet20", "resnet32", "resnet44", "resnet56", "resnet18", "resnet50",
        "resnet18_cifar", "resnet50_cifar", "vgg16", "inception_v3",
        "resnet8_1d", "resnet14_1d", "resnet20_1d", "resnet32_1d", "resnet44_1d", "resnet56_1d")


def test_resnet20_parameter_count_by_hand():
    # stem: conv 3·16·9 = 432 + BN 2·16 = 32                                  ->    464
    # stage 1: 3 blocks x (2 convs 16·16·9 = 2304 each + 2 BN of 32)          ->  14016
    # stage 2: first block 16·32·9 + 32·32·9 + 2·64 = 13952; two more 18560    ->  51072
    # stage 3: first block 32·64·9 + 64·64·9 + 2·128 = 55552; two more 73984   -> 203520
    # fc 64·10 + 10 = 650; option-A shortcuts have no parameters
    assert parameter_count("resnet20") == 464 + 14016 + 51072 + 203520 + 650 == 269722


@pytest.mark.parametrize("name, expected, paper_millions", [
    # He et al. 2016, Table 6: 0.27 M, 0.46 M, 0.66 M, 0.85 M
    ("resnet20", 269722, 0.27), ("resnet32", 464154, 0.46),
    ("resnet44", 658586, 0.66), ("resnet56", 853018, 0.85),
])
def test_cifar_resnets_match_the_paper(name, expected, paper_millions):
    assert parameter_count(name) == expected
    assert round(expected / 1e6, 2) == paper_millions


def test_six_more_layers_add_one_block_per_stage():
    # (2·2304 + 64) + (2·9216 + 128) + (2·36864 + 256) = 97,216 per 6 layers
    per_six = (2 * 2304 + 64) + (2 * 9216 + 128) + (2 * 36864 + 256)
    assert parameter_count("resnet32") - parameter_count("resnet20") == 2 * per_six
    assert parameter_count("resnet56") - parameter_count("resnet44") == 2 * per_six


@pytest.mark.parametrize("name, expected", [
    ("resnet18", 11_689_512),        # torchvision.models.resnet18
    ("resnet50", 25_557_032),        # torchvision.models.resnet50
    ("vgg16", 138_357_544),          # torchvision.models.vgg16
    # torchvision inception_v3 has 27,161,264 with the auxiliary head, which holds
    # 128·768 + 256 (conv0 + BN) + 768·128·25 + 1536 (conv1 + BN) + 768·1000 + 1000 (fc)
    # = 3,326,696: without it 23,834,568
    ("inception_v3", 27_161_264 - (128 * 768 + 256 + 768 * 128 * 25 + 1536 + 768 * 1000 + 1000)),
    ("resnet18_cifar", 11_173_962),  # kuangliu/pytorch-cifar ResNet18 (11.17 M)
    ("resnet50_cifar", 23_520_842),  # kuangliu/pytorch-cifar ResNet50 (23.52 M)
])
def test_wide_models_match_reference_counts(name, expected):
    assert parameter_count(name) == expected


def test_resnet8_1d_parameter_count_by_hand():
    # stem conv 1·16·3 = 48 + BN 32; block 16->16: 2·768 + 64 = 1600
    # block 16->32/2: 1536 + 3072 + 128 + shortcut 512 + 64 = 5312
    # block 32->64/2: 6144 + 12288 + 256 + shortcut 2048 + 128 = 20864; head 64·10 + 10
    assert parameter_count("resnet8_1d") == 80 + 1600 + 5312 + 20864 + 650 == 28506


def test_model_info_fields():
    info = model_info("resnet56")
    assert (info.name, info.family, info.depth, info.input_shape, info.num_classes) == \
        ("resnet56", "cifar-resnet", 56, (3, 32, 32), 10)
    assert info.n_params == parameter_count("resnet56")
    assert model_info("resnet50").family == "imagenet-resnet"
    assert model_info("resnet50_cifar").input_shape == (3, 32, 32)
    assert model_info("inception_v3").input_shape == (3, 299, 299)
    assert model_info("resnet20_1d").input_shape == (1, 40)
    assert model_info("vgg16").to_dict()["family"] == "vgg"


@pytest.mark.parametrize("name", ["resnet20", "resnet18_cifar", "resnet14_1d"])
def test_small_models_run_forward(name):
    torch.manual_seed(0)
    model = build_model(name).eval()
    with torch.no_grad():
        out = model(torch.randn(tuple(example_input(name, 2).shape)))
    assert tuple(out.shape) == (2, model_info(name).num_classes)


@pytest.mark.parametrize("name, out_shape", [("resnet50", (2, 1000)), ("inception_v3", (2, 1000)),
                                             ("vgg16", (2, 1000))])
def test_large_models_give_the_right_shapes_on_meta(name, out_shape):
    with torch.device("meta"):
        model = build_model(name)
    assert tuple(model(example_input(name, 2)).shape) == out_shape


def test_cifar_shortcuts_are_option_a_without_projection():
    model = build_model("resnet56")
    one_by_one = [m for m in model.modules() if isinstance(m, nn.Conv2d) and m.kernel_size == (1, 1)]
    assert one_by_one == []


def test_imagenet_bottleneck_puts_stride_on_the_3x3_conv():
    block = build_model("resnet50").layer2[0]
    assert block.conv1.stride == (1, 1) and block.conv2.stride == (2, 2)


def test_seeded_builds_are_identical():
    torch.manual_seed(7)
    a = build_model("resnet20").state_dict()
    torch.manual_seed(7)
    b = build_model("resnet20").state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_make_logs_uses_the_1d_resnets_from_core_models():
    spec = importlib.util.spec_from_file_location("make_logs", ROOT / "data" / "make_logs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.ResNet1d is ResNet1d
    assert isinstance(build_model("resnet8_1d").blocks[0], BasicBlock1d)


def test_1d_layer_creation_order_is_unchanged():
    # the order of parameters decides what a seeded initialisation draws
    names = [n for n, _ in ResNet1d(8).named_parameters()]
    assert names[:4] == ["stem.0.weight", "stem.1.weight", "stem.1.bias", "blocks.0.conv1.weight"]
    assert names[-2:] == ["head.weight", "head.bias"]


def test_unknown_model_name_is_refused():
    with pytest.raises(InputError, match=r"model name: expected one of resnet20.*got 'resnet21'"):
        build_model("resnet21")
    with pytest.raises(InputError, match="model name"):
        model_info("alexnet")
    with pytest.raises(TypeError, match="name must be a str"):
        parameter_count(50)


def test_cifar_resnet_depth_must_be_6n_plus_2():
    with pytest.raises(InputError, match=r"depth: expected 6n\+2.*got 21"):
        CifarResNet(21)


def test_architecture_features_name_block_type_and_width():
    from core.models import architecture_features, flops_per_sample

    thin, wide, bottleneck = (architecture_features(n) for n in ("resnet20", "resnet18_cifar", "resnet50_cifar"))
    assert (thin.block, thin.width) == ("basic", 16)          # He et al.: 16/32/64 channels
    assert (wide.block, wide.width) == ("basic", 64)          # torchvision: 64/128/256/512
    assert (bottleneck.block, bottleneck.width, bottleneck.depth) == ("bottleneck", 64, 50)
    assert architecture_features("vgg16").block == "plain"
    # FLOPs of one 1-D ResNet-8 sample (2 per multiply-add; length 40, 20, 10 in the three stages):
    # stem 2·3·16·40 = 3,840; stage 1: two convs 2·48·16·40 = 61,440 each;
    # stage 2: 2·48·32·20 = 61,440 + 2·96·32·20 = 122,880 + 1x1 shortcut 2·16·32·20 = 20,480;
    # stage 3: 2·96·64·10 = 122,880 + 2·192·64·10 = 245,760 + shortcut 2·32·64·10 = 40,960; fc 2·64·10 = 1,280
    assert flops_per_sample("resnet8_1d") == (3840 + 2 * 61440 + 61440 + 122880 + 20480 + 122880 + 245760
                                              + 40960 + 1280) == 742400


def test_the_architecture_table_is_what_building_every_model_gives():
    from core.models.build import count_architecture
    from core.models.counted import ARCHITECTURE_SHAPES

    assert set(ARCHITECTURE_SHAPES) == set(MODEL_NAMES)
    assert {name: count_architecture(name) for name in MODEL_NAMES} == ARCHITECTURE_SHAPES


def test_the_flops_table_is_what_the_counter_counts_for_every_model():
    from core.models.build import count_flops_per_sample
    from core.models.counted import FLOPS_PER_SAMPLE

    assert set(FLOPS_PER_SAMPLE) == set(MODEL_NAMES)
    assert {name: count_flops_per_sample(name) for name in MODEL_NAMES} == FLOPS_PER_SAMPLE


def test_the_registry_and_a_calibration_prior_never_import_torch():
    """Importing torch takes seconds in a fresh process (the Logs page's first visit paid it): the registry, its
    counted tables and the calibration prior of a built-in run read no torch; build_model loads it on use."""
    import subprocess
    import sys

    code = ("import sys, glob\n"
            "from core.models import architecture_features, model_info, parameter_count, registry_name\n"
            "from core.logs import read_log_file\n"
            "from core.prediction import prior_for_run\n"
            "from core.datasets import builtin_datasets_by_file\n"
            "f = architecture_features(registry_name('resnet8', 'mnist1d'))\n"
            "logs = [read_log_file(p) for p in sorted(glob.glob('data/logs/*.csv'))]\n"
            "from core.targets import accuracy_target\n"
            "prior = prior_for_run(logs[0], logs, target=accuracy_target(0.92), "
            "datasets_by_file=builtin_datasets_by_file())\n"
            "print(f.n_params, model_info('resnet56').n_params, parameter_count('vgg16'), prior.epoch is not None,\n"
            "      'torch' in sys.modules)\n"
            "from core.models import build_model\n"
            "print(type(build_model('resnet20')).__name__, 'torch' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["28506 853018 138357544 True False", "CifarResNet True"]
