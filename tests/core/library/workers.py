"""Processes that use one library at once (run with ``python -m tests.core.library.workers ...``).

``add DB WORKER N``: add N distinct runs, one ``add_runs`` call each (the way separate CLI calls and browser
sessions write), then print ``done`` and the longest wait for the lock in seconds.
``read DB STOP``: list the runs over and over until the file STOP exists, then once more; print the number of
reads and of runs seen half-written (fewer series rows than points).  It stops on the parent's word, never
after a time, so how quickly it gets the CPU changes how many reads overlap the writes, not the outcome.
``stall DB N STALL``: add N runs in one import; inside the transaction of run number STALL print ``writing``
and sleep (the parent kills the process there).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from core.library import Library, PendingRun, content_hash
from core.logs import read_log
from tests.core.library.helpers import course_csv


def _pending(worker: int, i: int) -> PendingRun:
    data = course_csv(seed=1000 * worker + i)
    return PendingRun(read_log(data, f"w{worker}_run{i}_Tesla V100.csv"), content_hash(data), tags=(f"w{worker}",))


def add(db: str, worker: int, n: int) -> None:
    lib = Library(db, timeout=600)
    for i in range(n):
        lib.add_runs([_pending(worker, i)])
    print("done", f"{lib.store.longest_wait_s:.3f}", flush=True)


HALF_WRITTEN = """SELECT count(*) FROM runs r
                  WHERE r.n_points <> (SELECT count(*) FROM series s WHERE s.run_id = r.run_id)"""


def read(db: str, stop: str) -> None:
    lib = Library(db, timeout=600)
    reads = half = 0
    while True:
        last = Path(stop).exists()              # checked before the read: the read after it is the last
        with lib.store.connect() as con:
            if con is not None:
                half += con.execute(HALF_WRITTEN)[0][0]
                reads += 1
        if last:
            break
        time.sleep(0.01)
    print("reads", reads, "half", half, flush=True)


def stall(db: str, n: int, at: int) -> None:
    import core.library.adding as library_module

    original = library_module.series_frame
    calls = {"n": 0}

    def slow_series_frame(log):
        calls["n"] += 1
        if calls["n"] == at:
            print("writing", log.source, flush=True)
            time.sleep(120)
        return original(log)

    library_module.series_frame = slow_series_frame
    Library(db).add_runs([_pending(0, i) for i in range(n)],
                         progress=lambda done, total, label: print("committed", label, flush=True))


if __name__ == "__main__":
    verb, db, *rest = sys.argv[1:]
    if verb == "add":
        add(db, int(rest[0]), int(rest[1]))
    elif verb == "read":
        read(db, rest[0])
    else:
        stall(db, int(rest[0]), int(rest[1]))
