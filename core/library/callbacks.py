"""Training callbacks that write the planner's log format as training goes, and add the run to the library.

The format is the course's per-step CSV with the columns the planner reads (and two that say
what ran)::

    epoch,step,loss,acc,time,lr,global_batch,device
    1,1,2.3061,0.1094,0.041,0.1,64,Intel Xeon Processor

``epoch`` and ``step`` count from 1 and ``step`` restarts every epoch; ``acc`` is what the
training loop reports (the running accuracy within the epoch, as in the course); ``time`` the
wall-clock seconds since the log was opened; ``lr`` the learning rate of the first parameter
group.  The validation log (``*_val``) has one row per evaluation, ``step`` the global step
it was taken at.  File names carry the model, the device and the global batch
(``resnet8_Intel Xeon Processor-64.csv``), which is what ``core.logs.naming`` reads back.
Rows are flushed every ``flush_every`` rows, so a run that dies leaves a readable log.

* :class:`TrainingLog`: for a plain PyTorch loop (``log.step(...)`` each step, a context manager).
* :func:`lightning_callback`: a PyTorch Lightning ``Callback`` doing the same from its hooks
  (``lightning`` is imported only when it is asked for; the planner does not need it).

When a ``Library`` is given, the finished logs are added to it (the run's train and
validation logs, with the tags and data set given); a run that ends in an exception is not.
"""

from __future__ import annotations

import csv
import re
import time
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from core.library.library import AddReport, Library

#: the columns written, in order
LOG_COLUMNS = ("epoch", "step", "loss", "acc", "time", "lr", "global_batch", "device")


def device_name(device=None) -> str:
    """A file-name-safe name of the device training runs on: the GPU's name, else the CPU's model name.

    >>> re.fullmatch(r"[A-Za-z0-9 .-]+", device_name("cpu")) is not None
    True
    """
    name = ""
    kind = getattr(device, "type", str(device) if device is not None else "cpu")
    if str(kind).startswith("cuda"):
        import torch

        name = torch.cuda.get_device_name(device)
    else:
        try:
            for line in Path("/proc/cpuinfo").read_text().splitlines():
                if line.startswith("model name"):
                    name = line.split(":", 1)[1]
                    break
        except OSError:
            import platform

            name = platform.processor()
    name = re.sub(r"\((R|TM|C)\)", "", name or "", flags=re.IGNORECASE)
    name = re.sub(r"[^A-Za-z0-9 .-]+", " ", name)
    return re.sub(r"\s+", " ", name).strip() or "CPU"


def log_path(directory: str | Path, model: str, device: str, global_batch: int, *, split: str = "train") -> Path:
    """``<directory>/<model>_<device>[_val]-<global batch>.csv``, the name the planner parses.

    >>> log_path("runs", "resnet8", "Intel Xeon Processor", 64, split="val").as_posix()
    'runs/resnet8_Intel Xeon Processor_val-64.csv'
    """
    suffix = "_val" if split == "val" else ""
    return Path(directory) / f"{model}_{device}{suffix}-{int(global_batch)}.csv"


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


class TrainingLog:
    """One log file written as training goes (a context manager: closed, and added, on exit).

    Parameters
    ----------
    path : str or Path
        The CSV to write (its folder is created); see :func:`log_path`.
    global_batch : int
        Samples per optimiser step over all workers.
    device : str, optional
        The device's name (default :func:`device_name` of the CPU).
    flush_every : int, default 50
        Rows between flushes to disk.

    Examples
    --------
    >>> import tempfile
    >>> from core.logs import read_log_file
    >>> folder = tempfile.mkdtemp()
    >>> with TrainingLog(log_path(folder, "resnet8", "CPU", 32), global_batch=32, device="CPU") as log:
    ...     for epoch in (1, 2):
    ...         for step in (1, 2, 3):
    ...             log.step(epoch=epoch, step=step, loss=1.0 / (3 * epoch + step), acc=0.5, lr=0.1)
    >>> run = read_log_file(log.path)
    >>> run.meta.model, run.meta.global_batch, run.steps_per_epoch, run.n_points
    ('resnet8', 32, 3, 6)
    """

    def __init__(self, path: str | Path, *, global_batch: int, device: str | None = None,
                 flush_every: int = 50) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.global_batch = int(global_batch)
        self.device = device or device_name()
        self.flush_every = max(1, int(flush_every))
        self._handle = open(self.path, "w", newline="", encoding="utf-8")
        self._writer = csv.writer(self._handle, lineterminator="\n")
        self._writer.writerow(LOG_COLUMNS)
        self._start = time.perf_counter()
        self.rows = 0

    def step(self, *, epoch: int, step: int, loss: float | None, acc: float | None = None,
             lr: float | None = None) -> None:
        """Write one row (``epoch`` and ``step`` from 1; ``step`` within the epoch, or the global step for
        a validation log)."""
        self._writer.writerow([int(epoch), int(step), _cell(None if loss is None else float(loss)),
                               _cell(None if acc is None else float(acc)),
                               f"{time.perf_counter() - self._start:.3f}", _cell(None if lr is None else float(lr)),
                               self.global_batch, self.device])
        self.rows += 1
        if self.rows % self.flush_every == 0:
            self._handle.flush()

    def close(self) -> None:
        if not self._handle.closed:
            self._handle.close()

    def __enter__(self) -> TrainingLog:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def add_logs_to_library(library: Library, paths: Sequence[str | Path], *, tags: Sequence[str] = (),
                        dataset: str | None = None) -> AddReport:
    """Add finished logs (the files a callback wrote, those with rows) to ``library``."""
    from core.library.sources import add_paths

    return add_paths(library, [p for p in paths if Path(p).is_file()], tags=tags, dataset=dataset)


def lightning_callback(directory: str | Path, *, model: str, global_batch: int | None = None,
                       library: Library | None = None, tags: Sequence[str] = (), dataset: str | None = None,
                       acc_key: str = "train_acc", val_keys: tuple[str, str] = ("val_loss", "val_acc")):
    """A PyTorch Lightning ``Callback`` writing the run's train and validation logs (see the module docstring).

    Parameters
    ----------
    directory : str or Path
        Where the logs go (:func:`log_path` names them).
    model : str
        The model's name (``resnet8``): the planner reads the architecture from it.
    global_batch : int, optional
        Samples per optimiser step; default: the first batch's length × devices × gradient
        accumulation.
    library : Library, optional
        Add the logs to it when ``fit`` ends normally.
    acc_key, val_keys
        The metrics (``self.log`` names) read from ``trainer.callback_metrics`` for the training
        accuracy and the validation loss and accuracy.

    Raises
    ------
    ImportError
        When neither ``lightning`` nor ``pytorch_lightning`` is installed.
    """
    return _lightning_class()(directory, model=model, global_batch=global_batch, library=library, tags=tuple(tags),
                              dataset=dataset, acc_key=acc_key, val_keys=val_keys)


def _metric(metrics, key: str) -> float | None:
    for name in (f"{key}_step", key):
        if name in metrics:
            return float(metrics[name])
    return None


@lru_cache(maxsize=1)
def _lightning_class():
    try:
        from lightning.pytorch import Callback
    except ImportError:
        try:
            from pytorch_lightning import Callback
        except ImportError:
            raise ImportError("lightning_callback needs PyTorch Lightning: pip install lightning") from None

    class PlannerLogCallback(Callback):
        """Writes the planner's train and validation logs from Lightning's hooks."""

        def __init__(self, directory, *, model, global_batch, library, tags, dataset, acc_key, val_keys):
            super().__init__()
            self.directory, self.model, self.global_batch = Path(directory), model, global_batch
            self.library, self.tags, self.dataset = library, tags, dataset
            self.acc_key, self.val_keys = acc_key, val_keys
            self.train_log = self.val_log = None
            self.report = None

        def _open(self, trainer, pl_module, batch) -> None:
            if self.global_batch is None:
                first = batch[0] if isinstance(batch, (list, tuple)) else batch
                self.global_batch = len(first) * trainer.world_size * trainer.accumulate_grad_batches
            device = device_name(pl_module.device)
            self.train_log = TrainingLog(log_path(self.directory, self.model, device, self.global_batch),
                                         global_batch=self.global_batch, device=device)
            self.val_log = TrainingLog(log_path(self.directory, self.model, device, self.global_batch, split="val"),
                                       global_batch=self.global_batch, device=device, flush_every=1)

        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
            if self.train_log is None:
                self._open(trainer, pl_module, batch)
            loss = outputs["loss"] if isinstance(outputs, dict) else outputs
            lr = trainer.optimizers[0].param_groups[0]["lr"] if trainer.optimizers else None
            self.train_log.step(epoch=trainer.current_epoch + 1, step=batch_idx + 1,
                                loss=None if loss is None else float(loss),
                                acc=_metric(trainer.callback_metrics, self.acc_key), lr=lr)

        def on_validation_epoch_end(self, trainer, pl_module):
            if self.val_log is None or trainer.sanity_checking:
                return
            loss = _metric(trainer.callback_metrics, self.val_keys[0])
            if loss is not None:
                lr = trainer.optimizers[0].param_groups[0]["lr"] if trainer.optimizers else None
                self.val_log.step(epoch=trainer.current_epoch + 1, step=max(1, trainer.global_step), loss=loss,
                                  acc=_metric(trainer.callback_metrics, self.val_keys[1]), lr=lr)

        def _close(self) -> list[Path]:
            paths = []
            for log in (self.train_log, self.val_log):
                if log is not None:
                    log.close()
                    if log.rows:
                        paths.append(log.path)
            return paths

        def on_fit_end(self, trainer, pl_module):
            paths = self._close()
            if self.library is not None and paths:
                self.report = add_logs_to_library(self.library, paths, tags=self.tags, dataset=self.dataset)

        def on_exception(self, trainer, pl_module, exception):
            self._close()   # the logs stay on disk, readable; an interrupted run is not added

    return PlannerLogCallback
