"""Learning curves: the families (an explicit registry), the fit, and its result.

Modules: ``family`` (``CurveFamily``: a curve with its Jacobian, guess, inverse, floor and
degeneracy test), ``optimus`` (the Optimus loss model), ``domhan`` (pow3, exp3, pow4, MMF,
Weibull), ``registry`` (``FAMILIES``), ``fit`` (``fit_curve``, ``FitResult``).
"""

from core.curves.domhan import EXP3, MMF, POW3, POW4, WEIBULL
from core.curves.family import CurveFamily, flat_over_data
from core.curves.fit import DEFAULT_MAX_POINTS, FitResult, bin_log_spaced, fit_curve, fit_flags, fit_result, validate_xy
from core.curves.optimus import OPTIMUS, degenerate_reason, optimus_loss, optimus_step_at_loss
from core.curves.registry import FAMILIES, get_family

__all__ = ["DEFAULT_MAX_POINTS", "EXP3", "FAMILIES", "MMF", "OPTIMUS", "POW3", "POW4", "WEIBULL", "CurveFamily",
           "FitResult", "bin_log_spaced", "degenerate_reason", "fit_curve", "fit_flags", "fit_result",
           "flat_over_data", "get_family",
           "optimus_loss", "optimus_step_at_loss", "validate_xy"]
