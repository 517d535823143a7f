"""Every learning-curve family by name: the step curves (``FAMILIES``) and the laws through a learning-rate
schedule (``SCHEDULE_FAMILIES``), filled here and nowhere else."""

from __future__ import annotations

from core.curves.domhan import EXP3, MMF, POW3, POW4, WEIBULL
from core.curves.family import CurveFamily
from core.curves.lr_annealing import LR_ANNEALING
from core.curves.multi_power import MULTI_POWER
from core.curves.optimus import OPTIMUS
from core.curves.schedule_law import ScheduleFamily
from core.validation import check_option

#: every family by name, in the order selectors list them
FAMILIES: dict[str, CurveFamily] = {f.name: f for f in (OPTIMUS, POW3, EXP3, POW4, MMF, WEIBULL)}


def auto_families() -> tuple[str, ...]:
    """The families ``family="auto"`` chooses from, in the order selectors list them: every family of
    ``FAMILIES`` whose ``in_auto`` flag is set (read at each call, so a family registered later is included).

    >>> set(auto_families()) <= set(FAMILIES) and len(auto_families()) > 1
    True
    """
    return tuple(name for name, family in FAMILIES.items() if family.in_auto)


def get_family(name: str) -> CurveFamily:
    """The family called ``name`` (see ``FAMILIES``).

    >>> get_family("optimus").param_names
    ('b0', 'b1', 'b2')
    """
    return FAMILIES[check_option(name, "family", FAMILIES)]


#: every loss law through a learning-rate schedule by name (``core.curves.schedule_law``)
SCHEDULE_FAMILIES: dict[str, ScheduleFamily] = {f.name: f for f in (MULTI_POWER, LR_ANNEALING)}
#: the law a forecast takes when a schedule is known and its rate changes (``auto``): the LR-annealing law, whose one
#: decay term other runs identify more surely than the multi-power law's four (measured on the shared schedule
#: curves, bench/lr_schedule.py and docs/prediction.md: the two laws side by side)
DEFAULT_SCHEDULE_FAMILY = LR_ANNEALING.name


def get_schedule_family(name: str) -> ScheduleFamily:
    """The schedule-aware family called ``name`` (see ``SCHEDULE_FAMILIES``).

    >>> get_schedule_family("lr-annealing").decay_params
    ('C',)
    """
    return SCHEDULE_FAMILIES[check_option(name, "schedule family", SCHEDULE_FAMILIES)]
