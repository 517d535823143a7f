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
    TIME_LATEX,
    Allocation,
    AllocationStep,
    Configuration,
    DeadlineChoice,
    best_workers,
    cheapest_config,
    configuration_cost,
    display_time,
    greedy_allocation,
    pareto_frontier,
    plan_grid,
    suggest_deadline,
    time_to_target_s,
)
from core.plan.paleo_time import (
    paleo_net_for,
    paleo_time_to_target,
)
from core.plan.speed import (
    FORMULAS,
    FORMULAS_LATEX,
    MIN_POINTS,
    MODES,
    PAPER_GLOBAL_BATCH,
    PAPER_SOURCE,
    PAPER_THETA,
    THETA_NAMES,
    THETA_SOURCES,
    TIME_UNITS,
    SpeedModel,
    build_speed_model,
    default_speed_mode,
    fit_speed_model,
    optimus_speed,
    paper_speed_model,
    scale_to_step_time,
    speed_features,
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
    RUN_METHODS,
    SOURCES,
    LossThreshold,
    StepsEstimate,
    loss_threshold_from_runs,
    run_methods,
    steps_from_calibration,
    steps_from_run,
    steps_from_target_prediction,
    typed_steps,
)

__all__ = [
    'Allocation', 'AllocationStep', 'BATCH_NAMES', 'COLUMNS', 'COST_LATEX', 'Configuration',
    'DEFAULT_MAX_WORKERS', 'DEFAULT_PS', 'DeadlineChoice', 'FORMULAS', 'FORMULAS_LATEX', 'GRID_COLUMNS',
    'LOCAL_BATCH_NAMES', 'LossThreshold', 'MAX_BUDGET', 'MIN_POINTS', 'MODES', 'PAPER_GLOBAL_BATCH',
    'PAPER_SOURCE', 'PAPER_THETA', 'P_NAMES', 'RUN_METHODS', 'SOURCES', 'SPEED_NAMES', 'SpeedModel',
    'SpeedSource', 'StepsEstimate', 'THETA_NAMES', 'THETA_SOURCES', 'TIME_LATEX', 'TIME_UNITS', 'W_NAMES',
    'best_workers', 'build_speed_model', 'cheapest_config', 'configuration_cost', 'default_speed_mode',
    'display_time', 'fit_speed_model', 'greedy_allocation', 'has_parameter_servers',
    'loss_threshold_from_runs', 'normalise_speed_table', 'optimus_speed', 'paleo_net_for',
    'paleo_time_to_target', 'paper_speed_model', 'pareto_frontier', 'plan_grid', 'read_speed_table',
    'run_methods', 'scale_to_step_time', 'speed_features', 'steps_from_calibration', 'steps_from_run',
    'steps_from_target_prediction', 'suggest_deadline', 'time_to_target_s', 'typed_steps',
]
