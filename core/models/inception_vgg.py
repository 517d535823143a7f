"""VGG-16 and Inception v3, layer for layer as torchvision builds them."""

from __future__ import annotations

import torch
from torch import nn

# --------------------------------------------------------------------------- VGG-16
VGG16_CFG = (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M",
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
