"""An export as a ZIP file (the Library page's download), unpacked within bounds for an import.

The ZIP is untrusted: before anything is written, its directory is checked: at most
``MAX_ZIP_MEMBERS`` members; no member that is encrypted, a symbolic link, or whose path is absolute
or climbs out of the archive (``..``); one ``manifest.json``; the export's files (``manifest.json``
and ``<table>.parquet``) at most ``MAX_IMPORT_BYTES`` uncompressed in all (the bound an import puts on
a folder's uncompressed tables) and the manifest at most ``MAX_MANIFEST_BYTES``.  Only those files
are written, under names this module chooses, into a temporary folder, each read no further than
the size its header declares (a ZIP bomb stops at the bound); other members are ignored.  The
folder then goes through the same checks as an export folder (:func:`core.library.import_library`).
"""

from __future__ import annotations

import contextlib
import shutil
import stat
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from core.errors import InputError
from core.library.schema import TABLES

MANIFEST = "manifest.json"
#: the most members a ZIP of an export may hold (an export writes at most six files and a folder)
MAX_ZIP_MEMBERS = 64
#: the most bytes an import reads: a folder's tables once uncompressed (``exchange``), a ZIP's files once unpacked
MAX_IMPORT_BYTES = 256 * 2**20
MAX_MANIFEST_BYTES = 1 << 20
EXPORT_FILES = frozenset({MANIFEST, *(f"{table}.parquet" for table in TABLES)})


def is_zip(path: Path) -> bool:
    """Whether ``path`` is a file that starts as a ZIP does (a member's or an empty archive's signature)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(4) in (b"PK\x03\x04", b"PK\x05\x06")
    except OSError:
        return False


def _member_path(where: Path, info: zipfile.ZipInfo) -> PurePosixPath:
    """The member's path inside the archive, refused when it could land outside it or is not a plain file."""
    name = info.filename.replace("\\", "/")
    path = PurePosixPath(name)
    if name.startswith("/") or (len(name) > 1 and name[1] == ":") or ".." in path.parts:
        raise InputError(f"{where}: expected member paths inside the archive; {info.filename[:120]!r} points "
                         "outside it. Nothing was imported.")
    if info.flag_bits & 0x1:
        raise InputError(f"{where}: expected an unencrypted ZIP; {info.filename[:120]!r} is encrypted. Nothing was "
                         "imported.")
    if stat.S_ISLNK(info.external_attr >> 16):
        raise InputError(f"{where}: expected plain files in the ZIP; {info.filename[:120]!r} is a symbolic link. "
                         "Nothing was imported.")
    return path


def _export_members(where: Path, archive: zipfile.ZipFile) -> dict[str, zipfile.ZipInfo]:
    """The export's files (file name → member): those in the folder holding the one ``manifest.json``."""
    infos = archive.infolist()
    if len(infos) > MAX_ZIP_MEMBERS:
        raise InputError(f"{where}: expected the ZIP of one library export (at most {MAX_ZIP_MEMBERS} members); "
                         f"got {len(infos):,}. Nothing was imported.")
    paths = [(_member_path(where, info), info) for info in infos]
    manifests = [p for p, info in paths if p.name == MANIFEST and not info.is_dir()]
    if len(manifests) != 1:
        found = "none" if not manifests else ", ".join(str(p) for p in manifests)[:200]
        raise InputError(f"{where}: expected one {MANIFEST} of a library export in the ZIP (the Library page's "
                         f"Export, or a zipped export folder); found {found}. Nothing was imported.")
    folder = manifests[0].parent
    members = {p.name: info for p, info in paths if p.parent == folder and p.name in EXPORT_FILES
               and not info.is_dir()}
    total = sum(info.file_size for info in members.values())
    if members[MANIFEST].file_size > MAX_MANIFEST_BYTES:
        raise InputError(f"{where}: expected a {MANIFEST} of at most {MAX_MANIFEST_BYTES / 2**20:g} MB; it unpacks to "
                         f"{members[MANIFEST].file_size / 2**20:,.1f} MB. Nothing was imported.")
    if total > MAX_IMPORT_BYTES:
        raise InputError(f"{where}: expected an export of at most {MAX_IMPORT_BYTES // 2**20:,} MB unpacked; its files "
                         f"take {total / 2**20:,.1f} MB. Export it in parts (library export --filter ...) and import "
                         "each. Nothing was imported.")
    return members


def _unpack(where: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo, dest: Path) -> None:
    """Write one member to ``dest``, never more than its declared size (zipfile checks the CRC at the end)."""
    left = info.file_size
    with archive.open(info) as source, open(dest, "wb") as out:
        while chunk := source.read(min(2**20, left + 1)):
            left -= len(chunk)
            if left < 0:
                raise InputError(f"{where}: {info.filename[:120]!r} holds more than the {info.file_size:,} bytes "
                                 "its header declares. Nothing was imported.")
            out.write(chunk)


@contextlib.contextmanager
def unpacked_export(path: str | Path) -> Iterator[Path]:
    """The export in the ZIP ``path``, checked and unpacked into a temporary folder (removed afterwards).

    Raises
    ------
    InputError
        One line naming the ZIP: not a ZIP, too many members, a member outside the archive, encrypted
        or a link, no or several manifests, too large once unpacked, damaged.
    """
    where = Path(path)
    tmp = Path(tempfile.mkdtemp(prefix="tta-import-"))
    try:
        try:
            with zipfile.ZipFile(where) as archive:
                members = _export_members(where, archive)
                for name, info in members.items():
                    _unpack(where, archive, info, tmp / name)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError, OSError) as exc:
            raise InputError(f"{where}: expected the ZIP of a library export; cannot read it "
                             f"({' '.join(str(exc).split())[:160]}). Nothing was imported.") from None
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
