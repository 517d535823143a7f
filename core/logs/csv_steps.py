"""Steps and epochs of a CSV log: steps per epoch inferred, global steps from per-epoch counters,
restarts resolved, a partial last epoch flagged, and the epoch of a step.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from core.errors import LogFormatError
from core.logs.runlog import ColumnRoles


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
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = step / ep
    ratio = ratio[np.isfinite(ratio)]             # an epoch that rounds to 0 (4e-214 − 1 + 1) bounds nothing
    if ratio.size == 0:
        return guess
    low = int(np.ceil(ratio.max() - 1e-9))
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


def global_steps(table_cols: dict[str, np.ndarray], roles: ColumnRoles, source: str,
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


def _looks_per_epoch(step: np.ndarray) -> bool:
    d = np.diff(step)
    return step.size >= 2 and bool((d > 0).all()) and float(np.median(d)) > 1


def resolve_restarts(frame: pd.DataFrame, flags: list[str]) -> pd.DataFrame:
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


def partial_epoch_flag(epoch: np.ndarray, spe: int | None, granularity: str, flags: list[str],
                       step: np.ndarray | None = None) -> None:
    """Flag a last epoch of fewer than 90 % of the steps: the steps it got to (its last global step less the
    epochs before, plus the logging stride less one), not its rows (a log that keeps every n-th step, or only
    validation rows, has fewer)."""
    if spe is None or granularity != "step" or not np.isfinite(epoch).any():
        return
    last_epoch = np.nanmax(epoch)
    last = int(np.count_nonzero(epoch == last_epoch))
    stride = 1
    if step is not None:
        last = max(last, int(np.nanmax(step[epoch == last_epoch]) - (last_epoch - 1) * spe))
        gaps = np.diff(sorted_unique(step[np.isfinite(step)]))
        stride = int(np.median(gaps)) if gaps.size else 1
    # a log that keeps every n-th step can end up to n − 1 steps before a finished epoch's end
    if np.nanmin(epoch) < last_epoch and last + stride - 1 < 0.9 * spe:
        flags.append(f"partial last epoch ({last} of {spe} steps)")


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` (no NaN): on values already in order (a log's steps, nearly always) one pass over
    their differences instead of a sort.

    >>> sorted_unique(np.array([1.0, 1.0, 2.0, 5.0])).tolist(), sorted_unique(np.array([3.0, 1.0, 3.0])).tolist()
    ([1.0, 2.0, 5.0], [1.0, 3.0])
    """
    steps = np.diff(values)
    if values.size and (steps >= 0).all():
        return values[np.append(True, steps > 0)]
    return np.unique(values)


def epoch_of_step(step: float, steps_per_epoch: int | None) -> int | None:
    """The 1-based epoch containing global step ``step`` (``ceil(step / steps_per_epoch)``).

    >>> epoch_of_step(782, 391), epoch_of_step(783, 391), epoch_of_step(10, None)
    (2, 3, None)
    """
    if steps_per_epoch is None or not math.isfinite(step):
        return None
    return max(1, math.ceil(step / steps_per_epoch))
