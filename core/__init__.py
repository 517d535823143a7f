"""Time-to-Accuracy Planner: all the logic, with no user interface.

Every number the dashboard shows is computed here, by plain functions on numpy/pandas
that return small frozen dataclasses.  ``python -m core <command>`` is the headless
interface to the same functions (see ``core.cli``).  This package never imports
streamlit.
"""


from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

#: the distribution's name in pyproject.toml
DISTRIBUTION = "time-to-accuracy-planner"


def _version() -> str:
    """The version pyproject.toml gives (a source checkout), else the installed distribution's."""
    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    if pyproject.is_file():
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        if project.get("name") == DISTRIBUTION and "version" in project:
            return str(project["version"])
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "0+unknown"


#: the product's one version number, written once, in pyproject.toml
__version__ = _version()
