"""Predict the epoch at target from the first epochs of a run, with an interval, and backtest it.

Modules: ``predict`` (the accuracy and loss routes), ``log_series`` (what a prediction reads from a
log), ``target_prediction`` (the result, its curve and band), ``intervals`` (the backtest inside the
observed epochs: family choice, drift correction, interval), ``schedule`` (learning-rate schedules:
declared, from an lr column, detected), ``prior`` (what other runs say before the run's own epochs),
``run_prior`` (which prior a run gets), ``posterior`` (prior and extrapolation combined), ``backtest``
(first part of finished logs against the rest; the widening learned from other runs), ``backtest_table``
(a backtest's cases as rows), ``combined`` (the prior and posterior columns of a backtest), ``tables``
(summaries, family scores, convergence), ``progress`` (samples or tokens to a target in either
direction: power law, prior, posterior), ``progress_estimates`` (its extrapolation and prior, the
per-run cache), ``progress_measure`` (a run's progress unit and points), ``progress_backtest`` (its
backtest), ``forecast`` (the one call the pages use: prediction widened as the other runs teach, with
the prior and the posterior).
"""

# names used outside the area since the trim (issue 34)
from core.prediction.backtest import (
    DEFAULT_FRACTIONS,
    INTERVAL_CALIBRATIONS,
    LOSS_THRESHOLDS,
    backtest_logs,
)
from core.prediction.combined import PRIOR_COLUMNS
from core.prediction.cooldown import (
    COOLDOWN_COLUMNS,
    CooldownPlan,
    candidate_schedule,
    cooldown_candidates,
    cooldown_forecast,
    decay_fractions_between,
    default_cooldown_target,
    in_progress,
    plan_cooldown,
)
from core.prediction.cooldown import DEFAULT_FRACTIONS as DEFAULT_COOLDOWN_FRACTIONS
from core.prediction.forecast import (
    DEFAULT_POSTERIOR_METHOD,
    FORECAST_POSTERIOR_METHODS,
    MIN_PREDICTION_EPOCHS,
    Forecast,
    forecast_epoch_at_target,
)
from core.prediction.intervals import FitCache
from core.prediction.log_series import n_epochs, showcase_log
from core.prediction.posterior import Posterior, combine
from core.prediction.predict import (
    ROUTES,
    predict_epoch_at_target,
)
from core.prediction.prior import Prior, prior_from_other_runs
from core.prediction.progress import ProgressForecast, predict_progress
from core.prediction.progress_estimates import ProgressCache
from core.prediction.progress_measure import evaluation_points, evaluation_table, progress_showcase, progress_to_target
from core.prediction.progress_route import LossForecast, forecast_progress, forecast_showcase
from core.prediction.run_backtest import backtest_runs
from core.prediction.run_forecast import (
    EPOCHS,
    PROGRESS,
    forecast_run,
    forecast_table,
    route_for,
    route_for_runs,
)
from core.prediction.run_prior import prior_for_run, prior_source
from core.prediction.schedule import Schedule, known_schedule, parse_schedule
from core.prediction.schedule_fit import ScheduleFitCache
from core.prediction.tables import (
    convergence_of_prediction,
    extrapolate_unreached,
    family_scores,
)
from core.prediction.target_prediction import TargetPrediction, prediction_curves
from core.prediction.through_schedule import ScheduleForecast, forecast_through_schedule, what_if

__all__ = [
    'EPOCHS', 'INTERVAL_CALIBRATIONS', 'LOSS_THRESHOLDS', 'PROGRESS', 'backtest_runs', 'forecast_run',
    'forecast_table', 'predict_epoch_at_target', 'route_for', 'route_for_runs', 'COOLDOWN_COLUMNS', 'CooldownPlan',
    'DEFAULT_COOLDOWN_FRACTIONS', 'LossForecast', 'ScheduleFitCache', 'ScheduleForecast', 'candidate_schedule',
    'cooldown_candidates', 'cooldown_forecast', 'decay_fractions_between', 'default_cooldown_target', 'in_progress',
    'forecast_progress', 'forecast_showcase', 'forecast_through_schedule', 'plan_cooldown', 'what_if',
    'ProgressCache', 'ProgressForecast', 'evaluation_points', 'evaluation_table', 'predict_progress',
    'progress_showcase', 'progress_to_target', 'MIN_PREDICTION_EPOCHS', 'DEFAULT_FRACTIONS',
    'DEFAULT_POSTERIOR_METHOD', 'FORECAST_POSTERIOR_METHODS', 'PRIOR_COLUMNS', 'FitCache', 'Forecast', 'Posterior',
    'Prior', 'ROUTES', 'Schedule', 'TargetPrediction', 'backtest_logs', 'combine', 'convergence_of_prediction',
    'extrapolate_unreached', 'family_scores', 'forecast_epoch_at_target', 'known_schedule', 'n_epochs',
    'parse_schedule', 'prediction_curves', 'prior_for_run', 'prior_from_other_runs', 'prior_source', 'showcase_log',
]
