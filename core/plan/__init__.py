"""Plan: steps to target ÷ speed = time to target, and its cost, over parameter servers and workers.

Modules: ``speed_table`` (measured speeds in one shape), ``speed`` (the Optimus speed model: equations,
paper θ, NNLS fit, the choice of θ source), ``pollux_speed`` (Pollux's throughput model, the second
speed family), ``speed_select`` (both families fitted, chosen by leave-one-out error), ``steps``
(steps to target from a run, a calibration or a number), ``batch`` (samples and steps to target as a
function of the global batch: E_min, B_noise, statistical efficiency), ``grid`` (time and cost of every
configuration, frontier, deadline, greedy allocation), ``goodput`` (the plan when the batch follows the
workers: scaling rules, goodput, the best (w, M)), ``paleo_time`` (Paleo's time to target beside Optimus).
"""

from core.plan.batch import (
    EFFICIENCY_LATEX,
    METHODS,
    SAMPLES_LATEX,
    STEPS_LATEX,
    TUNED_NOTE,
    BatchRun,
    BatchScaling,
    BatchStudy,
    anchored_batch_scaling,
    batch_scaling,
    batch_study,
    crossing_row,
    fit_batch_scaling,
    goodput,
    measure_batch_run,
    measure_batch_runs,
    noise_batch_scaling,
    run_batch,
    samples_to_target,
    statistical_efficiency,
    steps_to_target,
    typed_batch_scaling,
)
from core.plan.examples import EXAMPLE_STEP_TIME, EXAMPLE_THETA_S
from core.plan.goodput import (
    GOODPUT_COLUMNS,
    SCALING_RULES,
    TIME_RULE_LATEX,
    ScalingRule,
    anchor_batch_of,
    batch_plan_grid,
    best_configuration,
    goodput_curves,
    plan_with_rule,
)
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
from core.plan.pollux_speed import (
    PolluxSpeedModel,
    fit_pollux_speed,
    pollux_step_time,
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
from core.plan.speed_select import (
    FAMILIES,
    MODEL_CHOICES,
    SpeedFit,
    fit_speed,
)
from core.plan.speed_table import (
    has_parameter_servers,
    read_speed_csv,
    read_speed_table,
    speed_table_from_logs,
)
from core.plan.steps import (
    RUN_METHODS,
    SOURCES,
    STEPS_SOURCES,
    StepsEstimate,
    default_run,
    loss_threshold_from_runs,
    run_methods,
    steps_from_batch_scaling,
    steps_from_calibration,
    steps_from_posterior,
    steps_from_run,
    steps_from_target_prediction,
    steps_sources,
    typed_steps,
)

__all__ = [
    'EXAMPLE_STEP_TIME', 'EXAMPLE_THETA_S',
    'STEPS_SOURCES', 'anchor_batch_of', 'default_run', 'steps_sources',
    'Allocation', 'AllocationStep', 'BatchRun', 'BatchScaling', 'BatchStudy', 'COST_LATEX', 'Configuration',
    'DeadlineChoice', 'EFFICIENCY_LATEX', 'FAMILIES', 'FORMULAS_LATEX', 'GOODPUT_COLUMNS', 'METHODS',
    'MODEL_CHOICES', 'MODES', 'PAPER_GLOBAL_BATCH', 'PolluxSpeedModel', 'RUN_METHODS', 'SAMPLES_LATEX',
    'SCALING_RULES', 'SOURCES', 'STEPS_LATEX', 'ScalingRule', 'SpeedFit', 'SpeedModel', 'StepsEstimate',
    'THETA_NAMES', 'THETA_SOURCES', 'TIME_LATEX', 'TIME_RULE_LATEX', 'TUNED_NOTE', 'anchored_batch_scaling',
    'batch_plan_grid', 'batch_scaling', 'batch_study', 'best_configuration', 'best_workers', 'build_speed_model',
    'cheapest_config', 'configuration_cost', 'crossing_row', 'default_speed_mode', 'display_time',
    'fit_batch_scaling', 'fit_pollux_speed', 'fit_speed', 'fit_speed_model', 'goodput', 'goodput_curves',
    'greedy_allocation', 'has_parameter_servers', 'loss_threshold_from_runs', 'measure_batch_run',
    'measure_batch_runs', 'noise_batch_scaling', 'optimus_speed', 'paleo_net_for', 'paleo_time_to_target',
    'paper_speed_model', 'pareto_frontier', 'plan_grid', 'plan_with_rule', 'pollux_step_time', 'read_speed_csv',
    'read_speed_table', 'run_batch', 'run_methods', 'samples_to_target', 'scale_to_step_time',
    'speed_table_from_logs', 'statistical_efficiency', 'steps_from_batch_scaling', 'steps_from_calibration',
    'steps_from_posterior', 'steps_from_run', 'steps_from_target_prediction', 'steps_to_target', 'suggest_deadline',
    'time_to_target_s', 'typed_batch_scaling', 'typed_steps',
]
