"""Calibrate across architectures and GPUs: regress curve parameters, predict a held-out model.

Modules: ``table`` (the fits table in one shape), ``methods`` (features and the scikit-learn
methods), ``evaluate`` (held-out prediction, leave-one-architecture-out, method choice,
hardware independence).
"""

from core.calibrate.evaluate import (
    INTERVAL_METHOD,
    PREDICTION_COLUMNS,
    THRESHOLDS,
    Calibration,
    HardwareIndependence,
    calibrate,
    companion_method,
    hardware_independence,
    leave_one_architecture_out,
    loao_summary,
    loss_threshold,
    mape,
    method_scores,
    parameter_predictions,
    predicted_loss_errors,
    recommend_method,
)
from core.calibrate.methods import GPU_INDEX, METHODS, architecture_parameters, feature_frame
from core.calibrate.table import architectures, excluded_rows, normalise_fits, read_fits_table, unnamed_runs, usable

__all__ = ["GPU_INDEX", "INTERVAL_METHOD", "METHODS", "PREDICTION_COLUMNS", "THRESHOLDS", "Calibration",
           "HardwareIndependence", "architecture_parameters", "architectures", "calibrate", "companion_method",
           "excluded_rows", "feature_frame", "hardware_independence", "leave_one_architecture_out", "loao_summary",
           "loss_threshold", "mape", "method_scores", "normalise_fits", "parameter_predictions",
           "predicted_loss_errors", "read_fits_table", "recommend_method", "unnamed_runs", "usable"]
