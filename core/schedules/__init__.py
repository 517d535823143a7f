"""Planned learning-rate schedules: the rate at every step a run trains or will train.

Modules: ``planned`` (``PlannedSchedule``: knots with linear interpolation, the area under the rate and its
falls), ``spec`` (declared schedules ``KIND:key=value,...``: constant, cosine, linear, wsd with its cool-down
shapes, step), ``from_log`` (the plan a log gives: its lr column, its declared schedule; a CSV of step, lr; the
order in which a forecast takes them).
"""

from core.schedules.from_log import (
    declared_schedule,
    joined_plan,
    log_schedule,
    read_schedule_file,
    resolve_planned_schedule,
)
from core.schedules.planned import PlannedSchedule
from core.schedules.spec import COOLDOWN_SHAPES, SCHEDULE_KINDS, build_schedule, is_schedule_spec, parse_schedule_spec

__all__ = ["COOLDOWN_SHAPES", "SCHEDULE_KINDS", "PlannedSchedule", "build_schedule",
           "declared_schedule", "is_schedule_spec", "joined_plan", "log_schedule",
           "parse_schedule_spec", "read_schedule_file", "resolve_planned_schedule"]
