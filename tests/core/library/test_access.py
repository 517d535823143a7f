"""Whether the dashboard may delete (the per-user file: yes; a TTA_LIBRARY_DB path or PostgreSQL: only with
TTA_LIBRARY_WEB_DELETE=1; the setting always wins), and the removed runs and audit events the page shows."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from core.errors import InputError
from core.library import Library, audit_log, recently_deleted, web_delete_policy
from core.library.stores import open_store
from core.logs import read_log
from tests.core.library.helpers import course_csv


@pytest.fixture
def own_default(tmp_path, monkeypatch) -> Path:
    """No TTA_LIBRARY_DB: the library is the per-user default file (XDG_DATA_HOME points into tmp_path)."""
    monkeypatch.delenv("TTA_LIBRARY_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path / "data" / "tta-planner" / "library.duckdb"


def test_the_per_user_default_file_is_the_users_own_deletion_on(own_default):
    lib = Library()
    assert Path(lib.path) == own_default
    policy = web_delete_policy(lib.store, environ={})
    assert (policy.allowed, policy.shared, policy.setting) == (True, False, None)
    assert policy.reason == "this library is your own file in the per-user data folder"
    off = web_delete_policy(lib.store, environ={"TTA_LIBRARY_WEB_DELETE": "0"})
    assert (off.allowed, off.shared, off.reason) == (False, False, "the server sets TTA_LIBRARY_WEB_DELETE=0")


def test_the_default_file_named_through_tta_library_db_is_still_the_users_own(own_default, monkeypatch):
    monkeypatch.setenv("TTA_LIBRARY_DB", str(own_default))
    assert web_delete_policy(Library().store, environ={}).allowed is True


def test_a_path_set_by_tta_library_db_is_shared_deletion_off_unless_the_server_enables_it(tmp_path, monkeypatch):
    monkeypatch.setenv("TTA_LIBRARY_DB", str(tmp_path / "team" / "library.duckdb"))
    store = Library().store
    policy = web_delete_policy(store, environ={})
    assert (policy.allowed, policy.shared) == (False, True)
    assert policy.reason == ("this library is a file the server names (TTA_LIBRARY_DB or --db), which other users "
                             "and servers may share")
    for value in ("1", "true", "ON", " yes "):
        assert web_delete_policy(store, environ={"TTA_LIBRARY_WEB_DELETE": value}).allowed is True
    for value in ("0", "false", "Off", "no"):
        assert web_delete_policy(store, environ={"TTA_LIBRARY_WEB_DELETE": value}).allowed is False


def test_a_postgresql_url_is_shared_deletion_off_unless_the_server_enables_it():
    store = open_store("postgresql://me:secret@db.example/tta")          # nothing is opened
    policy = web_delete_policy(store, environ={"TTA_LIBRARY_WEB_DELETE": ""})
    assert (policy.allowed, policy.shared) == (False, True)
    assert policy.reason == "this library is on a PostgreSQL server, shared by everyone who uses it"
    on = web_delete_policy(store, environ={"TTA_LIBRARY_WEB_DELETE": "1"})
    assert (on.allowed, on.shared, on.reason) == (True, True, "the server sets TTA_LIBRARY_WEB_DELETE=1")


def test_an_in_memory_library_is_nobody_elses():
    assert web_delete_policy(open_store(":memory:"), environ={}).allowed is True


@pytest.mark.parametrize("value", ["maybe", "2", "enable"])
def test_a_bad_setting_is_refused_with_the_variables_name(value):
    with pytest.raises(InputError, match=rf"^TTA_LIBRARY_WEB_DELETE: expected 1 or 0 \(true/false, yes/no, on/off\); "
                                         rf"got '{value}'\. Unset it for the default"):
        web_delete_policy(open_store(":memory:"), environ={"TTA_LIBRARY_WEB_DELETE": value})


def test_web_delete_policy_reads_the_environment_on_both_stores(db, store_kind, monkeypatch):
    """On both real stores: the test's library is a named path or a server, so off until the setting says 1."""
    monkeypatch.delenv("TTA_LIBRARY_WEB_DELETE", raising=False)
    assert web_delete_policy(Library(db).store).allowed is False
    monkeypatch.setenv("TTA_LIBRARY_WEB_DELETE", "1")
    assert web_delete_policy(Library(db).store).allowed is True
    monkeypatch.setenv("TTA_LIBRARY_WEB_DELETE", "maybe")
    with pytest.raises(InputError, match="TTA_LIBRARY_WEB_DELETE: expected 1 or 0"):
        web_delete_policy(Library(db).store)


def _add(lib: Library, name: str, seed: int) -> int:
    data = course_csv(seed=seed)
    return lib.add(read_log(data, name), data=data).run_id


def test_recently_deleted_says_until_when_each_run_is_restorable(db, monkeypatch):
    lib = Library(db, actor="alice@lab")
    first, second = _add(lib, "a.csv", 1), _add(lib, "b.csv", 2)
    assert recently_deleted(lib).empty
    lib.remove([second])
    monkeypatch.setenv("TTA_LIBRARY_KEEP_DAYS", "7")
    table = recently_deleted(lib)
    assert table.columns.tolist() == ["run_id", "source", "model", "gpu", "split", "n_points", "deleted_at",
                                      "restorable_until"]
    assert table[["run_id", "source", "n_points"]].to_dict("records") == [{"run_id": second, "source": "b.csv",
                                                                          "n_points": 60}]
    assert (table["restorable_until"] - table["deleted_at"]).tolist() == [pd.Timedelta(days=7)]
    assert (recently_deleted(lib, keep_days=0.5)["restorable_until"] - table["deleted_at"]).tolist() == \
        [pd.Timedelta(hours=12)]
    lib.restore([second])
    assert recently_deleted(lib).empty and lib.runs()["run_id"].tolist() == [first, second]


def test_the_audit_log_names_who_did_what_latest_first(db):
    alice, bob = Library(db, actor="alice@lab"), Library(db, actor="bob, web session 42")
    run = _add(alice, "a.csv", 1)
    bob.remove([run])
    alice.restore([run])
    log = audit_log(bob)
    assert log.columns.tolist() == ["happened_at", "actor", "action", "run_ids", "detail"]
    assert log[["actor", "action", "run_ids"]].values.tolist() == [["alice@lab", "restore", str(run)],
                                                                   ["bob, web session 42", "remove", str(run)],
                                                                   ["alice@lab", "add", str(run)]]
    assert log["happened_at"].is_monotonic_decreasing
    assert audit_log(bob, limit=1)["action"].tolist() == ["restore"]
    with pytest.raises(InputError, match="audit log: expected a limit >= 1; got 0"):
        audit_log(bob, limit=0)
