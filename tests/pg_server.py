"""A real PostgreSQL server for the library tests: the one ``TTA_TEST_POSTGRES_URL`` names (``.ci/run`` starts
one), else one started here from Debian's ``postgresql`` package in a temporary folder on a free loopback port
and stopped at the end.

Run as a script it starts a server and prints its URL and folder (what ``.ci/run`` does), or stops one::

    python tests/pg_server.py start /tmp/tta-pg      # prints postgresql://postgres@127.0.0.1:PORT/postgres
    python tests/pg_server.py stop /tmp/tta-pg

PostgreSQL refuses to run as root: as root the server runs as the ``postgres`` user (``runuser``), in a folder
that user owns.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

URL_ENV_VAR = "TTA_TEST_POSTGRES_URL"


def pg_bin() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl`` (the newest Debian version installed), or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parts[4]))
    if found:
        return Path(found[-1]).parent
    which = shutil.which("pg_ctl")
    return Path(which).parent if which else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_server_user(cmd: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return cmd
    return ["runuser", "-u", "postgres", "--", *cmd]


def start(folder: str | Path) -> str:
    """initdb in ``folder`` and start a server on a free loopback port; its URL (trust authentication, loopback
    only)."""
    bin_dir = pg_bin()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL is not installed: apt-get install -y postgresql")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    data, log = folder / "data", folder / "server.log"
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    subprocess.run(_as_server_user([str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust",
                                    "-E", "UTF8", "--no-sync"]), check=True, capture_output=True)
    port = _free_port()
    options = f"-h 127.0.0.1 -p {port} -k {folder} -c fsync=off -c max_connections=200"
    subprocess.run(_as_server_user([str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options,
                                    "-w", "-t", "60", "start"]), check=True, capture_output=True)
    (folder / "port").write_text(str(port))
    return f"postgresql://postgres@127.0.0.1:{port}/postgres"


def stop(folder: str | Path) -> None:
    """Stop the server started in ``folder`` (fast shutdown)."""
    bin_dir = pg_bin()
    data = Path(folder) / "data"
    if bin_dir is not None and data.is_dir():
        subprocess.run(_as_server_user([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]),
                       capture_output=True)


@contextlib.contextmanager
def server():
    """The URL of a running server (``$TTA_TEST_POSTGRES_URL``, or one started now and stopped afterwards); None
    when there is neither a URL nor PostgreSQL installed."""
    url = os.environ.get(URL_ENV_VAR, "").strip()
    if url:
        yield url
        return
    if pg_bin() is None:
        yield None
        return
    folder = Path(tempfile.mkdtemp(prefix="tta-pg-"))
    try:
        yield start(folder)
    finally:
        stop(folder)
        shutil.rmtree(folder, ignore_errors=True)


def fresh_schema(url: str) -> str:
    """A new, empty schema on the server at ``url``; the URL that uses it (``options=-csearch_path=...``): as
    good as a new database for the library (its tables live in ``current_schema()``), and quicker to make."""
    import psycopg

    name = f"tta_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as con:
        con.execute(f"CREATE SCHEMA {name}")
    return f"{url}{'&' if '?' in url else '?'}options=-csearch_path%3D{name}"


def fresh_database(url: str) -> str:
    """A new, empty database on the server at ``url``; its URL."""
    import psycopg

    name = f"tta_{uuid.uuid4().hex[:12]}"
    for attempt in range(5):
        try:
            with psycopg.connect(url, autocommit=True) as con:
                con.execute(f"CREATE DATABASE {name}")
            break
        except psycopg.errors.ObjectInUse:   # template1 busy: another CREATE DATABASE at the same moment
            time.sleep(0.2 * (attempt + 1))
    base, _, _ = url.rpartition("/")
    return f"{base}/{name}"


if __name__ == "__main__":   # python tests/pg_server.py start|stop FOLDER
    verb, where = sys.argv[1], sys.argv[2]
    if verb == "start":
        print(start(where))
    else:
        stop(where)
