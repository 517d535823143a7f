"""Every registered speed family satisfies the interface a consumer reads (issue 33): a contract test over the
registry itself, never a hand-typed list of families.

Each family is fitted to one all-reduce table (Llama 3.1 8B on H100, 8 to 64 GPUs at a global batch of 32, step
times of the form ``0.3·M/w + 0.05``; the transformer model and Paleo read the model or network, device and
sequence length from the table's context columns (``SpeedFamily.context``), the others ignore them) and must
answer: its name, modes and formulas (text and LaTeX for the same modes), a fitted model whose ``family`` is its
name, finite step times at the measured counts, ``scaled`` multiplying every step time, parameters by name, a
report and a plain dict.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.plan import log_speed_choices
from core.speed import SPEED_FAMILIES, FittedSpeed

W = np.array([8, 16, 32, 64])
TABLE = pd.DataFrame({"w": W, "global_batch": 32.0, "step_time_s": 0.3 * 32 / W + 0.05, "config": "llama31_8b",
                      "device": "H100", "seq_len": 8192, "net": "alex_v2"})


@pytest.fixture(scope="module", params=list(SPEED_FAMILIES))
def fitted(request):
    family = SPEED_FAMILIES[request.param]
    return family, family.fit(TABLE, mode="allreduce", global_batch=32.0, gpus_per_node=8, source="contract")


def test_the_record_declares_its_name_modes_and_formulas(fitted):
    family, _ = fitted
    assert set(family.context) <= set(TABLE.columns)
    assert SPEED_FAMILIES[family.name] is family
    assert family.label and family.description
    assert family.modes and set(family.formulas) == set(family.formulas_latex)
    assert all(family.fits_mode(mode) for mode in family.modes)
    assert family.to_dict()["name"] == family.name


def test_the_fitted_model_answers_what_a_consumer_reads(fitted):
    family, model = fitted
    assert isinstance(model, FittedSpeed) and model.family == family.name
    steps = np.asarray(model.steps_per_s_at(0, W, 32.0), dtype=float)
    assert steps.shape == W.shape and np.all(np.isfinite(steps)) and np.all(steps > 0)
    doubled = model.scaled(2.0)
    assert 1 / np.asarray(doubled.steps_per_s_at(0, W, 32.0)) == pytest.approx(2 / steps, rel=1e-9)
    assert model.named_params and all(isinstance(v, float) for v in model.named_params.values())
    assert model.report().startswith("[[Model]]") and "[[Fit Statistics]]" in model.report()
    assert model.to_dict()["family"] == family.name


def test_a_plan_from_logs_offers_every_all_reduce_family_the_logs_can_fit():
    # every all-reduce family that needs nothing beside the speeds, and the transformer model (the logs give its
    # context: the benchmark's model, the device, the sequence length); Paleo needs a network the logs do not name
    offered = log_speed_choices()
    assert offered[0] == "auto"
    assert set(offered[1:]) == {name for name, f in SPEED_FAMILIES.items() if f.fits_mode("allreduce")
                                and (not f.context or name == "transformer")}
    assert {"transformer", "bracket", "optimus"} <= set(offered) and "paleo" not in offered
