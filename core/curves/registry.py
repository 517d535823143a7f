"""Every learning-curve family by name: one explicit registry, filled here and nowhere else."""

from __future__ import annotations

from core.curves.domhan import EXP3, MMF, POW3, POW4, WEIBULL
from core.curves.family import CurveFamily
from core.curves.optimus import OPTIMUS
from core.errors import InputError

#: every family by name, in the order selectors list them
FAMILIES: dict[str, CurveFamily] = {f.name: f for f in (OPTIMUS, POW3, EXP3, POW4, MMF, WEIBULL)}


def get_family(name: str) -> CurveFamily:
    """The family called ``name`` (see ``FAMILIES``).

    >>> get_family("optimus").param_names
    ('b0', 'b1', 'b2')
    """
    try:
        return FAMILIES[name]
    except KeyError:
        raise InputError(f"family: expected one of {', '.join(FAMILIES)}; got {name!r}.") from None
