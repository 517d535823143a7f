"""Reproduce the built-in training logs in ``data/logs/``.

Trains CIFAR-style residual networks adapted to 1-D input (depth 6n+2: 8, 14, 20, 32, 44,
56) on MNIST-1D, generated locally by the ``mnist1d`` package from its built-in templates
(``make_dataset(get_dataset_args())``; no download), on the CPU, and writes one per-step
log per run in the course format::

    epoch, step, loss, acc, time
    1, 1, 2.3061, 0.1094, 0.041

``epoch`` and ``step`` count from 1, ``step`` restarts every epoch, ``loss`` is the
mini-batch cross-entropy, ``acc`` the running training accuracy within the epoch and
``time`` the wall-clock seconds since training started.  A second file ``*_val.csv`` holds
the validation pass after every epoch in the same format (``acc`` running over the
validation set).  Files are named ``<model>_<device name>[_val].csv`` like the course's.

Usage (about 5 minutes on two cores)::

    pip install -r data/requirements.txt
    python data/make_logs.py --out data/logs --jobs 2

Everything is seeded; the numbers of a rerun differ only by the wall-clock column and by
floating-point differences between machines.
"""

from __future__ import annotations

import argparse
import csv
import multiprocessing as mp
import platform
import re
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

DEPTHS = (8, 14, 20, 32, 44, 56)


# --------------------------------------------------------------------------- model
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


# --------------------------------------------------------------------------- data
def load_mnist1d(num_samples: int, seed: int) -> dict[str, np.ndarray]:
    """MNIST-1D built locally from the package's templates (never downloaded)."""
    from mnist1d.data import get_dataset_args, make_dataset

    args = get_dataset_args()
    args.num_samples = num_samples
    args.seed = seed
    return make_dataset(args)


def device_name() -> str:
    """A file-name-safe name of the CPU this runs on, e.g. ``Intel Xeon Processor``."""
    name = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1]
                break
    except OSError:
        pass
    name = re.sub(r"\((R|TM|C)\)", "", name, flags=re.I)
    name = re.sub(r"[^A-Za-z0-9 .-]+", " ", name)
    return re.sub(r"\s+", " ", name).strip() or "CPU"


# --------------------------------------------------------------------------- training
def train_one(depth: int, cfg: dict) -> str:
    torch.set_num_threads(1)
    torch.manual_seed(cfg["seed"] + depth)
    rng = np.random.default_rng(cfg["seed"] + depth)
    data = load_mnist1d(cfg["num_samples"], cfg["data_seed"])
    x = torch.tensor(data["x"], dtype=torch.float32)
    y = torch.tensor(data["y"], dtype=torch.long)
    x_val = torch.tensor(data["x_test"], dtype=torch.float32)
    y_val = torch.tensor(data["y_test"], dtype=torch.long)

    model = ResNet1d(depth)
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=cfg["momentum"],
                          weight_decay=cfg["weight_decay"])
    out = Path(cfg["out"])
    stem = f"resnet{depth}_{cfg['device']}"
    batch = cfg["batch"]
    t0 = time.perf_counter()
    with open(out / f"{stem}.csv", "w", newline="") as ftrain, \
            open(out / f"{stem}_val.csv", "w", newline="") as fval:
        wtrain, wval = csv.writer(ftrain), csv.writer(fval)
        header = ["epoch", " step", " loss", " acc", " time"]
        wtrain.writerow(header)
        wval.writerow(header)
        for epoch in range(1, cfg["epochs"] + 1):
            model.train()
            order = torch.from_numpy(rng.permutation(len(y)))
            seen = correct = 0
            for step, start in enumerate(range(0, len(y), batch), start=1):
                idx = order[start:start + batch]
                logits = model(x[idx])
                loss = F.cross_entropy(logits, y[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
                seen += len(idx)
                correct += int((logits.argmax(1) == y[idx]).sum())
                wtrain.writerow([epoch, f" {step}", f" {loss.item():.6f}", f" {correct / seen:.6f}",
                                 f" {time.perf_counter() - t0:.3f}"])
            model.eval()
            seen = correct = 0
            with torch.no_grad():
                for step, start in enumerate(range(0, len(y_val), batch), start=1):
                    logits = model(x_val[start:start + batch])
                    target = y_val[start:start + batch]
                    loss = F.cross_entropy(logits, target)
                    seen += len(target)
                    correct += int((logits.argmax(1) == target).sum())
                    wval.writerow([epoch, f" {step}", f" {loss.item():.6f}",
                                   f" {correct / seen:.6f}", f" {time.perf_counter() - t0:.3f}"])
    return f"{stem}: {time.perf_counter() - t0:.0f} s"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=str(Path(__file__).resolve().parent / "logs"))
    p.add_argument("--depths", default=",".join(map(str, DEPTHS)))
    p.add_argument("--epochs", type=int, default=24)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.0005)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--num-samples", type=int, default=5000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--data-seed", type=int, default=42)
    p.add_argument("--device", default=None, help="device name for the file names")
    p.add_argument("--jobs", type=int, default=2)
    a = p.parse_args()
    Path(a.out).mkdir(parents=True, exist_ok=True)
    cfg = dict(out=a.out, epochs=a.epochs, batch=a.batch, lr=a.lr, momentum=a.momentum,
               weight_decay=a.weight_decay, num_samples=a.num_samples, seed=a.seed,
               data_seed=a.data_seed, device=a.device or device_name())
    depths = [int(d) for d in a.depths.split(",")]
    # deepest first, so the two workers finish at about the same time
    depths.sort(reverse=True)
    with mp.get_context("spawn").Pool(a.jobs) as pool:
        for line in pool.starmap(train_one, [(d, cfg) for d in depths]):
            print(line, flush=True)


if __name__ == "__main__":
    main()
