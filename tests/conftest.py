"""Shared fixtures: caches cleared per test, a run library of its own per test, paths to the repository and to
../shared."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _shared_reference() -> Path:
    """``shared/reference`` beside the checkout, or above it (a git worktree in a subfolder)."""
    for parent in ROOT.parents:
        if (parent / "shared" / "reference").is_dir():
            return parent / "shared" / "reference"
    return ROOT.parent / "shared" / "reference"


SHARED = _shared_reference()


@pytest.fixture(autouse=True)
def _clear_streamlit_cache():
    """st.cache_data is global to the process; every test starts from an empty cache."""
    try:
        import streamlit as st
    except ImportError:  # pragma: no cover
        yield
        return
    st.cache_data.clear()
    yield


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
            pytest.skip("PostgreSQL is not installed (apt-get install -y postgresql) and TTA_TEST_POSTGRES_URL is "
                        "not set")
        yield url


@pytest.fixture(params=["duckdb", "postgresql"])
def store_kind(request) -> str:
    """Each library test runs against both stores."""
    return request.param


@pytest.fixture
def make_db(store_kind, tmp_path, request):
    """``make_db(name)``: a new, empty library of the kind under test: a DuckDB file in ``tmp_path``, or a fresh
    schema on the PostgreSQL server (its URL)."""
    def make(name: str = "lib") -> str:
        if store_kind == "duckdb":
            return str(tmp_path / f"{name}.duckdb")
        from tests.pg_server import fresh_schema

        return fresh_schema(request.getfixturevalue("postgres_url"))

    return make


@pytest.fixture
def db(make_db) -> str:
    """A new, empty library of the kind under test (see ``make_db``)."""
    return make_db("lib")
