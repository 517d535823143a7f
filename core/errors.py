"""The project's own exception and warning types.

Each exception subclasses the builtin it refines, so callers may catch either one.
Messages follow one template: ``<where>: expected <what>; got <what arrived>. <fix>.``
"""

from __future__ import annotations


class PlannerError(Exception):
    """Base class of every error raised on purpose by ``core``."""


class LogFormatError(PlannerError, ValueError):
    """A training-log file cannot be read as a log.

    Attributes
    ----------
    source : str
        The file name (or ``"<input>"``) the problem was found in.
    problem : str
        What is wrong, in words a user can act on.
    """

    def __init__(self, source: str, problem: str) -> None:
        self.source = source
        self.problem = problem
        super().__init__(f"{source}: {problem}")


class FitError(PlannerError, RuntimeError):
    """An optimiser could not fit a model to the data given."""


class InputError(PlannerError, ValueError):
    """A parameter or table given to a ``core`` function has a wrong value."""


class LibraryError(PlannerError, RuntimeError):
    """The run library's database cannot be used as asked (made by a newer version, not a library, busy)."""


class LibraryBusyError(LibraryError):
    """Another process or session held the library for longer than the time allowed to wait."""


class FitWarning(UserWarning):
    """A fit finished but its result should not be trusted as it stands."""
