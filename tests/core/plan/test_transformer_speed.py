"""The transformer step-time model as a registered speed family (core.speed.transformer)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.errors import InputError
from core.plan import plan_grid
from core.speed import SPEED_FAMILIES, TransformerSpeedModel, fit_speed, scale_to_step_time, transformer_speed_model
from core.transformer import Measurement, get_accelerator, load_config

CFG, H100 = load_config("nanogpt_speedrun"), get_accelerator("H100")


def _prior_table(workers=(1, 2, 4, 8), factor=1.0):
    prior = transformer_speed_model(CFG, H100, seq_len=1024, global_batch=64)
    t = [factor / prior.steps_per_s(0, w) for w in workers]
    return pd.DataFrame({"w": list(workers), "global_batch": 64, "step_time_s": t, "config": "nanogpt_speedrun",
                         "device": "H100", "seq_len": 1024}), prior


def test_registered_and_left_out_of_auto():
    fam = SPEED_FAMILIES["transformer"]
    assert fam.modes == ("allreduce",) and not fam.in_auto and TransformerSpeedModel.family == "transformer"
    w = [1, 2, 4, 8, 16]
    tab = pd.DataFrame({"w": w, "global_batch": 256, "step_time_s": [0.001 * 256 / k + 0.05 + 0.002 * k for k in w]})
    assert "transformer" not in fit_speed(tab, family="auto").table()["family"].tolist()
    with pytest.raises(InputError, match=r"expected columns config, device, seq_len .* got none for config, device"):
        fit_speed(tab, family="transformer")


def test_calibrating_on_steps_made_twice_as_slow_as_the_prior_halves_every_speed():
    tab, prior = _prior_table(factor=2.0)
    fit = fit_speed(tab, family="transformer")
    model = fit.model
    assert fit.chosen == "transformer" and model.global_batch == 64
    # every measured step is 2× the prior: one compute factor of 1/2 reproduces them, up to the communication share
    assert model.calibration.compute_factor == pytest.approx(0.5, rel=0.05)
    assert model.mape_pct < 3 and model.loo_mape_pct < 5
    for w in (1, 2, 4, 8):
        assert model.step_time_s(0, w) == pytest.approx(2.0 / prior.steps_per_s(0, w), rel=0.05)


def test_one_measured_step_is_reproduced_and_scaling_multiplies_every_step():
    model = transformer_speed_model(CFG, H100, seq_len=1024, global_batch=64,
                                    measurements=(Measurement(0.2, H100, 8, 64, 1024),))
    assert model.step_time_s(0, 8) == pytest.approx(0.2, rel=1e-4)
    assert model.time_band == (0.85, 1.15)                       # ±15 % with one measurement
    cal = scale_to_step_time(model, 0.3, 0, 8)
    assert cal.step_time_s(0, 8) == pytest.approx(0.3)
    assert cal.step_time_s(0, 4) == pytest.approx(model.step_time_s(0, 4) * 1.5)
    grid = plan_grid(model, 1000, workers=[4, 8])
    assert grid["time_s"].tolist() == pytest.approx([1000 * model.step_time_s(0, 4), 1000 * 0.2], rel=1e-4)


def test_a_gpu_count_without_a_fitting_strategy_has_no_speed_and_says_why():
    big = transformer_speed_model(load_config("llama31_405b"), H100, seq_len=8192, global_batch=8)
    assert np.isnan(big.steps_per_s(0, 1))
    with pytest.raises(InputError, match="no strategy fits"):
        big.prediction(1, 8)
