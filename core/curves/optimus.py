"""The Optimus loss model (Peng et al., EuroSys 2018), the default learning-curve family::

    l(k) = 1 / (b0·k + b1) + b2,    b0, b1, b2 >= 0

with k the global optimiser step; its inverse ``k* = (1/(L − b2) − b1)/b0`` and its own test
of a degenerate fit (:func:`degenerate_reason`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from core.curves.family import CurveFamily


def optimus_loss(k: np.ndarray, b0: float, b1: float, b2: float) -> np.ndarray:
    """The Optimus loss model ``1/(b0·k + b1) + b2``.

    >>> float(optimus_loss(1000.0, 0.001, 1.0, 0.1))   # 1/(1 + 1) + 0.1
    0.6
    """
    return 1.0 / (b0 * np.asarray(k, dtype=float) + b1) + b2


def _optimus_jac(k: np.ndarray, b0: float, b1: float, b2: float) -> np.ndarray:
    k = np.asarray(k, dtype=float)
    d = -1.0 / (b0 * k + b1) ** 2
    return np.column_stack([d * k, d, np.ones_like(k)])


def optimus_step_at_loss(loss: float, b0: float, b1: float, b2: float) -> float:
    """The step where the Optimus curve reaches ``loss``: ``(1/(loss - b2) - b1)/b0``.

    NaN when the curve never gets there (``loss <= b2``, or ``b0 == 0``); 0 when the curve
    starts below ``loss``.  Broadcasts over arrays (a float for scalar input).

    >>> optimus_step_at_loss(0.6, 0.001, 1.0, 0.1)   # (1/(0.6-0.1) - 1)/0.001
    1000.0
    """
    loss, b0, b1, b2 = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (loss, b0, b1, b2)))
    ok = (loss > b2) & (b0 > 0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        k = np.maximum(0.0, (1.0 / np.where(ok, loss - b2, 1.0) - b1) / np.where(ok, b0, 1.0))
    out = np.where(ok, k, np.nan)
    return float(out) if out.ndim == 0 else out


def _optimus_initial(k: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> list[float]:
    """Start from the best straight line through 1/(y - b2) = b0·k + b1 over a few floors b2."""
    w = np.ones_like(y) if w is None else w
    best: tuple[float, list[float]] | None = None
    y_min = float(np.min(y))
    for frac in (0.0, 0.3, 0.6, 0.8, 0.9, 0.97):
        b2 = frac * y_min
        z = 1.0 / np.maximum(y - b2, 1e-12)
        A = np.column_stack([k, np.ones_like(k)]) * np.sqrt(w)[:, None]
        (b0, b1), *_ = np.linalg.lstsq(A, z * np.sqrt(w), rcond=None)
        b0 = max(float(b0), 1e-12)
        b1 = max(float(b1), 1e-12)
        sse = float(np.sum(w * (optimus_loss(k, b0, b1, b2) - y) ** 2))
        if math.isfinite(sse) and (best is None or sse < best[0]):
            best = (sse, [b0, b1, b2])
    assert best is not None
    return best[1]


#: a curve whose excess over ``b2`` at the first logged step is under this fraction of its level is flat there
FLAT_EXCESS = 1e-3


def degenerate_reason(b0: float, b1: float, b2: float, *, first_step: float = 1.0,
                      last_step: float | None = None) -> str | None:
    """Why Optimus parameters describe no real decay, or ``None`` when they look sound.

    A fit is degenerate when ``b0 = 0`` (no decay at all), or when its excess loss ``1/(b0·k + b1)`` at the
    first logged step is under ``FLAT_EXCESS`` (0.1 %) of the curve's level there: the curve is then a flat
    line at ``b2`` over the whole log, as in the course's ``val`` fits of ResNet-18/50 (b0 ≈ 15,000, an excess
    of 4e-5 of the level; every sound course fit has 0.75 or more).  With ``last_step`` known, a curve whose
    excess loss falls by less than 5 % between the first and the last logged step is degenerate too (no decay
    visible in the data: nothing to extrapolate from).

    A small ``b1/b0`` alone is no degeneracy: the curve is then ``b2 + 1/(b0·k)`` over the data, a decay like
    any other (the MLPerf Llama 3.1 8B fits, b1/b0 ≈ 200 steps before a first evaluation at 768, R² ≥ 0.97).

    >>> degenerate_reason(15074.45, 4.8e-15, 1.489) is not None
    True
    >>> degenerate_reason(0.000237, 0.4595, 0.0) is None
    True
    >>> degenerate_reason(0.00045, 0.141, 3.136, first_step=768, last_step=11520) is None
    True
    """
    if not (math.isfinite(b0) and math.isfinite(b1) and math.isfinite(b2)):
        return "degenerate fit: a parameter is not finite"
    if b0 <= 0:
        return "degenerate fit: b0 = 0, the curve does not decay"
    k0 = max(first_step, 1.0)
    excess = 1.0 / (b0 * k0 + b1)
    if excess < FLAT_EXCESS * abs(excess + b2):
        half = b1 / b0
        if half < k0:       # the course's case, in the words its stored calibration scores were keyed on
            return (f"degenerate fit: the curve drops to b2 within {half:.3g} steps, before the first logged step; "
                    f"it is flat over the data")
        return (f"degenerate fit: the curve is at b2 from the first logged step on (its excess is "
                f"{excess / abs(excess + b2):.1e} of its level); it is flat over the data")
    if last_step is not None and b0 * (last_step - first_step) < 0.05 * (b0 * first_step + b1):
        return "degenerate fit: the curve falls by less than 5 % over the data; no decay is visible"
    return None


def _optimus_degeneracy(family: CurveFamily, params: Mapping[str, float], first_step: float,
                        last_step: float) -> str | None:
    return degenerate_reason(params["b0"], params["b1"], params["b2"], first_step=first_step,
                             last_step=last_step)


OPTIMUS = CurveFamily(
    name="optimus",
    label="Optimus 1/(b0·k+b1)+b2",
    formula="l(k) = 1 / (b0·k + b1) + b2",
    param_names=("b0", "b1", "b2"),
    func=optimus_loss,
    jac=_optimus_jac,
    initial=_optimus_initial,
    inverse=optimus_step_at_loss,
    lower=(0.0, 0.0, 0.0),
    upper=(np.inf, np.inf, np.inf),
    floor="b2",
    floor_label="loss floor",
    degeneracy=_optimus_degeneracy,
    example=(2e-4, 0.8, 0.3),
)
