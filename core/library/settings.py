"""The library's settings from the environment: who writes (the audit's actor) and how long a
removed run is kept.
"""

from __future__ import annotations

from core.errors import InputError

#: who the audit table names: ``TTA_LIBRARY_ACTOR`` when set (a wrapper's login), else user@host pid
ACTOR_ENV_VAR = "TTA_LIBRARY_ACTOR"
#: days a removed run stays restorable (``vacuum`` purges it after)
KEEP_DAYS_ENV_VAR = "TTA_LIBRARY_KEEP_DAYS"
DEFAULT_KEEP_DAYS = 30.0


def default_actor() -> str:
    """Who is writing, as the audit table records it: ``$TTA_LIBRARY_ACTOR``, else ``user@host pid N``."""
    import getpass
    import os
    import socket

    env = os.environ.get(ACTOR_ENV_VAR, "").strip()
    if env:
        return env[:200]
    try:
        user = getpass.getuser()
    except (KeyError, OSError):   # pragma: no cover - no user name (a container)
        user = "?"
    return f"{user}@{socket.gethostname()} pid {os.getpid()}"


def keep_days_setting() -> float:
    """Days a removed run stays restorable: ``$TTA_LIBRARY_KEEP_DAYS`` (a number >= 0), default 30."""
    import os

    text = os.environ.get(KEEP_DAYS_ENV_VAR, "").strip()
    try:
        days = float(text) if text else DEFAULT_KEEP_DAYS
    except ValueError:
        days = -1.0
    if not days >= 0:
        raise InputError(f"{KEEP_DAYS_ENV_VAR}: expected a number of days >= 0; got {text!r}. Unset it for 30.")
    return days
