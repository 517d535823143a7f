"""The docstring examples of the scaling modules run and give the numbers they show."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODULES = ("core.scaling.ps_rounds", "core.scaling.sync_async", "core.scaling.measured", "core.scaling.table",
           "core.scaling.batch_size")


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, monkeypatch):
    monkeypatch.chdir(ROOT)                       # examples read data/ from the repo root
    module = importlib.import_module(name)
    failed, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert attempted > 0 and failed == 0
