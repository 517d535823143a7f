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

With ``--batch-sizes`` it trains one depth at several global batches instead, each with
its learning rate by the linear rule (``lr × batch / base batch``, Goyal et al. 2017), and
writes one MLCommons MLLOG log per batch (``eval_accuracy`` on the validation set
``--evals-per-epoch`` times an epoch, with ``epoch_num`` and ``samples_count``;
``tracked_stats`` throughput per epoch; ``run_stop`` status ``success`` once the validation
accuracy has reached ``--stop-acc``, ``aborted`` if ``--max-epochs`` pass first)::

    python data/make_logs.py --out data/batch_logs --depths 14 --batch-sizes 16,32,64,128,256,512,1024 \
        --lr 0.002 --base-batch 64 --jobs 2

Everything is seeded; the numbers of a rerun differ only by the wall-clock column and by
floating-point differences between machines.
"""

from __future__ import annotations

import argparse
import csv
import json
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
def _seeded_data(depth: int, cfg: dict):
    """Seed torch and numpy for a run of ``depth`` (in that order) and put MNIST-1D on the device:
    ``(rng, device, x, y, x_val, y_val)``."""
    torch.manual_seed(cfg["seed"] + depth)
    rng = np.random.default_rng(cfg["seed"] + depth)
    data = load_mnist1d(cfg["num_samples"], cfg["data_seed"])
    dev = torch.device(cfg["torch_device"])
    x = torch.tensor(data["x"], dtype=torch.float32, device=dev)
    y = torch.tensor(data["y"], dtype=torch.long, device=dev)
    x_val = torch.tensor(data["x_test"], dtype=torch.float32, device=dev)
    y_val = torch.tensor(data["y_test"], dtype=torch.long, device=dev)
    return rng, dev, x, y, x_val, y_val


def train_one(depth: int, cfg: dict) -> str:
    torch.set_num_threads(1)
    rng, dev, x, y, x_val, y_val = _seeded_data(depth, cfg)

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


# --------------------------------------------------------------------------- batch sizes (MLLOG)
def _mllog(out, key: str, value, t0: float, **metadata) -> None:
    event = {"namespace": "", "time_ms": int(round((t0 + time.perf_counter()) * 1000)),
             "event_type": "POINT_IN_TIME", "key": key, "value": value, "metadata": metadata}
    out.write(":::MLLOG " + json.dumps(event) + "\n")


def _accuracy(model, x: torch.Tensor, y: torch.Tensor) -> float:
    model.eval()
    with torch.no_grad():
        correct = int((model(x).argmax(1) == y).sum())
    model.train()
    return correct / len(y)


def train_batch(batch: int, cfg: dict) -> str:
    """One run of ``cfg["depth"]`` at global batch ``batch``, logged as MLLOG."""
    torch.set_num_threads(1)
    depth = cfg["depth"]
    rng, dev, x, y, x_val, y_val = _seeded_data(depth, cfg)
    model = ResNet1d(depth).to(dev)
    lr = cfg["lr"] * batch / cfg["base_batch"]          # the linear scaling rule
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=cfg["momentum"], weight_decay=cfg["weight_decay"])
    n = len(y)
    eval_every = n / cfg["evals_per_epoch"]
    name = f"resnet{depth}_{cfg['device']}-{batch}.txt"
    wall0 = time.time() - time.perf_counter()           # time_ms: Unix milliseconds, as MLPerf logs them
    status, samples, next_eval, stop = "aborted", 0, eval_every, False
    with open(Path(cfg["out"]) / name, "w") as out:
        for key, value in (("submission_benchmark", f"resnet{depth}"),
                           ("submission_org", "time-to-accuracy-planner data/make_logs.py"),
                           ("submission_platform", cfg["device"]), ("seed", cfg["seed"] + depth),
                           ("global_batch_size", batch), ("opt_name", "sgd"), ("opt_base_learning_rate", lr),
                           ("opt_momentum", cfg["momentum"]), ("opt_weight_decay", cfg["weight_decay"]),
                           ("train_samples", n), ("eval_samples", len(y_val))):
            _mllog(out, key, value, wall0)
        _mllog(out, "run_start", None, wall0)
        t_start = time.perf_counter()
        for epoch in range(1, cfg["max_epochs"] + 1):
            order = torch.from_numpy(rng.permutation(n)).to(dev)
            t_epoch, before = time.perf_counter(), samples
            for start in range(0, n, batch):
                idx = order[start:start + batch]
                loss = F.cross_entropy(model(x[idx]), y[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
                samples += len(idx)
                if samples >= next_eval - 1e-9:
                    next_eval += eval_every
                    acc = _accuracy(model, x_val, y_val)
                    _mllog(out, "eval_accuracy", round(acc, 4), wall0, epoch_num=round(samples / n, 4),
                           samples_count=samples)
                    if acc >= cfg["stop_acc"]:
                        status, stop = "success", True
                        break
            throughput = (samples - before) / (time.perf_counter() - t_epoch)
            _mllog(out, "tracked_stats", {"throughput": round(throughput, 1)}, wall0, epoch_num=epoch)
            if stop:
                break
        _mllog(out, "run_stop", None, wall0, status=status)
    return f"{name}: {status} after {samples / n:.2f} epochs, {time.perf_counter() - t_start:.0f} s"


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
    p.add_argument("--batch-sizes", default=None,
                   help="train the (single) --depths at these global batches, MLLOG logs (see above)")
    p.add_argument("--base-batch", type=int, default=64, help="the batch --lr is for (linear rule)")
    p.add_argument("--evals-per-epoch", type=int, default=4)
    p.add_argument("--stop-acc", type=float, default=0.95)
    p.add_argument("--max-epochs", type=int, default=40)
    a = p.parse_args()
    Path(a.out).mkdir(parents=True, exist_ok=True)
    if a.batch_sizes:
        run_batch_sizes(a)
        return
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


def run_batch_sizes(a: argparse.Namespace) -> None:
    """The batch-size mode: one depth, several global batches, one MLLOG log each (CPU)."""
    depths = [int(d) for d in a.depths.split(",")]
    if len(depths) != 1:
        raise SystemExit("--batch-sizes trains one depth: give --depths with a single value, e.g. 14")
    cfg = dict(out=a.out, depth=depths[0], lr=a.lr, base_batch=a.base_batch, momentum=a.momentum,
               weight_decay=a.weight_decay, num_samples=a.num_samples, seed=a.seed, data_seed=a.data_seed,
               evals_per_epoch=a.evals_per_epoch, stop_acc=a.stop_acc, max_epochs=a.max_epochs,
               torch_device=a.torch_device,
               device=a.device or (torch.cuda.get_device_name(0) if a.torch_device.startswith("cuda")
                                   else device_name()))
    batches = sorted((int(b) for b in a.batch_sizes.split(",")), reverse=True)  # longest runs first
    with mp.get_context("spawn").Pool(a.jobs) as pool:
        for line in pool.starmap(train_batch, [(b, cfg) for b in batches]):
            print(line, flush=True)


if __name__ == "__main__":
    main()
