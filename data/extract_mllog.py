"""Copy MLPerf result files into ``data/``, keeping only their MLLOG event lines.

An MLPerf Training result file (``result_<n>.txt``) is the console output of a run: the
MLLOG event lines (``:::MLLOG {json}``) the planner reads, between thousands of lines of
shell echo and driver messages.  This script copies every line that holds the marker
``:::MLLOG``, byte for byte and in order, and drops the rest, so the built-in copy is a
fifth of the size and reads exactly as the original (``tests/core/test_datasets.py``
checks both).  The folder layout ``<submitter>/<system>/result_<n>.txt`` is kept.

Usage::

    python data/extract_mllog.py SRC DEST
    python data/extract_mllog.py ../shared/reference/mlperf_v3.0_resnet50 data/mlperf_v3.0_resnet50
"""

from __future__ import annotations

import argparse
from pathlib import Path

MARKER = b":::MLLOG"


def extract(src: Path, dest: Path) -> int:
    """Copy each ``*/*/result_*.txt`` of ``src`` to ``dest`` with its MLLOG lines only; the number of files."""
    files = sorted(src.glob("*/*/result_*.txt"))
    for path in files:
        lines = path.read_bytes().split(b"\n")
        kept = b"".join(line + b"\n" for line in lines if MARKER in line)
        out = dest / path.relative_to(src)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(kept)
    return len(files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("src", type=Path, help="folder of <submitter>/<system>/result_<n>.txt")
    parser.add_argument("dest", type=Path, help="where to write the copies")
    args = parser.parse_args()
    print(f"{extract(args.src, args.dest)} files copied to {args.dest}")


if __name__ == "__main__":
    main()
