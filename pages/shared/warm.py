"""The server's warm-up: what a first visit to the Logs page would import and compute, done once when the
server starts (``serve.py``), so that the first person to visit finds it done.

Part of ``pages/shared``.  It imports the modules the Logs page's first view needs (pandas, scipy.optimize,
plotly and the project's own: most of a cold first visit) and reads and analyses the default built-in runs
into the caches every session shares (``pages.shared.cached.warm_builtin``).  Nothing here is needed for
the dashboard to work: ``streamlit run app.py`` serves the same pages, cold.
"""

from __future__ import annotations

import time

from pages.logs_sections import answer, runs  # noqa: F401  (imported for the import: the Logs page's sections)
from pages.shared.cached import warm_builtin
from pages.shared.state import DEFAULT_BUILTIN_SETS

__all__ = ["warm_up"]


def warm_up() -> str:
    """Fill the shared caches with the default built-in runs; one line saying what was done and how long it
    took (the modules above were imported before it was called)."""
    t0 = time.perf_counter()
    n = warm_builtin(DEFAULT_BUILTIN_SETS)
    took = time.perf_counter() - t0
    return f"warm-up: {n} built-in runs of {', '.join(DEFAULT_BUILTIN_SETS)} analysed in {took:.1f} s"
