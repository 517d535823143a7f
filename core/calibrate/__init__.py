"""Calibrate across architectures and GPUs: regress curve parameters, predict a held-out model.

Modules: ``table`` (the fits table in one shape), ``methods`` (features and the regression
methods), ``limits`` (distance from the calibration set, "outside" flags, conformal
intervals), ``evaluate`` (leave-one-architecture-out, method scores and choice, the
``Calibration`` result), ``holdout`` (predict a held-out or unseen architecture), ``nested``
(nested leave-one-architecture-out of the whole procedure), ``stored_scores`` (the course table's method
scores, computed once and shipped), ``hardware`` (hardware independence).
"""

from core.calibrate.evaluate import (
    PREDICTION_COLUMNS,
    RECOMMENDED_LABEL,
    THRESHOLDS,
    Calibration,
    companion_method,
    competing_methods,
    leave_one_architecture_out,
    loao_summary,
    mape,
    method_scores,
    parameter_predictions,
    predicted_loss_errors,
    recommend_method,
    recommendation_rule,
)
from core.calibrate.hardware import hardware_independence
from core.calibrate.holdout import calibrate, holdout_outside, query_rows
from core.calibrate.limits import INTERVAL_METHOD
from core.calibrate.methods import AUTO_METHODS, CALIBRATION_METHODS
from core.calibrate.nested import NESTED_COLUMNS, nested_loao, nested_summary
from core.calibrate.stored_scores import method_scores_for

# names used outside the area since the trim (issue 34)
from core.calibrate.table import (
    SPLITS,
    architectures,
    normalise_fits,
    read_fits_table,
    unnamed_runs,
    usable,
)
from core.calibrate.targets import (
    calibration_target,
    check_fits_target,
)

__all__ = [
    'SPLITS', 'calibration_target', 'check_fits_target', 'RECOMMENDED_LABEL', 'competing_methods',
    'recommendation_rule', 'AUTO_METHODS', 'CALIBRATION_METHODS', 'INTERVAL_METHOD', 'NESTED_COLUMNS',
    'PREDICTION_COLUMNS', 'THRESHOLDS', 'Calibration', 'architectures', 'calibrate', 'companion_method',
    'hardware_independence', 'holdout_outside', 'leave_one_architecture_out', 'loao_summary', 'mape',
    'method_scores', 'method_scores_for', 'nested_loao', 'nested_summary', 'normalise_fits',
    'parameter_predictions', 'predicted_loss_errors', 'query_rows', 'read_fits_table', 'recommend_method',
    'unnamed_runs', 'usable',
]
