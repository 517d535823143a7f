"""Learning curves: the families (an explicit registry), the fit, and its result.

Modules: ``family`` (``CurveFamily``: a curve with its Jacobian, guess, inverse, floor and
degeneracy test), ``optimus`` (the Optimus loss model), ``domhan`` (pow3, exp3, pow4, MMF,
Weibull), ``registry`` (``FAMILIES``; ``SCHEDULE_FAMILIES``), ``fit`` (``fit_curve``, ``FitResult``);
the laws through a learning-rate schedule: ``schedule_law`` (their protocol, features and joint fit),
``multi_power`` (Luo et al. 2025), ``lr_annealing`` (Tissue et al. 2024).
"""

# names used outside the area since the trim (issue 34)
from core.curves.family import CurveFamily
from core.curves.fit import DEFAULT_MAX_POINTS, FitResult, bin_log_spaced, fit_curve, fit_result, validate_xy
from core.curves.multi_power import MULTI_POWER
from core.curves.optimus import OPTIMUS, degenerate_reason, optimus_loss, optimus_step_at_loss
from core.curves.registry import (
           DEFAULT_SCHEDULE_FAMILY,
           FAMILIES,
           SCHEDULE_FAMILIES,
           auto_families,
           get_family,
           get_schedule_family,
)
from core.curves.schedule_law import LEVEL_PARAMS, ScheduleFamily, ScheduleLawFit, fit_schedule_law, schedule_features

__all__ = [
    'CurveFamily', 'auto_families', 'DEFAULT_SCHEDULE_FAMILY', 'LEVEL_PARAMS', 'MULTI_POWER', 'SCHEDULE_FAMILIES',
    'ScheduleFamily', 'ScheduleLawFit', 'fit_schedule_law', 'get_schedule_family', 'schedule_features',
    'DEFAULT_MAX_POINTS', 'FAMILIES', 'OPTIMUS', 'FitResult', 'bin_log_spaced', 'degenerate_reason', 'fit_curve',
    'fit_result', 'get_family', 'optimus_loss', 'optimus_step_at_loss', 'validate_xy',
]
