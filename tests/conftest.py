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
