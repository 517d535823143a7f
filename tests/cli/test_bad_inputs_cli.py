"""The bad-input corpus through the command line: one `<file>: <problem>` line each, exit 2, no traceback."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

from tests.conftest import ROOT

CORPUS_DIR = ROOT / "tests" / "data" / "bad_inputs"
_spec = importlib.util.spec_from_file_location("make_corpus", CORPUS_DIR / "make_corpus.py")
make_corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_corpus)


def test_fit_on_the_whole_corpus_prints_one_line_per_file_and_exits_2():
    names = list(make_corpus.CORPUS)
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
        assert re.match(rf"{re.escape(str(CORPUS_DIR / name))}: (?:{make_corpus.CORPUS[name][1]})", line), line
    assert lines[-3].endswith("expected a regular file; got a device, pipe or socket. Give the path of a file.")
    assert lines[-1].startswith("missing.csv: cannot be read: No such file")
    assert result.stdout.splitlines()[0].startswith("file,model,gpu,split")    # the header, no rows
    assert len(result.stdout.splitlines()) == 1
