"""What the dashboard may do to a library, and what it shows of removals and the audit.

Deleting from the web is one decision (:func:`web_delete_policy`), made from the server's
setting and where the library lives:

* ``TTA_LIBRARY_WEB_DELETE=1`` or ``0`` (also true/false, yes/no, on/off) always wins; any other
  value is refused with the variable's name.
* Unset, deletion is **on** for the user's own library: the per-user default file
  (``library.duckdb`` in the per-user data folder) or an in-memory one.
* Unset, deletion is **off** for a library that may be shared: a PostgreSQL server, or any file
  named by ``TTA_LIBRARY_DB`` (or ``--db``) other than the per-user default one.

Restoring is always allowed: it loses nothing, and it is how a deletion is undone.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from core.errors import InputError
from core.library.settings import keep_days_setting
from core.library.store import APP_NAME, ENV_VAR, MEMORY, Store

#: whether the Library page offers Delete: ``1``/``0``; unset: on for the per-user file, off for a shared library
WEB_DELETE_ENV_VAR = "TTA_LIBRARY_WEB_DELETE"
_ON = ("1", "true", "yes", "on")
_OFF = ("0", "false", "no", "off")
#: the columns of :func:`recently_deleted`
REMOVED_COLUMNS = ["run_id", "source", "model", "gpu", "split", "n_points", "deleted_at", "restorable_until"]


@dataclass(frozen=True)
class WebDelete:
    """Whether the dashboard may delete runs, and why (one sentence a page can show).

    ``shared`` is whether the library may be used by others (a PostgreSQL server or a file named by
    ``TTA_LIBRARY_DB``); ``setting`` is the value of ``TTA_LIBRARY_WEB_DELETE`` that decided, or
    ``None`` when it is unset.
    """

    allowed: bool
    shared: bool
    reason: str
    setting: str | None = None


def _own_default_file() -> str:
    """The per-user default library file (``core.library.store.default_db_path`` without ``TTA_LIBRARY_DB``)."""
    from platformdirs import user_data_path

    return str(user_data_path(APP_NAME) / "library.duckdb")


def _same_file(a: str, b: str) -> bool:
    return Path(a).expanduser().resolve(strict=False) == Path(b).expanduser().resolve(strict=False)


def web_delete_policy(store: Store, *, environ: Mapping[str, str] | None = None) -> WebDelete:
    """Whether the dashboard may delete runs of the library in ``store`` (see the module docstring).

    Parameters
    ----------
    store : Store
        The library's store (``Library.store``); nothing is opened.
    environ : mapping, optional
        The environment to read ``TTA_LIBRARY_WEB_DELETE`` from (default ``os.environ``).

    Raises
    ------
    InputError
        ``TTA_LIBRARY_WEB_DELETE`` set to anything but 1/0 (true/false, yes/no, on/off).

    Examples
    --------
    >>> from core.library.stores import open_store
    >>> web_delete_policy(open_store("postgresql://me@db/tta"), environ={}).allowed
    False
    >>> web_delete_policy(open_store("postgresql://me@db/tta"), environ={"TTA_LIBRARY_WEB_DELETE": "1"}).allowed
    True
    """
    environ = os.environ if environ is None else environ
    memory = store.path == MEMORY
    if store.shared:
        shared, where = True, "this library is on a PostgreSQL server, shared by everyone who uses it"
    elif memory or _same_file(store.path, _own_default_file()):
        shared, where = False, "this library is your own file in the per-user data folder"
    else:
        shared, where = True, (f"this library is a file the server names ({ENV_VAR} or --db), which other users "
                               "and servers may share")
    text = str(environ.get(WEB_DELETE_ENV_VAR, "")).strip().lower()
    if text in _ON:
        return WebDelete(True, shared, f"the server sets {WEB_DELETE_ENV_VAR}={text}", text)
    if text in _OFF:
        return WebDelete(False, shared, f"the server sets {WEB_DELETE_ENV_VAR}={text}", text)
    if text:
        raise InputError(f"{WEB_DELETE_ENV_VAR}: expected 1 or 0 (true/false, yes/no, on/off); got {text[:40]!r}. "
                         "Unset it for the default (on for your own library file, off for a shared one).")
    return WebDelete(not shared, shared, where)


def recently_deleted(library, *, keep_days: float | None = None) -> pd.DataFrame:
    """The removed runs not purged yet, by id, with ``restorable_until``: the removal plus the keeping period
    (``keep_days``, default ``$TTA_LIBRARY_KEEP_DAYS`` or 30), the time after which ``vacuum`` may purge it.

    Columns :data:`REMOVED_COLUMNS`; times in UTC without a zone, as the library stores them.
    """
    days = keep_days_setting() if keep_days is None else float(keep_days)
    removed = library.removed()
    deleted = pd.to_datetime(removed["deleted_at"])
    return removed.assign(deleted_at=deleted, restorable_until=deleted + pd.Timedelta(days=days))[REMOVED_COLUMNS]


def audit_log(library, *, limit: int = 50) -> pd.DataFrame:
    """The latest ``limit`` events of the audit table, latest first: ``happened_at`` (UTC), ``actor`` (who:
    ``TTA_LIBRARY_ACTOR`` or user@host, and ``web session <id>`` for the dashboard), ``action``, ``run_ids``
    (the ids, comma-separated), ``detail``."""
    if limit < 1:
        raise InputError(f"audit log: expected a limit >= 1; got {limit}.")
    events = library.history(limit=limit)
    return events.assign(happened_at=pd.to_datetime(events["happened_at"]))[
        ["happened_at", "actor", "action", "run_ids", "detail"]].reset_index(drop=True)


__all__ = ["REMOVED_COLUMNS", "WEB_DELETE_ENV_VAR", "WebDelete", "audit_log", "recently_deleted",
           "web_delete_policy"]
