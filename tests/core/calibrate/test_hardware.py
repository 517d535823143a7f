"""core.calibrate.hardware: does the GPU type change the epochs to target?"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.calibrate import (
    hardware_independence,
    normalise_fits,
)


def test_hardware_independence_on_a_hand_example():
    # two models x two GPUs; model effect 10 epochs, GPU effect 1 epoch, no interaction
    rows = pd.DataFrame({"model": ["resnet20", "resnet20", "resnet56", "resnet56"],
                         "gpu": ["V100", "A100", "V100", "A100"], "split": "train",
                         "b0": 1e-3, "b1": 0.5, "b2": 0.1, "epoch_steps": 100,
                         "epoch_to_92acc": [20, 21, 30, 31], "step_to_92acc": [2000, 2100, 3000, 3100],
                         "loss_92acc": 0.3})
    hw = hardware_independence(normalise_fits(rows))
    assert hw.n_models == 2 and hw.n_gpus == 2
    # SD across GPUs within a model: sd(20, 21) = 0.707; across model means sd(20.5, 30.5) = 7.07
    assert hw.within_model_sd == pytest.approx(np.std([20, 21], ddof=1))
    assert hw.across_model_sd == pytest.approx(np.std([20.5, 30.5], ddof=1))
    assert np.isinf(hw.f_gpu) and hw.p_gpu == 0.0  # perfectly additive: no residual at all
    assert "GPU type does change" in hw.sentence


def test_course_data_looks_hardware_independent(fits):
    hw = hardware_independence(fits)
    assert hw.n_models == 6 and hw.n_gpus == 3 and hw.p_gpu > 0.05
    assert hw.within_model_sd < hw.across_model_sd
