"""Shared fixtures: caches cleared per test, a run library of its own per test, paths to the repository, its
built-in data (``data/``) and the tests' own data (``tests/data/``, provenance in ``tests/data/NOTICE.md``).

Nothing here or in any test reads outside the checkout: a fresh clone runs the whole suite."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: the product's built-in data (real traces and logs, each folder with its NOTICE)
DATA = ROOT / "data"
#: data only the tests use (small copies, NOTICE.md says where each comes from)
TEST_DATA = ROOT / "tests" / "data"


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
