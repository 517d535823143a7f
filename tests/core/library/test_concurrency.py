"""Several processes on one library file: no committed run lost, readers never see half a run, and a writer
killed (SIGKILL) in the middle of an import leaves the runs it committed and none of the one it was writing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from core.errors import LibraryBusyError
from core.library import Library
from tests.core.library.workers import HALF_WRITTEN, _pending

ROOT = Path(__file__).resolve().parents[3]


def _worker(*args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tests.core.library.workers", *map(str, args)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_parallel_writers_lose_no_run_and_readers_never_see_half_a_run(db):
    # workers 0 to 3 add their own 6 runs; a fifth process adds worker 0's runs again at the same time: each is
    # added once (the file lock, or on PostgreSQL the unique content hash)
    writers = [_worker("add", db, w, 6) for w in (0, 1, 2, 3, 0)]
    reader = _worker("read", db, 8)
    outs = [p.communicate(timeout=300) for p in writers]
    read_out, read_err = reader.communicate(timeout=300)
    assert all(p.returncode == 0 for p in writers), [err[-500:] for _, err in outs]
    assert reader.returncode == 0, read_err[-500:]
    lib = Library(db)
    table = lib.runs()
    assert len(table) == 24 and table["content_hash"].is_unique          # 4 processes x 6 runs, none lost
    for w in range(4):
        assert sorted(lib.runs(f"tag=w{w}")["source"]) == sorted(f"w{w}_run{i}_Tesla V100.csv" for i in range(6))
    with lib.store.connect() as con:
        assert con.execute(HALF_WRITTEN)[0][0] == 0
    words = read_out.split()
    assert words[0] == "reads" and int(words[1]) > 0 and words[2:] == ["half", "0"]


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)")
def test_a_writer_killed_mid_import_leaves_whole_runs_only(db):
    proc = _worker("stall", db, 5, 3)         # adds 5 runs; stalls inside the transaction of the third
    lines = []
    for line in proc.stdout:
        lines.append(line.strip())
        if line.startswith("writing"):
            break
    assert lines == ["committed w0_run0_Tesla V100.csv", "committed w0_run1_Tesla V100.csv",
                     "writing w0_run2_Tesla V100.csv"], proc.stderr.read()[-500:] if proc.poll() else lines
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    lib = Library(db, timeout=5)              # the kernel freed the lock (the server the transaction): no wait
    table = lib.runs()
    assert table["source"].tolist() == ["w0_run0_Tesla V100.csv", "w0_run1_Tesla V100.csv"]
    assert table["n_points"].tolist() == [60, 60]
    with lib.store.connect() as con:
        assert con.execute(HALF_WRITTEN)[0][0] == 0
        orphans = con.execute("SELECT count(*) FROM series WHERE run_id NOT IN (SELECT run_id FROM runs)")
        assert orphans[0][0] == 0
        assert con.execute("SELECT count(*) FROM run_tags")[0][0] == 2
    assert lib.store.longest_wait_s < 5
    again = Library(db).add_runs([_pending(0, 2)])
    assert again.n_added == 1 and len(Library(db).runs()) == 3          # the killed run can be added afterwards


def test_a_writer_that_cannot_get_the_library_in_time_gets_a_clear_message(tmp_path):
    db = tmp_path / "busy.duckdb"
    Library(db).add_runs([_pending(0, 0)])
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from filelock import FileLock\n"
                               f"lock = FileLock({str(db) + '.lock'!r}); lock.acquire(); print('held', flush=True); "
                               "time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(LibraryBusyError, match=r"busy.duckdb: expected to get the library within 0.5 s"):
            Library(db, timeout=0.5).add_runs([_pending(0, 1)])
    finally:
        holder.kill()
        holder.wait()
    assert Library(db, timeout=5).runs()["source"].tolist() == ["w0_run0_Tesla V100.csv"]   # nothing half-done
