"""The validators of every ``core`` function: one for scalars, in the style of scikit-learn's
``check_scalar``, and one for a choice among options (``check_option``).

Every refusal is a :class:`core.errors.InputError` (a ``ValueError``), whether the value is of
the wrong kind (a string, a bool, ``None``) or out of range, so a caller catches one type.
Messages follow ``<name>: expected <what>; got <what arrived>. <fix>.``
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Collection
from typing import TypeVar

from core.errors import InputError

_KIND = {int: "an int", float: "a number"}
T = TypeVar("T")


def check_scalar(value: object, name: str, target_type: type = float, *, min_val: float | None = None,
                 max_val: float | None = None, include_boundaries: str = "both", fix: str = "") -> int | float:
    """``value`` as an ``int`` or ``float`` within bounds, or an ``InputError`` that says why not.

    Parameters
    ----------
    value : object
        What the caller passed.  Bools are refused; numpy scalars are accepted; for
        ``target_type=int`` a float is refused (``2.0`` workers is a sign of a mix-up).
    name : str
        The parameter's name, first in the message (``"workers"``, ``"plan_grid: deadline"``).
    target_type : {int, float}, default float
        The kind of number expected; the result has this type.  Floats must be finite.
    min_val, max_val : float, optional
        Bounds; ``include_boundaries`` says which of them are allowed
        (``"both"``, ``"left"``, ``"right"`` or ``"neither"``).
    fix : str, optional
        What the user should do, appended to the message.

    Examples
    --------
    >>> check_scalar(8, "workers", int, min_val=1)
    8
    >>> check_scalar(0.5, "price", min_val=0)
    0.5
    >>> check_scalar(0, "steps", min_val=0, include_boundaries="neither", fix="Give steps, not epochs")
    Traceback (most recent call last):
    ...
    core.errors.InputError: steps: expected a finite number > 0; got 0. Give steps, not epochs.
    >>> check_scalar("8", "workers", int, min_val=1)
    Traceback (most recent call last):
    ...
    core.errors.InputError: workers: expected an int >= 1; got '8' (str).
    """
    if target_type not in _KIND:
        raise TypeError(f"check_scalar: target_type must be int or float, not {target_type!r}")
    if include_boundaries not in ("both", "left", "right", "neither"):
        raise ValueError(f"check_scalar: include_boundaries {include_boundaries!r} is not one of "
                         "'both', 'left', 'right', 'neither'")
    what = _describe(target_type, min_val, max_val, include_boundaries)
    tail = f" {fix.rstrip('.')}." if fix else ""
    wanted = numbers.Integral if target_type is int else numbers.Real
    if isinstance(value, bool) or not isinstance(value, wanted):
        raise InputError(f"{name}: expected {what}; got {value!r} ({type(value).__name__}).{tail}")
    number = int(value) if target_type is int else float(value)
    low_ok = min_val is None or (number >= min_val if include_boundaries in ("both", "left") else number > min_val)
    high_ok = max_val is None or (number <= max_val if include_boundaries in ("both", "right") else number < max_val)
    if not (math.isfinite(number) and low_ok and high_ok):
        raise InputError(f"{name}: expected {what}; got {value!r}.{tail}")
    return number


def _describe(target_type: type, min_val, max_val, include: str) -> str:
    kind = _KIND[target_type] if target_type is int else "a finite number"
    left = ">=" if include in ("both", "left") else ">"
    right = "<=" if include in ("both", "right") else "<"
    if min_val is not None and max_val is not None:
        lo = "[" if left == ">=" else "("
        hi = "]" if right == "<=" else ")"
        return f"{kind} in {lo}{min_val:g}, {max_val:g}{hi}"
    if min_val is not None:
        return f"{kind} {left} {min_val:g}"
    if max_val is not None:
        return f"{kind} {right} {max_val:g}"
    return kind


def check_option(value: T, name: str, options: Collection, *, fix: str = "") -> T:
    """``value`` if it is one of ``options``, else an ``InputError`` naming them all.

    Parameters
    ----------
    value : object
        What the caller passed.
    name : str
        What it is, first in the message (``"mode"``, ``"speed model"``).
    options : collection
        The accepted values, in the order the message lists them (a dict: its keys).
    fix : str, optional
        What the user should do, appended to the message.

    Examples
    --------
    >>> check_option("sync", "mode", ("sync", "async", "allreduce"))
    'sync'
    >>> check_option("fast", "mode", ("sync", "async", "allreduce"), fix="Pick the training mode of the job")
    Traceback (most recent call last):
    ...
    core.errors.InputError: mode: expected one of sync, async, allreduce; got 'fast'. Pick the training mode of the job.
    """
    try:
        known = value in options
    except TypeError:          # an unhashable value asked of a dict or set
        known = False
    if not known:
        tail = f" {fix.rstrip('.')}." if fix else ""
        raise InputError(f"{name}: expected one of {', '.join(map(str, options))}; got {value!r}.{tail}")
    return value
