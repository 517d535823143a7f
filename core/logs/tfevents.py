"""Read TensorBoard event files (``events.out.tfevents.*``) into a ``RunLog``, without TensorFlow.

Records are read by the ``tensorboard`` package's own loader
(``tensorboard.backend.event_processing.event_file_loader.LegacyEventFileLoader``: the TFRecord
framing with its CRC checks, and the ``Event`` protocol buffer), never by a parser of ours.
Both encodings of a scalar are decoded:

* ``simple_value`` (PyTorch's ``SummaryWriter``, tensorboardX, TensorFlow 1);
* a one-element ``tensor`` whose tag was declared by the ``scalars`` plugin (TensorFlow 2 /
  Keras, ``tensorboard.summary.Writer``); the plugin metadata usually travels with a tag's
  first event only, so a tag once declared a scalar stays one.

Histograms, images, audio and text are skipped.  One run is one directory of event files (a
run that was restarted writes several; they are read in name order and a later value for the
same tag and step replaces an earlier one).  The scalars become one row per step that has the
run's loss (or, without a loss, its accuracy), with a column per tag, ``step`` and ``time_s``
(seconds since the run's first scalar), and go through :func:`core.logs.read_log` like any
CSV log: the same column-role detection (``train_loss``, ``loss/train``, ``acc``, ``lr``,
``epoch``, ...), the same checks and the same messages.  The epoch and learning rate are
carried forward to the steps that log the loss.

A record cut short at the end of a file (a run still writing) ends the read there, as
TensorBoard does; so does a corrupted record (a failed CRC check).  Either is flagged: the
records read are counted against the file's size (each record is its bytes plus 16 bytes of
framing), and a file whose records stop before its end gives the run the flag
``<file>: event records stop at byte N of M (a record cut short or corrupted); read up to
there``, so that a damaged run never passes for a whole one.  Files larger than ``max_bytes``, devices,
pipes and directories are refused before anything is read, and at most ``MAX_LINES`` scalars
are read from a run.
"""

from __future__ import annotations

import hashlib
import re
import stat
import struct
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from core.errors import LogFormatError
from core.logs.csv_roles import detect_roles
from core.logs.csvlog import read_csv_log
from core.logs.naming import parse_run_name
from core.logs.runlog import MAX_LOG_BYTES, ROLES, RunLog
from core.tables import MAX_LINES

#: how a TensorBoard event file's name starts (``events.out.tfevents.<time>.<host>...``)
EVENT_FILE_PREFIX = "events.out.tfevents."
#: bytes around each TFRecord: its length (8), the length's CRC (4), the data's CRC (4)
RECORD_FRAMING = 16
#: tags kept as columns besides the role columns (more are dropped: a run logging every layer's norm)
MAX_EXTRA_TAGS = 200
#: directory names that mark a run's validation split (Keras writes ``train/`` and ``validation/``)
_VAL_DIRS = {"val", "valid", "validation", "eval", "test"}


def is_event_file(path: str | Path) -> bool:
    """Whether a file name is a TensorBoard event file's.

    >>> is_event_file("runs/a/events.out.tfevents.1700000000.host.1.0"), is_event_file("metrics.csv")
    (True, False)
    """
    return Path(path).name.startswith(EVENT_FILE_PREFIX)


def is_event_data(data: bytes) -> bool:
    """Whether ``data`` starts with a TFRecord: an 8-byte little-endian length, then that length's masked CRC-32C.

    The CRC (tensorboard's own ``masked_crc32c``) makes a text or other binary file pass by chance once in
    2**32; the name is not looked at (an uploaded ``events.out.tfevents.1700000000.host.123.0`` ends in ``.0``).

    >>> from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c
    >>> head = struct.pack("<Q", 24)
    >>> is_event_data(head + struct.pack("<I", masked_crc32c(head)) + bytes(28))
    True
    >>> is_event_data(b"step,loss\\n1,2.0\\n2,1.0\\n"), is_event_data(head + bytes(32))
    (False, False)
    """
    if len(data) < RECORD_FRAMING:
        return False
    (length,) = struct.unpack("<Q", data[:8])
    if length > len(data) - RECORD_FRAMING:
        return False                      # the first record's length runs past the file: not a TFRecord
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

    return struct.unpack("<I", data[8:12])[0] == masked_crc32c(data[:8])


def event_files(directory: str | Path) -> list[Path]:
    """The event files directly inside ``directory`` (one run), in name order (regular files only)."""
    directory = Path(directory)
    try:
        entries = sorted(directory.iterdir())
    except OSError:
        return []
    return [p for p in entries if is_event_file(p) and not p.is_symlink() and p.is_file()]


def _check_file(path: Path, source: str, max_bytes: int) -> int:
    try:
        info = path.stat()
    except OSError as exc:
        raise LogFormatError(source, f"cannot be read: {exc.strerror or exc}.") from None
    if not stat.S_ISREG(info.st_mode):
        raise LogFormatError(source, "expected a regular event file; got a device, pipe, socket or directory.")
    if info.st_size > max_bytes:
        raise LogFormatError(source, f"expected at most {max_bytes / 2**20:.0f} MB per event file; "
                             f"{path.name} has {info.st_size / 2**20:.1f} MB.")
    return int(info.st_size)


def files_digest(paths: Sequence[str | Path], *, max_bytes: int = MAX_LOG_BYTES) -> str:
    """SHA-256 over the names and bytes of ``paths`` (in the order given): a run directory's content hash.

    Each file is checked (a regular file, at most ``max_bytes``) and read in 1 MiB pieces.
    """
    h = hashlib.sha256()
    for p in map(Path, paths):
        _check_file(p, p.name, max_bytes)
        h.update(p.name.encode() + b"\0")
        read = 0
        try:
            with open(p, "rb") as handle:
                while chunk := handle.read(2**20):
                    read += len(chunk)
                    if read > max_bytes:
                        raise LogFormatError(p.name, f"expected at most {max_bytes / 2**20:.0f} MB; the file "
                                             "grew past it while it was read.")
                    h.update(chunk)
        except OSError as exc:
            raise LogFormatError(p.name, f"cannot be read: {exc.strerror or exc}.") from None
        h.update(b"\0")
    return h.hexdigest()


def read_event_scalars(path: str | Path, *, source: str | None = None, max_bytes: int = MAX_LOG_BYTES,
                       max_values: int = MAX_LINES) -> pd.DataFrame:
    """The scalars of one event file: columns ``tag, step, wall_time, value`` in file order.

    Raises
    ------
    LogFormatError
        Not a regular file, larger than ``max_bytes``, or more than ``max_values`` scalars.
    """
    from google.protobuf.message import DecodeError
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto import event_pb2
    from tensorboard.util import tensor_util

    path = Path(path)
    source = source or path.name
    size = _check_file(path, source, max_bytes)
    tags, steps, walls, values = [], [], [], []
    declared: set[str] = set()
    consumed = 0
    try:
        for record in RawEventFileLoader(str(path)).Load():
            consumed += len(record) + RECORD_FRAMING
            event = event_pb2.Event.FromString(record)
            if not event.HasField("summary"):
                continue
            for v in event.summary.value:
                kind = v.WhichOneof("value")
                if kind == "simple_value":
                    value = float(v.simple_value)
                elif kind == "tensor":
                    if v.metadata.plugin_data.plugin_name == "scalars":
                        declared.add(v.tag)
                    if v.tag not in declared:
                        continue
                    array = tensor_util.make_ndarray(v.tensor)
                    if array.size != 1 or array.dtype.kind not in "biuf":
                        continue
                    value = float(array.reshape(-1)[0])
                else:
                    continue
                tags.append(v.tag)
                steps.append(int(event.step))
                walls.append(float(event.wall_time))
                values.append(value)
                if len(values) > max_values:
                    raise LogFormatError(source, f"expected at most {max_values:,} scalars; the run logs more. "
                                         "Log less often, or export the scalars you need as CSV.")
    except (OSError, ValueError, TypeError, DecodeError) as exc:   # unreadable, a malformed event or tensor
        raise LogFormatError(source, f"expected TensorBoard event records; reading failed: {exc}.") from None
    frame = pd.DataFrame({"tag": pd.Series(tags, dtype=object), "step": pd.Series(steps, dtype="int64"),
                          "wall_time": pd.Series(walls, dtype="float64"),
                          "value": pd.Series(values, dtype="float64")})
    if consumed < size:
        frame.attrs["damaged"] = (f"{path.name}: event records stop at byte {consumed:,} of {size:,} (a record "
                                  "cut short or corrupted); read up to there")
    return frame


def wide_scalars(scalars: pd.DataFrame) -> pd.DataFrame:
    """One row per step, one column per tag (the latest write wins), plus ``step`` and ``time_s``."""
    scalars = scalars.drop_duplicates(["tag", "step"], keep="last")
    wide = scalars.pivot(index="step", columns="tag", values="value").sort_index()
    wide.columns = [f"tag:{c}" if c in ("step", "time_s") else str(c) for c in wide.columns]
    times = scalars.groupby("step")["wall_time"].max().reindex(wide.index)
    wide.insert(0, "time_s", (times - scalars["wall_time"].min()).to_numpy())
    wide.insert(0, "step", wide.index.to_numpy())
    return wide.reset_index(drop=True)


def table_for_reader(wide: pd.DataFrame, source: str, roles: Mapping[str, str | None] | None,
                      split: str) -> tuple[pd.DataFrame, dict[str, str | None]]:
    """The rows and columns handed to ``read_log``: rows with the main metric, epoch and lr carried forward."""
    columns = list(wide.columns)
    found = detect_roles(columns, source=source, split=split).to_dict()
    found["step"], found["time"] = "step", "time_s"
    for role, col in (roles or {}).items():
        if role not in ROLES:
            raise LogFormatError(source, f"expected a column role among {', '.join(ROLES)}; got {role!r}.")
        if col is not None and col not in columns:
            raise LogFormatError(source, f"expected a tag named {col!r} for {role}; the run's scalar tags "
                                 f"are {', '.join(c for c in columns if c not in ('step', 'time_s'))}.")
        found[role] = col
    main = found["loss"] or found["acc"]
    if main is None:
        tags = [c for c in columns if c not in ("step", "time_s")]
        raise LogFormatError(source, f"expected a loss or accuracy scalar (loss, train_loss, acc, ...); got tags "
                             f"{', '.join(tags[:20])}{' ...' if len(tags) > 20 else ''}. Name it with --role or "
                             "log it under such a tag.")
    for role in ("epoch", "lr"):
        if found[role] is not None:
            wide[found[role]] = wide[found[role]].ffill()
    wide = wide[wide[main].notna()]
    used = [c for c in dict.fromkeys(found.values()) if c is not None]
    extra = [c for c in columns if c not in used][:MAX_EXTRA_TAGS]
    return wide[[c for c in columns if c in used or c in extra]], found


def read_tfevents(paths: Sequence[str | Path], source: str, *, roles: Mapping[str, str | None] | None = None,
                  steps_per_epoch: int | None = None, split: str | None = None,
                  max_bytes: int = MAX_LOG_BYTES) -> RunLog:
    """Read one run's event files (``paths``, in order) as a ``RunLog`` named ``source``.

    Parameters
    ----------
    paths : sequence of path
        The run's event files (:func:`event_files` of its directory).
    source : str
        The run's name, used for metadata (``resnet20_V100`` → ResNet-20 on a V100) and in
        every message.
    roles, steps_per_epoch, split
        As for :func:`core.logs.read_log`; ``roles`` name scalar tags.
    max_bytes : int
        The largest event file accepted.

    Raises
    ------
    LogFormatError
        No event file, no scalar, no loss or accuracy tag, or any refusal of ``read_log``.
    """
    if not paths:
        raise LogFormatError(source, "expected TensorBoard event files (events.out.tfevents.*); found none.")
    if steps_per_epoch is not None and (not isinstance(steps_per_epoch, (int, np.integer)) or steps_per_epoch < 1):
        raise LogFormatError(source, f"expected steps per epoch to be an integer >= 1; got {steps_per_epoch!r}.")
    frames = [read_event_scalars(p, source=source, max_bytes=max_bytes) for p in paths]
    damaged = tuple(f.attrs["damaged"] for f in frames if "damaged" in f.attrs)
    scalars = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    if scalars.empty:
        raise LogFormatError(source, "expected scalar summaries in the event files; found none (an empty, "
                             "garbled or histogram-only run).")
    meta_split = split or parse_run_name(source).split
    table, found = table_for_reader(wide_scalars(scalars), source, roles, meta_split)
    data = table.to_csv(index=False, float_format="%.17g", na_rep="").encode()
    log = read_csv_log(data, source, roles=found, steps_per_epoch=steps_per_epoch, split=split)
    return replace(log, fmt="tfevents", flags=damaged + log.flags)


def read_tfevents_bytes(data: bytes, source: str, **kwargs) -> RunLog:
    """Read one event file from its bytes (an upload, or a file ``core.logs.read_log`` was handed), as
    :func:`read_tfevents` reads it from disk: the bytes go to a private temporary file for tensorboard's
    loader, named as ``source`` is when that is a plain event-file name (the damage flag names it).
    """
    name = Path(str(source)).name
    if not (is_event_file(name) and re.fullmatch(r"[\w.\-]{1,200}", name)):
        name = EVENT_FILE_PREFIX + "upload"
    with tempfile.TemporaryDirectory(prefix="tta-tfevents-") as folder:
        path = Path(folder) / name
        path.write_bytes(bytes(data))
        return read_tfevents([path], source, **kwargs)


def run_name(directory: str | Path) -> str:
    """The run a folder of event files is: its name, or ``<parent>_val`` for a ``validation`` (``val``,
    ``eval``, ``test``) folder, the validation split of the run named by its parent (Keras' layout).

    >>> run_name("runs/resnet20_V100"), run_name("runs/resnet20_V100/validation")
    ('resnet20_V100', 'resnet20_V100_val')
    """
    directory = Path(directory).resolve()
    name, parent = directory.name, directory.parent.name
    return f"{parent}_val" if name.lower() in _VAL_DIRS and parent else name


def read_tfevents_dir(directory: str | Path, *, source: str | None = None, **kwargs) -> RunLog:
    """Read the run in ``directory`` (its event files, not its subdirectories).

    ``source`` defaults to :func:`run_name`; a directory named ``validation`` (or ``val``,
    ``eval``, ``test``) is the validation split of the run named by its parent.
    """
    directory = Path(directory)
    if directory.resolve().name.lower() in _VAL_DIRS:
        kwargs.setdefault("split", "val")
    return read_tfevents(event_files(directory), source or run_name(directory), **kwargs)


def read_event_file(path: str | Path, *, source: str | None = None, **kwargs) -> RunLog:
    """Read one event file on disk as its run: model, device and split from its folder (:func:`run_name`, as
    for :func:`read_tfevents_dir`), the run named ``source`` (default: the file's name) in the result and in
    every message.  ``kwargs`` as for :func:`read_tfevents`.
    """
    path = Path(path)
    source = source or path.name
    if path.parent.resolve().name.lower() in _VAL_DIRS:
        kwargs.setdefault("split", "val")
    try:
        log = read_tfevents([path], run_name(path.parent), **kwargs)
    except LogFormatError as exc:
        raise LogFormatError(source, exc.problem) from None
    return replace(log, source=source)
