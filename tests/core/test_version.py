"""One version: ``core.__version__`` is pyproject.toml's, written nowhere else."""

from __future__ import annotations

import re
import tomllib

import core
from tests.conftest import ROOT


def test_version_is_pyprojects():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == core.DISTRIBUTION
    assert core.__version__ == project["version"]


def test_no_other_module_writes_a_version():
    written = [str(p.relative_to(ROOT)) for p in (ROOT / "core").rglob("*.py")
               if re.search(r"^__version__\s*=\s*['\"]", p.read_text(encoding="utf-8"), re.M)]
    assert written == []
