"""Time-to-Accuracy Planner: all the logic, with no user interface.

Every number the dashboard shows is computed here, by plain functions on numpy/pandas
that return small frozen dataclasses.  ``python -m core <command>`` is the headless
interface to the same functions (see ``core.cli``).  This package never imports
streamlit.
"""

__version__ = "0.1.0"
