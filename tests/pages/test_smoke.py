"""Every page renders on the built-in data without an exception (streamlit-app-action style)."""

from __future__ import annotations

import pytest

from app import PAGES
from tests.pages.conftest import chart_specs, open_page


@pytest.mark.parametrize("path", [p for p, _, _ in PAGES])
def test_page_renders_without_exception(path):
    at = open_page(path, via_app=True)  # through app.py's navigation, as a user gets there
    assert not at.exception
    assert at.title, f"{path} shows no title"
    assert chart_specs(at), f"{path} shows no chart on the built-in data"
