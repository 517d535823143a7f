"""Gradient-noise-scale columns of a per-epoch log (Pollux's ``grad_sqr``, ``grad_var``).

Pollux (Qiao et al., OSDI 2021) traces each job with AdaptDL, whose ``validation-<B>.csv``
rows carry, per (statistical) epoch, two smoothed gradient statistics (petuum/adaptdl
``adaptdl/torch/adascale.py`` and ``gradient_noise_scale.py``; ``simulator/goodput.py``):

* ``grad_sqr`` ≈ ``|G|²``, the squared L2 norm of the true (full-data) gradient of the mean
  loss, summed over parameter groups;
* ``grad_var`` ≈ ``tr(Σ)/B0``, the trace of the covariance of the gradient of a minibatch of
  ``B0`` samples, where ``Σ`` is the per-sample gradient covariance and ``B0`` the job's
  *initial* batch (the training script's ``batch_size``, not the batch of the file: AdaptDL
  scales its estimate to ``B0``).  Both are exponential moving averages, not learning-rate
  scaled; for Adam they are preconditioned by the optimiser's second moments.

The gradient noise scale (McCandlish et al. 2018, ``B_simple``) is then
``B_noise = tr(Σ)/|G|² = B0 · grad_var / grad_sqr`` samples, exactly what Pollux's
``GoodputFunction.efficiency`` uses.  A log may instead give it directly in a column named
``noise_scale`` (or ``b_noise``, ``gns``), in samples.

``B0`` is not in the file.  A per-epoch AdaptDL trace ends epoch ``e`` when its ``progress``
(scale-invariant iterations, in steps of ``B0`` samples) reaches ``e · N / B0``, so
``B0 = N / progress per epoch`` (averaged over the trace's epochs) when the data-set size
``N`` is known (CIFAR-10: 50,000 / 390.6 = 128; ImageNet: 1,281,167 / 6,405.8 = 200).
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.errors import LogFormatError
from core.logs.mllog_events import is_mllog

SQR_NAMES = ("grad_sqr",)
VAR_NAMES = ("grad_var",)
SCALE_NAMES = ("noise_scale", "b_noise", "gns")


@dataclass(frozen=True, eq=False)
class GradientNoise:
    """Per-row gradient statistics of one log.

    Attributes
    ----------
    source : str
        The file name.
    row : ndarray of int
        1-based row (evaluation) number, the ``epoch`` of a per-epoch trace.
    grad_sqr, grad_var : ndarray or None
        Pollux's statistics (None when the log gives ``noise_scale`` directly).
    noise_scale : ndarray or None
        ``B_noise`` in samples, when the log gives it directly.
    progress : ndarray or None
        AdaptDL's ``progress`` column (steps of ``B0`` samples), when present.
    """

    source: str
    row: np.ndarray
    grad_sqr: np.ndarray | None = None
    grad_var: np.ndarray | None = None
    noise_scale: np.ndarray | None = None
    progress: np.ndarray | None = None

    def base_batch(self, samples_per_epoch: float | None) -> float | None:
        """``B0 = N / progress per epoch`` (rounded), or None without ``progress`` or ``N``.

        >>> g = GradientNoise("t.csv", np.array([1, 2]), progress=np.array([393.2, 781.3]))
        >>> g.base_batch(50_000)          # 50000 / (781.3 / 2)
        128.0
        """
        if self.progress is None or not samples_per_epoch or len(self.progress) == 0:
            return None
        # each epoch ends on the first step past e·N/B0, so the overshoot is at most one step's
        # progress: over all the epochs of the trace the average is the exact N/B0
        per_epoch = float(self.progress[-1]) / len(self.progress)
        return float(round(samples_per_epoch / per_epoch)) if per_epoch > 0 else None

    def scale(self, base_batch: float | None = None) -> np.ndarray:
        """``B_noise`` per row in samples: the column itself, or ``B0 · grad_var / grad_sqr``.

        Rows with ``grad_sqr <= 0`` (no signal) are NaN.

        >>> g = GradientNoise("t.csv", np.array([1, 2]), grad_sqr=np.array([2.0, 0.0]), grad_var=np.array([3.0, 1.0]))
        >>> g.scale(128).tolist()     # 128 · 3 / 2 = 192; no signal in row 2
        [192.0, nan]
        """
        if self.noise_scale is not None:
            return self.noise_scale.astype(float)
        if base_batch is None or not base_batch > 0:
            raise LogFormatError(self.source, "expected the batch B0 that grad_var refers to; got none. Give the "
                                 "job's initial batch (or the data-set size, to infer it from progress).")
        with np.errstate(divide="ignore", invalid="ignore"):
            out = base_batch * self.grad_var / self.grad_sqr
        return np.where(self.grad_sqr > 0, out, np.nan)


def _column(columns: dict[str, str], names: tuple[str, ...]) -> str | None:
    return next((columns[n] for n in names if n in columns), None)


def may_name_noise_columns(data: bytes) -> bool:
    """Whether the header row may name a gradient-noise column: a cheap test on the file's first line, so that a
    log without one (nearly every log) is not parsed a second time. False only where the first line that is not
    blank ends in the first 64 KiB, holds no quote (a quoted name could run over several lines) and names none
    of :data:`SQR_NAMES`, :data:`VAR_NAMES`, :data:`SCALE_NAMES` in any case: then the header, a part of that
    line, names none either.

    >>> may_name_noise_columns(b"epoch, step, loss, acc\\n1, 1, 2.0, 0.1\\n")
    False
    >>> may_name_noise_columns(b"\\r\\n progress,GNS\\r\\n1,2\\n"), may_name_noise_columns(b'"a\\nb",c\\n1,2\\n')
    (True, True)
    """
    window = data[:65536]
    head = window.lstrip()
    end = head.find(b"\n")
    if end < 0 and len(data) > len(window):
        return True                      # the first line may run past the 64 KiB looked at
    line = head if end < 0 else head[:end]
    if b'"' in line:
        return True
    low = line.lower()
    return any(name.encode() in low for name in (*SQR_NAMES, *VAR_NAMES, *SCALE_NAMES))


def read_gradient_noise(data: bytes, source: str) -> GradientNoise | None:
    """The gradient-noise statistics of a CSV log, or None when it has no such column.

    Parameters
    ----------
    data : bytes
        The log's content (a CSV with a header row).
    source : str
        The file name, first in every message.

    Raises
    ------
    LogFormatError
        Only one of ``grad_sqr``/``grad_var``, or values that are not finite numbers.

    Examples
    --------
    >>> g = read_gradient_noise(b"progress,iteration,metric,grad_sqr,grad_var\\n391,390,0.4,8.0,5.0\\n", "t.csv")
    >>> g.scale(g.base_batch(50_000)).tolist()    # B0 = 50000/391 = 128; 128 · 5 / 8 = 80
    [80.0]
    >>> read_gradient_noise(b"epoch,loss\\n1,2.0\\n", "r.csv") is None
    True
    """
    if is_mllog(data) or not may_name_noise_columns(data):
        return None
    try:
        frame = pd.read_csv(io.BytesIO(data), skipinitialspace=True)
    except (ValueError, pd.errors.ParserError, UnicodeDecodeError):
        return None   # read_log words what is wrong with the file itself
    columns = {str(c).strip().lower(): c for c in frame.columns}
    sqr, var, scale = (_column(columns, names) for names in (SQR_NAMES, VAR_NAMES, SCALE_NAMES))
    if scale is None and sqr is None and var is None:
        return None
    if scale is None and (sqr is None or var is None):
        have, missing = (sqr, "grad_var") if sqr is not None else (var, "grad_sqr")
        raise LogFormatError(source, f"expected both grad_sqr and grad_var for the gradient noise scale; got "
                             f"{have} without {missing}. Add the missing column or remove {have}.")
    values = {}
    for name in (c for c in (scale, sqr, var) if c is not None):
        v = pd.to_numeric(frame[name], errors="coerce").to_numpy(dtype=float)
        if not np.isfinite(v).all() or (v < 0).any():
            i = int(np.flatnonzero(~np.isfinite(v) | (v < 0))[0])
            bad = frame[name].iloc[i]
            raise LogFormatError(source, f"expected finite numbers >= 0 in column {name!r}; got "
                                 f"{bad.item() if hasattr(bad, 'item') else bad!r} in data row {i + 1}. "
                                 "Fix or remove that row.")
        values[name] = v
    progress = columns.get("progress")
    prog = pd.to_numeric(frame[progress], errors="coerce").to_numpy(dtype=float) if progress is not None else None
    if prog is not None and not np.isfinite(prog).all():
        prog = None
    row = np.arange(1, len(frame) + 1)
    return GradientNoise(source, row, grad_sqr=values.get(sqr), grad_var=values.get(var),
                         noise_scale=values.get(scale), progress=prog)


def noise_scale_at(scales: np.ndarray, row: int, *, window: int = 5) -> tuple[float, float, float]:
    """``(median, low, high)`` of ``B_noise`` over the ``window`` rows up to ``row`` (1-based), NaN skipped.

    The noise scale grows as training goes on; McCandlish et al. compare the critical batch
    of reaching a loss with ``B_noise`` measured at that loss, so the batch-scaling model
    takes the median over the last evaluations before the target was reached (smoothing
    the epoch-to-epoch jitter), with their smallest and largest values as its range.

    >>> noise_scale_at(np.array([10.0, 20, 30, 40, 50, 60, 70]), 6)    # rows 2..6
    (40.0, 20.0, 60.0)
    """
    part = np.asarray(scales, dtype=float)[max(0, row - window):row]
    part = part[np.isfinite(part)]
    if part.size == 0:
        return math.nan, math.nan, math.nan
    return float(np.median(part)), float(part.min()), float(part.max())
