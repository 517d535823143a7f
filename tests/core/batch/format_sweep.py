"""A small batch sweep trained here on the CPU, written as course, Lightning and Pollux-layout files (issue 36, item 5).

Each run is trained **once** (a softmax regression by SGD with momentum on a seeded 10-class Gaussian mixture,
4,000 training and 1,000 validation samples, numpy only, a fraction of a second a run) and its records (per step:
epoch, step in the epoch, global step, samples seen, loss, running accuracy; per epoch: the validation loss and
accuracy of the whole validation set) are written in three layouts, so any difference between the answers on two
layouts is the reader's, not the run's:

* ``course/seed<k>/linear_CPU-<B>.csv`` (per step, ``step`` restarting each epoch) and
  ``course/seed<k>/linear_CPU_val-<B>.csv`` (the validation, one full-batch step an epoch), as the course writes them
  (``epoch, step, loss, acc, time``, CRLF line ends); the course has no learning-rate column;
* ``lightning/seed<k>/linear_CPU-<B>/version_0/metrics.csv`` with the rows Lightning's ``CSVLogger`` writes for a
  ``Trainer`` with ``LearningRateMonitor`` and ``log_every_n_steps=10`` (0-based ``epoch``, ``step`` the 0-based
  index of the batch, ``lr-SGD`` on rows of its own, ``val_loss``/``val_acc`` at each epoch's last batch; the
  layout of ``data/make_logs.py``'s ``write_lightning``, checked there against a real ``Trainer``);
* ``pollux/seed<k>/linear/validation-<B>.csv``: Pollux's trace layout ``progress,iteration,metric,lr`` one row an
  epoch (no AdaScale: ``progress`` equals ``iteration``), the batch in the file name.

The learning rate follows the linear rule with a cap, ``min(LR0 × B / 64, LR_CAP)``: batches 512 and 1,024 get the
rate of 256 (capped), so their runs are not on the tuned curve and belong out of a batch-scaling fit.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

BATCHES = (16, 32, 64, 128, 256, 512, 1024)
SEEDS = (0, 1, 2)
N_TRAIN, N_VAL, DIM, CLASSES = 4000, 1000, 16, 10
LR0, BASE_BATCH, LR_CAP, MOMENTUM = 0.001, 64, 0.004, 0.9
EPOCHS = 18
TARGET = 0.84
LOG_EVERY = 10
STEM = "linear_CPU"


def scaled_lr(batch: int) -> float:
    """``min(LR0 × batch / 64, LR_CAP)``.

    >>> [scaled_lr(b) for b in (16, 256, 512, 1024)]
    [0.00025, 0.004, 0.004, 0.004]
    """
    return min(LR0 * batch / BASE_BATCH, LR_CAP)


def _data(seed: int = 42):
    rng = np.random.default_rng(seed)
    means = rng.normal(size=(CLASSES, DIM)) * 0.95
    y = rng.integers(0, CLASSES, N_TRAIN + N_VAL)
    x = means[y] + rng.normal(size=(len(y), DIM))
    return x[:N_TRAIN], y[:N_TRAIN], x[N_TRAIN:], y[N_TRAIN:]


def _loss_acc(w, b, x, y) -> tuple[float, float, np.ndarray, np.ndarray]:
    z = x @ w + b
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    loss = float(-np.log(p[np.arange(len(y)), y] + 1e-12).mean())
    return loss, float((p.argmax(1) == y).mean()), p, z


def train(batch: int, seed: int) -> dict:
    """One run: per-step records and per-epoch validation (the last batch of an epoch kept, partial)."""
    x, y, xv, yv = _data()
    rng = np.random.default_rng(1000 + seed)
    w = rng.normal(scale=0.01, size=(DIM, CLASSES))
    b = np.zeros(CLASSES)
    vw, vb = np.zeros_like(w), np.zeros_like(b)
    lr = scaled_lr(batch)
    steps, epochs, k, samples = [], [], 0, 0
    for epoch in range(1, EPOCHS + 1):
        order = rng.permutation(N_TRAIN)
        seen = correct = 0
        for step, start in enumerate(range(0, N_TRAIN, batch), start=1):
            idx = order[start:start + batch]
            loss, acc, p, _ = _loss_acc(w, b, x[idx], y[idx])
            g = p.copy()
            g[np.arange(len(idx)), y[idx]] -= 1
            g /= len(idx)
            vw = MOMENTUM * vw + x[idx].T @ g
            vb = MOMENTUM * vb + g.sum(axis=0)
            w, b = w - lr * vw, b - lr * vb
            k += 1
            samples += len(idx)
            seen += len(idx)
            correct += round(acc * len(idx))
            steps.append((epoch, step, k, samples, loss, correct / seen))
        v_loss, v_acc, _, _ = _loss_acc(w, b, xv, yv)
        epochs.append(dict(epoch=epoch, step=k, samples=samples, loss=v_loss, acc=v_acc))
    return dict(batch=batch, seed=seed, lr=lr, steps=steps, epochs=epochs, steps_per_epoch=math.ceil(N_TRAIN / batch))


def crossing(run: dict, target: float = TARGET) -> dict | None:
    """The first epoch record whose validation accuracy (rounded as every layout writes it) is >= target."""
    return next((e for e in run["epochs"] if round(e["acc"], 4) >= target), None)


def write_course(run: dict, folder: Path) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    b = run["batch"]
    header = ["epoch", " step", " loss", " acc", " time"]
    train_path, val_path = folder / f"{STEM}-{b}.csv", folder / f"{STEM}_val-{b}.csv"
    with open(train_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        for epoch, step, k, _s, loss, acc in run["steps"]:
            w.writerow([epoch, f" {step}", f" {loss:.6f}", f" {acc:.6f}", f" {0.001 * k:.3f}"])
    with open(val_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        for e in run["epochs"]:
            w.writerow([e["epoch"], " 1", f" {e['loss']:.6f}", f" {e['acc']:.4f}", f" {0.001 * e['step']:.3f}"])
    return train_path, val_path


def write_lightning(run: dict, folder: Path) -> Path:
    """``<stem>-<B>/version_0/metrics.csv`` as ``CSVLogger`` writes a ``Trainer``'s rows (see the module docstring)."""
    path = folder / f"{STEM}-{run['batch']}" / "version_0" / "metrics.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    ends = {e["epoch"]: e for e in run["epochs"]}
    rows = []
    for epoch, step, k, _s, loss, _acc in run["steps"]:
        if step == 1:
            rows.append({"lr-SGD": run["lr"], "step": k - 1})
        if k % LOG_EVERY == 0:
            if step != 1:
                rows.append({"lr-SGD": run["lr"], "step": k - 1})
            rows.append({"train_loss": loss, "epoch": epoch - 1, "step": k - 1})
        e = ends[epoch]
        if k == e["step"]:
            rows.append({"val_loss": e["loss"], "val_acc": round(e["acc"], 4), "epoch": epoch - 1, "step": k - 1})
    columns = ["epoch", "lr-SGD", "step", "train_loss", "val_acc", "val_loss"]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return path


def write_pollux(run: dict, folder: Path) -> Path:
    path = folder / "linear" / f"validation-{run['batch']}.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["progress", "iteration", "metric", "lr"])
        for e in run["epochs"]:
            w.writerow([f"{float(e['step']):.1f}", e["step"], f"{e['acc']:.4f}", f"{run['lr']:g}"])
    return path


def write_sweep(out: Path) -> dict:
    """Train every run once and write it in the three layouts under ``out``.

    Returns ``{"runs": {(batch, seed): run}, "course": [...], "course-train": [...], "lightning": [...],
    "pollux": [...]}``, the paths of each layout in the order (batch, seed).
    """
    files: dict = {"runs": {}, "course": [], "course-train": [], "lightning": [], "pollux": []}
    for batch in BATCHES:
        for seed in SEEDS:
            run = train(batch, seed)
            files["runs"][batch, seed] = run
            train_path, val_path = write_course(run, out / "course" / f"seed{seed}")
            files["course"].append(val_path)
            files["course-train"].append(train_path)
            files["lightning"].append(write_lightning(run, out / "lightning" / f"seed{seed}"))
            files["pollux"].append(write_pollux(run, out / "pollux" / f"seed{seed}"))
    return files
