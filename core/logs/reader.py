"""Read a training log of any supported format into one tidy ``RunLog``: the reader registry.

Each format is one module with a ``sniff`` (does this file look like mine?) and a ``read``;
:data:`READERS` lists them, most specific first, and :func:`read_log` hands a file to the
first whose ``sniff`` says yes.  Adding a format touches its own module and this list only.

==============  ============================  ===============================================
reader          module                        recognised by
==============  ============================  ===============================================
``mllog``       :mod:`core.logs.mllog`        the marker ``:::MLLOG`` (MLPerf result files)
``hf-trainer``  :mod:`core.logs.hf_trainer`   JSON with ``log_history`` (``trainer_state.json``)
``speedrun``    :mod:`core.logs.speedrun`     ``step:N/M ... train_time:Tms`` lines (NanoGPT)
``tfevents``    :mod:`core.logs.tfevents`     a TFRecord (its length's CRC checks), or the name
                                              ``events.out.tfevents.*`` (TensorBoard event files)
``csv``         :mod:`core.logs.csvlog`       anything else: course, Lightning, TensorBoard,
                                              W&B exports, metric traces (the header decides)
==============  ============================  ===============================================

Every entry point reads through this registry: ``python -m core fit``, ``predict`` and the other
commands (:func:`read_log_file`), the web uploader (:func:`read_log` on the uploaded bytes) and
``library add`` (whose TensorBoard runs go to the same :func:`core.logs.tfevents.read_tfevents`).
:func:`upload_types` is what an uploader's file-type filter admits, derived from the readers'
``extensions``: ``None`` (every name; the content decides) while a reader's files have no fixed
ending, as TensorBoard's do (``events.out.tfevents.1700000000.host.123.0``, ``....0.v2``, or a
host name last).

:func:`read_log_file` reads from disk and adds what lies beside the file: the MLPerf
submitter's system description (``<submitter>/systems/<system>.json`` in MLCommons' layout,
``systems/<submitter>__<system>.json`` in a flattened copy) and the folder names a speedrun
log's track is read from; a folder of TensorBoard event files reads as one run, as ``library add``
reads it.

The names ``RunLog``, ``ColumnRoles``, ``ROLES``, ``MAX_LOG_BYTES``, ``detect_format``,
``detect_roles``, ``infer_steps_per_epoch`` and ``epoch_of_step`` are re-exported here so that
``core.logs.reader`` stays the one place to import a reader's vocabulary from.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.errors import LogFormatError
from core.logs.csv_roles import detect_format, detect_roles
from core.logs.csv_steps import epoch_of_step, infer_steps_per_epoch
from core.logs.csvlog import read_csv_log
from core.logs.hf_trainer import is_trainer_state, read_trainer_state
from core.logs.mllog import read_mllog
from core.logs.mllog_events import is_mllog
from core.logs.points import check_points
from core.logs.runlog import MAX_LOG_BYTES, ROLES, ColumnRoles, RunLog
from core.logs.samples import csv_sample, mllog_sample, speedrun_sample, tfevents_sample, trainer_state_sample
from core.logs.speedrun import is_speedrun, read_speedrun
from core.logs.tfevents import (
    event_files,
    is_event_data,
    is_event_file,
    read_event_file,
    read_tfevents_bytes,
    read_tfevents_dir,
)
from core.tables import as_utf8, file_bytes

__all__ = ["MAX_LOG_BYTES", "READERS", "ROLES", "ColumnRoles", "ReadOptions", "Reader", "RunLog",
           "detect_format", "detect_roles", "epoch_of_step", "find_system_description", "infer_steps_per_epoch",
           "read_log", "read_log_file", "readable_formats", "reader_for", "reader_labels", "system_description",
           "upload_types"]

#: the largest system description read beside an MLPerf log
_MAX_SYSTEM_BYTES = 1024 * 1024


@dataclass(frozen=True)
class ReadOptions:
    """What a caller may tell a reader beyond the bytes (each reader uses what applies to it)."""

    roles: Mapping[str, str | None] | None = None
    steps_per_epoch: int | None = None
    split: str | None = None
    max_bytes: int = MAX_LOG_BYTES
    #: the submitter's system description (MLPerf), parsed JSON
    system: Mapping | None = None
    #: the file's path on disk, folders included (a speedrun log's track is in its folder names)
    path: str | None = None


@dataclass(frozen=True)
class Reader:
    """One log format: its name, a cheap test on the file's bytes, the reader, what it reads in words, the
    endings its files' names have (``None``: no fixed ending), optionally a test on a file's name that
    claims the file whatever its bytes (so a damaged file of the format gets the format's own message), its
    short name in a list of formats (``label``; the uploader's) and a tiny file of the format (``sample()``,
    made by its own module: the contract tests read it through the registry, naming no reader)."""

    name: str
    sniff: Callable[[bytes], bool]
    read: Callable[[bytes, str, ReadOptions], RunLog]
    description: str = ""
    extensions: tuple[str, ...] | None = ()
    named: Callable[[str], bool] | None = None
    label: str = ""
    sample: Callable[[], bytes] | None = None


def _read_csv(data: bytes, source: str, options: ReadOptions) -> RunLog:
    return read_csv_log(data, source, roles=options.roles, steps_per_epoch=options.steps_per_epoch,
                               split=options.split, max_bytes=options.max_bytes)


def _read_mllog(data: bytes, source: str, options: ReadOptions) -> RunLog:
    return read_mllog(data, source, split=options.split, steps_per_epoch=options.steps_per_epoch,
                            system=options.system)


def _read_speedrun(data: bytes, source: str, options: ReadOptions) -> RunLog:
    return read_speedrun(data, source, path=options.path)


def _read_hf(data: bytes, source: str, options: ReadOptions) -> RunLog:
    return read_trainer_state(data, source, split=options.split)


def _read_tfevents(data: bytes, source: str, options: ReadOptions) -> RunLog:
    return read_tfevents_bytes(data, source, roles=options.roles, steps_per_epoch=options.steps_per_epoch,
                               split=options.split, max_bytes=options.max_bytes)


#: the readers, most specific first; the CSV reader takes whatever the others do not claim
READERS: tuple[Reader, ...] = (
    Reader("mllog", is_mllog, _read_mllog, "MLPerf Training MLLOG result files (`:::MLLOG` lines)", ("txt", "log"),
           label="MLPerf MLLOG", sample=mllog_sample),
    Reader("hf-trainer", is_trainer_state, _read_hf, "Hugging Face Trainer `trainer_state.json`", ("json",),
           label="trainer_state.json", sample=trainer_state_sample),
    Reader("speedrun", is_speedrun, _read_speedrun,
           "NanoGPT speedrun logs (`step:N/M val_loss:X train_time:Tms`)", ("txt", "log"), label="NanoGPT speedrun",
           sample=speedrun_sample),
    Reader("tfevents", is_event_data, _read_tfevents, "TensorBoard event files (`events.out.tfevents.*`)", None,
           is_event_file, label="TensorBoard events", sample=tfevents_sample),
    Reader("csv", lambda data: True, _read_csv,
           "CSV logs (the course format `epoch, step, loss, acc`, PyTorch Lightning `metrics.csv`, TensorBoard "
           "or W&B scalar exports, per-epoch metric traces)", ("csv", "tsv", "txt", "log"), label="CSV",
           sample=csv_sample),
)


def upload_types(readers: tuple[Reader, ...] | None = None) -> list[str] | None:
    """The name endings an uploader admits (its ``type=``): every reader's ``extensions`` (of :data:`READERS`, read
    at each call), or ``None`` (every name, the content decides) when a reader's files have no fixed ending.

    >>> upload_types() is None            # TensorBoard: events.out.tfevents.1700000000.host.123.0
    True
    >>> {"csv", "json"} <= set(upload_types(tuple(r for r in READERS if r.extensions is not None)))
    True
    """
    readers = READERS if readers is None else readers
    if any(r.extensions is None for r in readers):
        return None
    return sorted({ext for r in readers for ext in r.extensions or ()})


def reader_labels() -> str:
    """The formats :data:`READERS` read, by their short names (the catch-all CSV first), for an uploader's label.

    >>> reader_labels().startswith("CSV, ")
    True
    """
    return ", ".join(r.label or r.name for r in sorted(READERS, key=lambda r: r.name != "csv"))


def readable_formats() -> str:
    """The formats :data:`READERS` read, in words (the catch-all CSV first), for an uploader's text.

    >>> readable_formats().startswith("CSV logs (the course format")
    True
    """
    ordered = sorted(READERS, key=lambda r: r.name != "csv")
    parts = [r.description or r.name for r in ordered]
    return ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]


def reader_for(data: bytes, source: str | None = None) -> Reader:
    """The first registered reader whose ``sniff`` claims ``data``, or whose ``named`` claims ``source``'s name.

    >>> reader_for(b':::MLLOG {"key": "run_start"}').name, reader_for(b"step,loss\\n1,2\\n").name
    ('mllog', 'csv')
    >>> reader_for(b"step:0/10 val_loss:10.8 train_time:0ms step_avg:nanms\\n").name
    'speedrun'
    >>> reader_for(b"garbled", "runs/a/events.out.tfevents.1700000000.host.1.0").name
    'tfevents'
    """
    name = Path(source).name if source else ""
    return next(r for r in READERS if r.sniff(data) or (name and r.named is not None and r.named(name)))


def read_log(data: bytes, source: str, *, roles: Mapping[str, str | None] | None = None,
             steps_per_epoch: int | None = None, split: str | None = None,
             max_bytes: int = MAX_LOG_BYTES, system: Mapping | None = None, path: str | None = None,
             min_points: int = 1, _reader: Reader | None = None) -> RunLog:
    """Read one training log from its bytes, whatever its format (see the module docstring).

    Parameters
    ----------
    data : bytes
        The file's content (never executed or unpickled).
    source : str
        The file name: used for metadata (``<model>_<GPU>[_val].csv``) and in every message.
    roles : mapping, optional
        CSV logs: the column for each role instead of the detected one (``{"loss": "val_loss"}``).
    steps_per_epoch : int, optional
        Overrides the inferred number of steps per epoch.
    split : {"train", "val"}, optional
        Overrides the split parsed from the file name.
    max_bytes : int, default MAX_LOG_BYTES
        Larger files are refused.
    system : mapping, optional
        An MLPerf submitter's system description (accelerator model, nodes, accelerators per node).
    path : str, optional
        The file's path on disk (folder names a reader may use).
    min_points : int, default 1
        A run whose best curve has fewer points at different steps is refused (``core.logs.points``); pass
        ``MIN_FIT_POINTS`` where a run is read to be fitted (``fit``, ``predict``, the pages' uploads).
    _reader : Reader, optional
        The reader :func:`reader_for` chose for these bytes already (:func:`read_log_file`), so that the
        sniffs, each a scan of the whole file, run once.

    Raises
    ------
    LogFormatError
        For anything that is not a usable log; the message starts with ``source``.

    >>> log = read_log(b"step,loss\\n1,2.0\\n2,1.0\\n", "a.csv")
    >>> log.fmt, log.metrics
    ('generic', {'loss': 'loss'})
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data must be bytes, not {type(data).__name__}")
    data = bytes(data)
    if len(data) > max_bytes:
        as_utf8(data, source, max_bytes)   # refuses it, with the one message every format shares
    if steps_per_epoch is not None and (not isinstance(steps_per_epoch, (int, np.integer)) or steps_per_epoch < 1):
        raise LogFormatError(source, f"expected steps per epoch to be an integer >= 1; got {steps_per_epoch!r}.")
    options = ReadOptions(roles=roles, steps_per_epoch=steps_per_epoch, split=split, max_bytes=max_bytes,
                          system=system, path=path)
    reader = _reader if _reader is not None else reader_for(data, source)
    return check_points(reader.read(data, source, options), min_points)   # too few: refused by name


def find_system_description(path: str | Path) -> Path | None:
    """The MLPerf system description beside a result file, or None.

    Looks for ``<submitter>/systems/<system>.json`` (MLCommons' layout:
    ``<submitter>/results/<system>/<benchmark>/result_<n>.txt``) and for
    ``systems/<submitter>__<system>.json`` (a flattened copy:
    ``<round>/<benchmark>/<submitter>__<system>/result_<n>.txt``).
    """
    path = Path(path)
    system_dir = path.parent.name
    candidates = []
    if len(path.parents) >= 4:
        # <submitter>/results/<system>/<benchmark>/result_n.txt
        submitter_root = path.parents[3]
        candidates.append(submitter_root / "systems" / f"{path.parents[1].name}.json")
    for up in path.parents[1:4]:
        candidates.append(up / "systems" / f"{system_dir}.json")
    for candidate in candidates:
        try:
            if candidate.is_file():
                return candidate
        except OSError:
            continue
    return None


def system_description(path: str | Path, source: str) -> dict | None:
    """The parsed system description beside an MLPerf result file (see :func:`find_system_description`), or None."""
    found = find_system_description(path)
    if found is None:
        return None
    data = file_bytes(found, source=found.name, max_bytes=_MAX_SYSTEM_BYTES)
    try:
        system = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LogFormatError(source, f"expected the system description {found.name} to be JSON; got "
                             f"{type(exc).__name__}. Fix it or move it out of the systems folder.") from None
    return system if isinstance(system, dict) else None


def read_log_file(path: str | Path, **kwargs) -> RunLog:
    """Read a log from disk (``source`` is the file name; see :func:`read_log`).

    An MLPerf result file is named ``<system folder>/result_<n>.txt`` and read with its
    system description where one lies in a ``systems`` folder above it; a speedrun log is named
    ``<record>/<file>``; a Hugging Face checkpoint folder (``checkpoint-500/``) is read through its
    ``trainer_state.json``; a folder of TensorBoard event files reads as one run (its event files in name
    order, as ``library add`` reads it), and one event file as that file of its folder's run.
    """
    path = Path(path)
    if path.is_dir() and (path / "trainer_state.json").is_file():
        path = path / "trainer_state.json"        # a Trainer checkpoint folder reads as its run
    elif path.is_dir() and event_files(path):
        kwargs.pop("path", None), kwargs.pop("system", None)
        min_points = kwargs.pop("min_points", 1)
        return check_points(read_tfevents_dir(path, **kwargs), min_points)
    source = kwargs.pop("source", path.name)
    data = file_bytes(path, source=source, max_bytes=kwargs.get("max_bytes", MAX_LOG_BYTES))
    reader = reader_for(data, path.name)    # each sniff scans the whole file: once per file, its answer kept
    if reader.name == "tfevents":    # read in place; the run's model and device from its folder
        kwargs.pop("path", None), kwargs.pop("system", None)
        min_points = kwargs.pop("min_points", 1)
        return check_points(read_event_file(path, source=source, **kwargs), min_points)
    kwargs.setdefault("path", str(path))
    if reader.name == "mllog":      # the first reader: claims exactly the files is_mllog claims
        if source == path.name and path.parent.name:
            source = f"{path.parent.name}/{path.name}"   # MLPerf: result_<n>.txt in a folder per system
        if kwargs.get("system") is None:
            kwargs["system"] = system_description(path, source)
    elif source == path.name and path.parent.name and (
            path.name == "trainer_state.json" or reader.name == "speedrun"
            or (reader.name == "hf-trainer" and is_speedrun(data))):
        source = f"{path.parent.name}/{path.name}"       # checkpoint-500/trainer_state.json, <record>/<uuid>.txt
    # read_log would choose by ``source``'s name (a reader may claim a file by its name): same name, same reader
    return read_log(data, source, _reader=reader if Path(source).name == path.name else None, **kwargs)
