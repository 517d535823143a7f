"""Every kind of run-library store (``core.library.stores.STORES``) does what the library relies on: a contract
over the registry itself, never a hand-typed list of store kinds (issue 34).

A kind: a ``Store`` subclass whose ``kind`` is its key, that claims the targets it names (the last kind takes
any target: ``open_store`` always finds one) and whose errors are exception types. Opened on a fresh target
(a file ``library.<kind>`` in a temporary folder for a store kept in a file; a fresh schema on the test
PostgreSQL server, ``$TTA_TEST_POSTGRES_URL`` or one started for the session, for a shared one), it is what
``open_store`` picks for that target; it reads as empty and creates nothing before the first write; a run added
comes back exactly (frame, metadata, fingerprint), also through a second library object on the same target;
the run is found by its name and removed.

Each check runs on a throwaway kind too (``scratch``: DuckDB's store claiming the files whose names end in
``.scratch``), registered first for that test only; registered, the library opens such a file with it without
anyone naming it.
"""

from __future__ import annotations

import pandas as pd
import pytest

from core.library import Library
from core.library.store import Store
from core.library.store_duckdb import DuckDBStore
from core.library.stores import STORES, open_store
from core.logs import read_log
from tests.core.library.helpers import course_csv


class ScratchStore(DuckDBStore):
    """DuckDB's store, for the files whose names end in ``.scratch``: a throwaway kind."""

    kind = "scratch"

    @classmethod
    def claims(cls, target: str) -> bool:
        return str(target).endswith(".scratch")


@pytest.fixture(params=[*STORES, ScratchStore.kind])
def kind(request, monkeypatch) -> type[Store]:
    """Each registered kind, and the throwaway one registered (first, so that it is asked first) for this test."""
    if request.param == ScratchStore.kind:
        monkeypatch.setattr("core.library.stores.STORES", {ScratchStore.kind: ScratchStore, **STORES})
    from core.library import stores

    return stores.STORES[request.param]


@pytest.fixture
def target(kind, tmp_path, request) -> str:
    if not kind.shared:
        return str(tmp_path / f"library.{kind.kind}")
    from tests.pg_server import fresh_schema

    return fresh_schema(request.getfixturevalue("postgres_url"))


def test_the_kind_is_whole(kind):
    from core.library import stores

    assert issubclass(kind, Store) and kind.kind and stores.STORES[kind.kind] is kind
    assert isinstance(kind.shared, bool)
    assert list(stores.STORES.values())[-1].claims("any/target/at/all")        # open_store always finds one


def test_open_store_picks_it_for_its_target_and_it_creates_nothing_before_a_write(kind, target):
    store = open_store(target)
    assert type(store) is kind and store.kind == kind.kind and kind.claims(target)
    assert store.errors and all(isinstance(e, type) and issubclass(e, BaseException) for e in store.errors)
    assert not store.exists()
    lib = Library(target)
    assert lib.runs().empty and not lib.store.exists()


def test_a_run_comes_back_exactly_as_it_was_added(kind, target):
    data = course_csv()
    log = read_log(data, "resnet20_Tesla V100-SXM2-16GB.csv")
    lib = Library(target)
    run_id = lib.add(log, data=data, tags=["contract"]).run_id
    assert lib.store.exists()
    for library in (lib, Library(target)):                       # a second object on the same target sees it
        back = library.get(run_id)
        pd.testing.assert_frame_equal(back.frame, log.frame, check_exact=True)
        assert back.fingerprint() == log.fingerprint() and back.meta == log.meta and back.roles == log.roles
    assert lib.resolve("resnet20_Tesla V100-SXM2-16GB.csv") == run_id
    assert lib.remove([run_id]) == [run_id] and lib.runs().empty
    lib.store.close()


def test_a_registered_kind_is_opened_without_being_named(monkeypatch, tmp_path):
    monkeypatch.setattr("core.library.stores.STORES", {ScratchStore.kind: ScratchStore, **STORES})
    assert type(open_store(tmp_path / "team.scratch")) is ScratchStore
    assert type(open_store(tmp_path / "team.duckdb")) is not ScratchStore
    data = course_csv()
    lib = Library(tmp_path / "team.scratch")
    run_id = lib.add(read_log(data, "a.csv"), data=data).run_id
    assert lib.store.kind == ScratchStore.kind and lib.get(run_id).source == "a.csv"
