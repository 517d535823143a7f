"""Calibrate across architectures and GPUs: regress curve parameters, predict a held-out model.

Modules: ``table`` (the fits table in one shape), ``methods`` (features and the regression
methods), ``limits`` (distance from the calibration set, "outside" flags, conformal
intervals), ``evaluate`` (leave-one-architecture-out, method scores and choice, the
``Calibration`` result), ``holdout`` (predict a held-out or unseen architecture), ``nested``
(nested leave-one-architecture-out of the whole procedure), ``stored_scores`` (the course table's method
scores, computed once and shipped), ``hardware`` (hardware independence), ``targets`` (whether fits were made for
the target, and what the page says about it).
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
    loss_threshold,
    mape,
    method_scores,
    parameter_predictions,
    predicted_loss_errors,
    recommend_method,
    recommendation_rule,
)
from core.calibrate.hardware import HardwareIndependence, hardware_independence
from core.calibrate.holdout import calibrate, holdout_outside, query_rows
from core.calibrate.limits import INTERVAL_METHOD, FeatureSpace, outside_reasons
from core.calibrate.methods import (
    AUTO_METHODS,
    CALIBRATION_METHODS,
    GPU_INDEX,
    architecture_parameters,
    feature_frame,
)
from core.calibrate.nested import NESTED_COLUMNS, nested_loao, nested_summary
from core.calibrate.stored_scores import method_scores_for, stored_method_scores
from core.calibrate.table import (
    SPLITS,
    architectures,
    excluded_rows,
    normalise_fits,
    read_fits_table,
    unnamed_runs,
    usable,
)
from core.calibrate.targets import CalibrationTarget, calibration_target, check_fits_target

__all__ = ["RECOMMENDED_LABEL", "competing_methods", "recommendation_rule",
           "AUTO_METHODS", "CALIBRATION_METHODS", "GPU_INDEX", "INTERVAL_METHOD", "NESTED_COLUMNS",
           "PREDICTION_COLUMNS", "SPLITS",
           "THRESHOLDS", "Calibration", "CalibrationTarget", "FeatureSpace", "HardwareIndependence",
           "architecture_parameters", "architectures", "calibrate", "calibration_target", "check_fits_target",
           "companion_method", "excluded_rows", "feature_frame",
           "hardware_independence", "holdout_outside", "leave_one_architecture_out", "loao_summary",
           "loss_threshold", "mape", "method_scores",
           "method_scores_for", "stored_method_scores", "nested_loao", "nested_summary", "normalise_fits",
           "outside_reasons", "parameter_predictions", "predicted_loss_errors", "query_rows", "read_fits_table",
           "recommend_method", "unnamed_runs", "usable"]
