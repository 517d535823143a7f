"""ResNets: the 1-D ones of the built-in logs, He et al.'s CIFAR ones, torchvision's wide ones."""

from __future__ import annotations

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
