"""Where runs come from: files and folders on disk (CSV logs, MLPerf MLLOG logs, TensorBoard runs), the built-in data.

A folder is walked recursively, in name order, within bounds: at most ``MAX_FILES`` runs and
``MAX_TOTAL_BYTES`` bytes, ``MAX_DEPTH`` levels; symbolic links are not followed (no loop can
form), hidden folders (``.git``) are skipped, and devices, pipes and sockets are never opened.
In a folder, ``*.csv`` and ``*.tsv`` files are logs, ``*.txt`` and ``*.log`` files are logs
when they hold MLLOG events (``:::MLLOG``) or end in NanoGPT speedrun step lines (a README is
left alone), a ``trainer_state.json`` is a Hugging Face Trainer run (of the checkpoints
``checkpoint-<n>/`` of one folder, the latest only: it holds the whole history), and a folder
holding ``events.out.tfevents.*`` files is one TensorBoard run.  A path given by name is always
tried.  Each run is read by ``core.logs`` (no parser here), and a file that cannot be read
gets one ``(source, message)`` refusal while the others go on.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from core.errors import LogFormatError
from core.library.library import AddReport, AddResult, Library, PendingRun, Progress, check_tags
from core.library.records import content_hash
from core.logs import RunLog, depth_of, is_mllog, is_speedrun, read_log, system_description
from core.logs.tfevents import _VAL_DIRS, event_files, files_digest, is_event_file, read_tfevents
from core.tables import file_bytes

#: bounds of one import: runs, bytes in all, folder depth
MAX_FILES = 10_000
MAX_TOTAL_BYTES = 20 * 2**30
MAX_DEPTH = 32
LOG_SUFFIXES = (".csv", ".tsv")
MLLOG_SUFFIXES = (".txt", ".log")


@dataclass(frozen=True)
class Source:
    """One run to read: its name (metadata and messages), its files, and how to read them.

    ``kind`` is ``"file"`` (a CSV or MLLOG log) or ``"tfevents"`` (a TensorBoard run folder).
    """

    name: str
    paths: tuple[Path, ...]
    kind: str = "file"


@dataclass(frozen=True)
class Collected:
    """The runs found under the paths given, the paths refused (``(path, message)``) and notes."""

    sources: tuple[Source, ...]
    errors: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()


def _has_mllog_marker(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            return is_mllog(handle.read(65536))
    except OSError:
        return False


def _is_text_log(path: Path) -> bool:
    """A ``.txt``/``.log`` file a reader claims: MLLOG events in its head, or speedrun step lines at its end."""
    if _has_mllog_marker(path):
        return True
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, path.stat().st_size - 8192))
            tail = handle.read(8192)
    except OSError:
        return False
    return is_speedrun(tail[tail.find(b"\n") + 1:])


def _latest_checkpoints(entries: list) -> set[str]:
    """Of sibling ``checkpoint-<n>`` folders, the names of all but the latest (skipped: the latest holds all)."""
    numbered = []
    for entry in entries:
        name = entry.name
        if name.startswith("checkpoint-") and name[11:].isdigit():
            numbered.append((int(name[11:]), name))
    return {name for _, name in sorted(numbered)[:-1]}


class _Walk:
    """State of one collection: what was found, the bounds, what was skipped."""

    def __init__(self, max_files: int, max_bytes: int) -> None:
        self.sources: list[Source] = []
        self.errors: list[tuple[str, str]] = []
        self.seen_dirs: set[tuple[int, int]] = set()
        self.seen_runs: set[Path] = set()
        self.max_files, self.max_bytes = max_files, max_bytes
        self.bytes = 0
        self.links = self.special = 0
        self.full = False

    def add(self, source: Source, size: int, where: str) -> None:
        if self.full:
            return
        if len(self.sources) >= self.max_files or self.bytes + size > self.max_bytes:
            self.full = True
            self.errors.append((where, f"stopped collecting: more than {self.max_files:,} runs or "
                                       f"{self.max_bytes / 2**30:.0f} GB of logs. Add the folders one at a time."))
            return
        self.sources.append(source)
        self.bytes += size

    def tfevents_run(self, folder: Path, name: str) -> None:
        name = keras_run_name(name)
        key = folder.resolve()
        if key in self.seen_runs:
            return
        self.seen_runs.add(key)
        files = event_files(folder)
        self.add(Source(name, tuple(files), "tfevents"), sum(f.stat().st_size for f in files), str(folder))

    def folder(self, folder: Path, root: Path, depth: int) -> None:
        try:
            info = folder.stat()
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            self.errors.append((str(folder), f"cannot be read: {exc.strerror or exc}."))
            return
        if (info.st_dev, info.st_ino) in self.seen_dirs:
            return
        self.seen_dirs.add((info.st_dev, info.st_ino))
        rel = folder.relative_to(root).as_posix()
        if any(is_event_file(e.name) and e.is_file(follow_symlinks=False) for e in entries):
            self.tfevents_run(folder, _folder_name(folder) if rel == "." else rel)
        older = _latest_checkpoints(entries)
        for entry in entries:
            if self.full:
                return
            path = Path(entry.path)
            if entry.name in older and (path / "trainer_state.json").is_file():
                continue
            if entry.is_symlink():
                self.links += 1
            elif entry.is_dir(follow_symlinks=False):
                if entry.name.startswith("."):
                    continue
                if depth + 1 > MAX_DEPTH:
                    self.errors.append((str(path), f"not read: deeper than {MAX_DEPTH} folders."))
                else:
                    self.folder(path, root, depth + 1)
            elif entry.is_file(follow_symlinks=False):
                suffix = path.suffix.lower()
                if (suffix in LOG_SUFFIXES or entry.name == "trainer_state.json"
                        or (suffix in MLLOG_SUFFIXES and _is_text_log(path))):
                    self.add(Source(path.relative_to(root).as_posix(), (path,)), entry.stat().st_size, str(path))
            else:
                self.special += 1


def keras_run_name(name: str) -> str:
    """The run a TensorBoard folder belongs to, as ``read_tfevents_dir`` names it: Keras (and others) write
    ``<run>/train`` and ``<run>/validation``; they are the run ``<run>`` and its ``<run>_val`` twin, so the model,
    device and split come from ``<run>``.

    >>> keras_run_name("resnet20_Tesla V100/validation"), keras_run_name("cifar/resnet20_V100/train")
    ('resnet20_Tesla V100_val', 'cifar/resnet20_V100')
    >>> keras_run_name("resnet20_V100"), keras_run_name("validation")
    ('resnet20_V100', 'validation')
    """
    parent, _, last = name.rpartition("/")
    if not parent:
        return name
    if last.lower() in _VAL_DIRS:
        return f"{parent}_val"
    return parent if last.lower() == "train" else name


def _folder_name(folder: Path) -> str:
    """A run folder given by itself: its name, with its parent's when it is a ``train``/``validation`` folder."""
    folder = folder.absolute()
    if folder.name.lower() in _VAL_DIRS | {"train"} and folder.parent.name:
        return f"{folder.parent.name}/{folder.name}"
    return folder.name


def collect_sources(paths: Iterable[str | Path], *, max_files: int = MAX_FILES,
                    max_bytes: int = MAX_TOTAL_BYTES) -> Collected:
    """The runs under ``paths`` (files, TensorBoard event files, folders), within the bounds above.

    A folder's runs are named by their path inside it (``Dell/4xR750/result_0.txt``); a file
    given by name by its file name (an MLLOG file by ``<folder>/<file>``, as MLPerf's results
    repeat ``result_0.txt``); a TensorBoard run by its folder's name.
    """
    walk = _Walk(max_files, max_bytes)
    for given in paths:
        path = Path(given)
        try:
            info = path.stat()
        except OSError as exc:
            walk.errors.append((str(given), f"cannot be read: {exc.strerror or exc}. Check the path."))
            continue
        if stat.S_ISDIR(info.st_mode):
            walk.folder(path, path, 0)
        elif is_event_file(path):
            walk.tfevents_run(path.parent, _folder_name(path.absolute().parent))
        elif stat.S_ISREG(info.st_mode):
            name = path.name
            if path.absolute().parent.name and (_has_mllog_marker(path) or path.name == "trainer_state.json"):
                name = f"{path.absolute().parent.name}/{path.name}"
            walk.add(Source(name, (path,)), info.st_size, str(given))
        else:
            walk.errors.append((str(given), "expected a file or a folder; got a device, pipe or socket."))
    notes = []
    if walk.links:
        notes.append(f"{walk.links} symbolic link(s) not followed")
    if walk.special:
        notes.append(f"{walk.special} device(s), pipe(s) or socket(s) skipped")
    return Collected(tuple(walk.sources), tuple(walk.errors), tuple(notes))


@lru_cache(maxsize=256)
def parameter_count_of(model: str | None, dataset: str | None) -> int | None:
    """Parameters of ``model`` as trained on ``dataset`` (``core.models``), or None when unknown.

    Only with a data set: a name alone does not say which variant (ResNet-20 on CIFAR-10 or on
    MNIST-1D) ran.
    """
    if not model or not dataset:
        return None
    from core.models import parameter_count, registry_name  # torch: only when a count can be known

    name = registry_name(model, dataset)
    return parameter_count(name) if name else None


def with_overrides(log: RunLog, *, model: str | None = None, gpu: str | None = None,
                   global_batch: int | None = None) -> RunLog:
    """``log`` with the metadata given on the command line instead of the file name's."""
    changes = {}
    if model:
        changes.update(model=model, depth=depth_of(model))
    if gpu:
        changes["gpu"] = gpu
    if global_batch:
        changes["global_batch"] = int(global_batch)
    return log.with_meta(**changes) if changes else log


def read_source(source: Source, *, dataset: str | None = None, tags: Sequence[str] = (),
                model: str | None = None, gpu: str | None = None, global_batch: int | None = None,
                steps_per_epoch: int | None = None) -> PendingRun:
    """Read one run, ready to write (``LogFormatError`` when it cannot be read)."""
    if source.kind == "tfevents":
        digest = files_digest(source.paths)
        log = read_tfevents(source.paths, source.name, steps_per_epoch=steps_per_epoch)
    else:
        data = file_bytes(source.paths[0], source=source.name)
        digest = content_hash(data)
        path = source.paths[0]
        system = system_description(path, source.name) if is_mllog(data) else None
        log = read_log(data, source.name, steps_per_epoch=steps_per_epoch, path=str(path), system=system)
    log = with_overrides(log, model=model, gpu=gpu, global_batch=global_batch)
    return PendingRun(log, digest, dataset, tuple(tags), parameter_count_of(log.meta.model, dataset))


def pending_runs(sources: Iterable[Source], *, known: dict[str, int] | None = None,
                 **options) -> Iterator[PendingRun | AddResult | tuple[str, str]]:
    """Each source read in turn: a ``PendingRun``, an ``AddResult`` for content the library already has
    (``known``: content hash → run id, checked before reading a file), or ``(source, message)``."""
    known = known or {}
    for source in sources:
        try:
            if source.kind == "file" and known:
                data = file_bytes(source.paths[0], source=source.name)
                if content_hash(data) in known:
                    yield AddResult(source.name, known[content_hash(data)], False)
                    continue
            yield read_source(source, **options)
        except LogFormatError as exc:
            yield (source.name, str(exc))


def add_paths(library: Library, paths: Iterable[str | Path], *, tags: Sequence[str] = (),
              dataset: str | None = None, model: str | None = None, gpu: str | None = None,
              global_batch: int | None = None, steps_per_epoch: int | None = None,
              progress: Progress | None = None, max_files: int = MAX_FILES) -> AddReport:
    """Add every run under ``paths`` (see :func:`collect_sources`); each run in its own transaction."""
    tags = check_tags(tags)
    found = collect_sources(paths, max_files=max_files)
    known = library.known_hashes()
    items = pending_runs(found.sources, known=known, dataset=dataset, tags=tags, model=model, gpu=gpu,
                         global_batch=global_batch, steps_per_epoch=steps_per_epoch)
    report = library.add_runs(items, total=len(found.sources), progress=progress)
    return replace(report, errors=found.errors + report.errors, notes=found.notes + report.notes)


def builtin_sources() -> list[tuple[Source, str, tuple[str, ...]]]:
    """``(source, data set, tags)`` of every built-in run (``core.datasets``), tagged ``built-in`` and its set."""
    from core.datasets import BUILTIN_DATASETS, BUILTIN_LOG_SETS, builtin_log_files

    return [(Source(name, (path,)), BUILTIN_DATASETS[key], ("built-in", key))
            for key in BUILTIN_LOG_SETS for name, path in builtin_log_files(key)]


def add_builtin(library: Library, *, progress: Progress | None = None) -> AddReport:
    """Add the built-in runs (each set tagged with its key and ``built-in``); those present are left as they are."""
    entries = builtin_sources()
    known = library.known_hashes()

    def items():
        for source, dataset, tags in entries:
            yield from pending_runs([source], known=known, dataset=dataset, tags=tags)

    return library.add_runs(items(), total=len(entries), progress=progress)
