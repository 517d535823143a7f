"""Which column of a CSV log is what: the format told from the header, the role of each column (step,
epoch, loss, accuracy, validation, learning rate, ...), and the roles a caller overrides.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np

from core.errors import LogFormatError
from core.logs.runlog import ROLES, ColumnRoles

# Column-name patterns per role, most specific first (matched on lower-cased, stripped names).
_ROLE_PATTERNS: dict[str, tuple[str, ...]] = {
    "epoch": (r"epoch", r"epochs", r"epoch_idx", r"trainer/epoch"),
    "step": (r"global_step", r"trainer/global_step", r"step", r"steps", r"iteration", r"iter",
             r"_step", r"batch"),
    "loss": (r"loss", r"train_loss_step", r"train_loss", r"train/loss", r"training_loss",
             r"loss_step", r"train_loss_epoch", r".* - (train_|train/)?loss",
             r"(?!val|test).*loss(?!.*__(min|max)$).*"),
    "acc": (r"acc", r"accuracy", r"train_acc_step", r"train_acc", r"train/acc", r"train_accuracy",
            r"top1", r"acc1", r"metric", r".* - (train_|train/)?acc(uracy)?",
            r"(?!val|test).*acc(?!.*__(min|max)$).*"),
    "time": (r"time", r"time_s", r"wall time", r"wall_time", r"walltime", r"elapsed",
             r"elapsed_s", r"_runtime", r"_timestamp", r"timestamp"),
    # the learning rate (Lightning's LearningRateMonitor writes lr-SGD, lr-Adam/pg1, ...)
    "lr": (r"lr", r"learning_rate", r"learning-rate", r"learning rate", r"train/lr", r"trainer/lr",
           r"lr[-_/].*", r".* - (train/)?lr"),
}
_VAL_PATTERNS: dict[str, tuple[str, ...]] = {
    "loss": (r"val_loss", r"val/loss", r"validation_loss", r"val_loss_epoch", r"test_loss",
             r".* - val(_|/)loss", r"(val|test).*loss(?!.*__(min|max)$).*"),
    "acc": (r"val_acc", r"val/acc", r"val_accuracy", r"validation_accuracy", r"test_acc",
            r".* - val(_|/)acc(uracy)?", r"(val|test).*acc(?!.*__(min|max)$).*"),
}


# --------------------------------------------------------------------------- roles
def _match(columns: list[str], patterns: tuple[str, ...], taken: set[str]) -> str | None:
    lowered = {c: c.lower().strip() for c in columns if c not in taken}
    for pattern in patterns:
        for col, low in lowered.items():
            if re.fullmatch(pattern, low):
                return col
    return None


def detect_format(columns: list[str]) -> str:
    """Name the log format a header looks like (see the module docstring)."""
    low = [c.lower().strip() for c in columns]
    if {"progress", "iteration", "metric"} <= set(low):
        return "metric-trace"
    if "wall time" in low and "value" in low:
        return "tensorboard"
    if any(" - " in c for c in low) or any(c.startswith("_") for c in low):
        return "wandb"
    if "step" in low and "epoch" in low and any(c.startswith(("train_", "val_")) for c in low):
        return "lightning"
    if {"epoch", "step"} <= set(low):
        return "course"
    return "generic"


def looks_like_course_validation(columns: list[str], step, split: str) -> bool:
    """Whether a header that looks like Lightning's (``epoch``, ``step``, ``val_*``) is a course ``_val`` log.

    A course validation log names its columns as it likes (``val_loss``, ``val_acc``), but its ``step``
    counts validation batches (1, 2, 3, ... or 1 in every epoch of full-batch validation), never the
    training steps Lightning writes: a validation split, no ``train_`` column, and steps that start at 1
    and only go up by one or restart at 1 (Lightning's 0-based index of an epoch's last batch starts at 0,
    or above).

    >>> looks_like_course_validation(["epoch", "step", "val_loss", "val_acc"], np.array([1, 2, 3, 4.0]), "val")
    True
    >>> looks_like_course_validation(["epoch", "step", "val_loss"], np.array([10, 20, 30.0]), "val")   # Lightning
    False
    >>> looks_like_course_validation(["epoch", "step", "val_loss"], np.array([0, 1, 2.0]), "val")   # one step an epoch
    False
    """
    if split != "val" or any(c.lower().strip().startswith("train_") for c in columns):
        return False
    s = np.asarray(step, dtype=float)
    s = s[np.isfinite(s)]
    # the course numbers validation batches from 1 (Lightning's 0-based batch index starts at 0)
    return bool(len(s) > 1 and s[0] == 1 and np.all(s >= 1) and np.all((np.diff(s) == 1) | (s[1:] == 1)))


def detect_roles(columns: list[str], *, source: str = "<input>", split: str = "train") -> ColumnRoles:
    """Guess the column of each role from the header.

    ``split="val"`` prefers validation columns (``val_loss``) where a file has both.

    >>> detect_roles(["epoch", "step", "loss", "acc"])
    ColumnRoles(epoch='epoch', step='step', loss='loss', acc='acc', time=None, lr=None)
    >>> detect_roles(["epoch", "step", "train_loss", "lr-SGD"]).lr
    'lr-SGD'
    >>> detect_roles(["Wall time", "Step", "Value"], source="run-tag-train_loss.csv").loss
    'Value'
    """
    fmt = detect_format(columns)
    taken: set[str] = set()
    found: dict[str, str | None] = {}
    for role in ("epoch", "step", "time", "lr"):
        found[role] = _match(columns, _ROLE_PATTERNS[role], taken)
        if found[role]:
            taken.add(found[role])
    if fmt == "tensorboard":
        value = next(c for c in columns if c.lower().strip() == "value")
        is_acc = re.search(r"acc|top1|metric", source.lower()) is not None
        found["loss"], found["acc"] = (None, value) if is_acc else (value, None)
        return ColumnRoles(**found)
    if fmt == "metric-trace":
        metric = next(c for c in columns if c.lower().strip() == "metric")
        step = next(c for c in columns if c.lower().strip() == "iteration")
        lr = found["lr"] if found["lr"] not in (None, step) else None
        time = found["time"] if found["time"] not in (None, step) else None
        return ColumnRoles(epoch=None, step=step, loss=None, acc=metric, time=time, lr=lr)
    for role in ("loss", "acc"):
        patterns = _VAL_PATTERNS[role] + _ROLE_PATTERNS[role] if split == "val" else _ROLE_PATTERNS[role]
        found[role] = _match(columns, patterns, taken)
        if found[role]:
            taken.add(found[role])
    return ColumnRoles(**found)


def apply_overrides(auto: ColumnRoles, overrides: Mapping[str, str | None] | None,
                     columns: list[str], source: str) -> ColumnRoles:
    if not overrides:
        return auto
    values = auto.to_dict()
    for role, col in overrides.items():
        if role not in ROLES:
            raise LogFormatError(source, f"expected a column role among {', '.join(ROLES)}; got {role!r}.")
        if col is not None and col not in columns:
            raise LogFormatError(source, f"expected a column named {col!r} for {role}; the columns "
                                 f"are {', '.join(columns)}.")
        values[role] = col
    return ColumnRoles(**values)
