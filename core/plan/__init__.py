"""Plan: steps to target ÷ speed = time to target, and its cost, over parameter servers and workers.

Modules: ``speed_table`` (measured speeds in one shape), ``speed`` (the Optimus speed model: equations,
paper θ, NNLS fit, the choice of θ source), ``steps`` (steps to target from a run, a calibration or
a number), ``grid`` (time and cost of every configuration, frontier, deadline, greedy allocation),
``paleo_time`` (Paleo's time to target beside Optimus).
"""

from core.plan.grid import (
    COST_LATEX,
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
    FORMULAS_LATEX,
    MODES,
    PAPER_GLOBAL_BATCH,
    THETA_NAMES,
    THETA_SOURCES,
    SpeedModel,
    build_speed_model,
    default_speed_mode,
    fit_speed_model,
    optimus_speed,
    paper_speed_model,
    scale_to_step_time,
)
from core.plan.speed_table import (
    has_parameter_servers,
    read_speed_table,
)
from core.plan.steps import (
    RUN_METHODS,
    SOURCES,
    StepsEstimate,
    loss_threshold_from_runs,
    run_methods,
    steps_from_calibration,
    steps_from_posterior,
    steps_from_run,
    steps_from_target_prediction,
    typed_steps,
)

__all__ = [
    'Allocation', 'AllocationStep', 'COST_LATEX', 'Configuration', 'DeadlineChoice', 'FORMULAS_LATEX', 'MODES',
    'PAPER_GLOBAL_BATCH', 'RUN_METHODS', 'SOURCES', 'SpeedModel', 'StepsEstimate', 'THETA_NAMES',
    'THETA_SOURCES', 'TIME_LATEX', 'best_workers', 'build_speed_model', 'cheapest_config', 'configuration_cost',
    'default_speed_mode', 'display_time', 'fit_speed_model', 'greedy_allocation', 'has_parameter_servers',
    'loss_threshold_from_runs', 'optimus_speed', 'paleo_net_for', 'paleo_time_to_target', 'paper_speed_model',
    'pareto_frontier', 'plan_grid', 'read_speed_table', 'run_methods', 'scale_to_step_time',
    'steps_from_calibration', 'steps_from_posterior', 'steps_from_run', 'steps_from_target_prediction',
    'suggest_deadline',
    'time_to_target_s', 'typed_steps',
]
