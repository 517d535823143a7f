"""The multi-power law (Luo et al., "A Multi-Power Law for Loss Curve Prediction Across Learning Rate
Schedules", ICLR 2025, arXiv 2503.12811, Eq. 1): the loss through a learning-rate schedule.

``L(t) = L0 + A·(S1(t) + S_W)^(−α) − LD(t)``, ``LD(t) = B·Σ_{k≤t} (η_{k−1} − η_k)·G(η_k^(−γ)·S_k(t))``,
``G(x) = 1 − (C·x + 1)^(−β)``, ``S_k(t) = Σ_{τ=k..t} η_τ``: seven parameters; ``S1(t) + S_W`` is the area under
the rate up to ``t``, warm-up included (``core.curves.schedule_law``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.curves.schedule_law import ScheduleFamily, ScheduleFeatures


def _multi_power(f: ScheduleFeatures, p: Sequence[float]) -> np.ndarray:
    L0, A, alpha, B, C, beta, gamma = p
    out = L0 + A * np.power(np.maximum(f.area, 1e-300), -alpha)
    if f.event_drop.size:
        x = (f.event_lr ** -gamma)[None, :] * f.since
        G = 1.0 - np.power(C * x + 1.0, -beta)
        out = out - B * (G * f.event_drop[None, :]).sum(axis=1)
    return out


def _multi_power_jac(f: ScheduleFeatures, p: Sequence[float]) -> np.ndarray:
    """dL/d(L0, A, α, B, C, β, γ) at the features' steps."""
    L0, A, alpha, B, C, beta, gamma = p
    area = np.maximum(f.area, 1e-300)
    power = np.power(area, -alpha)
    J = np.zeros((area.size, 7))
    J[:, 0] = 1.0
    J[:, 1] = power
    J[:, 2] = -A * power * np.log(area)
    if f.event_drop.size:
        x = (f.event_lr ** -gamma)[None, :] * f.since
        u = C * x + 1.0
        u_beta = np.power(u, -beta)
        drop = f.event_drop[None, :]
        G = 1.0 - u_beta
        dG_du = beta * u_beta / u
        J[:, 3] = -(G * drop).sum(axis=1)
        J[:, 4] = -B * (dG_du * x * drop).sum(axis=1)
        J[:, 5] = -B * (u_beta * np.log(u) * drop).sum(axis=1)
        J[:, 6] = -B * (dG_du * C * x * (-np.log(f.event_lr))[None, :] * drop).sum(axis=1)
    return J


MULTI_POWER = ScheduleFamily(
    name="multi-power", label="multi-power law (Luo et al., ICLR 2025)",
    formula="L0 + A·(S1+S_W)^−α − B·Σ(η_{k−1}−η_k)·(1 − (C·η_k^−γ·S_k + 1)^−β)",
    param_names=("L0", "A", "alpha", "B", "C", "beta", "gamma"), decay_params=("B", "C", "beta", "gamma"),
    loss=_multi_power,
    lower={"L0": 0.0, "A": 1e-12, "alpha": 0.01, "B": 1e-12, "C": 1e-30, "beta": 0.01, "gamma": 0.01},
    upper={"L0": 1e6, "A": 1e12, "alpha": 3.0, "B": 1e12, "C": 1e30, "beta": 5.0, "gamma": 5.0},
    log_params=("A", "B", "C"),
    decay_starts=lambda peak: [{"B": 0.5 / peak, "C": 2.0 * peak ** -0.5, "beta": 0.5, "gamma": 0.5},
                               {"B": 0.2 / peak, "C": 0.1 * peak ** 0.0, "beta": 0.5, "gamma": 1.0}],
    jac=_multi_power_jac, reference="Luo et al., ICLR 2025, arXiv 2503.12811, Eq. 1",
    example={"L0": 2.0, "A": 0.3, "alpha": 0.4, "B": 300.0, "C": 2.0, "beta": 0.5, "gamma": 0.5},
)
