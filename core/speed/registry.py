"""Every speed family by name: one explicit registry, filled here and nowhere else.

Adding a speed model: write its module (a :class:`core.speed.family.FittedSpeed` subclass,
its fit and leave-one-out, and its :class:`core.speed.family.SpeedFamily` record), and list the
record below. The chooser, ``fit_speed``, the CLI's ``--model`` and the Plan page take it from here.
"""

from __future__ import annotations

from core.speed.family import SpeedFamily
from core.speed.optimus_fit import OPTIMUS_SPEED
from core.speed.paleo import PALEO_SPEED
from core.speed.per_gpu_batch import LOG_SPEED_FAMILIES
from core.speed.pollux_fit import POLLUX_SPEED
from core.speed.transformer import TRANSFORMER_SPEED
from core.validation import check_option

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
    return SPEED_FAMILIES[check_option(name, "speed model", SPEED_FAMILIES, fix="Pick a registered speed family")]
