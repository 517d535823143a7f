"""Every registered speed family (``core.speed.SPEED_FAMILIES``) satisfies the interface a consumer reads (issues 33
and 34): a contract test over the registry itself, never a hand-typed list of families.

Each family is fitted to one all-reduce table (Llama 3.1 8B on H100, 8 to 64 GPUs at a global batch of 32, step
times of the form ``0.3·M/w + 0.05``; the transformer model and Paleo read the model or network, device and
sequence length from the table's context columns (``SpeedFamily.context``), the others ignore them) and must
answer: its name, modes and formulas (text and LaTeX for the same modes), a fitted model whose ``family`` is its
name, positive finite step times at the measured counts, ``scaled`` multiplying every step time, parameters by
name, a report and a plain dict. Fitted again on the speeds it predicts itself, it gives them back: within 5 %,
and no worse than it fitted the table (Optimus, Pollux, overhead, elastic and Paleo to 1e-6; the bracket and the
transformer model, whose calibration is not their own least squares, to 0.2 % and 3.5 %).

The same checks run on a throwaway family registered for the test only (``steady``: every step takes the mean
measured step time); registered, it is offered without anyone naming it: by ``--model`` of ``fit-speed`` and
``plan`` (choices and help), by ``auto``, by the choices of a table and of a plan from logs, and in the message
for an unknown family.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.errors import InputError
from core.plan import log_speed_choices
from core.speed import (
    SPEED_FAMILIES,
    FittedSpeed,
    SpeedFamily,
    fit_speed,
    get_speed_family,
    speed_model_choices,
    speed_model_names,
)
from core.speed.table import normalise_speed_table

W = np.array([8, 16, 32, 64])
TABLE = pd.DataFrame({"w": W, "global_batch": 32.0, "step_time_s": 0.3 * 32 / W + 0.05, "config": "llama31_8b",
                      "device": "H100", "seq_len": 8192, "net": "alex_v2"})
OPTIONS = dict(mode="allreduce", global_batch=32.0, gpus_per_node=8, source="contract")


# --------------------------------------------------------------------------- a throwaway family
@dataclass(frozen=True, kw_only=True)
class SteadySpeed(FittedSpeed):
    """Every step takes ``seconds``, whatever the workers."""

    seconds: float = 1.0
    family = "steady"
    mode = "allreduce"
    time_unit = "s"

    def steps_per_s_at(self, p, w, global_batch):
        return np.broadcast_to(1.0 / self.seconds, np.broadcast_shapes(np.shape(p), np.shape(w))).astype(float)

    def steps_per_s(self, p, w):
        return self.steps_per_s_at(p, w, self.global_batch)

    def scaled(self, factor):
        return dataclasses.replace(self, seconds=self.seconds * factor)

    @property
    def named_params(self):
        return {"seconds": float(self.seconds)}

    def report(self):
        return "\n".join(["[[Model]]", f"    seconds = {self.seconds:g}", *self.report_tail()])

    def to_dict(self):
        return {"family": self.family, "seconds": self.seconds}


def _seconds(table, global_batch, source):
    return 1.0 / normalise_speed_table(table, global_batch=global_batch, source=source)["steps_per_s"].to_numpy(float)


def _steady_fit(table, *, mode, global_batch=None, gpus_per_node=None, source="table"):
    t = _seconds(table, global_batch, source)
    return SteadySpeed(seconds=float(np.mean(t)), n_points=len(t), mape_pct=0.0, global_batch=global_batch)


def _steady_loo(table, model, *, mode, global_batch=None, gpus_per_node=None, source="table"):
    t = _seconds(table, global_batch, source)
    return np.array([1.0 / np.mean(np.delete(t, i)) for i in range(len(t))])


STEADY = SpeedFamily("steady", "Steady", "every step takes the mean measured step time",
                     {"allreduce": "t = mean(t_i)"}, {"allreduce": r"t = \bar t"}, _steady_fit, _steady_loo)


@pytest.fixture(params=[*SPEED_FAMILIES, STEADY.name])
def family(request, monkeypatch) -> SpeedFamily:
    """Each registered family, and the throwaway one registered for this test only."""
    if request.param == STEADY.name:
        monkeypatch.setitem(SPEED_FAMILIES, STEADY.name, STEADY)
    return SPEED_FAMILIES[request.param]


def _fit(family: SpeedFamily, table: pd.DataFrame) -> FittedSpeed:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # a family's caveats (a FitWarning) are not the contract
        return family.fit(table, **OPTIONS)


def _speeds(model: FittedSpeed) -> np.ndarray:
    return np.asarray(model.steps_per_s_at(0, W, 32.0), dtype=float)


# --------------------------------------------------------------------------- what every family answers
def test_the_record_declares_its_name_modes_and_formulas(family):
    assert set(family.context) <= set(TABLE.columns)
    assert SPEED_FAMILIES[family.name] is family and get_speed_family(family.name) is family
    assert family.label and family.description
    assert family.modes and set(family.formulas) == set(family.formulas_latex)
    assert all(family.fits_mode(mode) for mode in family.modes)
    assert isinstance(family.in_auto, bool) and isinstance(family.scored_alone, bool)
    assert family.to_dict()["name"] == family.name


def test_the_fitted_model_answers_what_a_consumer_reads(family):
    model = _fit(family, TABLE)
    assert isinstance(model, FittedSpeed) and model.family == family.name
    steps = _speeds(model)
    assert steps.shape == W.shape and np.all(np.isfinite(steps)) and np.all(steps > 0)
    doubled = model.scaled(2.0)
    assert 1 / _speeds(doubled) == pytest.approx(2 / steps, rel=1e-9)
    assert model.named_params and all(isinstance(v, float) for v in model.named_params.values())
    assert model.report().startswith("[[Model]]") and "[[Fit Statistics]]" in model.report()
    assert model.to_dict()["family"] == family.name


def test_fitted_on_the_speeds_it_predicts_it_gives_them_back(family):
    first = _speeds(_fit(family, TABLE))
    miss_on_table = float(np.max(np.abs(first * TABLE["step_time_s"].to_numpy() - 1)))
    again = _speeds(_fit(family, TABLE.assign(step_time_s=1 / first)))
    miss_on_itself = float(np.max(np.abs(again / first - 1)))
    assert miss_on_itself < 0.05 and miss_on_itself <= max(miss_on_table, 1e-6)


def test_leave_one_out_predicts_each_point_or_says_it_cannot(family):
    model = _fit(family, TABLE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loo = family.loo(TABLE, model, **OPTIONS)
    assert loo is None or (np.shape(loo) == W.shape and np.all(np.isfinite(loo)) and np.all(np.asarray(loo) > 0))


def test_a_plan_from_logs_offers_every_all_reduce_family_the_logs_can_fit():
    # every all-reduce family that needs nothing beside the speeds, and the transformer model (the logs give its
    # context: the benchmark's model, the device, the sequence length); Paleo needs a network the logs do not name
    offered = log_speed_choices()
    assert offered[0] == "auto"
    assert set(offered[1:]) == {name for name, f in SPEED_FAMILIES.items() if f.fits_mode("allreduce")
                                and (not f.context or name == "transformer")}
    assert {"transformer", "bracket", "optimus"} <= set(offered) and "paleo" not in offered


# --------------------------------------------------------------------------- the product takes a new family
def test_a_registered_family_is_offered_everywhere_without_being_named(monkeypatch, capsys):
    monkeypatch.setitem(SPEED_FAMILIES, STEADY.name, STEADY)
    assert speed_model_names()[-2:] == (STEADY.name, "auto")
    assert STEADY.name in speed_model_choices(False) and STEADY.name in log_speed_choices()
    with pytest.raises(InputError, match=f"speed model: expected one of {', '.join(SPEED_FAMILIES)}; got 'nope'"):
        get_speed_family("nope")
    for command in ("fit-speed", "plan"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert STEADY.name in capsys.readouterr().out
    auto = fit_speed(TABLE[["w", "global_batch", "step_time_s"]], family="auto")
    assert STEADY.name in auto.table()["family"].tolist()
    alone = fit_speed(TABLE[["w", "global_batch", "step_time_s"]], family=STEADY.name)
    assert alone.chosen == STEADY.name and alone.model.seconds == pytest.approx(TABLE["step_time_s"].mean())
