"""Every speed family by name: one explicit registry, filled here and nowhere else.

Adding a speed model: write its module (a :class:`core.plan.speed_family.FittedSpeed` subclass,
its fit and leave-one-out, and its :class:`core.plan.speed_family.SpeedFamily` record), and list the
record below. The chooser, ``fit_speed``, the CLI's ``--model`` and the Plan page take it from here.
"""

from __future__ import annotations

from core.errors import InputError
from core.plan.log_speed import LOG_SPEED_FAMILIES
from core.plan.paleo_speed import PALEO_SPEED
from core.plan.pollux_fit import POLLUX_SPEED
from core.plan.speed_family import SpeedFamily
from core.plan.speed_fit import OPTIMUS_SPEED
from core.plan.transformer_speed import TRANSFORMER_SPEED

#: every speed family by name, in the order selectors list them and ``auto`` fits them
SPEED_FAMILIES: dict[str, SpeedFamily] = {f.name: f for f in (OPTIMUS_SPEED, POLLUX_SPEED, TRANSFORMER_SPEED,
                                                               *LOG_SPEED_FAMILIES, PALEO_SPEED)}


def get_speed_family(name: str) -> SpeedFamily:
    """The speed family called ``name`` (see ``SPEED_FAMILIES``).

    >>> get_speed_family("pollux").modes
    ('allreduce',)
    >>> get_speed_family("roofline")
    Traceback (most recent call last):
    ...
    core.errors.InputError: speed model: expected one of optimus, pollux, transformer, overhead, elastic, bracket, \
paleo; got 'roofline'. Pick a registered speed family.
    """
    try:
        return SPEED_FAMILIES[name]
    except KeyError:
        raise InputError(f"speed model: expected one of {', '.join(SPEED_FAMILIES)}; got {name!r}. "
                         "Pick a registered speed family.") from None
