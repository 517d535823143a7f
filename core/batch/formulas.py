"""McCandlish's batch-scaling formulas: samples and steps to target at a global batch, statistical
efficiency and goodput, and their LaTeX for pages.

A larger global batch ``B`` averages more samples per step, so each step makes more
progress, but with diminishing returns once ``B`` passes the gradient noise scale
``B_noise``.  McCandlish, Kaplan, Amodei et al., "An Empirical Model of Large-Batch
Training" (2018, arXiv:1812.06162), Eq. 2.11, for the samples ``E`` and steps ``S`` to
reach a given target:

    E(B) = E_min · (1 + B / B_noise)          samples
    S(B) = S_min · (1 + B_noise / B)          steps,  S_min = E_min / B_noise,  S = E / B

``E_min`` is what an infinitely small batch would need (perfect sample efficiency), ``S_min``
what an infinitely large one would (perfect step efficiency).  The **statistical
efficiency** of batch ``B`` relative to a base batch ``B0`` is ``E(B0)/E(B) = (B_noise +
B0)/(B_noise + B)`` (Pollux, Qiao et al. OSDI 2021, ``GoodputFunction.efficiency``), and
``E_min/E(B) = 1/(1 + B/B_noise)`` relative to the smallest batch.
"""

from __future__ import annotations

import math

import numpy as np

#: formulas, for pages
SAMPLES_LATEX = r"E(B) = E_{\min}\left(1 + \frac{B}{B_\text{noise}}\right)"
STEPS_LATEX = r"S(B) = \frac{E(B)}{B} = S_{\min}\left(1 + \frac{B_\text{noise}}{B}\right)"
EFFICIENCY_LATEX = r"\text{efficiency}(B) = \frac{E_{\min}}{E(B)} = \frac{1}{1 + B/B_\text{noise}}"


# --------------------------------------------------------------------------- formulas
def samples_to_target(global_batch, e_min: float, b_noise: float):
    """``E(B) = E_min · (1 + B/B_noise)`` samples (McCandlish et al. 2018, Eq. 2.11).

    ``b_noise = inf`` is perfect scaling (``E = E_min`` at every batch).

    >>> samples_to_target(1000, 1e6, 1000)      # 1e6 · (1 + 1000/1000)
    2000000.0
    >>> samples_to_target([0, 3000], 1e6, 1000).tolist()
    [1000000.0, 4000000.0]
    """
    b = np.asarray(global_batch, dtype=float)
    out = e_min * (1.0 + (b / b_noise if math.isfinite(b_noise) else 0.0 * b))
    return float(out) if out.ndim == 0 else out


def steps_to_target(global_batch, e_min: float, b_noise: float):
    """``S(B) = E(B)/B = S_min · (1 + B_noise/B)`` steps, ``S_min = E_min/B_noise``.

    >>> steps_to_target(1000, 1e6, 1000)        # 2e6 samples / 1000 per step
    2000.0
    >>> steps_to_target(1e9, 1e6, 1000)         # S_min = 1e6/1000: no fewer steps however large B
    1000.001
    """
    b = np.asarray(global_batch, dtype=float)
    out = np.asarray(samples_to_target(b, e_min, b_noise)) / b
    return float(out) if out.ndim == 0 else out


def statistical_efficiency(global_batch, b_noise: float, *, base_batch: float | None = None):
    """Samples-to-target efficiency of batch ``B``: ``(B_noise + B0)/(B_noise + B)``.

    With ``base_batch=None`` (``B0 = 0``) it is ``E_min/E(B) = 1/(1 + B/B_noise)``; with a
    base batch it is Pollux's efficiency relative to ``B0`` (``1`` at ``B = B0``).

    Examples
    --------
    ``B_noise = 1000``: batch 1000 needs twice the samples of a tiny batch; batch 3000 is
    ``(1000 + 1000)/(1000 + 3000) = 0.5`` as efficient as batch 1000.

    >>> statistical_efficiency(1000, 1000)
    0.5
    >>> statistical_efficiency(3000, 1000, base_batch=1000)
    0.5
    """
    b = np.asarray(global_batch, dtype=float)
    b0 = 0.0 if base_batch is None else float(base_batch)
    out = (b_noise + b0) / (b_noise + b) if math.isfinite(b_noise) else np.ones_like(b)
    return float(out) if np.ndim(out) == 0 else np.asarray(out)


def goodput(samples_per_s, global_batch, b_noise: float):
    """Goodput: throughput × statistical efficiency, in ``E_min``-equivalent samples per second.

    Pollux (OSDI 2021) maximises it; time to target is ``E_min / goodput`` exactly.

    >>> goodput(4000.0, 1000, 1000)             # 4000 samples/s at half efficiency
    2000.0
    """
    out = np.asarray(samples_per_s, dtype=float) * statistical_efficiency(global_batch, b_noise)
    return float(out) if np.ndim(out) == 0 else out
