"""Synthetic training logs whose epoch at target is known by hand (shared by the prediction tests)."""

from __future__ import annotations

import math

import numpy as np

from core.datasets import batch_run_files, course_fits_path
from core.logs.reader import RunLog, read_log, read_log_file

#: error 1 − acc of the synthetic runs: 0.8·exp(−e/5) + 0.02 (the exp3 family, s = 5 epochs)
ERR_A, ERR_S, ERR_B = 0.8, 5.0, 0.02
#: 0.08 = 0.8·exp(−e/5) + 0.02  ⇒  e* = 5·ln(0.8/0.06) = 12.95, so epoch 13 is the first above 0.92
TARGET, ACTUAL_EPOCH = 0.92, 13


def epoch_error(e, *, scale: float = 1.0) -> np.ndarray:
    """Error of epoch ``e`` (``scale`` stretches the time axis: a slower or faster run)."""
    return ERR_A * np.exp(-np.asarray(e, dtype=float) / (ERR_S * scale)) + ERR_B


def course_csv(*, epochs: int = 24, steps_per_epoch: int = 10, scale: float = 1.0, noise: float = 0.0,
               seed: int = 0, poison_after: int | None = None) -> bytes:
    """A course-format log ``epoch, step, loss, acc``: the running accuracy of every step of an
    epoch equals the epoch's accuracy; the loss follows ``1/(0.002·k + 0.5) + 0.05``.

    ``poison_after``: every epoch after it gets absurd but valid values (loss 50, accuracy
    0.999), the way a test shows the unseen part does not leak into a prediction.
    """
    rng = np.random.default_rng(seed)
    rows = ["epoch, step, loss, acc"]
    for e in range(1, epochs + 1):
        err = float(epoch_error(e, scale=scale))
        acc = min(max(1.0 - err + (rng.normal(0, noise) if noise else 0.0), 0.0), 1.0)
        for s in range(1, steps_per_epoch + 1):
            k = (e - 1) * steps_per_epoch + s
            loss = 1.0 / (0.002 * k / scale + 0.5) + 0.05
            if poison_after is not None and e > poison_after:
                loss, a = 50.0, 0.999
            else:
                a = acc
            rows.append(f"{e}, {s}, {loss:.6f}, {a:.6f}")
    return ("\n".join(rows) + "\n").encode()


def course_log(name: str = "resnet20_Tesla V100.csv", **kwargs) -> RunLog:
    return read_log(course_csv(**kwargs), name)


def actual_epoch(scale: float = 1.0, target: float = TARGET) -> int:
    """First whole epoch whose accuracy exceeds ``target`` for a run of time scale ``scale``."""
    e_star = ERR_S * scale * math.log(ERR_A / (1 - target - ERR_B))
    return math.floor(e_star) + 1


def pollux_logs(job: str) -> list[RunLog]:
    """The built-in Pollux validation traces of ``job`` (one run per global batch)."""
    files = sorted((course_fits_path().parent / "pollux_traces" / job).glob("validation-*.csv"))
    return [read_log_file(p, source=f"{job}/{p.name}") for p in files]


def mlperf_logs() -> list[RunLog]:
    """The built-in MLPerf v3.0 ResNet-50 runs (26 files, data/mlperf_v3.0_resnet50)."""
    return [read_log_file(p, source=n) for n, p in batch_run_files("mlperf")]
