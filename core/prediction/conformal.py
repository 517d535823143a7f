"""Two sources of one prediction combined by their backtest errors: the shared arithmetic.

Both the epoch posterior (``core.prediction.posterior``, method ``"correlated"``) and the
progress posterior of falling targets (``core.prediction.progress``) learn, from other finished
runs cut at the same observed fraction, each source's log error ``e = ln(actual / predicted)``
(or its negative: both modules keep one sign throughout):

* :func:`correlated_weight`: the weight of the first source that minimises the mean squared
  combined error ``w·e₁ + (1 − w)·e₂`` given both mean squared errors and their cross moment
  (so two errors that point the same way are not counted as independent):
  ``w = (σ₂² − ρσ₁σ₂)/(σ₁² + σ₂² − 2ρσ₁σ₂)`` clipped to [0, 1];
* :func:`conformal_quantiles`: split-conformal quantiles of the combined errors, the order
  statistics ``⌊(n+1)α⌋`` and ``⌈(n+1)(1−α)⌉`` (``α`` = half the miss rate), with an honest
  fallback when there are too few cases for them (the extremes widened by half their range).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

#: fewest backtest cases a weight is learned from (fewer: no backtest combination)
MIN_CASES = 3


def conformal_quantiles(errors: Sequence[float], level: float, *, fallback: str = "widen") -> tuple[float, float]:
    """Split-conformal ``level`` quantiles of backtest errors (see the module docstring).

    ``fallback`` says what an order statistic beyond the cases becomes: ``"widen"`` the extreme
    widened by half the errors' range (conservative), ``"extremes"`` the extreme itself (the
    interval between the smallest and largest of ``n`` exchangeable errors covers a new one with
    probability ``(n − 1)/(n + 1)``: :func:`expected_coverage` says how much that is).

    Nineteen errors 1..19 at 80 %: the order statistics ⌊20·0.1⌋ = 2 and ⌈20·0.9⌉ = 18; with
    four errors both fall outside, so the extremes are widened by half their range:

    >>> conformal_quantiles(range(1, 20), 0.8)
    (2.0, 18.0)
    >>> conformal_quantiles([0.0, 1.0, 2.0, 4.0], 0.8)
    (-2.0, 6.0)
    >>> conformal_quantiles([0.0, 1.0, 2.0, 4.0], 0.8, fallback="extremes")
    (0.0, 4.0)
    """
    e = np.sort(np.asarray(list(errors), dtype=float))
    n = len(e)
    if n == 0:
        raise ValueError("conformal_quantiles: expected at least one error; got none.")
    alpha = (1 - level) / 2
    # (the tolerance keeps 20·0.1 from flooring to 1 in floating point)
    lo_i, hi_i = math.floor((n + 1) * alpha + 1e-9) - 1, math.ceil((n + 1) * (1 - alpha) - 1e-9) - 1
    spread = float(e[-1] - e[0]) / 2 if fallback == "widen" else 0.0
    lo = float(e[lo_i]) if lo_i >= 0 else float(e[0]) - spread
    hi = float(e[hi_i]) if hi_i <= n - 1 else float(e[-1]) + spread
    return lo, hi


def expected_coverage(n: int, level: float) -> float:
    """The coverage the conformal interval of ``n`` errors guarantees: ``level`` when its order
    statistics exist, else ``(n − 1)/(n + 1)`` of the extremes (the ``"extremes"`` fallback).

    >>> expected_coverage(9, 0.8), round(expected_coverage(8, 0.8), 4)
    (0.8, 0.7778)
    """
    alpha = (1 - level) / 2
    if math.ceil((n + 1) * (1 - alpha) - 1e-9) <= n:
        return level
    return max(n - 1, 0) / (n + 1)


def correlated_weight(e1: Sequence[float], e2: Sequence[float]) -> tuple[float, float, float, float]:
    """``(w, ms1, ms2, cross)``: the first source's weight and the moments it came from.

    Mean squared errors (bias counts too) and the mean cross product; ``w = 1`` when the
    combined error cannot be made smaller than either (both errors identical).

    >>> w, *_ = correlated_weight([0.1, -0.1, 0.2], [0.3, -0.3, 0.6])   # the second is 3× the first
    >>> w
    1.0
    >>> w, *_ = correlated_weight([0.2, -0.2], [-0.2, 0.2])             # opposite errors cancel half-way
    >>> w
    0.5
    """
    a, b = np.asarray(e1, dtype=float), np.asarray(e2, dtype=float)
    v1, v2, cov = float(np.mean(a ** 2)), float(np.mean(b ** 2)), float(np.mean(a * b))
    denom = v1 + v2 - 2 * cov
    w = 1.0 if denom <= 1e-12 else float(np.clip((v2 - cov) / denom, 0.0, 1.0))
    return w, v1, v2, cov
