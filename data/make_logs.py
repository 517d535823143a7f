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

With ``--formats`` (and ``--batch-sizes``) each run is trained once, for ``--max-epochs`` epochs,
and written in every format the project reads, one folder per format (``--lr-cap`` caps the scaled
learning rate: ``lr = min(lr × batch / base batch, cap)``)::

    python data/make_logs.py --out tests/data/sweep --depths 14 --batch-sizes 16,32,64,128,256 \
        --lr 0.002 --base-batch 64 --lr-cap 0.003 --max-epochs 16 --stop-acc 0.92 \
        --formats course,course-fullval,lightning,pollux,mllog,hf-trainer,tensorboard --device CPU --jobs 2

``course/``: ``<model>_<device>-<batch>.csv`` per step and ``<model>_<device>_val-<batch>.csv``, the
validation in batch-sized chunks; ``course-fullval/``: the same validation as one full-batch step per
epoch (``step`` 1 in every epoch); ``lightning/<model>_<device>-<batch>/version_0/metrics.csv``, written
by Lightning's own ``CSVLogger`` with the rows a ``Trainer`` writes (``log_every_n_steps`` 10, 0-based
``epoch``, ``step`` the 0-based index of the batch, ``lr-SGD`` rows of ``LearningRateMonitor`` on rows of
their own); ``pollux/<model>/validation-<batch>.csv``, Pollux's layout (``progress,iteration,metric``
per epoch, ``progress`` equal to ``iteration``: no AdaScale) with an ``lr`` column; ``mllog/`` as above but
evaluated once per epoch, stopped at ``--stop-acc`` as MLPerf stops, ``tracked_stats`` with the learning
rate; ``hf-trainer/<model>_<device>-<batch>/trainer_state.json``, written by ``transformers.TrainerState``
(``logging_steps`` 10, evaluation each epoch); ``tensorboard/<model>_<device>-<batch>/``, event files
written by ``torch.utils.tensorboard.SummaryWriter`` (``train/loss`` and ``lr`` every 10 steps,
``val/loss`` and ``val/acc`` each epoch).

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
    lr = scaled_lr(cfg["lr"], batch, cfg["base_batch"], cfg.get("lr_cap"))   # the linear rule (capped)
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


# --------------------------------------------------------------------------- one run, every format
#: how often the per-step formats that log every n steps (Lightning, Hugging Face, TensorBoard) log the loss
LOG_EVERY = 10


def scaled_lr(lr: float, batch: int, base_batch: int, cap: float | None) -> float:
    """The linear rule, capped: ``min(lr × batch / base_batch, cap)``.

    >>> scaled_lr(0.002, 16, 64, 0.003), scaled_lr(0.002, 256, 64, 0.003), scaled_lr(0.002, 256, 64, None)
    (0.0005, 0.003, 0.008)
    """
    rate = lr * batch / base_batch
    return min(rate, cap) if cap else rate


def train_record(depth: int, batch: int, cfg: dict) -> dict:
    """Train one run for ``cfg["max_epochs"]`` epochs and record every step and every epoch's validation.

    Steps: ``(epoch, step in epoch, global step, loss, running acc, seconds, samples so far)``.
    Epochs: the validation after each, in batch-sized chunks (``(step, loss, running acc)`` per chunk)
    and as one full batch (``loss, acc``), with the seconds at its end.  The model is in eval mode
    for validation, so both passes give the same predictions: the same accuracy.
    """
    torch.set_num_threads(1)
    rng, dev, x, y, x_val, y_val = _seeded_data(depth, cfg)
    model = ResNet1d(depth).to(dev)
    lr = scaled_lr(cfg["lr"], batch, cfg["base_batch"], cfg["lr_cap"])
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=cfg["momentum"], weight_decay=cfg["weight_decay"])
    n, steps, epochs, k, samples = len(y), [], [], 0, 0
    t0 = time.perf_counter()
    for epoch in range(1, cfg["max_epochs"] + 1):
        model.train()
        order = torch.from_numpy(rng.permutation(n)).to(dev)
        seen = correct = 0
        for step, start in enumerate(range(0, n, batch), start=1):
            idx = order[start:start + batch]
            logits = model(x[idx])
            loss = F.cross_entropy(logits, y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            k += 1
            samples += len(idx)
            seen += len(idx)
            correct += int((logits.argmax(1) == y[idx]).sum())
            steps.append((epoch, step, k, loss.item(), correct / seen, time.perf_counter() - t0, samples))
        model.eval()
        chunks, seen, correct = [], 0, 0
        with torch.no_grad():
            for step, start in enumerate(range(0, len(y_val), batch), start=1):
                logits = model(x_val[start:start + batch])
                target = y_val[start:start + batch]
                seen += len(target)
                correct += int((logits.argmax(1) == target).sum())
                chunks.append((step, F.cross_entropy(logits, target).item(), correct / seen))
            logits = model(x_val)
            full_loss = F.cross_entropy(logits, y_val).item()
            full_acc = int((logits.argmax(1) == y_val).sum()) / len(y_val)
        epochs.append(dict(epoch=epoch, step=k, samples=samples, chunks=chunks, loss=full_loss, acc=full_acc,
                           time=time.perf_counter() - t0))
    return dict(depth=depth, batch=batch, lr=lr, n=n, n_val=len(y_val), steps=steps, epochs=epochs,
                steps_per_epoch=-(-n // batch), seconds=time.perf_counter() - t0)


def _stem(run: dict, cfg: dict) -> str:
    return f"resnet{run['depth']}_{cfg['device']}"


def write_course(run: dict, cfg: dict, out: Path) -> None:
    """``<stem>-<batch>.csv`` per step and ``<stem>_val-<batch>.csv``, the validation in batch-sized chunks."""
    out.mkdir(parents=True, exist_ok=True)
    stem, b = _stem(run, cfg), run["batch"]
    header = ["epoch", " step", " loss", " acc", " time"]
    with open(out / f"{stem}-{b}.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        for epoch, step, _k, loss, acc, t, _s in run["steps"]:
            w.writerow([epoch, f" {step}", f" {loss:.6f}", f" {acc:.6f}", f" {t:.3f}"])
    with open(out / f"{stem}_val-{b}.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        for e in run["epochs"]:
            for step, loss, acc in e["chunks"]:
                w.writerow([e["epoch"], f" {step}", f" {loss:.6f}", f" {acc:.6f}", f" {e['time']:.3f}"])


def write_course_fullval(run: dict, cfg: dict, out: Path) -> None:
    """``<stem>_val-<batch>.csv`` with the validation as one full-batch step per epoch (``step`` 1 each epoch)."""
    out.mkdir(parents=True, exist_ok=True)
    with open(out / f"{_stem(run, cfg)}_val-{run['batch']}.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["epoch", " step", " loss", " acc", " time"])
        for e in run["epochs"]:
            w.writerow([e["epoch"], " 1", f" {e['loss']:.6f}", f" {e['acc']:.6f}", f" {e['time']:.3f}"])


def write_lightning(run: dict, cfg: dict, out: Path) -> None:
    """``metrics.csv`` by Lightning's ``CSVLogger``, with the rows and step numbers a ``Trainer`` logs.

    Checked against a real ``Trainer`` (Lightning 2.6, ``LearningRateMonitor``, ``log_every_n_steps``):
    ``lr-SGD`` on rows of its own at each epoch's start and before each logged batch, ``train_loss``
    with the 0-based ``epoch`` every ``LOG_EVERY`` optimiser steps, ``val_loss``/``val_acc`` at the
    epoch's end; ``step`` is the number of optimiser steps done before the batch (its 0-based index).
    """
    from lightning.pytorch.loggers import CSVLogger

    logger = CSVLogger(str(out), name=f"{_stem(run, cfg)}-{run['batch']}", version=0)
    by_epoch = {e["epoch"]: e for e in run["epochs"]}
    lr = run["lr"]
    for epoch, step, k, loss, _acc, _t, _s in run["steps"]:
        if step == 1:
            logger.log_metrics({"lr-SGD": lr}, step=k - 1)
        if k % LOG_EVERY == 0:
            if step != 1:
                logger.log_metrics({"lr-SGD": lr}, step=k - 1)
            logger.log_metrics({"train_loss": loss, "epoch": epoch - 1}, step=k - 1)
        e = by_epoch[epoch]
        if k == e["step"]:
            logger.log_metrics({"val_loss": e["loss"], "val_acc": e["acc"], "epoch": epoch - 1}, step=k - 1)
    logger.save()


def write_pollux(run: dict, cfg: dict, out: Path) -> None:
    """``<model>/validation-<batch>.csv`` in Pollux's layout: ``progress,iteration,metric`` per epoch, no AdaScale.

    Without AdaScale the statistical progress is the optimiser steps themselves (``progress`` =
    ``iteration``); ``metric`` is the validation accuracy (a fraction, as Pollux's CIFAR-10 traces);
    ``lr`` the learning rate (Pollux's traces have ``grad_sqr, grad_var`` instead: not measured here).
    """
    folder = out / f"resnet{run['depth']}"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"validation-{run['batch']}.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["progress", "iteration", "metric", "lr"])
        for e in run["epochs"]:
            w.writerow([f"{float(e['step']):.1f}", e["step"], f"{e['acc']:.4f}", f"{run['lr']:g}"])


def write_mllog(run: dict, cfg: dict, out: Path) -> None:
    """``<stem>-<batch>.txt``: MLLOG, ``eval_accuracy`` once an epoch until ``--stop-acc`` (then ``run_stop``)."""
    out.mkdir(parents=True, exist_ok=True)
    wall0 = cfg["wall0"]
    depth, b = run["depth"], run["batch"]
    with open(out / f"{_stem(run, cfg)}-{b}.txt", "w") as f:
        for key, value in (("submission_benchmark", f"resnet{depth}"),
                           ("submission_org", "time-to-accuracy-planner data/make_logs.py"),
                           ("submission_platform", cfg["device"]), ("seed", cfg["seed"] + depth),
                           ("global_batch_size", b), ("opt_name", "sgd"), ("opt_base_learning_rate", run["lr"]),
                           ("opt_momentum", cfg["momentum"]), ("opt_weight_decay", cfg["weight_decay"]),
                           ("train_samples", run["n"]), ("eval_samples", run["n_val"])):
            _mllog_at(f, key, value, wall0)
        _mllog_at(f, "run_start", None, wall0)
        status, last = "aborted", 0.0
        for e in run["epochs"]:
            seconds = e["time"] - last
            last = e["time"]
            _mllog_at(f, "tracked_stats", {"throughput": round(run["n"] / seconds, 1)}, wall0 + e["time"],
                      epoch_num=e["epoch"], samples_count=e["samples"], lr=run["lr"])
            _mllog_at(f, "eval_accuracy", round(e["acc"], 4), wall0 + e["time"], epoch_num=e["epoch"],
                      samples_count=e["samples"])
            if e["acc"] >= cfg["stop_acc"]:
                status = "success"
                break
        _mllog_at(f, "run_stop", None, wall0 + last, status=status)


def _mllog_at(out, key: str, value, t: float, **metadata) -> None:
    event = {"namespace": "", "time_ms": int(round(t * 1000)), "event_type": "POINT_IN_TIME", "key": key,
             "value": value, "metadata": metadata}
    out.write(":::MLLOG " + json.dumps(event) + "\n")


def write_hf_trainer(run: dict, cfg: dict, out: Path) -> None:
    """``<stem>-<batch>/trainer_state.json`` by ``transformers.TrainerState``: loss every ``LOG_EVERY`` steps,
    evaluation each epoch.

    As the Trainer logs them: ``loss`` the mean over the logging interval, ``epoch`` the fraction of
    epochs done, the evaluation at the epoch's last step.
    """
    from transformers import TrainerState

    spe, history, window = run["steps_per_epoch"], [], []
    by_step = {e["step"]: e for e in run["epochs"]}
    for _epoch, _step, k, loss, _acc, _t, _s in run["steps"]:
        window.append(loss)
        if k % LOG_EVERY == 0:
            history.append({"epoch": round(k / spe, 4), "grad_norm": None, "learning_rate": run["lr"],
                            "loss": round(float(np.mean(window)), 4), "step": k})
            window = []
        if k in by_step:
            e = by_step[k]
            history.append({"epoch": float(e["epoch"]), "eval_accuracy": e["acc"], "eval_loss": e["loss"],
                            "eval_runtime": None, "step": k})
    for h in history:
        for key in [key for key, v in h.items() if v is None]:
            del h[key]
    epochs = len(run["epochs"])
    state = TrainerState(epoch=float(epochs), global_step=spe * epochs, max_steps=spe * epochs,
                         logging_steps=LOG_EVERY, eval_steps=spe, save_steps=spe * epochs,
                         train_batch_size=run["batch"], num_train_epochs=epochs, log_history=history)
    folder = out / f"{_stem(run, cfg)}-{run['batch']}"
    folder.mkdir(parents=True, exist_ok=True)
    state.save_to_json(str(folder / "trainer_state.json"))


def write_tensorboard(run: dict, cfg: dict, out: Path) -> None:
    """``<stem>-<batch>/events.out.tfevents.*`` by ``SummaryWriter``: ``train/loss``, ``lr``, ``epoch`` every
    ``LOG_EVERY`` steps, ``val/loss`` and ``val/acc`` each epoch, at the global step and the run's wall clock."""
    from torch.utils.tensorboard import SummaryWriter

    folder = out / f"{_stem(run, cfg)}-{run['batch']}"
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("events.out.tfevents.*"):
        old.unlink()
    wall0 = cfg["wall0"]
    writer = SummaryWriter(str(folder))
    by_step = {e["step"]: e for e in run["epochs"]}
    for epoch, _step, k, loss, _acc, t, _s in run["steps"]:
        if k % LOG_EVERY == 0:
            writer.add_scalar("train/loss", loss, k, walltime=wall0 + t)
            writer.add_scalar("lr", run["lr"], k, walltime=wall0 + t)
            writer.add_scalar("epoch", epoch, k, walltime=wall0 + t)
        if k in by_step:
            e = by_step[k]
            writer.add_scalar("val/loss", e["loss"], k, walltime=wall0 + e["time"])
            writer.add_scalar("val/acc", e["acc"], k, walltime=wall0 + e["time"])
    writer.close()
    for i, path in enumerate(sorted(folder.glob("events.out.tfevents.*"))):   # no host name in the file name
        path.rename(folder / f"events.out.tfevents.0.sweep.{i}")


#: ``--formats`` names → writer (each writes its own folder under ``--out``)
FORMAT_WRITERS = {"course": write_course, "course-fullval": write_course_fullval, "lightning": write_lightning,
                  "pollux": write_pollux, "mllog": write_mllog, "hf-trainer": write_hf_trainer,
                  "tensorboard": write_tensorboard}


def train_formats(depth: int, batch: int, cfg: dict) -> str:
    """One run of ``depth`` at ``batch``, written in every format of ``cfg["formats"]``."""
    run = train_record(depth, batch, cfg)
    for name in cfg["formats"]:
        FORMAT_WRITERS[name](run, cfg, Path(cfg["out"]) / name)
    best = max(e["acc"] for e in run["epochs"])
    return f"resnet{depth} batch {batch} lr {run['lr']:g}: best val acc {best:.4f}, {run['seconds']:.0f} s"


def run_formats(a: argparse.Namespace, device: str) -> None:
    """The formats mode: every depth at every batch, each run written in every format."""
    formats = [f.strip() for f in a.formats.split(",") if f.strip()]
    unknown = sorted(set(formats) - set(FORMAT_WRITERS))
    if unknown:
        raise SystemExit(f"--formats: expected names among {', '.join(FORMAT_WRITERS)}; got {', '.join(unknown)}")
    if not a.batch_sizes:
        raise SystemExit("--formats: expected --batch-sizes (the batches to train at)")
    cfg = dict(out=a.out, lr=a.lr, base_batch=a.base_batch, lr_cap=a.lr_cap, momentum=a.momentum,
               weight_decay=a.weight_decay, num_samples=a.num_samples, seed=a.seed, data_seed=a.data_seed,
               stop_acc=a.stop_acc, max_epochs=a.max_epochs, torch_device=a.torch_device, device=device,
               formats=formats, wall0=float(a.wall0))
    jobs = [(d, b) for d in (int(d) for d in a.depths.split(",")) for b in (int(b) for b in a.batch_sizes.split(","))]
    jobs.sort(key=lambda db: (-db[0], db[1]))      # the longest runs (deep, small batch) first
    with mp.get_context("spawn").Pool(a.jobs) as pool:
        for line in pool.starmap(train_formats, [(d, b, cfg) for d, b in jobs]):
            print(line, flush=True)


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
    p.add_argument("--lr-cap", type=float, default=None,
                   help="cap the scaled learning rate: lr = min(lr x batch / base batch, cap)")
    p.add_argument("--formats", default=None,
                   help=f"with --batch-sizes: train each run once for --max-epochs and write it in these formats "
                        f"({','.join(FORMAT_WRITERS)})")
    p.add_argument("--wall0", type=float, default=1.7e9,
                   help="--formats: the Unix time the runs' clocks start at (time_ms, TensorBoard wall time)")
    a = p.parse_args()
    Path(a.out).mkdir(parents=True, exist_ok=True)
    if a.formats:
        run_formats(a, a.device or (torch.cuda.get_device_name(0) if a.torch_device.startswith("cuda")
                                    else device_name()))
        return
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
    cfg = dict(out=a.out, depth=depths[0], lr=a.lr, base_batch=a.base_batch, lr_cap=a.lr_cap, momentum=a.momentum,
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
