"""Plan: steps to target ÷ speed = time to target, and its cost, over parameter servers and workers.

Modules: ``speed_table`` (measured speeds in one shape), ``speed`` (the Optimus speed model: equations,
paper θ, NNLS fit), ``steps`` (steps to target from a run, the Calibrate prediction or a number),
``grid`` (time and cost of every configuration, frontier, deadline, greedy allocation),
``paleo_time`` (Paleo's time to target beside Optimus).
"""

from core.plan.grid import (
    COST_LATEX,
    DEFAULT_MAX_WORKERS,
    DEFAULT_PS,
    GRID_COLUMNS,
    MAX_BUDGET,
    SECONDS_PER_HOUR,
    TIME_LATEX,
    Allocation,
    DeadlineChoice,
    best_workers,
    cheapest_config,
    display_time,
    greedy_allocation,
    pareto_frontier,
    plan_grid,
    suggest_deadline,
    time_to_target_s,
)
from core.plan.paleo_time import paleo_net_for, paleo_time_to_target
from core.plan.speed import (
    FORMULAS,
    FORMULAS_LATEX,
    MIN_POINTS,
    MODES,
    PAPER_GLOBAL_BATCH,
    PAPER_SOURCE,
    PAPER_THETA,
    THETA_NAMES,
    TIME_UNITS,
    SpeedModel,
    allreduce_speed,
    async_speed,
    calibrate_time_unit,
    default_speed_mode,
    fit_speed_model,
    paper_speed_model,
    sync_speed,
)
from core.plan.speed_table import (
    BATCH_NAMES,
    COLUMNS,
    LOCAL_BATCH_NAMES,
    P_NAMES,
    SPEED_NAMES,
    W_NAMES,
    SpeedSource,
    has_parameter_servers,
    normalise_speed_table,
    read_speed_table,
)
from core.plan.steps import (
    DEFAULT_LEVEL,
    FAMILY_METHOD,
    PREDICTION_KEYS,
    RUN_METHODS,
    LossThreshold,
    StepsEstimate,
    loss_threshold_from_runs,
    steps_from_prediction,
    steps_from_run,
    steps_from_target_prediction,
    typed_steps,
)

__all__ = ['Allocation', 'BATCH_NAMES', 'COLUMNS', 'COST_LATEX', 'DEFAULT_LEVEL', 'DEFAULT_MAX_WORKERS', 'DEFAULT_PS', 'DeadlineChoice', 'FAMILY_METHOD', 'FORMULAS', 'FORMULAS_LATEX', 'GRID_COLUMNS', 'LOCAL_BATCH_NAMES', 'LossThreshold', 'MAX_BUDGET', 'MIN_POINTS', 'MODES', 'PAPER_GLOBAL_BATCH', 'PAPER_SOURCE', 'PAPER_THETA', 'PREDICTION_KEYS', 'P_NAMES', 'RUN_METHODS', 'SECONDS_PER_HOUR', 'SPEED_NAMES', 'SpeedModel', 'SpeedSource', 'StepsEstimate', 'THETA_NAMES', 'TIME_LATEX', 'TIME_UNITS', 'W_NAMES', 'allreduce_speed', 'async_speed', 'best_workers', 'calibrate_time_unit', 'cheapest_config', 'default_speed_mode', 'display_time', 'fit_speed_model', 'greedy_allocation', 'has_parameter_servers', 'loss_threshold_from_runs', 'normalise_speed_table', 'paleo_net_for', 'paleo_time_to_target', 'paper_speed_model', 'pareto_frontier', 'plan_grid', 'read_speed_table', 'steps_from_prediction', 'steps_from_run', 'steps_from_target_prediction', 'suggest_deadline', 'sync_speed', 'time_to_target_s', 'typed_steps']
