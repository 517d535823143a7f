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
#: a hung child is a failure after this long; a guard against hanging the suite, not a timing check
HANG_S = 600


def _worker(*args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tests.core.library.workers", *map(str, args)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.slow
def test_parallel_writers_lose_no_run_and_readers_never_see_half_a_run(db, tmp_path):
    # workers 0 to 3 add their own 6 runs; a fifth process adds worker 0's runs again at the same time: each is
    # added once (the file lock, or on PostgreSQL the unique content hash)
    stop = tmp_path / "stop"
    writers = [_worker("add", db, w, 6) for w in (0, 1, 2, 3, 0)]
    reader = _worker("read", db, stop)        # reads until told to stop, after every writer has finished
    outs = [p.communicate(timeout=HANG_S) for p in writers]
    stop.touch()
    read_out, read_err = reader.communicate(timeout=HANG_S)
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
    assert words[0] == "reads" and int(words[1]) > 0 and words[2:] == ["half", "0"]   # its last read saw all 24


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
    proc.wait(timeout=HANG_S)
    assert proc.returncode == -signal.SIGKILL

    # one try, no wait: the kernel freed the lock with the process (on PostgreSQL the server rolled the
    # transaction back; a lock timeout of 0 there means none)
    lib = Library(db, timeout=0)
    table = lib.runs()
    assert table["source"].tolist() == ["w0_run0_Tesla V100.csv", "w0_run1_Tesla V100.csv"]
    assert table["n_points"].tolist() == [60, 60]
    with lib.store.connect() as con:
        assert con.execute(HALF_WRITTEN)[0][0] == 0
        orphans = con.execute("SELECT count(*) FROM series WHERE run_id NOT IN (SELECT run_id FROM runs)")
        assert orphans[0][0] == 0
        assert con.execute("SELECT count(*) FROM run_tags")[0][0] == 2
    again = Library(db).add_runs([_pending(0, 2)])
    assert again.n_added == 1 and len(Library(db).runs()) == 3          # the killed run can be added afterwards


def test_a_writer_that_cannot_get_the_library_in_time_gets_a_clear_message(tmp_path):
    db = tmp_path / "busy.duckdb"
    Library(db).add_runs([_pending(0, 0)])
    # holds the lock until its stdin closes (not for a time: a slow machine cannot make it let go early)
    holder = subprocess.Popen([sys.executable, "-c", "import sys; from filelock import FileLock\n"
                               f"lock = FileLock({str(db) + '.lock'!r}); lock.acquire(); print('held', flush=True); "
                               "sys.stdin.read()"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(LibraryBusyError, match=r"busy.duckdb: expected to get the library within 0.5 s"):
            Library(db, timeout=0.5).add_runs([_pending(0, 1)])
    finally:
        holder.stdin.close()
        holder.wait(timeout=HANG_S)
    assert Library(db, timeout=0).runs()["source"].tolist() == ["w0_run0_Tesla V100.csv"]   # nothing half-done


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)")
def test_cli_writers_with_one_killed_mid_save_lose_and_duplicate_nothing(db, tmp_path):
    """Four ``python -m core library add`` processes, each adding two folders of six logs (every log added by two
    of them at once); one is killed (SIGKILL) once the library holds a run, whatever it is doing then.  Every log
    is in the library exactly once, none half-written, and the killed command run again finds them all."""
    import time

    from tests.core.library.helpers import course_csv

    folders = []
    for f in range(4):
        folder = tmp_path / f"set{f}"
        folder.mkdir()
        for i in range(6):
            (folder / f"resnet20_Tesla V100-{64 * (i + 1)}_s{f}.csv").write_bytes(course_csv(seed=100 * f + i))
        folders.append(folder)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    writers = [subprocess.Popen([sys.executable, "-m", "core", "library", "add", str(folders[w]),
                                 str(folders[(w + 1) % 4]), "--db", str(db)], cwd=ROOT, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for w in range(4)]
    lib = Library(db, timeout=120)
    deadline = time.monotonic() + HANG_S
    while time.monotonic() < deadline and writers[0].poll() is None and (not lib.exists() or lib.runs().empty):
        time.sleep(0.05)
    writers[0].send_signal(signal.SIGKILL)
    outs = [p.communicate(timeout=HANG_S) for p in writers]
    assert all(p.returncode == 0 for p in writers[1:]), [err[-500:] for _, err in outs[1:]]

    table = lib.runs()
    assert len(table) == 24 and table["content_hash"].is_unique                 # none lost, none twice
    assert sorted(table["source"].str.rsplit("_s", n=1).str[1]) == sorted(f"{f}.csv" for f in range(4)
                                                                           for _ in range(6))
    with lib.store.connect() as con:
        assert con.execute(HALF_WRITTEN)[0][0] == 0
        assert con.execute("SELECT count(*) FROM runs")[0][0] == 24           # no duplicate, removed or not
    again = subprocess.run([sys.executable, "-m", "core", "library", "add", str(folders[0]), str(folders[1]),
                            "--db", str(db)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=HANG_S)
    assert again.returncode == 0 and "0 run(s) added, 12 already in the library." in again.stderr
