"""The speed-model registry: records, the chooser over them, and a family added without touching the chooser."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from core.errors import InputError
from core.speed import (
    SPEED_FAMILIES,
    FittedSpeed,
    PolluxSpeedModel,
    SpeedModel,
    fit_speed,
    get_speed_family,
    scale_to_step_time,
    speed_model_choices,
)
from tests.contracts.test_speed_families_contract import STEADY


def test_the_registry_lists_optimus_and_pollux_by_name():
    # what every family must do: tests/contracts/test_speed_families_contract.py
    assert {"optimus", "pollux"} <= set(SPEED_FAMILIES)
    assert get_speed_family("optimus").modes == ("sync", "async", "allreduce")
    assert get_speed_family("pollux").modes == ("allreduce",)
    assert SpeedModel.family == "optimus" and PolluxSpeedModel.family == "pollux"
    names = ", ".join(SPEED_FAMILIES)
    with pytest.raises(InputError, match=rf"speed model: expected one of {names}; got 'roofline'"):
        get_speed_family("roofline")


def test_both_models_share_one_base_with_the_eight_fields():
    shared = ("global_batch", "source", "mape_pct", "n_points", "flags", "loo_mape_pct", "time_band", "level")
    base = tuple(f.name for f in dataclasses.fields(FittedSpeed))
    assert base == shared
    for cls in (SpeedModel, PolluxSpeedModel):
        assert issubclass(cls, FittedSpeed)
        own = [f.name for f in dataclasses.fields(cls) if f.name not in shared]
        assert own == (["mode", "theta", "time_unit"] if cls is SpeedModel else ["params", "gpus_per_node"])


def test_the_families_a_table_offers():
    with_ps = speed_model_choices(True)                           # Pollux has no parameter servers
    assert with_ps == tuple(n for n, f in SPEED_FAMILIES.items() if f.fits_mode("sync")) and "pollux" not in with_ps
    assert speed_model_choices(False) == (*(n for n, f in SPEED_FAMILIES.items() if f.fits_mode("allreduce")), "auto")


def test_scaling_to_a_measured_step_works_for_every_family():
    optimus = SpeedModel("allreduce", (0.001, 0.05, 0.002), global_batch=256)    # 0.098 s at w = 8
    pollux = PolluxSpeedModel((0.05, 0.001, 0.02, 0.005, 0.0, 0.01, 0.002, 1.0), gpus_per_node=4,
                              global_batch=800)                                   # 0.2 s at w = 8
    for model, before in ((optimus, 0.098), (pollux, 0.2)):
        assert model.step_time_s(0, 8) == pytest.approx(before)
        cal = scale_to_step_time(model, 0.49, 0, 8)
        assert cal.step_time_s(0, 8) == pytest.approx(0.49)
        assert cal.step_time_s(0, 4) == pytest.approx(model.step_time_s(0, 4) * 0.49 / before)
    assert scale_to_step_time(pollux, 0.49, 0, 8).params[-1] == 1.0            # γ is not a time: kept


def test_an_unscored_fit_is_the_familys_plain_fit():
    w = [1, 2, 4, 8, 16]
    tab = pd.DataFrame({"w": w, "global_batch": 256, "step_time_s": [0.001 * 256 / k + 0.05 + 0.002 * k for k in w]})
    plain = fit_speed(tab, family="optimus", score=None)                       # Optimus: not scored alone
    assert not plain.scored and plain.model.loo_mape_pct is None and "[[Choice]]" not in plain.report()
    scored = fit_speed(tab, family="optimus")
    assert scored.scored and scored.model.loo_mape_pct == pytest.approx(0.0, abs=1e-9)
    assert "[[Choice]]" in scored.report()
    names = ", ".join(SPEED_FAMILIES)
    with pytest.raises(InputError, match=rf"speed model: expected one of {names}, auto; got 'roofline'"):
        fit_speed(tab, family="roofline")


# --- a third family, registered the way a new module would be (the contract tests' throwaway one) -------------
def test_a_registered_family_is_fitted_scored_and_chosen_without_touching_the_chooser(monkeypatch):
    monkeypatch.setitem(SPEED_FAMILIES, STEADY.name, STEADY)
    assert speed_model_choices(False)[-2:] == (STEADY.name, "auto")
    # step times 1, 2, 3 s: the mean 2 s; left out in turn, the mean of the others is 2.5, 2 and 1.5 s, so the
    # speeds 1/2.5, 1/2, 1/1.5 against 1, 1/2, 1/3 miss by 60 %, 0 % and 100 %: leave-one-out MAPE 53.33 %
    tab = pd.DataFrame({"w": [1, 2, 4], "global_batch": 64, "step_time_s": [1.0, 2.0, 3.0]})
    fit = fit_speed(tab, family=STEADY.name)
    assert fit.chosen == STEADY.name and fit.model.seconds == pytest.approx(2.0)
    assert fit.model.loo_mape_pct == pytest.approx(160 / 3)
    # with Optimus beside it on points Optimus fits exactly, auto keeps Optimus
    w = [1, 2, 4, 8, 16]
    exact = pd.DataFrame({"w": w, "global_batch": 256, "step_time_s": [0.001 * 256 / k + 0.05 + 0.002 * k for k in w]})
    auto = fit_speed(exact, family="auto")
    assert auto.chosen == "optimus" and STEADY.name in auto.table()["family"].tolist()
