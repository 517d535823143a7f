"""``core`` never imports streamlit: importing every module of it, in a fresh interpreter, loads no streamlit
(directly or through a dependency), so the core tests and the CLI run without it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

PROBE = """
import importlib, json, pkgutil, sys
import core
names = sorted(m.name for m in pkgutil.walk_packages(core.__path__, "core."))
for name in names:
    importlib.import_module(name)
print(json.dumps({"modules": names, "streamlit": sorted(m for m in sys.modules if m.split(".")[0] == "streamlit")}))
"""


@pytest.mark.slow
def test_importing_every_core_module_imports_no_streamlit():
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr[-2000:]
    seen = json.loads(out.stdout.splitlines()[-1])
    assert seen["streamlit"] == []
    # the probe did walk the packages: the facades and their modules, CLI commands included
    assert {"core.logs", "core.prediction.forecast", "core.cli.calibrate_cmd"} <= set(seen["modules"])


@pytest.mark.slow
def test_the_probe_would_see_streamlit():
    out = subprocess.run([sys.executable, "-c", "import streamlit\n" + PROBE], cwd=ROOT, capture_output=True,
                         text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr[-2000:]
    assert "streamlit" in json.loads(out.stdout.splitlines()[-1])["streamlit"]
