"""Argument checks shared by the scaling modules (private; one wording for every refusal).

Every message follows ``<where>: expected <what>; got <what arrived>. <fix>.``; a value of
the wrong kind raises ``TypeError``, a wrong value raises ``core.errors.InputError``.
"""

from __future__ import annotations

import math
import numbers

from core.errors import InputError


def count(name: str, value: object, *, minimum: int = 1, fix: str = "") -> int:
    """``value`` as an int >= ``minimum`` (bools and floats refused, numpy ints accepted)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected an int >= {minimum}; got {value!r} "
                        f"({type(value).__name__}).{_tail(fix)}")
    if value < minimum:
        raise InputError(f"{name}: expected an int >= {minimum}; got {value!r}.{_tail(fix)}")
    return int(value)


def seconds(name: str, value: object, *, positive: bool = False, fix: str = "") -> float:
    """``value`` as a finite float >= 0 (or > 0 when ``positive``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a number of seconds; got {value!r} "
                        f"({type(value).__name__}).{_tail(fix)}")
    value = float(value)
    bound = "> 0" if positive else ">= 0"
    if not math.isfinite(value) or value < 0 or (positive and value == 0):
        raise InputError(f"{name}: expected a finite time in seconds {bound}; got {value!r}."
                         f"{_tail(fix)}")
    return value


def positive(name: str, value: object, *, fix: str = "") -> float:
    """``value`` as a finite float > 0 (a rate, a size, a learning rate)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a number > 0; got {value!r} "
                        f"({type(value).__name__}).{_tail(fix)}")
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise InputError(f"{name}: expected a finite number > 0; got {value!r}.{_tail(fix)}")
    return value


def _tail(fix: str) -> str:
    return f" {fix.rstrip('.')}." if fix else ""
