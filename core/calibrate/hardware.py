"""Is the number of epochs to target the same on every GPU? (two-way additive ANOVA of model × GPU)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from core.calibrate.table import usable


@dataclass(frozen=True)
class HardwareIndependence:
    """Is the number of epochs to target the same on every GPU? (two-way additive ANOVA)"""

    n_models: int
    n_gpus: int
    within_model_sd: float  # mean over models of the SD of epochs across GPUs
    across_model_sd: float  # SD of the per-model mean epochs
    f_gpu: float
    p_gpu: float
    sentence: str


def hardware_independence(fits: pd.DataFrame, *, split: str = "train") -> HardwareIndependence | None:
    """Compare the spread of epochs-to-target across GPUs (same model) with that across models.

    Uses the models measured on every GPU type present; returns ``None`` when fewer than two
    models or two GPU types are complete.
    """
    rows = usable(fits, split=split)
    rows = rows[rows["epoch_to_target"].notna()]
    grid = rows.pivot_table(index="model", columns="gpu_short", values="epoch_to_target", aggfunc="mean")
    grid = grid.dropna(axis=0, how="any")
    m, g = grid.shape
    if m < 2 or g < 2:
        return None
    y = grid.to_numpy(float)
    grand = y.mean()
    model_mean, gpu_mean = y.mean(axis=1), y.mean(axis=0)
    ss_gpu = m * float(((gpu_mean - grand) ** 2).sum())
    resid = y - model_mean[:, None] - gpu_mean[None, :] + grand
    ss_res = float((resid**2).sum())
    df_gpu, df_res = g - 1, (m - 1) * (g - 1)
    f_gpu = (ss_gpu / df_gpu) / (ss_res / df_res) if ss_res > 0 else math.inf
    p_gpu = float(stats.f.sf(f_gpu, df_gpu, df_res)) if math.isfinite(f_gpu) else 0.0
    within = float(np.mean(y.std(axis=1, ddof=1)))
    across = float(model_mean.std(ddof=1))
    verdict = ("so convergence looks hardware-independent" if p_gpu >= 0.05 else
               "so the GPU type does change the number of epochs here")
    sentence = (f"Across the {g} GPU types the same model needs epochs to target that differ by "
                f"{within:.1f} epochs (mean SD), against {across:.1f} epochs between the {m} models' "
                f"means; the GPU effect has F = {f_gpu:.2f}, p = {p_gpu:.2f} (two-way ANOVA), {verdict}.")
    return HardwareIndependence(m, g, within, across, float(f_gpu), p_gpu, sentence)
