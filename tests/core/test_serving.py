"""``$TTA_MAX_SESSIONS``: the bound on a server's sessions, and who is admitted."""

from __future__ import annotations

import pytest

from core.errors import InputError
from core.serving import DEFAULT_MAX_SESSIONS, max_sessions, session_admitted


@pytest.mark.parametrize(("text", "want"), [("", DEFAULT_MAX_SESSIONS), ("0", 0), (" 3 ", 3)])
def test_the_bound_comes_from_the_environment(monkeypatch, text, want):
    monkeypatch.setenv("TTA_MAX_SESSIONS", text)
    assert max_sessions() == want


@pytest.mark.parametrize("text", ["-1", "many", "2.5"])
def test_a_bad_bound_is_refused_with_its_name(monkeypatch, text):
    monkeypatch.setenv("TTA_MAX_SESSIONS", text)
    with pytest.raises(InputError, match=f"TTA_MAX_SESSIONS: expected a whole number of sessions >= 0.*got '{text}'"):
        max_sessions()


def test_sessions_are_admitted_in_order_of_arrival():
    order = ["s1", "s2", "s3", "s4"]
    assert [session_admitted(s, order, 2) for s in order] == [True, True, False, False]
    assert session_admitted("s3", ["s2", "s3", "s4"], 2)          # s1 closed: s3 moves up
    assert all(session_admitted(s, order, 0) for s in order)
