"""Every benchmark's ``--help`` prints its whole text: ``bench/load.py --help`` printed the first line of its
docstring, which stopped mid-sentence (issue 36), and ten other benchmarks did the same."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WITH_OPTIONS = sorted(p for p in (ROOT / "bench").glob("*.py") if "argparse" in p.read_text(encoding="utf-8"))


def test_there_are_benchmarks_with_options():
    assert len(WITH_OPTIONS) >= 10


@pytest.mark.parametrize("script", WITH_OPTIONS, ids=lambda p: p.name)
def test_help_prints_the_whole_text(script):
    doc = ast.get_docstring(ast.parse(script.read_text(encoding="utf-8")))
    assert doc, f"{script.name} has no module docstring to print"
    out = subprocess.run([sys.executable, str(script), "--help"], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, check=True).stdout
    assert " ".join(doc.split()) in " ".join(out.split())
