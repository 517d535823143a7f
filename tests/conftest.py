"""Shared fixtures: a run library of its own per test, markers by folder, paths to the repository, its
built-in data (``data/``) and the tests' own data (``tests/data/``, provenance in ``tests/data/NOTICE.md``).

Nothing here or in any test reads outside the checkout: a fresh clone runs the whole suite."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

#: no property test may fail on how long an example took (hypothesis' default deadline is 200 ms)
settings.register_profile("suite", deadline=None)
settings.load_profile("suite")

ROOT = Path(__file__).resolve().parents[1]

#: the product's built-in data (real traces and logs, each folder with its NOTICE)
DATA = ROOT / "data"
#: data only the tests use (small copies, NOTICE.md says where each comes from)
TEST_DATA = ROOT / "tests" / "data"

#: marker by folder: every test under tests/<folder> gets it (docs/testing.md)
FOLDER_MARKERS = {"pages": "page", "e2e": "e2e"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        parts = Path(str(item.path)).relative_to(ROOT).parts
        if len(parts) > 1 and parts[0] == "tests" and parts[1] in FOLDER_MARKERS:
            item.add_marker(FOLDER_MARKERS[parts[1]])


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    """Exit code 5 (no test ran: nothing collected, or -m/-k deselected everything) is a failure, never a pass
    that CI could mistake for one."""
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line("no test ran (pytest's exit code 5): reported as a failure", red=True)


@pytest.fixture(autouse=True)
def _own_library(tmp_path_factory, monkeypatch):
    """Every test gets a library file of its own (never the user's default one): ``TTA_LIBRARY_DB`` points into a
    fresh temporary folder (the file itself is created only by a test that writes to it)."""
    from core.library.store import ENV_VAR

    monkeypatch.setenv(ENV_VAR, str(tmp_path_factory.mktemp("library") / "library.duckdb"))


@pytest.fixture(scope="session")
def postgres_url():
    """A running PostgreSQL server's URL: ``$TTA_TEST_POSTGRES_URL`` (``.ci/run`` starts one), else one started
    for this session from Debian's ``postgresql`` package (``tests/pg_server.py``) and stopped at its end."""
    from tests.pg_server import server

    with server() as url:
        if url is None:
            # a failure, not a skip: the PostgreSQL half of the library tests must run (the README's test
            # command installs Debian's postgresql; .ci/run starts a server)
            pytest.fail("PostgreSQL is not installed (apt-get install -y postgresql) and TTA_TEST_POSTGRES_URL is "
                        "not set", pytrace=False)
        yield url


def _store_kinds() -> list[str]:
    from core.library.stores import STORES

    return list(STORES)


@pytest.fixture(params=_store_kinds())
def store_kind(request) -> str:
    """Each library test runs against every kind of store (``core.library.stores.STORES``)."""
    return request.param


@pytest.fixture
def make_db(store_kind, tmp_path, request):
    """``make_db(name)``: a new, empty library of the kind under test: a file ``<name>.<kind>`` in ``tmp_path``
    for a store kept in a file (DuckDB), or a fresh schema on the PostgreSQL server (its URL) for a shared one."""
    from core.library.stores import STORES

    def make(name: str = "lib") -> str:
        if not STORES[store_kind].shared:
            return str(tmp_path / f"{name}.{store_kind}")
        from tests.pg_server import fresh_schema

        return fresh_schema(request.getfixturevalue("postgres_url"))

    return make


@pytest.fixture
def db(make_db) -> str:
    """A new, empty library of the kind under test (see ``make_db``)."""
    return make_db("lib")
