"""Train a built-in MNIST-1D ResNet on the CPU and log it for the planner as it trains.

The training loop is plain PyTorch; ``core.library.TrainingLog`` writes the planner's log
format every step (``epoch, step, loss, acc, time, lr, global_batch, device``) and a
validation row after every epoch, in files named ``<model>_<device>[_val]-<batch>.csv``.  With
``--library`` the finished run (train and validation logs) is added to the run library, where
the dashboard's Library page and ``python -m core library list`` find it::

    pip install -r data/requirements.txt        # mnist1d: the data set, built locally (no download)
    python examples/train_mnist1d.py --depth 8 --epochs 5 --out runs --library
    python -m core library list --model resnet8

The model is ``core.models.ResNet1d`` and the data MNIST-1D as ``data/make_logs.py`` makes them
(the built-in logs in ``data/logs`` came from that script with the same defaults).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

# Run as ``python examples/train_mnist1d.py``: put the repository root on the path for ``core``.
_REPO_ROOT = str(Path(__file__).resolve().parents[1])
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch.nn import functional as F  # noqa: E402

from core.library import Library, TrainingLog, add_logs_to_library, device_name, log_path  # noqa: E402
from core.models import ResNet1d  # noqa: E402


def load_mnist1d(num_samples: int, seed: int) -> dict[str, np.ndarray]:
    """MNIST-1D built from the ``mnist1d`` package's templates (never downloaded)."""
    from mnist1d.data import get_dataset_args, make_dataset

    args = get_dataset_args()
    args.num_samples = num_samples
    args.seed = seed
    return make_dataset(args)


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--depth", type=int, default=8, help="6n+2: 8, 14, 20, 32, 44, 56 (default 8)")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch", type=int, default=64, help="global batch (default 64)")
    p.add_argument("--lr", type=float, default=0.0005)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--num-samples", type=int, default=5000, help="MNIST-1D samples (80 %% train, 20 %% test)")
    p.add_argument("--max-batches", type=int, default=0, help="stop each epoch after this many steps (0: all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--data-seed", type=int, default=42)
    p.add_argument("--out", default="runs", help="folder for the logs (default runs/)")
    p.add_argument("--library", nargs="?", const="", default=None, metavar="DB",
                   help="add the finished run to the library (DB, else $TTA_LIBRARY_DB or the user data folder)")
    p.add_argument("--tag", action="append", default=[], help="tags of the run in the library")
    return p.parse_args(argv)


def evaluate(model, x: torch.Tensor, y: torch.Tensor, batch: int) -> tuple[float, float]:
    """Mean loss and accuracy over a data set."""
    model.eval()
    total = correct = 0.0
    with torch.no_grad():
        for start in range(0, len(y), batch):
            logits = model(x[start:start + batch])
            total += float(F.cross_entropy(logits, y[start:start + batch], reduction="sum"))
            correct += int((logits.argmax(1) == y[start:start + batch]).sum())
    model.train()
    return total / len(y), correct / len(y)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    torch.set_num_threads(1)           # small convolutions: one thread is the fastest on a CPU
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    data = load_mnist1d(args.num_samples, args.data_seed)
    x, y = torch.tensor(data["x"], dtype=torch.float32), torch.tensor(data["y"], dtype=torch.long)
    x_val, y_val = torch.tensor(data["x_test"], dtype=torch.float32), torch.tensor(data["y_test"], dtype=torch.long)
    model = ResNet1d(args.depth)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    name, device = f"resnet{args.depth}", device_name("cpu")
    train_path = log_path(args.out, name, device, args.batch)
    val_path = log_path(args.out, name, device, args.batch, split="val")
    steps_done = 0
    with TrainingLog(train_path, global_batch=args.batch, device=device) as train_log, \
            TrainingLog(val_path, global_batch=args.batch, device=device, flush_every=1) as val_log:
        for epoch in range(1, args.epochs + 1):
            order = torch.from_numpy(rng.permutation(len(y)))
            seen = correct = 0
            for step, start in enumerate(range(0, len(y), args.batch), start=1):
                idx = order[start:start + args.batch]
                logits = model(x[idx])
                loss = F.cross_entropy(logits, y[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
                seen += len(idx)
                correct += int((logits.argmax(1) == y[idx]).sum())
                train_log.step(epoch=epoch, step=step, loss=loss.item(), acc=correct / seen,
                               lr=opt.param_groups[0]["lr"])
                steps_done += 1
                if args.max_batches and step >= args.max_batches:
                    break
            val_loss, val_acc = evaluate(model, x_val, y_val, args.batch)
            val_log.step(epoch=epoch, step=steps_done, loss=val_loss, acc=val_acc, lr=opt.param_groups[0]["lr"])
            print(f"epoch {epoch}: train acc {correct / seen:.3f}, val loss {val_loss:.4f}, val acc {val_acc:.3f}",
                  flush=True)
    print(f"logs: {train_path}, {val_path}")
    if args.library is not None:
        report = add_logs_to_library(Library(args.library or None), [train_path, val_path], tags=args.tag,
                                     dataset="mnist1d")
        for result in report.results:
            print(result.message)
        for _source, message in report.errors:
            print(message, file=sys.stderr)
        return 2 if report.errors else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
