"""Predict the epoch at target from the first epochs of a run, with an interval, and backtest it.

Modules: ``predict`` (the accuracy and loss routes), ``intervals`` (the backtest inside the observed
epochs: family choice, drift correction, interval), ``backtest`` (first part of finished logs against
the rest; the widening learned from other runs), ``tables`` (summaries, family scores, convergence),
``forecast`` (the one call the pages use: prediction widened as the other runs teach).
"""

from core.prediction.backtest import (
    BACKTEST_COLUMNS,
    DEFAULT_FRACTIONS,
    backtest_logs,
    backtest_run,
    inflation_from_other_runs,
    resolve_target,
)
from core.prediction.forecast import (
    Forecast,
    forecast_epoch_at_target,
)
from core.prediction.intervals import (
    INTERVAL_METHOD,
    FitCache,
)
from core.prediction.predict import (
    AUTO_FAMILIES,
    ROUTES,
    TargetPrediction,
    first_epochs,
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
    'AUTO_FAMILIES', 'BACKTEST_COLUMNS', 'DEFAULT_FRACTIONS', 'FitCache', 'Forecast', 'INTERVAL_METHOD',
    'ROUTES', 'TargetPrediction', 'backtest_logs', 'backtest_run', 'backtest_summary',
    'convergence_of_prediction', 'extrapolate_unreached', 'family_scores', 'first_epochs',
    'forecast_epoch_at_target', 'inflation_from_other_runs', 'n_epochs', 'predict_epoch_at_target',
    'prediction_curves', 'prediction_from_first_epochs', 'resolve_target', 'showcase_log', 'summary_line',
    'widen',
]
