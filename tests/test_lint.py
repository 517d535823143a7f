"""The linter runs with the suite: ruff (configured in pyproject.toml) finds nothing in the repository."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def test_ruff_finds_nothing():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", "."],
                            cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr


def _ruff(*args: str, cwd=ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def test_ruff_checks_every_python_file():
    # an exclude that swallowed a folder would make the test above pass on nothing
    shown = {line.strip() for line in _ruff("check", "--no-cache", "--show-files", ".").stdout.splitlines()}
    ours = [p for top in ("core", "pages", "tests", "bench") for p in (ROOT / top).rglob("*.py")
            if "__pycache__" not in p.parts] + [ROOT / "app.py"]
    assert len(ours) > 300
    missing = [p.relative_to(ROOT).as_posix() for p in ours if str(p) not in shown]
    assert not missing, f"ruff does not check: {missing[:10]}"


def test_ruff_reports_an_injected_violation(tmp_path):
    # the project's settings find an unused import and a line of 121 characters (the limit is 120)
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n\nx = '" + "a" * 115 + "'\n", encoding="utf-8")
    result = _ruff("check", "--no-cache", "--config", str(ROOT / "pyproject.toml"), "--output-format", "concise",
                   str(bad), cwd=tmp_path)
    assert result.returncode == 1
    assert "F401" in result.stdout and "E501" in result.stdout, result.stdout
