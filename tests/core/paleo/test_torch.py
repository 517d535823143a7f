"""The torch bridge: layer lists from torch modules, FLOPs against torch's own counter and
against Paleo's specs of the same networks."""

from __future__ import annotations

import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest
import torch
from torch import nn

from core.errors import InputError
from core.models import parameter_count
from core.paleo import layer_breakdown, load_net, simulate
from core.paleo.cost import gradient_shapes_match
from core.paleo.torch_bridge import net_from_model, net_from_torch, torch_flops

ROOT = Path(__file__).resolve().parents[3]
BRIDGED = ("resnet20", "resnet18", "resnet50", "resnet50_cifar", "vgg16", "inception_v3",
           "resnet8_1d")


@lru_cache(maxsize=None)
def _flops(ref: str, paleo_compatible: bool) -> tuple[int, int]:
    """Conv + fully connected FLOPs per image (forward, backward) as the cost model counts."""
    df = layer_breakdown(load_net(ref), device="K80", batch_size=1,
                         paleo_compatible=paleo_compatible)
    dense = df[df.kind.isin(["conv2d", "innerproduct"])]
    return int(dense.fwd_flops.sum()), int(dense.bwd_flops.sum())


@pytest.mark.slow
@pytest.mark.parametrize("name", BRIDGED)
def test_bridge_flops_equal_torch_flop_counter(name):
    counted = torch_flops(name)
    fwd, bwd = _flops(f"torch:{name}", False)
    assert fwd == counted.forward            # 2 per multiply-add, convs and matmuls
    assert bwd == counted.backward           # modern mode: data + filter gradients exactly


@pytest.mark.parametrize("name", BRIDGED)
def test_bridge_keeps_every_parameter(name):
    net = net_from_model(name)
    assert net.n_params == parameter_count(name)
    assert all(gradient_shapes_match(lay) for lay in net.layers if lay.kind == "conv2d")


def test_resnet20_layer_list():
    net = net_from_model("resnet20", batch_size=4)
    convs = [lay for lay in net.layers if lay.kind == "conv2d"]
    assert len(convs) == 19                                   # 1 stem + 9 blocks x 2
    assert convs[0].backprop is False and all(c.backprop for c in convs[1:])
    assert convs[0].inputs == ((4, 32, 32, 3),) and convs[0].output == (4, 32, 32, 16)
    assert convs[0].pad == (1, 1) and convs[0].padding == "EXPLICIT"
    assert [lay.kind for lay in net.layers[-2:]] == ["pool2d", "innerproduct"]
    assert net.layers[-2].kernel == (8, 8)                    # adaptive pool over 8x8
    assert sum(lay.type == "BatchNorm2d" for lay in net.layers) == 19


def test_1d_convolutions_become_height_one():
    net = net_from_model("resnet8_1d", batch_size=2)
    stem = net.layers[1]
    assert stem.filters == (1, 3, 1, 16) and stem.inputs == ((2, 1, 40, 1),)
    assert stem.output == (2, 1, 40, 16) and stem.pad == (0, 1) and stem.backprop is False


def test_vgg16_matches_paleos_spec_forward_exactly():
    # same 13 convs and 3 fully connected layers (fc6 written as a 7x7 conv in the spec)
    assert _flops("vgg16", True)[0] == _flops("torch:vgg16", True)[0] == 30_940_528_640
    # = 2 x 15,470,264,320 multiply-adds, the usual VGG-16 count
    assert load_net("vgg16").n_params == net_from_model("vgg16").n_params == 138_357_544


def test_vgg16_backward_difference_is_the_fc6_overcount():
    # Paleo's fc6-as-conv data gradient is a 7x7 conv padded by 6 over a 1x1 map: 49x the
    # forward 2·25088·4096 = 205,520,896 FLOPs instead of 1x -> 48 · 205,520,896 more
    spec_bwd, torch_bwd = _flops("vgg16", True)[1], _flops("torch:vgg16", True)[1]
    assert spec_bwd - torch_bwd == 48 * 2 * 25088 * 4096 == 9_865_003_008
    assert _flops("vgg16", False)[1] == torch_bwd             # modern mode counts it once


def test_inception_v3_difference_is_one_branch_of_mixed_6a():
    # torchvision's Mixed_6a branch: 3x3 64->96 at 35x35, then 3x3/2 96->96 to 17x17;
    # Paleo's spec has a single 3x3/2 64->96 to 17x17:
    # 2·9·64·96·35² + 2·9·96·96·17² - 2·9·64·96·17² = 135,475,200 + 47,941,632 - 31,961,088
    extra = 2 * 9 * 64 * 96 * 35 ** 2 + 2 * 9 * 96 * 96 * 17 ** 2 - 2 * 9 * 64 * 96 * 17 ** 2
    assert extra == 151_455_744
    assert _flops("torch:inception_v3", True)[0] - _flops("inception_v3", True)[0] == extra
    # modern backward = 2 x forward for both (neither differing conv reads the input)
    assert _flops("torch:inception_v3", False)[1] - _flops("inception_v3", False)[1] == 2 * extra


def test_resnet50_torchvision_and_caffe_versions_differ_as_expected():
    # torchvision (v1.5: stride on the 3x3 conv, 56x56 after the padded max-pool):
    # 4,089,184,256 multiply-adds, the "4.09 GFLOPs" torchvision documents
    assert _flops("torch:resnet50", False)[0] == 2 * 4_089_184_256
    # Paleo's converted Caffe ResNet-50 (v1: stride on the first 1x1, 55x55 after pool1)
    # does less: 7.669 GFLOP (PALEO_MODEL.md: 7.67 with pooling)
    assert round(_flops("resnet50", True)[0] / 1e9, 3) == 7.669
    # parameters: the spec gives each conv a bias, torch gives each conv a batch norm
    # (weight and bias): the difference is the sum of conv output channels
    spec = load_net("resnet50")
    channels = sum(lay.filters[3] for lay in spec.layers if lay.kind == "conv2d")
    assert net_from_model("resnet50").n_params - spec.n_params == channels == 26_560


def test_any_module_can_be_estimated():
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Dropout(), nn.Linear(8 * 4 * 4, 5))
    net = net_from_torch(model, torch.zeros(2, 3, 8, 8), name="small")
    assert [lay.kind for lay in net.layers] == ["input", "conv2d", "pool2d", "dropout", "innerproduct"]
    assert net.n_params == 3 * 8 * 9 + 8 + 128 * 5 + 5
    res = simulate(net, device="V100", batch_size=16, workers=(1, 2))
    assert res.rows[0].time_comp_ms > 0
    assert next(model.parameters()).device.type == "cpu"      # the original is not moved


def test_parameters_outside_leaf_modules_are_kept():
    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(torch.ones(7))
            self.fc = nn.Linear(7, 2)

        def forward(self, x):
            return self.fc(x * self.scale)

    net = net_from_torch(Scaled(), torch.zeros(1, 7), name="scaled")
    assert net.layers[-1].name == "other parameters" and net.layers[-1].params == 7
    assert net.n_params == 7 + 7 * 2 + 2


def test_grouped_convolution_is_refused():
    model = nn.Sequential(nn.Conv2d(4, 8, 3, groups=2))
    with pytest.raises(InputError, match=r"layer '0': expected a dense convolution \(groups=1, dilation=1\); "
                                         r"got groups=2"):
        net_from_torch(model, torch.zeros(1, 4, 8, 8), name="grouped")


def test_importing_core_paleo_does_not_import_torch():
    code = ("import sys, core.paleo, core.figures.paleo, core.cli.paleo_cmd; "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
