"""How fast each page answers, measured with Streamlit's AppTest on the built-in data.

For every page: the first run (caches cleared, modules imported), a rerun after a widget
change to a value not seen before (what a user feels on moving a slider), the same change
back (cached), and a rerun with nothing changed.  Each rerun is repeated and the median
printed; the goal of issue 10 is printed beside it, and each first run as a multiple of a
reference page's (``bench/reference_page.py``: a plain page of the same kind, nothing fitted)
measured in the same run (issue 21: Logs and Calibrate ≤ 3×).  Run ``python bench/pages.py``
(``--repeat N``, ``--pages logs,plan``).  Numbers vary about ±30 % with machine load.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# this file is called pages.py: keep its folder off the path so that `pages` is the app's package
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import streamlit as st  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from tests.pages.conftest import APP  # noqa: E402  (AppTest patched for st.navigation with a pages/ folder)

#: page -> (widget kind, key, a new value, the default value)
WIDGETS = {
    "logs": ("slider", "logs_target_acc", 0.9, 0.92),
    "calibrate": ("slider", "cal_target_acc", 0.9, 0.92),
    "plan": ("slider", "plan_max_workers", 48, 32),
    "throughput": ("slider", "tp_top", 20, 15),
    "scaling": ("slider", "scaling_ps_first_rounds", 3, 2),
}
#: the goals of issue 10 (seconds)
FIRST_RUN_GOAL = {"logs": 1.5}
RERUN_GOAL = 0.150
#: issue 21: a page's first run at most this many times the reference page's (bench/reference_page.py)
FIRST_RUN_RATIO_GOAL = {"logs": 3.0, "calibrate": 3.0}
REFERENCE = ROOT / "bench" / "reference_page.py"


def import_page_modules() -> None:
    """Import what every page imports, without running a page (so no cache of any kind is filled):
    the first runs below time the page's work, not Python importing its modules."""
    files = [f for page in WIDGETS for f in (ROOT / "pages" / f"{page}.py",
                                              *sorted((ROOT / "pages" / f"{page}_sections").glob("*.py")))]
    for file in files:
        for node in ast.walk(ast.parse(file.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                importlib.import_module(node.module)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    importlib.import_module(alias.name)


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def measure(page: str, repeat: int) -> dict[str, float]:
    kind, key, new, default = WIDGETS[page]
    st.cache_data.clear()
    st.cache_resource.clear()
    path = str(ROOT / "pages" / f"{page}.py")
    at = AppTest.from_file(path, default_timeout=600)
    first = _timed(at.run)
    assert not at.exception, [e.value for e in at.exception]
    widget = getattr(at, kind)(key=key)
    moved = _timed(lambda: widget.set_value(new).run())
    back = _timed(lambda: getattr(at, kind)(key=key).set_value(default).run())
    cached, still = [], []
    for _ in range(repeat):
        cached.append(_timed(lambda: getattr(at, kind)(key=key).set_value(new).run()))
        getattr(at, kind)(key=key).set_value(default).run()
        still.append(_timed(at.run))
    assert not at.exception, [e.value for e in at.exception]
    return {"first_run_s": first, "rerun_new_value_s": moved, "rerun_back_s": back,
            "rerun_cached_s": statistics.median(cached), "rerun_unchanged_s": statistics.median(still)}


def reference_first_run(repeat: int) -> float:
    """The median first run of the reference page (a plain page of the same kind, nothing fitted)."""
    times = []
    for _ in range(repeat):
        st.cache_data.clear()
        st.cache_resource.clear()
        at = AppTest.from_file(str(REFERENCE), default_timeout=600)
        times.append(_timed(at.run))
        assert not at.exception, [e.value for e in at.exception]
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--pages", default=",".join(WIDGETS))
    args = parser.parse_args()
    at = AppTest.from_file(str(APP), default_timeout=600)   # import every module once, outside the timings
    at.run()
    import_page_modules()
    reference_first_run(1)                                  # its imports too
    reference = reference_first_run(args.repeat)
    print(f"reference page (bench/reference_page.py): first run {reference:.2f} s (median of {args.repeat})")
    print(f"{'page':<11} {'widget':<24} {'first run':>10} {'new value':>10} {'back':>8} {'cached':>8} "
          f"{'unchanged':>10}   goal (rerun <= {RERUN_GOAL * 1000:.0f} ms)")
    for page in args.pages.split(","):
        m = measure(page, args.repeat)
        goal = f"first run <= {FIRST_RUN_GOAL[page]:.1f} s; " if page in FIRST_RUN_GOAL else ""
        ratio = m["first_run_s"] / reference
        if page in FIRST_RUN_RATIO_GOAL:
            goal += (f"first run {ratio:.1f}x the reference (goal <= {FIRST_RUN_RATIO_GOAL[page]:.0f}x: "
                     f"{'met' if ratio <= FIRST_RUN_RATIO_GOAL[page] else 'missed'}); ")
        else:
            goal += f"first run {ratio:.1f}x the reference; "
        ok = m["rerun_cached_s"] <= RERUN_GOAL
        print(f"{page:<11} {WIDGETS[page][1]:<24} {m['first_run_s']:9.2f}s {m['rerun_new_value_s']:9.3f}s "
              f"{m['rerun_back_s']:7.3f}s {m['rerun_cached_s']:7.3f}s {m['rerun_unchanged_s']:9.3f}s   "
              f"{goal}cached rerun {'met' if ok else 'missed'} "
              f"({m['rerun_cached_s'] / RERUN_GOAL:.2f}x the goal)")


if __name__ == "__main__":
    main()
