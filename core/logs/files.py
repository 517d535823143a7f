"""Read several uploaded or built-in log files at once: each one's ``RunLog``, its gradient statistics, its error;
and name uploads so that two files of one name stay two runs and one file uploaded twice stays one
(:func:`name_uploads`).

The one home of "files → runs" for views that take a set of runs (the batch-size view, the
``batch-scaling`` command): every file is read on its own, so a bad one is reported and the
others go on.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from core.errors import LogFormatError
from core.logs.mllog_events import is_mllog
from core.logs.noise import GradientNoise, read_gradient_noise
from core.logs.reader import RunLog, read_log


@dataclass(frozen=True)
class LogFiles:
    """The readable logs (in the order given), the gradient statistics of those that have some
    (by source), and ``(source, message)`` for every file refused."""

    logs: tuple[RunLog, ...]
    noise: dict[str, GradientNoise] = field(default_factory=dict)
    errors: tuple[tuple[str, str], ...] = ()


def read_log_files(files: Sequence[tuple[str, bytes]], *, validation: bool = True) -> LogFiles:
    """Read ``(source, bytes)`` pairs; a file that cannot be read is named in ``errors``.

    ``validation=True`` (the default: the batch studies that read sets of runs measure a target on the
    validation metric) reads a Lightning ``metrics.csv`` (training and validation rows in one file) as its
    validation split where it has a validation accuracy (``val_acc``), as the course's ``_val`` file, a Pollux
    trace and an MLLOG ``eval_accuracy`` give it; ``False`` reads every file as :func:`read_log` does.

    >>> out = read_log_files([("a.csv", b"epoch,step,loss,acc\\n1,1,2.0,0.5\\n"), ("b.csv", b"")])
    >>> [log.source for log in out.logs], out.errors[0][0]
    (['a.csv'], 'b.csv')
    >>> lightning = b"epoch,step,train_loss,val_acc,val_loss\\n0,9,2.0,,\\n0,19,1.5,0.6,1.4\\n1,39,1.0,0.8,0.9\\n"
    >>> read_log_files([("m.csv", lightning)]).logs[0].roles.acc
    'val_acc'
    """
    logs, noise, errors = [], {}, []
    for source, data in files:
        try:
            log = read_log(data, source)
            if validation and log.fmt == "lightning" and log.meta.split != "val":
                val = read_log(data, source, split="val")
                if val.roles.acc is not None and val.roles.acc != log.roles.acc:
                    log = val
            stats = read_gradient_noise(data, source)
        except LogFormatError as exc:
            errors.append((source, str(exc)))
            continue
        logs.append(log)
        if stats is not None:
            noise[source] = stats
    return LogFiles(tuple(logs), noise, tuple(errors))


# --------------------------------------------------------------------------- uploads of one name
#: hex digits of the content hash that tells apart two files of one name
SHORT_HASH = 8


@dataclass(frozen=True)
class UploadNames:
    """What :func:`name_uploads` decided: for each new file the name it is loaded under (``None``: its bytes are
    loaded already, under another file), and one sentence per decision a user should hear."""

    names: tuple[str | None, ...]
    notes: tuple[str, ...] = ()


def content_digest(data: bytes) -> str:
    """A hash of a file's bytes (32 hex digits): equal bytes, equal digests.

    >>> content_digest(b"step,loss\\n")[:8]
    'ad11c7fe'
    """
    return hashlib.blake2b(bytes(data), digest_size=16).hexdigest()


def upload_label(name: str, data: bytes, digest: str | None = None) -> str:
    """A name that tells this file apart from another of the same ``name``: an MLLOG log's benchmark and system
    (``result_0.txt (llama31_8b, 2xNVIDIA GB200)``), else a short hash of its content (``a.csv (1f2e3d4c)``).

    >>> upload_label("a.csv", b"step,loss\\n1,2\\n")
    'a.csv (c177f73c)'
    """
    digest = digest or content_digest(data)
    if is_mllog(data):
        try:
            meta = read_log(data, name).meta
        except LogFormatError:
            meta = None
        model, system = (meta.model, meta.gpu or meta.system) if meta is not None else (None, None)
        if system and "placeholder" in str(system).lower():    # a template's SUBMISSION_PLATFORM_PLACEHOLDER
            system = digest[:SHORT_HASH]                        # names nothing: the content's hash instead
        parts = [str(p) for p in (model, system) if p]
        if parts:
            return f"{name} ({', '.join(parts)})"
    return f"{name} ({digest[:SHORT_HASH]})"


def name_uploads(new: Sequence[tuple[str, bytes]], held: Mapping[str, str] | None = None) -> UploadNames:
    """Names for newly uploaded files so that no two runs share one and no run is loaded twice.

    Parameters
    ----------
    new : sequence of (file name, bytes)
        The files just uploaded, in the order they came.
    held : mapping of loaded name to content digest (:func:`content_digest`), optional
        The uploads loaded already; they keep their names.

    Two files of one name and different bytes are two runs: each new one is loaded under
    :func:`upload_label` (a loaded one keeps its name). The same bytes twice, under one name or two, are one
    run: the later file is not loaded again (its name is ``None``). Each decision gets a note.

    >>> one, other = b"step,loss\\n1,2\\n", b"step,loss\\n1,3\\n"
    >>> out = name_uploads([("a.csv", one), ("a.csv", other), ("b.csv", one)])
    >>> out.names
    ('a.csv (c177f73c)', 'a.csv (26dc3a1f)', None)
    >>> print("\\n".join(out.notes))
    a.csv and a.csv differ: loaded as a.csv (c177f73c) and a.csv (26dc3a1f).
    b.csv has the same bytes as a.csv (c177f73c): loaded once, as a.csv (c177f73c).
    """
    held = dict(held or {})
    digests = [content_digest(data) for _, data in new]
    owner = {digest: name for name, digest in held.items()}     # content -> the loaded name that holds it
    first: dict[str, int] = {}                                   # content -> the first new file with it
    groups: dict[str, list[int]] = {}                            # file name -> new files of distinct content
    for i, ((name, _), digest) in enumerate(zip(new, digests)):
        if digest not in owner and digest not in first:
            first[digest] = i
            groups.setdefault(name, []).append(i)
    names: list[str | None] = [None] * len(new)
    notes: list[str] = []
    taken = set(held)
    for name, positions in groups.items():
        if len(positions) == 1 and name not in taken:
            names[positions[0]] = name
            taken.add(name)
            continue
        for i in positions:
            names[i] = _free_label(name, new[i][1], digests[i], taken)
            taken.add(names[i])
        loaded = " and ".join(names[i] for i in positions)
        notes.append(f"{name} is loaded already and the new {name} differs: loaded as {loaded}." if name in held
                     else f"{' and '.join([name] * len(positions))} differ: loaded as {loaded}.")
    for i, ((name, _), digest) in enumerate(zip(new, digests)):
        if names[i] is None:
            kept = owner.get(digest) or names[first[digest]]
            notes.append(f"{name} was uploaded twice with the same bytes: loaded once." if name == kept else
                         f"{name} has the same bytes as {kept}: loaded once, as {kept}.")
    return UploadNames(tuple(names), tuple(notes))


def _free_label(name: str, data: bytes, digest: str, taken: set[str]) -> str:
    """:func:`upload_label`, else the short hash, else the whole hash: the first that no loaded file has."""
    for label in (upload_label(name, data, digest), f"{name} ({digest[:SHORT_HASH]})", f"{name} ({digest})"):
        if label not in taken:
            return label
    return f"{name} ({digest}, {len(taken)})"
