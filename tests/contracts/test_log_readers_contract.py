"""Every log reader (``core.logs.READERS``) does what the entry points rely on: a contract over the registry
itself, never a hand-typed list of readers (issue 34).

A reader: a unique name, a description and a short label, its name endings (lower case, no dot) or ``None``,
and a tiny file of its own format (``Reader.sample()``). The registry hands that file to the reader itself
(every reader before it refuses it; the catch-all last takes what none claims); read through ``read_log`` it
is a run with a curve of at least ``MIN_FIT_POINTS`` finite points at different steps (what a curve fit
needs), its source the given name; the uploader admits its name ending; an empty file is refused with the
file's name, and a file cut in half is refused with its name or read with a flag saying what was lost.

Each check runs on a throwaway reader too (``throwaway``: a ``# throwaway log`` line, then CSV, a format no real
reader claims), registered before the catch-all for that test only; registered, it is used without anyone
naming it: the registry picks it for its files, the uploader's label, text and name endings list it, and
``python -m core fit`` reads a ``.throwaway`` file through it.
"""

from __future__ import annotations

import numpy as np
import pytest

from core.cli import main
from core.errors import LogFormatError
from core.logs import (
    MIN_FIT_POINTS,
    READERS,
    is_forecastable,
    read_log,
    read_log_file,
    readable_formats,
    reader_for,
    reader_labels,
    upload_types,
)
from core.logs import reader as registry
from core.logs.csvlog import read_csv_log
from core.logs.reader import Reader, ReadOptions

# --------------------------------------------------------------------------- a throwaway reader
#: the first line of the throwaway format (no real reader's files start so): CSV of ``step, loss`` follows
MAGIC = b"# throwaway log\n"
STEPS = (10, 20, 30, 40, 50)


def _read_throwaway(data: bytes, source: str, options: ReadOptions):
    return read_csv_log(data[len(MAGIC):], source, max_bytes=options.max_bytes)


def _throwaway_sample() -> bytes:
    return MAGIC + b"step,loss\n" + "".join(f"{s},{2.0 / (1 + s / 20) + 0.1}\n" for s in STEPS).encode()


THROWAWAY = Reader("throwaway", lambda data: data.startswith(MAGIC), _read_throwaway,
                   "throwaway logs (a `# throwaway log` line, then CSV)", ("throwaway",), label="throwaway log",
                   sample=_throwaway_sample)


def _register(monkeypatch) -> tuple[Reader, ...]:
    """The registry with the throwaway reader before the catch-all (the last reader), for this test only."""
    readers = (*READERS[:-1], THROWAWAY, READERS[-1])
    monkeypatch.setattr(registry, "READERS", readers)
    return readers


@pytest.fixture(params=[*(r.name for r in READERS), THROWAWAY.name])
def reader(request, monkeypatch) -> Reader:
    """Each registered reader, and the throwaway one registered for this test only."""
    readers = _register(monkeypatch) if request.param == THROWAWAY.name else READERS
    return next(r for r in readers if r.name == request.param)


def _file_name(reader: Reader) -> str:
    return f"run.{reader.extensions[0]}" if reader.extensions else "run"


# --------------------------------------------------------------------------- what every reader does
def test_the_record_is_whole(reader):
    names = [r.name for r in registry.READERS]
    assert names.count(reader.name) == 1 and reader.description and reader.label
    assert reader.extensions is None or (reader.extensions and all(
        e == e.lower() and e and not e.startswith(".") for e in reader.extensions))
    assert callable(reader.sniff) and callable(reader.read) and callable(reader.sample)


def test_the_registry_hands_its_own_file_to_it(reader):
    sample = reader.sample()
    assert reader.sniff(sample) and reader_for(sample) is reader
    before = registry.READERS[:registry.READERS.index(reader)]
    assert not any(r.sniff(sample) for r in before)


def test_its_file_reads_to_a_run_with_a_curve(reader):
    log = read_log(reader.sample(), _file_name(reader), min_points=4)
    assert log.source == _file_name(reader)
    assert log.metrics and is_forecastable(log) and log.frame["global_step"].nunique() >= MIN_FIT_POINTS
    curve = log.frame["loss" if log.roles.loss else "acc"].dropna()
    assert len(curve) >= MIN_FIT_POINTS and np.isfinite(curve.to_numpy(float)).all()


def test_the_uploader_admits_its_files(reader):
    types = upload_types()
    assert types is None or set(reader.extensions) <= set(types)
    with_endings = tuple(r for r in registry.READERS if r.extensions is not None)
    assert reader.extensions is None or set(reader.extensions) <= set(upload_types(with_endings))


def test_an_empty_file_is_refused_by_name_and_half_a_file_is_refused_or_flagged(reader):
    with pytest.raises(LogFormatError, match=r"^empty\.bin: "):
        reader.read(b"", "empty.bin", ReadOptions())
    sample = reader.sample()
    try:
        log = reader.read(sample[:len(sample) // 2], "half.bin", ReadOptions())
    except LogFormatError as err:
        assert str(err).startswith("half.bin: ")
    else:
        assert log.flags, "half a file read as a whole one"


# --------------------------------------------------------------------------- the product takes a new reader
def test_a_registered_reader_is_used_everywhere_without_being_named(monkeypatch, tmp_path, capsys):
    readers = _register(monkeypatch)
    sample = THROWAWAY.sample()
    assert reader_for(sample) is THROWAWAY and all(reader_for(r.sample()) is r for r in readers)
    assert THROWAWAY.label in reader_labels() and THROWAWAY.description in readable_formats()
    assert upload_types() is None or "throwaway" in upload_types()
    assert "throwaway" in upload_types(tuple(r for r in readers if r.extensions is not None))
    path = tmp_path / "run.throwaway"
    path.write_bytes(sample)
    assert read_log_file(path).frame["loss"].tolist() == pytest.approx([2.0 / (1 + s / 20) + 0.1 for s in STEPS])
    assert main(["fit", str(path)]) == 0
    out = capsys.readouterr().out
    assert "run.throwaway" in out
