"""Predict the epoch at target from the first epochs of a run, with an interval, and backtest it.

Modules: ``predict`` (the accuracy and loss routes), ``intervals`` (the backtest inside the observed
epochs: family choice, drift correction, interval), ``backtest`` (first part of finished logs against
the rest; the widening learned from other runs), ``tables`` (summaries, family scores, convergence).
"""

from core.prediction.backtest import (
    BACKTEST_COLUMNS,
    DEFAULT_FRACTIONS,
    EXTRA_COLUMNS,
    INFLATION_GRID,
    MIN_CALIBRATION_CASES,
    ROW_STATUSES,
    backtest_logs,
    backtest_run,
    check_fractions,
    final_accuracy,
    inflation_from_other_runs,
    needed_inflation,
    observed_epochs,
    resolve_target,
    run_key,
)
from core.prediction.forecast import (
    Forecast,
    forecast_epoch_at_target,
)
from core.prediction.intervals import (
    INNER_FRACTIONS,
    INTERVAL_METHOD,
    MIN_CHECKS,
    MIN_INNER_EPOCHS,
    MIN_LOG_SPREAD,
    PREDICTION_MAX_POINTS,
    PREDICTION_TOL,
    Drift,
    FitCache,
    InnerBacktest,
    Series,
    inner_backtest,
    stretch,
    whole_epoch,
)
from core.prediction.predict import (
    AUTO_FAMILIES,
    ROUTES,
    STATUSES,
    TargetPrediction,
    accuracy_series,
    check_family,
    check_route,
    first_epochs,
    loss_series,
    loss_threshold_from_observed,
    n_epochs,
    predict_epoch_at_target,
    prediction_curves,
    prediction_from_first_epochs,
    showcase_log,
    widen,
)
from core.prediction.tables import (
    backtest_summary,
    convergence_of_prediction,
    extrapolate_unreached,
    family_scores,
    summary_line,
)

__all__ = [
    'AUTO_FAMILIES', 'BACKTEST_COLUMNS', 'DEFAULT_FRACTIONS', 'Drift', 'EXTRA_COLUMNS', 'FitCache',
    'Forecast', 'INFLATION_GRID', 'INNER_FRACTIONS', 'INTERVAL_METHOD', 'InnerBacktest',
    'MIN_CALIBRATION_CASES', 'MIN_CHECKS', 'MIN_INNER_EPOCHS', 'MIN_LOG_SPREAD', 'PREDICTION_MAX_POINTS',
    'PREDICTION_TOL', 'ROUTES', 'ROW_STATUSES', 'STATUSES', 'Series', 'TargetPrediction', 'accuracy_series',
    'backtest_logs', 'backtest_run', 'backtest_summary', 'check_family', 'check_fractions', 'check_route',
    'convergence_of_prediction', 'extrapolate_unreached', 'family_scores', 'final_accuracy', 'first_epochs',
    'forecast_epoch_at_target', 'inflation_from_other_runs', 'inner_backtest', 'loss_series',
    'loss_threshold_from_observed', 'n_epochs', 'needed_inflation', 'observed_epochs',
    'predict_epoch_at_target', 'prediction_curves', 'prediction_from_first_epochs', 'resolve_target',
    'run_key', 'showcase_log', 'stretch', 'summary_line', 'whole_epoch', 'widen',
]
