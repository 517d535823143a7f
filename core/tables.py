"""Reading a CSV file's bytes in bounded time and memory: the one path every upload takes.

Logs (``core.logs``), fits tables (``core.calibrate``), speed tables (``core.plan``) and
scaling tables (``core.scaling``) are all read here.  What is refused, each with a message
that names the file and the problem: more than ``max_bytes``; an empty file; a ZIP (Excel)
archive; binary data; UTF-16 without a byte-order mark; more than ``MAX_LINES`` lines or
``MAX_COLUMNS`` columns; a row with more fields than the header (the parse stops at that row,
which the message names with both counts).  UTF-16 with a byte-order mark is decoded; rows
with fewer fields than the header (a log cut off while it was written) are skipped, and the
caller is told which.  Nothing falls back to pandas' Python parser, whose cost grows with a
malformed row's width (a 4 MB row once took minutes and gigabytes).
"""

from __future__ import annotations

import hashlib
import io
import stat
from pathlib import Path

import numpy as np
import pandas as pd

from core.errors import LogFormatError

#: the largest file accepted, the same as ``server.maxUploadSize`` in ``.streamlit/config.toml``
MAX_BYTES = 200 * 1024 * 1024
#: the most columns a table may have, and the most lines (a header and 20 million rows fit in
#: MAX_BYTES only with rows of under ten bytes)
MAX_COLUMNS = 1000
MAX_LINES = 20_000_000
#: files larger than this are parsed on Arrow's thread pool (smaller ones on the calling thread)
THREADED_BYTES = 16 * 2**20
#: share of rows that may be unusable (short, NaN, inf, text) before a file is refused
MAX_BAD_ROW_SHARE = 0.5
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def file_bytes(path: str | Path, *, source: str | None = None, max_bytes: int = MAX_BYTES) -> bytes:
    """A regular file's bytes, at most ``max_bytes`` of them, or a ``LogFormatError``.

    A device, a FIFO or a directory is refused before anything is read (``/dev/zero`` would
    never end, a FIFO blocks); at most ``max_bytes + 1`` bytes are read, so a file that grows
    while it is read cannot exhaust memory either.
    """
    path = Path(path)
    source = source or path.name
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "a device, pipe or socket"
            raise LogFormatError(source, f"expected a regular file; got {kind}. Give the path of a file.")
        if info.st_size > max_bytes:
            raise LogFormatError(source, f"expected at most {max_bytes / 2**20:.0f} MB; got "
                                 f"{info.st_size / 2**20:.1f} MB. Thin the file or split it.")
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise LogFormatError(source, f"cannot be read: {exc.strerror or exc}.") from None
    if len(data) > max_bytes:
        raise LogFormatError(source, f"expected at most {max_bytes / 2**20:.0f} MB; the file grew past it "
                             "while it was read. Thin the file or split it.")
    return data


def as_utf8(data: bytes, source: str, max_bytes: int = MAX_BYTES) -> bytes:
    """The file's bytes as UTF-8 without a BOM, or a ``LogFormatError`` saying what they are.

    Refuses, in bounded time and memory: a file over ``max_bytes``, an empty file, a ZIP
    (Excel) archive, binary data, more than ``MAX_LINES`` lines.  UTF-16 text (Excel's
    "Unicode text", PowerShell's default) is decoded by its byte-order mark.
    """
    if len(data) > max_bytes:
        raise LogFormatError(source, f"expected at most {max_bytes / 2**20:.0f} MB; got "
                             f"{len(data) / 2**20:.1f} MB. Thin the log (keep every n-th step) "
                             "or split it into several files.")
    if data.startswith(_UTF16_BOMS):
        try:
            data = data.decode("utf-16").encode("utf-8")
        except UnicodeDecodeError:
            raise LogFormatError(source, "expected UTF-8 text; got UTF-16 text that cannot be decoded. "
                                 "Save the file as UTF-8 CSV.") from None
    elif data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if not data or data.isspace():
        raise LogFormatError(source, "the file is empty; expected a CSV header and rows.")
    head = data[:65536]
    if head.startswith(b"PK\x03\x04"):
        raise LogFormatError(source, "expected a CSV text file; got a ZIP archive (an Excel "
                             ".xlsx file?). Save it as CSV (comma-separated) first.")
    nul = head.find(b"\x00")
    if nul >= 0:
        if head[1:200:2].count(0) > 0.8 * len(head[1:200:2]) or head[0:200:2].count(0) > 0.8 * len(head[0:200:2]):
            raise LogFormatError(source, "expected UTF-8 text; got UTF-16 text without a byte-order mark. "
                                 "Save the file as UTF-8 CSV.")
        raise LogFormatError(source, f"expected a CSV text file; got binary data (a NUL byte at "
                             f"position {nul}). Export the log as CSV.")
    lines = data.count(b"\n") if len(data) > MAX_LINES else 0     # fewer bytes than MAX_LINES: fewer lines too
    if lines > MAX_LINES:
        raise LogFormatError(source, f"expected at most {MAX_LINES:,} rows; got {lines:,}. Thin the "
                             "log (keep every n-th step) or split it into several files.")
    return data


def decode_head(data: bytes, source: str) -> str:
    """The start of the text (at most 64 KiB, for sniffing the format)."""
    cut = data[:65536]
    if len(data) > 65536:
        while cut and (cut[-1] & 0xC0) == 0x80:  # do not split a multi-byte character
            cut = cut[:-1]
        cut = cut[:-1] if cut and cut[-1] >= 0xC0 else cut
    return _decode(cut, source)


def _decode(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LogFormatError(source, f"expected UTF-8 text; got the byte 0x{data[exc.start]:02x} "
                             f"at position {exc.start}. Save the file as UTF-8 CSV.") from None


def separator(text: str) -> str:
    first = head_text(text).split("\n", 1)[0]
    if "," in first:
        return ","
    for sep in ("\t", ";"):
        if sep in first:
            return sep
    return ","


def head_text(text: str) -> str:
    """The start of the text without leading whitespace (never copies the whole file)."""
    head = text[:65536].lstrip()
    return head if head or len(text) <= 65536 else text.lstrip()[:65536]


def read_csv_columns(data: bytes, source: str, *, sep: str | None = None, text_columns: tuple[str, ...] = ()
                     ) -> tuple[list[str], list[np.ndarray], list[int]]:
    """Parse UTF-8 CSV bytes (see :func:`as_utf8`): column names, columns as numpy arrays, and the
    line numbers of the rows skipped as too short.

    ``text_columns`` are kept as text (``placement`` digit strings, say); other columns are
    numbers where every cell is one.

    >>> names, cols, short = read_csv_columns(b"a,b\\n1,2\\n3\\n4,5\\n", "t.csv")
    >>> names, [c.tolist() for c in cols], short
    (['a', 'b'], [[1, 4], [2, 5]], [3])
    >>> read_csv_columns(b"a,b\\n1,2,3,4\\n", "t.csv")
    Traceback (most recent call last):
    ...
    core.errors.LogFormatError: t.csv: expected 2 fields per row as in the header; line 2 has 4. Remove that line...
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    if sep is None:
        sep = separator(decode_head(data, source))
    header = head_text(decode_head(data, source)).split("\n", 1)[0]
    if header.count(sep) + 1 > MAX_COLUMNS:
        raise LogFormatError(source, f"expected at most {MAX_COLUMNS} columns; the header has "
                             f"{header.count(sep) + 1:,}. Is this the right file?")

    invalid: list = []

    def on_invalid(row) -> str:
        invalid.append(row)
        return "error" if row.actual_columns > row.expected_columns else "skip"

    def parse(block_size: int | None = None):
        invalid.clear()
        # Arrow's thread pool only for large files: a pool that is never started cannot outlive the
        # interpreter (Arrow's native threads torn down at exit can abort a process, apache/arrow#34314)
        options = pacsv.ReadOptions(use_threads=len(data) > THREADED_BYTES, **({"block_size": block_size}
                                                                                if block_size else {}))
        return pacsv.read_csv(
            io.BytesIO(data), read_options=options,
            parse_options=pacsv.ParseOptions(delimiter=sep, invalid_row_handler=on_invalid),
            convert_options=pacsv.ConvertOptions(
                strings_can_be_null=True, column_types={c: pa.string() for c in text_columns}))

    try:
        try:
            table = parse()
        except pa.ArrowInvalid as exc:
            if "straddl" not in str(exc):
                raise
            table = parse(block_size=len(data) + 1)   # a line longer than a block: one block (at most max_bytes)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        wide = [r for r in invalid if r.actual_columns > r.expected_columns]
        if wide:
            row = wide[0]
            raise LogFormatError(source, f"expected {row.expected_columns} fields per row as in the header; "
                                 f"line {_line_of(data, row)} has {row.actual_columns:,}. Remove that line or "
                                 "check the separator.") from None
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise LogFormatError(source, f"expected a well-formed CSV; {detail[:200]}.") from None
    binary = [f.name for f in table.schema if pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type)]
    if binary:
        _decode(data, source)  # names the first byte that is not UTF-8
        raise LogFormatError(source, f"expected UTF-8 text in column {binary[0]!r}. Save the file as UTF-8 CSV.")
    short = sorted(_line_of(data, r) for r in invalid)
    return list(table.column_names), [col.to_numpy() for col in table.columns], short


def _line_of(data: bytes, row) -> int:
    """The line number (1 = the header) of an invalid row pyarrow reported."""
    if row.number is not None and row.number > 0:
        return int(row.number)
    pos = data.find(row.text.encode("utf-8"))
    return data.count(b"\n", 0, pos) + 1 if pos >= 0 else -1


def read_csv_frame(data: bytes, source: str, *, max_bytes: int = MAX_BYTES,
                   text_columns: tuple[str, ...] = ()) -> pd.DataFrame:
    """A CSV file's bytes as a DataFrame (column names and text cells stripped), read in bounded work.

    Rows with fewer fields than the header are dropped (a table is not a log: they are
    refused when more than half the rows).

    >>> read_csv_frame(b"p, w ,speed\\n1, 2, 0.5\\n", "t.csv").to_dict("records")
    [{'p': 1, 'w': 2, 'speed': 0.5}]
    """
    data = as_utf8(bytes(data), source, max_bytes)
    names, columns, short = read_csv_columns(data, source, text_columns=text_columns)
    n = len(columns[0]) if columns else 0
    if short and len(short) > MAX_BAD_ROW_SHARE * (n + len(short)):
        raise LogFormatError(source, f"expected {len(names)} fields per row as in the header; "
                             f"{len(short):,} row(s) have fewer (first: line {short[0]}). Check the separator.")
    frame = pd.DataFrame({str(name).strip(): col for name, col in zip(names, columns)})
    for c in frame.columns:
        if frame[c].dtype == object or pd.api.types.is_string_dtype(frame[c]):
            frame[c] = frame[c].astype(object).where(frame[c].isna(), frame[c].astype(str).str.strip())
    return frame


def frame_digest(frame: pd.DataFrame) -> str:
    """A short digest of a table's content, index and columns (a cache key; equal tables, equal digests).

    >>> a = pd.DataFrame({"x": [1.0, 2.0]})
    >>> frame_digest(a) == frame_digest(a.copy()), frame_digest(a) == frame_digest(a.rename(columns={"x": "y"}))
    (True, False)
    """
    h = hashlib.blake2b(digest_size=16)
    h.update(pd.util.hash_pandas_object(frame, index=True).to_numpy().tobytes())
    h.update(repr(list(frame.columns)).encode())
    return h.hexdigest()
