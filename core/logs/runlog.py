"""The tidy shape every log reader produces: ``RunLog`` and its ``ColumnRoles`` (a leaf module).

Readers (``core.logs.csvlog``, ``core.logs.mllog``, ``core.logs.speedrun``,
``core.logs.hf_trainer``) import this module; it imports none of them, so there is no import
cycle between the readers and the registry that picks one (``core.logs.reader``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import pandas as pd

from core.errors import InputError
from core.logs.naming import RunMeta, gpu_short_name
from core.tables import MAX_BYTES
from core.targets import ACCURACY_METRIC, LOSS_METRIC, Target

#: largest log accepted, the same as ``server.maxUploadSize`` in ``.streamlit/config.toml``
MAX_LOG_BYTES = MAX_BYTES
ROLES = ("epoch", "step", "loss", "acc", "time", "lr")
#: the columns every ``RunLog.frame`` has, in order
FRAME_COLUMNS = ("global_step", "epoch", "loss", "acc", "time_s", "lr")
#: progress columns a frame may add: cumulative samples and tokens seen at that row
PROGRESS_COLUMNS = ("samples", "tokens")
#: other names of the two roles (``metric_series("accuracy")`` is the ``acc`` column)
_ALIASES = {"accuracy": ACCURACY_METRIC, "acc": ACCURACY_METRIC, "loss": LOSS_METRIC}


@dataclass(frozen=True)
class ColumnRoles:
    """Which column of the file plays which role (``None``: not present)."""

    epoch: str | None = None
    step: str | None = None
    loss: str | None = None
    acc: str | None = None
    time: str | None = None
    lr: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        return asdict(self)


def steps_are_validation_batches(fmt: str, split: str | None) -> bool:
    """Whether a log's steps number validation batches: a course ``_val`` log's do (never training steps,
    so never samples either).

    >>> steps_are_validation_batches("course", "val"), steps_are_validation_batches("lightning", "val")
    (True, False)
    """
    return fmt == "course" and split == "val"


def holds_value(column: pd.Series) -> bool:
    """Whether ``column`` holds a value anywhere: ``column.notna().any()``, read on the float array (not all NaN)
    where the column is float, which costs a small fraction of pandas' own (a bulk load makes thousands of logs).

    >>> holds_value(pd.Series([float("nan"), 1.0])), holds_value(pd.Series([float("nan")])), holds_value(pd.Series([]))
    (True, False, False)
    >>> holds_value(pd.array([None, 2], dtype="Int64")), holds_value(pd.Series([None, None], dtype=object))
    (True, False)
    """
    values = column.to_numpy() if isinstance(column, pd.Series) else np.asarray(column)
    if values.dtype.kind == "f":
        return not bool(np.isnan(values).all())
    return bool(pd.notna(column).any())


@dataclass(frozen=True, eq=False)
class RunLog:
    """One training run, read and validated.

    Attributes
    ----------
    source : str
        The file name, used in every message about this run.
    frame : pandas.DataFrame
        One row per logged step (or per epoch for epoch-level traces), sorted by
        ``global_step``, with columns ``global_step`` (float, the optimiser step k of the
        loss model), ``epoch`` (1-based, ``<NA>`` when unknown), ``loss``, ``acc``
        (fraction in [0, 1], NaN where absent), ``time_s`` and ``lr`` (NaN where absent),
        whatever the format.  Optional columns: ``samples`` and ``tokens`` (cumulative samples
        and tokens seen at that row, where the log says them), and one float column per extra
        metric the log carries (``train_loss``, ``eval_loss``, ...), named as the log names it.
    fmt : str
        Detected format: ``course``, ``lightning``, ``tensorboard``, ``wandb``,
        ``metric-trace``, ``epoch-trace`` or ``generic`` (CSV); ``mllog``, ``speedrun``,
        ``hf-trainer``, ``tfevents`` for the other readers.
    roles : ColumnRoles
        The columns used, after detection and any user override.
    meta : RunMeta
        Model, depth, device and split (parsed from the file name, editable).
    steps_per_epoch : int or None
        Optimiser steps per epoch (inferred, or given), ``None`` when unknown.
    granularity : str
        ``"step"`` for per-step logs, ``"epoch"`` for one row per epoch.
    flags : tuple of str
        Short sentences about what was repaired or assumed while reading.
    columns : tuple of str
        The file's own column (or event) names.
    metrics : mapping
        Metric names as the log calls them → the frame column holding them: always
        ``{"loss": "loss"}`` with a loss and ``{"acc": "acc"}`` with an accuracy, plus the
        log's own names (an MLPerf LLM log: ``{"eval_accuracy": "loss"}``).
    target : Target or None
        The target the log itself declares (origin ``"log"``), e.g. MLLOG's ``target_accuracy``
        with its benchmark's direction, or a NanoGPT speedrun's ``val_loss<=3.28``.
    steps : pandas.DataFrame or None
        Per-step figures beside an evaluation curve (MLLOG ``tracked_stats`` and ``train_loss``
        events: ``samples``, ``step``, ``train_loss``, ``step_time_s``, ``throughput``, ``lr``).
    """

    source: str
    frame: pd.DataFrame
    fmt: str
    roles: ColumnRoles
    meta: RunMeta
    steps_per_epoch: int | None
    granularity: str
    flags: tuple[str, ...] = field(default=())
    columns: tuple[str, ...] = field(default=())
    metrics: Mapping[str, str] = field(default_factory=dict)
    target: Target | None = None
    steps: pd.DataFrame | None = None

    def __post_init__(self) -> None:
        names = {str(k): str(v) for k, v in dict(self.metrics or {}).items()}
        # (a role already named keeps its column, so its values are read only when it is not: a stored log's are)
        if LOSS_METRIC not in names and "loss" in self.frame and holds_value(self.frame["loss"]):
            names[LOSS_METRIC] = "loss"
        if ACCURACY_METRIC not in names and "acc" in self.frame and holds_value(self.frame["acc"]):
            names[ACCURACY_METRIC] = "acc"
        missing = sorted(c for c in names.values() if c not in self.frame)
        if missing:
            raise ValueError(f"{self.source}: metrics name frame columns {missing} that the frame lacks")
        object.__setattr__(self, "metrics", names)

    def metric_series(self, name: str) -> pd.Series:
        """The values of metric ``name`` (``acc``/``accuracy``, ``loss``, or a name the log uses).

        >>> nan = float("nan")
        >>> log = RunLog("r.csv", pd.DataFrame({"global_step": [1.0], "epoch": [1], "loss": [2.0], "acc": [nan],
        ...     "time_s": [nan], "lr": [nan], "val_loss": [2.5]}), "generic", ColumnRoles(),
        ...     RunMeta(None, None, None, "train"), None, "step", metrics={"val_loss": "val_loss"})
        >>> log.metric_series("val_loss").tolist(), sorted(log.metrics)
        ([2.5], ['loss', 'val_loss'])
        >>> log.metric_series("bleu")
        Traceback (most recent call last):
        ...
        core.errors.InputError: r.csv: expected a metric the log has (loss, val_loss); got 'bleu'. ...
        """
        key = name.strip() if isinstance(name, str) else name
        column = self.metrics.get(key)
        if column is None and key in _ALIASES and _ALIASES[key] in self.metrics:
            column = self.metrics[_ALIASES[key]]
        if column is None:
            have = ", ".join(sorted(self.metrics)) or "none"
            raise InputError(f"{self.source}: expected a metric the log has ({have}); got {name!r}. "
                             "Name one of them in the target.")
        return self.frame[column].astype(float)

    @property
    def n_points(self) -> int:
        return int(len(self.frame))

    @property
    def counts_validation_batches(self) -> bool:
        """Whether the steps number validation batches, not optimiser steps (:func:`steps_are_validation_batches`)."""
        return steps_are_validation_batches(self.fmt, self.meta.split)

    @property
    def has_loss(self) -> bool:
        return holds_value(self.frame["loss"])

    @property
    def has_acc(self) -> bool:
        return holds_value(self.frame["acc"])

    @property
    def label(self) -> str:
        """Short name for legends: ``resnet20 · V100 · val``, or the file name."""
        meta = self.meta
        if not meta.model:
            return self.source
        parts = [meta.model]
        if meta.gpu:
            parts.append(gpu_short_name(meta.gpu) or meta.gpu)
        if meta.global_batch:
            parts.append(f"batch {meta.global_batch}")
        if meta.split != "train":
            parts.append(meta.split)
        return " · ".join(parts)

    def fingerprint(self) -> str:
        """A short hash of the tidy frame and the metadata (a cache key for pages).

        >>> from core.logs.reader import read_log
        >>> a = read_log(b"step,loss\\n1,2.0\\n2,1.0\\n3,0.5\\n", "a.csv")
        >>> a.fingerprint() == read_log(b"step,loss\\n1,2.0\\n2,1.0\\n3,0.5\\n", "a.csv").fingerprint()
        True
        """
        cached = self.__dict__.get("_fingerprint")   # frozen: the content never changes after reading
        if cached is None:
            h = hashlib.blake2b(digest_size=12)
            h.update(pd.util.hash_pandas_object(self.frame, index=False).to_numpy().tobytes())
            h.update(repr((self.source, self.meta, self.steps_per_epoch, self.granularity,
                           sorted(self.metrics.items()), self.target)).encode())
            if self.steps is not None:
                h.update(pd.util.hash_pandas_object(self.steps, index=False).to_numpy().tobytes())
            cached = self.__dict__["_fingerprint"] = h.hexdigest()
        return cached

    def with_meta(self, **changes) -> "RunLog":
        """A copy with edited metadata (``model``, ``depth``, ``gpu``, ``split``)."""
        return replace(self, meta=replace(self.meta, **changes))
