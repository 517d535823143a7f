"""Benchmark: an export that expands to tens of millions of rows is refused early, without the memory (issue 21).

Writes a library export whose ``series.parquet`` holds ``--rows`` rows (40 million by default) of
constant values, so that the folder is small on disk (Parquet's run-length encoding) and huge once
decoded: the shape of the 1.4 MB export that took 9.4 GB in the CLI before the import was bounded.
Its manifest is correct (checksums, row counts), so only the bounds can stop it.  Then runs
``python -m core library import DIR --db <new file>`` in a fresh process and reports its exit status,
its message, its wall time and its peak memory (``ru_maxrss`` of the child), against the same CLI
listing an empty library (the interpreter and the imports alone) measured in the same run.

Usage: ``python bench/library_bomb.py [--rows 40000000]``.  Not used by the tests.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def write_bomb(folder: Path, rows: int, chunk: int = 1_000_000) -> int:
    """The export: one run (a real one's row) whose series is ``rows`` identical rows; its size on disk."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    sys.path.insert(0, str(ROOT))
    from core.library import Library, export_library
    from core.logs import read_log

    data = b"epoch,step,loss,acc\n1,1,2.0,0.5\n1,2,1.5,0.6\n"
    lib = Library(folder.parent / "source.duckdb")
    lib.add(read_log(data, "resnet20_Tesla V100.csv"), data=data)
    export_library(lib, folder)
    schema = pq.read_schema(folder / "series.parquet")
    with pq.ParquetWriter(folder / "series.parquet", schema, compression="zstd") as writer:
        for start in range(0, rows, chunk):
            n = min(chunk, rows - start)
            columns = {}
            for field in schema:
                kind = field.type
                value = np.zeros(n, dtype=kind.to_pandas_dtype()) + (1 if field.name == "run_id" else 0)
                columns[field.name] = pa.array(value, type=kind)
            writer.write_table(pa.table(columns, schema=schema))
    manifest = json.loads((folder / "manifest.json").read_text())
    entry = manifest["tables"]["series"]
    entry["rows"] = rows
    entry["sha256"] = hashlib.sha256((folder / "series.parquet").read_bytes()).hexdigest()
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return sum(p.stat().st_size for p in folder.iterdir())


def child(args: list[str]) -> tuple[int, str, float, float]:
    """Exit status, stderr, wall seconds and peak memory (MB, that process's own ``ru_maxrss`` from ``wait4``) of
    ``python -m core ARGS`` in a fresh process."""
    with tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "core", *args], cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        return proc.returncode, err.read().strip(), wall, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=40_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "bomb"
        size = write_bomb(folder, args.rows)
        print(f"export: {size / 2**20:.2f} MB on disk, {args.rows:,} series rows once decoded")
        status0, _, wall0, peak0 = child(["library", "list", "--db", str(Path(tmp) / "empty.duckdb")])
        status, err, wall, peak = child(["library", "import", str(folder), "--db", str(Path(tmp) / "t.duckdb")])
    print(f"baseline (library list, empty): exit {status0}, {wall0:.1f} s, peak {peak0:.0f} MB")
    print(f"import of the export:           exit {status}, {wall:.1f} s, peak {peak:.0f} MB "
          f"({peak / peak0:.2f}x the baseline)")
    print(f"message: {err}")


if __name__ == "__main__":
    main()
