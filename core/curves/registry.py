"""Every learning-curve family by name: one explicit registry, filled here and nowhere else."""

from __future__ import annotations

from core.curves.domhan import EXP3, MMF, POW3, POW4, WEIBULL
from core.curves.family import CurveFamily
from core.curves.optimus import OPTIMUS
from core.validation import check_option

#: every family by name, in the order selectors list them
FAMILIES: dict[str, CurveFamily] = {f.name: f for f in (OPTIMUS, POW3, EXP3, POW4, MMF, WEIBULL)}


def get_family(name: str) -> CurveFamily:
    """The family called ``name`` (see ``FAMILIES``).

    >>> get_family("optimus").param_names
    ('b0', 'b1', 'b2')
    """
    return FAMILIES[check_option(name, "family", FAMILIES)]
