"""Read training-log CSVs of several formats into one tidy shape, ``RunLog``.

Accepted formats (detected from the header, roles overridable):

* the course's per-step logs ``epoch, step, loss, acc`` (spaces after commas; ``step``
  restarts every epoch; ``acc`` is the running training accuracy within the epoch);
* PyTorch Lightning ``CSVLogger`` ``metrics.csv`` (sparse rows, global ``step``, 0-based
  ``epoch``, ``train_loss``/``train_loss_step``/``val_loss`` ... columns);
* TensorBoard scalar exports ``Wall time, Step, Value`` and Weights & Biases exports
  ``Step, <run> - <metric>`` (one metric per file, min/max columns ignored);
* per-epoch metric traces such as Pollux's ``progress, iteration, metric, ...`` (format
  ``metric-trace``: AdaptDL's statistical epochs; ``epoch-trace`` when ``progress`` equals
  ``iteration`` on every row, a run without AdaScale whose epochs are real passes).

Every error is a :class:`core.errors.LogFormatError` whose message starts with the file name.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import pandas as pd

from core.errors import LogFormatError
from core.logs.naming import parse_run_name
from core.logs.runlog import MAX_LOG_BYTES, ROLES, ColumnRoles, RunLog
from core.tables import (
    MAX_BAD_ROW_SHARE,
    as_utf8,
    decode_head,
    head_text,
    read_csv_columns,
    separator,
)
from core.targets import accuracy_in_percent

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


# --------------------------------------------------------------------------- bytes → table
def _read_table(data: bytes, text: str, source: str, flags: list[str]) -> dict[str, np.ndarray]:
    """Parse the CSV into ``{column name: values}`` (names stripped, duplicates numbered).

    pyarrow's reader only, in bounded work: a row with more fields than the header stops the
    parse at that row (the message names it and both counts), rows with fewer fields are
    skipped with a flag (a log cut off while being written ends in one).
    """
    start = head_text(text)[:1]
    if start in {"{", "["}:
        raise LogFormatError(source, "expected a CSV with a header row; got JSON. Export the "
                             "metrics as CSV (TensorBoard and W&B both offer 'Download CSV').")
    if start == "<":
        raise LogFormatError(source, "expected a CSV with a header row; got HTML or XML.")
    names, arrays, short = read_csv_columns(data, source, sep=separator(text))
    columns = [str(c).strip() for c in names]
    seen: dict[str, int] = {}
    for i, c in enumerate(columns):  # duplicated names become name.1, name.2 (as pandas does)
        if c in seen:
            seen[c] += 1
            columns[i] = f"{c}.{seen[c]}"
        else:
            seen[c] = 0
    if len(columns) < 2:
        raise LogFormatError(source, "expected a CSV with at least a step and a loss column; got "
                             f"one column {columns[0]!r}. Is it comma-separated?")
    n = len(arrays[0])
    if short:
        if len(short) > MAX_BAD_ROW_SHARE * (n + len(short)):
            raise LogFormatError(source, f"expected {len(columns)} fields per row as in the header; "
                                 f"{len(short):,} row(s) have fewer (first: line {short[0]}). Check the separator.")
        flags.append(f"skipped {len(short)} row(s) with fewer fields than the header (first: line {short[0]})")
    if n == 0:
        raise LogFormatError(source, "the file has a header but no data rows.")
    return dict(zip(columns, arrays))


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


def _apply_overrides(auto: ColumnRoles, overrides: Mapping[str, str | None] | None,
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


# --------------------------------------------------------------------------- values
def _numeric(table: dict[str, np.ndarray], col: str | None, n: int) -> tuple[np.ndarray, int]:
    """The column as float64 and the number of cells holding text that is not a number."""
    if col is None:
        return np.full(n, np.nan), 0
    raw = table[col]
    if raw.dtype.kind in "iuf":
        return raw.astype(float, copy=False), 0  # already numbers: nothing is text
    series = pd.Series(raw, dtype=object)
    values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)
    bad_text = int((np.isnan(values) & series.notna().to_numpy()).sum())
    return values, bad_text


def _first_bad(values: np.ndarray, mask: np.ndarray) -> str:
    i = int(np.flatnonzero(mask)[0])
    return f"{float(values[i]):g} at data row {i + 1}"


def _validate_values(source: str, roles: ColumnRoles, cols: dict[str, np.ndarray],
                     text_counts: dict[str, int], flags: list[str], *, sparse: bool) -> np.ndarray:
    """Check the numbers; return the mask of rows to keep."""
    n = len(cols["loss"])
    for role in ("epoch", "step", "loss"):
        name = getattr(roles, role)
        if name is None:
            continue
        v = cols[role]
        if text_counts[role] == n or np.isnan(v).all():
            raise LogFormatError(source, f"expected numbers in column {name!r} ({role}); it holds "
                                 "no numeric value. Check the column roles.")
        neg = v < 0
        if neg.any():
            raise LogFormatError(source, f"expected {role} >= 0 in column {name!r}; found "
                                 f"{int(neg.sum())} negative values (first: {_first_bad(v, neg)}). "
                                 + ("A loss below 0 cannot be fitted by 1/(b0·k+b1)+b2; is this "
                                    "column a log-likelihood?" if role == "loss" else ""))
    metric = cols["loss"] if roles.loss is not None else cols["acc"]
    metric_name = roles.loss if roles.loss is not None else roles.acc
    keep = np.isfinite(metric)
    if roles.step is not None:
        keep &= np.isfinite(cols["step"])
    if roles.epoch is not None:
        keep &= np.isfinite(cols["epoch"])
    inf_count = int(np.isinf(metric).sum())
    text = text_counts["loss" if roles.loss is not None else "acc"] + text_counts["step"]
    dropped = n - int(keep.sum())
    rest = dropped - inf_count - text
    if keep.sum() == 0:
        raise LogFormatError(source, f"expected finite values in column {metric_name!r}; every row "
                             "is NaN, inf or empty.")
    bad = inf_count + text + (0 if sparse else rest)
    if bad > MAX_BAD_ROW_SHARE * n:
        raise LogFormatError(source, f"expected mostly finite numbers; {bad} of {n} rows hold NaN, "
                             f"inf, text or nothing in {metric_name!r} or the step column.")
    if dropped and not (sparse and rest == dropped):
        parts = []
        if inf_count:
            parts.append(f"{inf_count} inf")
        if text:
            parts.append(f"{text} non-numeric")
        if rest:
            parts.append(f"{rest} empty/NaN")
        flags.append(f"skipped {dropped} of {n} rows without a usable value ({', '.join(parts)})")
    return keep


def _normalise_acc(acc: np.ndarray, source: str, column: str | None, flags: list[str]) -> np.ndarray:
    finite = acc[np.isfinite(acc)]
    if finite.size == 0:
        return acc
    lo, hi = float(finite.min()), float(finite.max())
    if lo < 0 or hi > 100:
        raise LogFormatError(source, f"expected accuracy in [0, 1] (or percent in [0, 100]) in "
                             f"column {column!r}; got values from {lo:g} to {hi:g}. Is it the "
                             "accuracy column?")
    if accuracy_in_percent(finite):
        flags.append("accuracy given in percent; divided by 100")
        return acc / 100.0
    return acc


# --------------------------------------------------------------------------- steps and epochs
def infer_steps_per_epoch(epoch: np.ndarray, step: np.ndarray) -> int | None:
    """Steps per epoch of a log that counts ``step`` within each epoch or globally.

    Uses the most common epoch length over all epochs but the last, so a partial last
    epoch (or a partial first one) does not change the answer.

    >>> e = np.repeat([1, 2, 3], [4, 4, 2]); s = np.array([1, 2, 3, 4, 1, 2, 3, 4, 1, 2])
    >>> infer_steps_per_epoch(e, s)
    4
    """
    epoch = np.asarray(epoch, dtype=float)
    step = np.asarray(step, dtype=float)
    ok = np.isfinite(epoch) & np.isfinite(step)
    epoch, step = epoch[ok], step[ok]
    if epoch.size == 0:
        return None
    if np.all(epoch[1:] >= epoch[:-1]):  # the usual case: epochs in order
        e_sorted, s_sorted = epoch, step
    else:
        order = np.argsort(epoch, kind="stable")
        e_sorted, s_sorted = epoch[order], step[order]
    starts = np.flatnonzero(np.concatenate([[True], np.diff(e_sorted) != 0]))
    s_min = np.minimum.reduceat(s_sorted, starts)
    s_max = np.maximum.reduceat(s_sorted, starts)
    if _counts_within_epoch(step, epoch):
        base = 0 if s_min.min() == 0 else 1
        lengths = s_max - base + 1
    else:  # global step: distance between the first steps of consecutive epochs
        if s_min.size < 2:
            return int(np.diff(np.concatenate([starts, [e_sorted.size]]))[0])
        lengths = np.diff(s_min)
        lengths = lengths[lengths > 0]
        if lengths.size == 0:
            return None
        return _consistent_length(e_sorted, s_sorted, _mode(lengths))
    candidates = lengths[:-1] if lengths.size > 1 else lengths
    return _mode(candidates)


def _consistent_length(epoch: np.ndarray, step: np.ndarray, guess: int) -> int:
    """``guess``, or where a row lies outside its epoch by it, the smallest length every row fits.

    A global step ``k`` in 1-based epoch ``e`` of ``L`` steps lies in ``((e − 1)·L, e·L]``.  A log that keeps
    every n-th step (TensorBoard, Lightning's ``log_every_n_steps``) has first steps that are not its epochs'
    first, so their spacing can be wrong (60 or 70 for 63-step epochs logged every 10 steps): the smallest
    ``L >= max(k / e)`` is taken when every row fits it.

    >>> k = np.arange(10, 640, 10.0); e = np.ceil(k / 63)      # 63-step epochs, every 10th step logged
    >>> _consistent_length(e, k, 60), _consistent_length(e, k, 63)
    (63, 63)
    """
    e0 = 0 if np.nanmin(epoch) == 0 else 1
    ep = epoch - e0 + 1
    fits = lambda n: bool(np.all((step > (ep - 1) * n) & (step <= ep * n)))  # noqa: E731
    if guess > 0 and fits(guess):
        return guess
    low = int(np.ceil(np.max(step / ep) - 1e-9))
    return low if low > 0 and fits(low) else guess


def _mode(values: np.ndarray) -> int:
    """The most common value (the largest one on ties)."""
    uniq, counts = np.unique(values.astype(np.int64), return_counts=True)
    return int(uniq[counts == counts.max()].max())


def _counts_within_epoch(step: np.ndarray, epoch: np.ndarray) -> bool:
    """True when ``step`` restarts at epoch boundaries (course format)."""
    if step.size < 2:
        return False
    boundary = np.diff(epoch) != 0
    if not boundary.any():
        return False
    # a step that does not grow across an epoch boundary restarts there (one row per epoch logs step 1 in each)
    drops = np.diff(step)[boundary] <= 0
    return bool(drops.mean() > 0.5)


def _global_steps(table_cols: dict[str, np.ndarray], roles: ColumnRoles, source: str,
                  steps_per_epoch: int | None, flags: list[str], fmt: str,
                  every_row: tuple[np.ndarray, np.ndarray] | None = None
                  ) -> tuple[np.ndarray, np.ndarray, int | None, str]:
    """(global step k, 1-based epoch or NaN, steps per epoch, granularity).

    ``every_row``: ``(epoch, step)`` of all the file's rows, the kept ones and the others (a sparse log's);
    the steps per epoch and Lightning's 0-based index are read from them.
    """
    epoch, step = table_cols["epoch"], table_cols["step"]
    has_epoch, has_step = roles.epoch is not None, roles.step is not None
    if not has_step and not has_epoch:
        n = len(epoch)
        flags.append("no step or epoch column: rows numbered 1, 2, ... as steps")
        step, has_step = np.arange(1, n + 1, dtype=float), True
    if has_epoch and not has_step:
        e0 = 0 if np.nanmin(epoch) == 0 else 1
        ep = epoch - e0 + 1
        spe = steps_per_epoch
        if spe is None:
            flags.append("one row per epoch and no step column: steps per epoch unknown, k counts epochs")
            return ep.astype(float), ep, None, "epoch"
        return ep * spe, ep, spe, "epoch"
    if not has_epoch:
        spe = steps_per_epoch
        if fmt == "metric-trace" and _looks_per_epoch(step):
            # metric trace: one row per epoch, step = optimiser steps so far
            ep = np.arange(1, len(step) + 1, dtype=float)
            if spe is None:
                diffs = np.diff(np.concatenate([[0.0], step]))
                spe = int(round(float(np.median(diffs)))) if diffs.size else None
            return step.astype(float), ep, spe, "epoch"
        if spe is None:
            flags.append("no epoch column: epochs unknown until steps per epoch is set")
            return step.astype(float), np.full(len(step), np.nan), None, "step"
        return step.astype(float), np.ceil(np.maximum(step, 1) / spe), spe, "step"
    # both epoch and step
    e0 = 0 if np.nanmin(epoch) == 0 else 1
    ep = epoch - e0 + 1
    all_epoch, all_step = every_row if every_row is not None else (epoch, step)
    all_ep = all_epoch - e0 + 1
    inferred = infer_steps_per_epoch(epoch, step)
    if fmt == "lightning" and every_row is not None:
        # the Trainer logs validation at each epoch's last step: the spacing of the epochs' last steps
        inferred = _last_step_spacing(all_ep, all_step) or inferred
    spe = steps_per_epoch or inferred
    if steps_per_epoch and inferred and steps_per_epoch != inferred:
        flags.append(f"steps per epoch set to {steps_per_epoch} (the log suggests {inferred})")
    if _counts_within_epoch(step, epoch):
        s0 = 0 if np.nanmin(step) == 0 else 1
        if spe is None:
            raise LogFormatError(source, "could not infer steps per epoch; give it explicitly.")
        k = (ep - 1) * spe + (step - s0 + 1)
    else:
        k = step.astype(float)
        if fmt == "lightning" and _zero_based_batch_index(all_ep, all_step, spe):
            k = k + 1.0
            flags.append("Lightning logs the 0-based index of the last batch: steps done = step + 1")
    return k, ep, spe, "step"


def _last_step_spacing(ep: np.ndarray, step: np.ndarray) -> int | None:
    """The most common distance between the last logged steps of consecutive whole epochs (None: < 3 epochs).

    >>> _last_step_spacing(np.array([1, 1, 1, 2, 2, 2, 3, 3.]), np.array([9, 19, 24, 29, 39, 49, 59, 60.]))
    25
    """
    ok = np.isfinite(ep) & np.isfinite(step)
    epochs = np.unique(ep[ok])
    if epochs.size < 3:
        return None
    last = np.array([step[ok][ep[ok] == e].max() for e in epochs[:-1]])
    gaps = np.diff(last)
    return _mode(gaps) if gaps.size and (gaps > 0).all() else None


def _zero_based_batch_index(ep: np.ndarray, step: np.ndarray, spe: int | None) -> bool:
    """True when every complete epoch's last logged step is ``epoch × spe − 1`` (Lightning's 0-based batch index).

    >>> _zero_based_batch_index(np.array([1, 1, 2, 2, 3.]), np.array([4, 9, 14, 19, 24.]), 10)
    True
    >>> _zero_based_batch_index(np.array([1, 1, 2, 2, 3.]), np.array([5, 10, 15, 20, 25.]), 10)
    False
    """
    if not spe:
        return False
    ok = np.isfinite(ep) & np.isfinite(step)
    epochs = np.unique(ep[ok])
    if epochs.size < 2:
        return False
    last = np.array([step[ok][ep[ok] == e].max() for e in epochs[:-1]])
    return bool(np.all((last + 1) == epochs[:-1] * spe))


def _progress_is_iteration(table: dict[str, np.ndarray], columns: list[str], n_rows: int) -> bool:
    """Whether a Pollux-layout trace's ``progress`` equals its ``iteration`` on every row (no AdaScale gain)."""
    names = {c.lower().strip(): c for c in columns}
    progress, _ = _numeric(table, names.get("progress"), n_rows)
    iteration, _ = _numeric(table, names.get("iteration"), n_rows)
    both = np.isfinite(progress) & np.isfinite(iteration)
    return bool(both.any()) and bool(np.all(progress[both] == iteration[both]))


def _carry_forward(values: np.ndarray, step: np.ndarray) -> np.ndarray:
    """Each row's value, or the last one logged at or before its step (rows of a sparse log, in step order).

    >>> _carry_forward(np.array([0.1, np.nan, np.nan, 0.05, np.nan]), np.array([0, 4, 4, 9, 9.]))
    array([0.1 , 0.1 , 0.1 , 0.05, 0.05])
    """
    order = np.argsort(step, kind="stable")
    filled = pd.Series(values[order]).ffill().to_numpy(dtype=float)
    out = np.empty_like(filled)
    out[order] = filled
    return out


def _looks_per_epoch(step: np.ndarray) -> bool:
    d = np.diff(step)
    return step.size >= 2 and bool((d > 0).all()) and float(np.median(d)) > 1


def _resolve_restarts(frame: pd.DataFrame, flags: list[str]) -> pd.DataFrame:
    """Keep, for every global step logged more than once, its last occurrence in the file."""
    k = frame["global_step"].to_numpy()
    steps = np.diff(k)
    if (steps > 0).all():  # the usual case: strictly increasing, nothing to resolve
        return frame
    back = np.flatnonzero(steps < 0)
    dup = frame["global_step"].duplicated(keep="last")
    if back.size:
        i = int(back[0])
        flags.append(f"restarted steps: the log goes back from step {k[i]:g} to {k[i + 1]:g} at data "
                     f"row {i + 2}; the later rows were kept for {int(dup.sum())} repeated steps")
    elif dup.any():
        flags.append(f"duplicated steps: {int(dup.sum())} rows repeat an earlier step; the last "
                     "occurrence was kept")
    if dup.any():
        frame = frame.loc[~dup.to_numpy()]
    if back.size or dup.any():
        frame = frame.sort_values("global_step", kind="stable")
    return frame.reset_index(drop=True)


def _partial_epoch_flag(epoch: np.ndarray, spe: int | None, granularity: str, flags: list[str],
                        step: np.ndarray | None = None) -> None:
    """Flag a last epoch of fewer than 90 % of the steps: the steps it got to (its last global step less the
    epochs before), not its rows (a log that keeps every n-th step, or only validation rows, has fewer)."""
    if spe is None or granularity != "step" or not np.isfinite(epoch).any():
        return
    last_epoch = np.nanmax(epoch)
    last = int(np.count_nonzero(epoch == last_epoch))
    if step is not None:
        last = max(last, int(np.nanmax(step[epoch == last_epoch]) - (last_epoch - 1) * spe))
    if np.nanmin(epoch) < last_epoch and last < 0.9 * spe:
        flags.append(f"partial last epoch ({last} of {spe} steps)")


# --------------------------------------------------------------------------- public
def read_csv_log(data: bytes, source: str, *, roles: Mapping[str, str | None] | None = None,
             steps_per_epoch: int | None = None, split: str | None = None,
             max_bytes: int = MAX_LOG_BYTES) -> RunLog:
    """Read one training-log CSV from its bytes (``core.logs.reader.read_log`` picks the reader).

    Parameters
    ----------
    data : bytes
        The file's content (never executed or unpickled; read as UTF-8 CSV text).
    source : str
        The file name: used for metadata (``<model>_<GPU>[_val].csv``) and in every message.
    roles : mapping, optional
        Column for each role to use instead of the detected one (``{"loss": "val_loss"}``);
        ``None`` for a role removes it.
    steps_per_epoch : int, optional
        Overrides the inferred number of steps per epoch.
    split : {"train", "val"}, optional
        Overrides the split parsed from the file name (also chooses ``val_*`` columns).
    max_bytes : int, default MAX_LOG_BYTES
        Larger files are refused.

    Returns
    -------
    RunLog

    Raises
    ------
    LogFormatError
        For anything that is not a usable log: empty, binary, not UTF-8, not CSV, no loss
        (or accuracy-trace) column, non-numeric or negative values, too large.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data must be bytes, not {type(data).__name__}")
    if steps_per_epoch is not None and (not isinstance(steps_per_epoch, (int, np.integer))
                                        or steps_per_epoch < 1):
        raise LogFormatError(source, f"expected steps per epoch to be an integer >= 1; got {steps_per_epoch!r}.")
    data = as_utf8(bytes(data), source, max_bytes)
    text = decode_head(data, source)
    flags: list[str] = []
    table = _read_table(data, text, source, flags)
    columns = list(table)
    meta = parse_run_name(source)
    if split is not None:
        meta = replace(meta, split=split)
    fmt = detect_format(columns)
    found = _apply_overrides(detect_roles(columns, source=source, split=meta.split), roles, columns, source)
    if found.loss is None and not (found.acc is not None and (fmt in {"metric-trace", "tensorboard", "wandb"}
                                                              or (roles and "loss" in roles))):
        raise LogFormatError(source, f"expected a loss column (loss, train_loss, Value, ...); got "
                             f"{', '.join(columns)}. Name the loss column under 'Column roles'.")
    cols: dict[str, np.ndarray] = {}
    text_counts: dict[str, int] = {}
    n_rows = len(next(iter(table.values())))
    for role in ROLES:
        cols[role], text_counts[role] = _numeric(table, getattr(found, role), n_rows)
    sparse = fmt in {"lightning", "wandb"}
    keep = _validate_values(source, found, cols, text_counts, flags, sparse=sparse)
    if sparse and found.lr is not None and found.step is not None and not np.isfinite(cols["lr"][keep]).all():
        # Lightning's LearningRateMonitor logs the rate on rows of its own: each kept row gets the last rate
        # logged at or before its step
        cols["lr"] = _carry_forward(cols["lr"], cols["step"])
    # every row with an epoch and a step (a sparse log's other metrics too: Lightning's validation rows mark each
    # epoch's last step where the training loss is logged every n steps only)
    every_row = (cols["epoch"], cols["step"]) if sparse else None
    if not keep.all():
        cols = {role: v[keep] for role, v in cols.items()}
    acc = _normalise_acc(cols["acc"], source, found.acc, flags)
    with np.errstate(over="ignore", invalid="ignore"):
        k, epoch, spe, granularity = _global_steps(cols, found, source, steps_per_epoch, flags, fmt,
                                                   every_row=every_row)
    if not np.isfinite(k).all() or k.max() > 1e15 or np.nanmax(np.abs(np.nan_to_num(epoch)), initial=0) > 1e12:
        raise LogFormatError(source, "expected step numbers below 1e15 and epochs below 1e12; got "
                             f"steps up to {np.nanmax(np.where(np.isfinite(k), k, np.inf)):g}.")
    if found.loss is None:
        flags.append("accuracy-only trace: no loss curve to fit")
    frame = pd.DataFrame({"global_step": k.astype(float), "epoch": epoch, "loss": cols["loss"],
                          "acc": acc, "time_s": cols["time"], "lr": cols["lr"]})
    if fmt == "metric-trace" and _progress_is_iteration(table, columns, n_rows):
        # no AdaScale: Pollux's layout, but its epochs are real passes over the data
        fmt = "epoch-trace"
        flags.append("progress equals iteration: real epochs, not AdaptDL's statistical epochs")
    frame = _resolve_restarts(frame, flags)
    if (meta.global_batch and not (fmt == "course" and meta.split == "val")
            and not any("k counts epochs" in f for f in flags)):
        # samples seen: optimiser steps × the global batch the name gives (a _val course log counts
        # validation batches, not training steps: no samples there)
        frame["samples"] = frame["global_step"] * float(meta.global_batch)
    ep = frame["epoch"].to_numpy(dtype=float)
    _partial_epoch_flag(ep, spe, granularity, flags, frame["global_step"].to_numpy(dtype=float))
    if np.isfinite(ep).all():
        frame["epoch"] = pd.array(np.rint(ep).astype(np.int64), dtype="Int64")
    else:
        frame["epoch"] = pd.array(np.where(np.isfinite(ep), np.rint(ep), np.nan), dtype="Float64").astype("Int64")
    return RunLog(source=source, frame=frame, fmt=fmt, roles=found, meta=meta,
                  steps_per_epoch=spe, granularity=granularity, flags=tuple(flags),
                  columns=tuple(columns))


def epoch_of_step(step: float, steps_per_epoch: int | None) -> int | None:
    """The 1-based epoch containing global step ``step`` (``ceil(step / steps_per_epoch)``).

    >>> epoch_of_step(782, 391), epoch_of_step(783, 391), epoch_of_step(10, None)
    (2, 3, None)
    """
    if steps_per_epoch is None or not math.isfinite(step):
        return None
    return max(1, math.ceil(step / steps_per_epoch))
