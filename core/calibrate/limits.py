"""Where a calibration stops knowing: distance from the calibration set, "outside" flags, intervals.

A held-out architecture is described by its architecture features (``ARCH_NUMERIC`` and the
block type, ``core.calibrate.methods.feature_frame``).  Three things follow from them:

* **outside the calibration set** (:func:`outside_reasons`): a numeric feature beyond the range
  the calibration architectures span, or a block type none of them has.  Each reason is a
  sentence a page shows as it is.
* **distance** (:class:`FeatureSpace`): Euclidean distance to the *nearest* calibration
  architecture, numeric features standardised by the calibration set, each block type a
  one-hot coordinate (a block type the set lacks adds 1).
* **interval** (:func:`conformal_interval`, locally weighted split conformal): the
  leave-one-architecture-out residuals ``r_i = ln(actual_i / predicted_i)`` of the calibration
  runs are divided by their difficulty ``s_i = 1 + d_i / d̄`` (``d_i``: distance of run i's
  architecture to the others, ``d̄`` their mean); the ``k``-th smallest ``|r_i| / s_i`` with
  ``k = ceil((n + 1)·level)`` is ``q``, and the interval is ``predicted · exp(∓q·s)`` with the
  held-out architecture's own ``s = 1 + d / d̄``: it widens with the distance from the
  calibration set.  With too few residuals (``k > n``) there is no finite interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.calibrate.methods import ARCH_CATEGORICAL, ARCH_NUMERIC, feature_frame

INTERVAL_METHOD = ("locally weighted split conformal: leave-one-architecture-out residuals of the same method on "
                   "the calibration runs, scaled by 1 + distance to the nearest other calibration architecture; "
                   "the interval widens with the held-out architecture's own distance")
#: how a numeric feature is named in an "outside" sentence, and how its value is printed
_FEATURE_WORDS = {
    "depth": ("depth", lambda v: f"{v:.0f}"),
    "log10_params": ("parameter count", lambda v: _si(10**v)),
    "log10_flops": ("FLOPs per sample", lambda v: _si(10**v)),
    "log2_width": ("first-stage width", lambda v: f"{2**v:.0f} channels"),
}


def _si(v: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if v >= scale:
            return f"{v / scale:.3g} {unit}"
    return f"{v:.3g}"


@dataclass(frozen=True)
class FeatureSpace:
    """Standardised architecture features of a calibration set (for distances).

    >>> rows = pd.DataFrame({"model": ["resnet20", "resnet56"], "dataset": "cifar10", "depth": [20, 56],
    ...                      "gpu_short": "V100"})
    >>> space = FeatureSpace.of(rows)
    >>> space.numeric                      # every feature is known for both
    ('depth', 'log10_params', 'log10_flops', 'log2_width')
    >>> float(space.nearest_distance(rows.iloc[:1], rows.iloc[1:])[0]).__round__(3)  # 3 differing features, 2 sd apart
    3.464
    """

    numeric: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    categorical: bool

    @classmethod
    def of(cls, rows: pd.DataFrame) -> "FeatureSpace":
        x = feature_frame(rows)
        numeric = tuple(c for c in ARCH_NUMERIC if x[c].notna().all())
        values = x[list(numeric)].to_numpy(float)
        sd = values.std(axis=0) if len(values) else np.ones(len(numeric))
        return cls(numeric, tuple(values.mean(axis=0)) if len(values) else (0.0,) * len(numeric),
                   tuple(float(s) if s > 0 else 1.0 for s in sd), bool(x[ARCH_CATEGORICAL].notna().all()))

    def coordinates(self, rows: pd.DataFrame) -> tuple[np.ndarray, list]:
        x = feature_frame(rows)
        z = (x[list(self.numeric)].to_numpy(float) - np.array(self.mean)) / np.array(self.scale)
        return z, list(x[ARCH_CATEGORICAL]) if self.categorical else [None] * len(x)

    def nearest_distance(self, query: pd.DataFrame, reference: pd.DataFrame) -> np.ndarray:
        """Per row of ``query``: distance to the nearest row of ``reference`` (inf if it is empty)."""
        if len(reference) == 0:
            return np.full(len(query), math.inf)
        return np.sqrt(_squared_distances(*self.coordinates(query), *self.coordinates(reference)).min(axis=1))

    def distances_to_other_architectures(self, rows: pd.DataFrame) -> dict[str, float]:
        """Per architecture of ``rows``: :meth:`nearest_distance` of its first row to the rows of the
        other architectures (inf when there are none), from one pass over the features."""
        z, b = self.coordinates(rows)
        d2 = _squared_distances(z, b, z, b)
        models = rows["model"].astype(str).to_numpy()
        out = {}
        for model in dict.fromkeys(models):
            first, others = int(np.argmax(models == model)), models != model
            out[model] = float(np.sqrt(d2[first, others].min())) if others.any() else math.inf
        return out


def _squared_distances(zq: np.ndarray, bq: list, zr: np.ndarray, br: list) -> np.ndarray:
    """Squared distances between every query and reference row: standardised numeric features, and
    one-hot block types (two differing types differ in two coordinates: distance sqrt(2))."""
    d2 = ((zq[:, None, :] - zr[None, :, :]) ** 2).sum(axis=-1)
    return d2 + 2.0 * (np.array(bq, dtype=object)[:, None] != np.array(br, dtype=object)[None, :])


def outside_reasons(train: pd.DataFrame, test: pd.DataFrame) -> tuple[str, ...]:
    """Why the architecture of ``test`` lies outside the calibration set ``train`` (empty: inside).

    >>> cal = pd.DataFrame({"model": ["resnet20", "resnet32", "resnet44"], "dataset": "cifar10",
    ...                     "depth": [20, 32, 44], "gpu_short": "V100"})
    >>> q = pd.DataFrame({"model": ["resnet56"], "dataset": "cifar10", "depth": [56], "gpu_short": "V100"})
    >>> outside_reasons(cal, q)[0]
    'depth 56 above the calibration range 20–44'
    >>> outside_reasons(cal, cal.iloc[1:2])
    ()
    """
    xt, xq = feature_frame(train), feature_frame(test.iloc[:1])
    reasons = []
    for col in ARCH_NUMERIC:
        known = xt[col].dropna()
        v = xq[col].iloc[0]
        if known.empty or pd.isna(v):
            continue
        word, fmt = _FEATURE_WORDS[col]
        lo, hi = float(known.min()), float(known.max())
        if v < lo - 1e-9 or v > hi + 1e-9:
            side = "below" if v < lo else "above"
            reasons.append(f"{word} {fmt(v)} {side} the calibration range {fmt(lo)}–{fmt(hi)}")
    block = xq[ARCH_CATEGORICAL].iloc[0]
    blocks = sorted(set(xt[ARCH_CATEGORICAL].dropna()))
    if block is not None and blocks and block not in blocks:
        reasons.append(f"block type {block} not among the calibration architectures ({', '.join(blocks)})")
    return tuple(reasons)


def conformal_interval(residuals: np.ndarray, difficulty: np.ndarray, level: float) -> float:
    """``q``: the ``ceil((n + 1)·level)``-th smallest ``|r_i| / s_i`` (inf when that exceeds ``n``).

    >>> conformal_interval(np.array([0.1, -0.2, 0.3, -0.4]), np.ones(4), 0.8)   # k = ceil(4) = 4th
    0.4
    >>> conformal_interval(np.array([0.1, -0.2, 0.3]), np.ones(3), 0.8)         # k = 4 > n = 3
    inf
    """
    z = np.sort(np.abs(np.asarray(residuals, float)) / np.asarray(difficulty, float))
    k = math.ceil((z.size + 1) * level - 1e-12)
    return float(z[k - 1]) if 0 < k <= z.size else math.inf
