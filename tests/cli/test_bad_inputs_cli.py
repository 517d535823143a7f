"""The bad-input corpus through the command line: one `<file>: <problem>` line each, exit 2, no traceback."""

from __future__ import annotations

import importlib.util
import io
import re
import subprocess
import sys

import pandas as pd

from tests.conftest import ROOT

CORPUS_DIR = ROOT / "tests" / "data" / "bad_inputs"
_spec = importlib.util.spec_from_file_location("make_corpus", CORPUS_DIR / "make_corpus.py")
make_corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_corpus)


EXPECTED = {**make_corpus.CORPUS, **make_corpus.UNFIT}


def test_fit_on_the_whole_corpus_prints_one_line_per_file_and_exits_2():
    names = list(EXPECTED)
    paths = [str(CORPUS_DIR / n) for n in names] + ["/dev/zero", str(ROOT / "data" / "logs"), "missing.csv"]
    result = subprocess.run([sys.executable, "-m", "core", "fit", *paths], cwd=ROOT, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == len(paths), lines
    for path, line in zip(paths, lines):
        assert line.startswith(f"{path}: "), line
    for name, line in zip(names, lines):
        assert re.match(rf"{re.escape(str(CORPUS_DIR / name))}: (?:{EXPECTED[name][1]})", line), line
    assert lines[-3].endswith("expected a regular file; got a device, pipe or socket. Give the path of a file.")
    assert lines[-1].startswith("missing.csv: cannot be read: No such file")
    assert result.stdout.splitlines()[0].startswith("file,model,gpu,split")    # the header, no rows
    assert len(result.stdout.splitlines()) == 1


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def test_each_run_too_short_to_fit_gets_one_line_and_exit_2_from_fit_and_predict():
    """Issue 36: one file at a time, as a user runs it: one stderr line naming the file, exit 2, no row."""
    for name, (_, problem) in make_corpus.UNFIT.items():
        path = str(CORPUS_DIR / name)
        for command in (["fit", path], ["predict", path, "--target-acc", "0.9"]):
            result = _run(*command)
            lines = result.stderr.strip().splitlines()
            assert result.returncode == 2 and len(lines) == 1, (command, result.stderr)
            assert re.match(rf"{re.escape(path)}: (?:{problem})", lines[0]), lines[0]
            assert name not in result.stdout


def test_a_good_run_with_semicolons_or_a_decimal_comma_is_fitted_as_the_comma_file():
    paths = [str(CORPUS_DIR / n) for n in make_corpus.READABLE]
    result = _run("fit", *paths, "--no-extra")
    assert result.returncode == 0 and result.stderr == "", result.stderr
    table = pd.read_csv(io.StringIO(result.stdout))
    assert table["file"].tolist() == paths and (table["n_points"] == 10).all()
    assert table["b0"].round(6).nunique() == 1          # the same numbers, whatever the separator
