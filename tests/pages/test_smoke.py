"""Every page renders on the built-in data with no exception and no error box (streamlit-app-action style).

Each section of a page is wrapped (``pages.shared.common.guarded``) so that an unexpected error
becomes one ``st.error`` line instead of a traceback; a smoke test that looked at exceptions only
could not fail on a broken section.  These look at both, and the last test shows that a section
that raises is caught here, with the section and the problem named.
"""

from __future__ import annotations

import importlib
import sys

import pytest

from app import PAGES
from tests.pages.conftest import chart_specs, open_page, shown


def errors_shown(at) -> list[str]:
    """The text of every error box on the page (main area and sidebar)."""
    return [shown(e.value) for e in at.error]


def check_page(at, path: str) -> None:
    """What every page shows on the built-in data: no exception, no error box, a title and a chart."""
    assert not at.exception, [e.value for e in at.exception]
    assert errors_shown(at) == [], f"{path} shows an error on the built-in data"
    assert at.title, f"{path} shows no title"
    assert chart_specs(at), f"{path} shows no chart on the built-in data"


@pytest.mark.parametrize("path", [p for p, _, _ in PAGES])
def test_page_renders_without_exception_or_error(path):
    check_page(open_page(path, via_app=True), path)  # through app.py's navigation, as a user gets there


#: pages whose details below the answer are tabs, computed only when open: every tab is checked too
DETAIL_TABS = {"pages/logs.py": "logs_details", "pages/calibrate.py": "cal_details"}


def open_tab(at, key: str, label: str):
    """Open the tab ``label`` of the tabs ``key``, as a click on it does."""
    at.session_state[key] = label
    return at.run()


@pytest.mark.parametrize("path", list(DETAIL_TABS))
def test_every_detail_tab_renders_without_exception_or_error(path):
    at = open_page(path, via_app=True)
    labels = [t.label for t in at.tabs]
    assert len(labels) >= 2, labels
    for label in labels[1:]:
        check_page(open_tab(at, DETAIL_TABS[path], label), f"{path} ({label})")


def _raise_in(monkeypatch, facade: str, name: str, problem: str) -> None:
    """Make ``facade.name`` (the module that defines it, and every page section module that imported it)
    raise ``RuntimeError(problem)``: a section module such as ``pages.logs_sections.prediction`` is imported
    once per process, not re-run with its page, so it keeps the name it imported."""
    module = importlib.import_module(facade)
    original = getattr(module, name)
    home = importlib.import_module(original.__module__)
    sections = [m for key, m in list(sys.modules.items())
                if key.startswith("pages.") and getattr(m, name, None) is original]

    def broken(*args, **kwargs):
        raise RuntimeError(problem)

    for where in {module, home, *sections}:
        monkeypatch.setattr(where, name, broken)


def test_a_section_that_raises_shows_its_name_and_the_problem_and_fails_the_smoke_check(monkeypatch):
    # the Logs page's prediction section picks its default run with core.prediction.showcase_log
    _raise_in(monkeypatch, "core.prediction", "showcase_log", "injected failure 1234")
    at = open_tab(open_page("pages/logs.py", via_app=True), "logs_details", "Prediction")
    assert not at.exception                          # the wrapper caught it: no traceback ...
    errors = errors_shown(at)
    assert len(errors) == 1                          # ... one line, naming the section and the problem
    assert errors[0].startswith("Logs: prediction could not finish: injected failure 1234")
    assert chart_specs(at)                           # the sections before it still drew their charts
    with pytest.raises(AssertionError, match="pages/logs.py shows an error on the built-in data"):
        check_page(at, "pages/logs.py")              # the smoke check fails on this page
