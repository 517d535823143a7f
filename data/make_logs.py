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
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch.nn import functional as F

# Run as ``python data/make_logs.py``: put the repository root on the path for ``core``.
_REPO_ROOT = str(Path(__file__).resolve().parents[1])
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)

from core.models import ResNet1d  # noqa: E402  (the 1-D ResNets live in core.models)

DEPTHS = (8, 14, 20, 32, 44, 56)


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
    dev = torch.device(cfg["torch_device"])
    x = torch.tensor(data["x"], dtype=torch.float32, device=dev)
    y = torch.tensor(data["y"], dtype=torch.long, device=dev)
    x_val = torch.tensor(data["x_test"], dtype=torch.float32, device=dev)
    y_val = torch.tensor(data["y_test"], dtype=torch.long, device=dev)

    model = ResNet1d(depth).to(dev)
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
            order = torch.from_numpy(rng.permutation(len(y))).to(dev)
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
    p.add_argument("--torch-device", default="cpu",
                   help="torch device to train on (cpu, cuda); with cuda, name the GPU with --device")
    a = p.parse_args()
    Path(a.out).mkdir(parents=True, exist_ok=True)
    cfg = dict(out=a.out, epochs=a.epochs, batch=a.batch, lr=a.lr, momentum=a.momentum,
               weight_decay=a.weight_decay, num_samples=a.num_samples, seed=a.seed,
               data_seed=a.data_seed, torch_device=a.torch_device,
               device=a.device or (torch.cuda.get_device_name(0) if a.torch_device.startswith("cuda")
                                   else device_name()))
    depths = [int(d) for d in a.depths.split(",")]
    # deepest first, so the two workers finish at about the same time
    depths.sort(reverse=True)
    with mp.get_context("spawn").Pool(a.jobs) as pool:
        for line in pool.starmap(train_one, [(d, cfg) for d in depths]):
            print(line, flush=True)


if __name__ == "__main__":
    main()
