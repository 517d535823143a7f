"""Flags that mean something (issue 36, item 8): a flag fires where it changes what a user should do, and no
report prints an unbounded relative error."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.curves import OPTIMUS, degenerate_reason, fit_curve, optimus_loss
from core.curves.fit import fit_flags, relative_error_text
from core.logs import read_log_file
from core.runs import analyse_run

LLM = Path(__file__).resolve().parents[2] / "data" / "llm"
LORA = LLM / "mlperf_v5.0" / "llama2_70b_lora" / "Dell__16xXE9712x4GB200" / "result_0.txt"
LLAMA_8B = sorted((LLM / "mlperf_v5.1" / "llama31_8b").glob("*/result_0.txt"))


def _percentages(text: str) -> list[float]:
    return [float(m.replace(",", "")) for m in re.findall(r"±?([\d,.]+) %", text)]


def _fit_of(path: Path):
    return analyse_run(read_log_file(path, source=f"{path.parent.name}/{path.name}")).fit


def test_the_lora_run_gets_one_sentence_and_no_unbounded_percentage():
    # 5 evaluations of eval_accuracy (0.944 -> 0.925) at steps 192-384: b2 = 0.889 ± 16 %, b0 ± 661 %, b1 ± 132 %
    fit = _fit_of(LORA)
    assert fit.n_points == 5
    assert fit.flags == ("5 points: the curve is fitted to its floor only (b0, b1 not determined by so few points)",)
    assert all(p <= 1000 for p in _percentages(fit.report()))


def test_a_parameter_near_zero_is_never_printed_as_a_huge_percentage():
    # the row: b1 ~ 4e-29 with a standard error of ~10 read "±253047653346316434657815560192 %"
    params = {"b0": 0.05, "b1": 4e-29, "b2": 0.9}
    stderr = {"b0": 0.01, "b1": 10.0, "b2": 0.01}
    k = np.arange(192, 400, 48.0)
    flags = fit_flags(OPTIMUS, params, stderr, k, r2=0.9, errorbars=True)
    assert not any("%" in f for f in flags if "b1" in f)
    assert relative_error_text(4e-29, 10.0, 0.0) == "(at its bound)"
    # away from its bound, a parameter with an error of 50x its value is undetermined, not ±5000 %
    stderr = {"b0": 2.5, "b1": 0.01, "b2": 0.01}
    flags = fit_flags(OPTIMUS, {"b0": 0.05, "b1": 1.0, "b2": 0.9}, stderr, np.arange(1, 40.0), r2=0.9,
                      errorbars=True)
    assert flags == ["b0 undetermined (the data do not constrain it)"]
    # between 100 % and 1000 % the percentage is printed: 0.2 / 0.05 = 400 %
    flags = fit_flags(OPTIMUS, {"b0": 0.05, "b1": 1.0, "b2": 0.9}, {"b0": 0.2, "b1": 0.01, "b2": 0.01},
                      np.arange(1, 40.0), r2=0.9, errorbars=True)
    assert flags == ["b0 poorly determined (±400 %)"]


@settings(max_examples=200, deadline=None)
@given(value=st.floats(0, 1e6), se=st.floats(0, 1e30), lower=st.sampled_from([0.0, 1e-12, -np.inf]))
def test_relative_error_text_is_bounded(value, se, lower):
    text = relative_error_text(value, se, lower)
    assert all(p <= 1000 for p in _percentages(text)), text


@pytest.mark.parametrize("path", LLAMA_8B, ids=lambda p: p.parent.name)
def test_language_model_evaluations_are_not_called_degenerate(path):
    # 14-18 evaluations of log-perplexity from 5.6-6.6 to 3.29, R² >= 0.97: the old test (b1/b0 under the first
    # logged step) called every one "degenerate fit: the curve drops to b2 within N steps"
    fit = _fit_of(path)
    assert fit.r2 > 0.97
    assert not fit.degenerate
    assert fit.flags == ()


def test_a_pure_power_decay_after_a_late_first_step_is_sound():
    # b2 + 1/(b0·k + b1) with b1/b0 = 200 steps, logged from step 768: falls 5.2 -> 3.3, a decay like any other
    assert degenerate_reason(0.00045, 0.09, 3.14, first_step=768, last_step=11_520) is None
    k = np.linspace(768, 11_520, 15)
    fit = fit_curve(k, optimus_loss(k, 0.00045, 0.09, 3.14))
    assert not fit.degenerate


def test_a_flat_curve_is_still_degenerate_late_in_a_run():
    # a flat log after step 768 and a fit whose excess at the first step is 1e-5 of its level: degenerate
    rng = np.random.default_rng(1)
    k = np.linspace(768, 11_520, 15)
    with pytest.warns(UserWarning, match="degenerate"):
        fit = fit_curve(k, 3.3 + rng.normal(0, 1e-3, k.size))
    assert fit.degenerate and len(fit.flags) >= 1 and fit.flags[0].startswith("degenerate fit")
    assert not any("poorly determined" in f or "undetermined" in f for f in fit.flags)   # said once
    assert "drops to b2 within 0 steps" in degenerate_reason(20.0, 0.0, 3.3, first_step=768, last_step=11_520)
    # flat with a large b1 (b1/b0 = 10,000 steps, past the first): excess 1/10,001 = 3e-5 of the level 3.3
    assert degenerate_reason(1.0, 1e4, 3.3).startswith("degenerate fit: the curve is at b2 from the first logged step")
