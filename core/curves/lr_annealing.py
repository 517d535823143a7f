"""The LR-annealing law (Tissue et al., "Scaling Law with Learning Rate Annealing", arXiv 2408.11029, Eq. 1).

``L(t) = L0 + A·S1(t)^(−α) − C·S2(t)``, ``S2(t) = Σ_{i≤t} m_i``, ``m_i = λ·m_{i−1} + (η_{i−1} − η_i)`` with
``λ = ANNEALING_MOMENTUM``: summed over the falls of the rate after the warm-up,
``S2(t) = Σ_k Δ_k·(1 − λ^(t−k+1))/(1 − λ)``. Four parameters (``core.curves.schedule_law``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.curves.schedule_law import ScheduleFamily, ScheduleFeatures

#: the momentum λ per step (Tissue et al. use 0.999 throughout)
ANNEALING_MOMENTUM = 0.999


def _annealing_area(f: ScheduleFeatures) -> np.ndarray:
    """S2 at the features' steps: each fall of the rate weighted by ``(1 − λ^(t−k+1))/(1 − λ)``."""
    if not f.event_drop.size:
        return np.zeros(f.steps.size)
    lam = ANNEALING_MOMENTUM
    weight = np.where(f.before, (1.0 - lam ** (f.lags + 1.0)) / (1.0 - lam), 0.0)
    return (weight * f.event_drop[None, :]).sum(axis=1)


def _lr_annealing(f: ScheduleFeatures, p: Sequence[float]) -> np.ndarray:
    L0, A, alpha, C = p
    return L0 + A * np.power(np.maximum(f.area, 1e-300), -alpha) - C * _annealing_area(f)


def _lr_annealing_jac(f: ScheduleFeatures, p: Sequence[float]) -> np.ndarray:
    """dL/d(L0, A, α, C) at the features' steps."""
    L0, A, alpha, C = p
    area = np.maximum(f.area, 1e-300)
    power = np.power(area, -alpha)
    return np.column_stack([np.ones(area.size), power, -A * power * np.log(area), -_annealing_area(f)])


LR_ANNEALING = ScheduleFamily(
    name="lr-annealing", label="LR-annealing law (Tissue et al., 2024)",
    formula="L0 + A·S1^−α − C·S2,  S2 = Σ m_i, m_i = λ·m_{i−1} + (η_{i−1} − η_i), λ = 0.999",
    param_names=("L0", "A", "alpha", "C"), decay_params=("C",), loss=_lr_annealing,
    lower={"L0": 0.0, "A": 1e-12, "alpha": 0.01, "C": 1e-12},
    upper={"L0": 1e6, "A": 1e12, "alpha": 3.0, "C": 1e12},
    log_params=("A", "C"),
    decay_starts=lambda peak: [{"C": 1e-3 / peak}, {"C": 1e-1 / peak}],
    jac=_lr_annealing_jac, reference="Tissue et al., arXiv 2408.11029, Eq. 1",
    example={"L0": 2.0, "A": 0.3, "alpha": 0.4, "C": 0.2},
)
