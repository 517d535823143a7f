"""Calibration and its target: whether a fits table was made for it, and what the Calibrate page says about it.

A calibration learns from fits made for one target.  The course table records ``acc>=0.92`` only; a
``python -m core fit`` table records its own (``metric,direction,target``); the held-out runs' logs are
extrapolated (the Logs page's curve family) for an accuracy only.  The choices that depend on the
target live here, so that the page and ``python -m core calibrate`` only show what they return.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from core.errors import InputError
from core.targets import DEFAULT_TARGET, Target, accuracy_value

#: the sources of fits that include the course table (the Calibrate page's ``course`` and ``both``)
COURSE_SOURCES = ("course", "both")


def _words(target: Target) -> str:
    """``val_loss ≤ 3.28``: a target as the pages write it."""
    return f"{target.metric} {'≥' if target.climbs else '≤'} {target.value:g}"


def check_fits_target(fits: pd.DataFrame, target: Target, source: str) -> None:
    """Refuse a calibration frame (:func:`core.calibrate.normalise_fits`) whose fits were made for another target.

    The frame's ``target_spec`` says what each row was fitted for; a table that records nothing is
    taken as made for ``target``.

    Raises
    ------
    InputError
        When the recorded targets are not ``target`` alone.

    Examples
    --------
    >>> from core.targets import accuracy_target
    >>> fits = pd.DataFrame({"target_spec": ["acc>=0.92", "acc>=0.92"]})
    >>> check_fits_target(fits, accuracy_target(0.92), "fits.csv")
    >>> check_fits_target(fits, Target("loss", "<=", 0.5), "fits.csv")
    Traceback (most recent call last):
    ...
    core.errors.InputError: fits.csv: expected fits made for target loss<=0.5; the table records acc>=0.92. ...
    """
    recorded = set(fits["target_spec"].dropna())
    if not recorded or recorded == {target.spec}:
        return
    course = " (the course table only has 0.92)" if DEFAULT_TARGET.spec in recorded else ""
    raise InputError(f"{source}: expected fits made for target {target.spec}; the table records "
                     f"{', '.join(sorted(recorded))}. Refit with `python -m core fit --target '{target.spec}'`"
                     f"{course}.")


@dataclass(frozen=True)
class CalibrationTarget:
    """What the Calibrate page says about its target (each None when there is nothing to say).

    ``course_refusal``: why the course table cannot be learned from (its fits are for ``acc>=0.92``
    and the target is another metric: a loss is never read as an accuracy); ``course_warning``: the
    course rows stay at 0.92 whatever accuracy is asked; ``caption``: the fits and crossings are for
    this target (another metric than the accuracy); ``extrapolation_refusal``: why the held-out runs'
    unfinished logs are not extrapolated (the curve family extrapolates an accuracy).
    """

    target: Target
    course_refusal: str | None = None
    course_warning: str | None = None
    caption: str | None = None
    extrapolation_refusal: str | None = None

    def refuses(self, source: str) -> str | None:
        """Why the fits of ``source`` (``course``, ``logs``, ``both``, ``upload``) cannot serve the target."""
        return self.course_refusal if source in COURSE_SOURCES else None


def calibration_target(target: Target, *, holdout: str = "the held-out architecture") -> CalibrationTarget:
    """What the Calibrate page says about ``target`` (:class:`CalibrationTarget`).

    Examples
    --------
    >>> from core.targets import accuracy_target
    >>> calibration_target(accuracy_target(0.92))
    CalibrationTarget(target=Target(metric='acc', direction='>=', value=0.92, origin='user'), course_refusal=None, \
course_warning=None, caption=None, extrapolation_refusal=None)
    >>> calibration_target(accuracy_target(0.9)).course_warning[:47]
    'The course table records only the 92 % target; '
    >>> loss = calibration_target(Target("val_loss", "<=", 3.28))
    >>> loss.refuses("logs") is None, loss.refuses("both")[:40]
    (True, 'The course table records acc ≥ 0.92 only')
    """
    if accuracy_value(target) is not None:
        warning = None if target == DEFAULT_TARGET else \
            "The course table records only the 92 % target; its rows use 0.92 whatever the slider says."
        return CalibrationTarget(target, course_warning=warning)
    words = _words(target)
    return CalibrationTarget(
        target,
        course_refusal=(f"The course table records {_words(DEFAULT_TARGET)} only: the target {words} is not an "
                        "accuracy, and a loss is never read as one. Choose \"Runs loaded on the Logs page\" (fitted "
                        "to this target) or an uploaded fits table (`python -m core fit --target`) as the source, "
                        "or acc as the target metric."),
        caption=f"Epochs to {words}: each run's fit and crossing are for this target.",
        extrapolation_refusal=(f"{holdout}'s logs end before {words} on some devices; their extrapolation (the Logs "
                               "page's curve family) is drawn for an accuracy target only."))
