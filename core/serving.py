"""Settings of a dashboard server that the pages apply: how many browser sessions one server serves at once.

Streamlit keeps every session (its uploads, parsed logs and cached results) in the server's memory, and one
server process has one Python interpreter: past a few dozen active sessions each gets slower and the memory
grows with them.  ``$TTA_MAX_SESSIONS`` bounds the sessions a server admits (default
:data:`DEFAULT_MAX_SESSIONS`; ``0`` for no bound).  Sessions are admitted in the order they first arrived; one
over the bound is told so and waits (its page says to reload) until an earlier one closes.  Several servers
behind a load balancer share a PostgreSQL library (``docs/library.md``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from core.errors import InputError

MAX_SESSIONS_ENV_VAR = "TTA_MAX_SESSIONS"
#: sessions one server admits unless ``$TTA_MAX_SESSIONS`` says otherwise
DEFAULT_MAX_SESSIONS = 32


def max_sessions() -> int:
    """The bound on active sessions per server: ``$TTA_MAX_SESSIONS`` (0: none), else :data:`DEFAULT_MAX_SESSIONS`.

    >>> os.environ.pop(MAX_SESSIONS_ENV_VAR, None) and None
    >>> max_sessions()
    32
    """
    text = os.environ.get(MAX_SESSIONS_ENV_VAR, "").strip()
    if not text:
        return DEFAULT_MAX_SESSIONS
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise InputError(f"{MAX_SESSIONS_ENV_VAR}: expected a whole number of sessions >= 0 (0: no bound); got "
                         f"{text!r}. Unset it for {DEFAULT_MAX_SESSIONS}.")
    return value


def session_admitted(session_id: str, sessions: Sequence[str], limit: int) -> bool:
    """Whether ``session_id`` is among the first ``limit`` of the server's active ``sessions`` (in order of first
    arrival); every session when ``limit`` is 0.

    >>> session_admitted("c", ["a", "b", "c"], 2), session_admitted("b", ["a", "b", "c"], 2)
    (False, True)
    >>> session_admitted("c", ["a", "b", "c"], 0)
    True
    """
    if limit == 0:
        return True
    return session_id in list(sessions)[:limit]
