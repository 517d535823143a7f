"""Plan: steps to target ÷ speed = time to target, and its cost, over parameter servers and workers.

Modules: ``speed_table`` (measured speeds in one shape), ``speed_family`` (what every speed model is:
the ``SpeedFamily`` record, the ``FittedSpeed`` base, scaling to a measured step), ``speed`` (the
Optimus speed model: equations, paper θ), ``speed_fit`` (its NNLS fit, leave-one-out), ``pollux_speed``
(Pollux's throughput model), ``pollux_fit`` (its fit, leave-one-out), ``speed_registry`` (every speed
family by name), ``speed_select`` (the chooser above them: families fitted and scored by leave-one-out
error; the choice of θ source for a plan), ``steps`` (steps to target from a calibration or a number,
the StepsEstimate), ``run_steps`` (steps to target from a logged run), ``grid`` (time and cost of every
configuration, frontier, deadline), ``allocation`` (greedy allocation of a budget), ``goodput`` (the
plan when the batch follows the workers: scaling rules, goodput, the best (w, M)), ``paleo_time``
(Paleo's time to target beside Optimus), ``from_logs`` (the plan straight from training logs: their step
times and samples to target), ``decisions`` (what a team decides from a plan table: the time at a chosen
count, the efficiency knee, the cheapest count meeting a deadline).
"""

from core.plan.allocation import Allocation, AllocationStep, Configuration, greedy_allocation
from core.plan.decisions import (
    DECISION_COLUMNS,
    Decision,
    PlanDecisions,
    cheapest_for_deadline,
    efficiency_knee,
    plan_decisions,
    time_at_count,
)
from core.plan.examples import EXAMPLE_STEP_TIME, EXAMPLE_THETA_S
from core.plan.from_logs import (
    MEASURED_COLUMNS,
    PLAN_COLUMNS,
    SAMPLES_SOURCES,
    SamplesAtBatch,
    fastest_configuration,
    measured_configurations,
    measured_step_time,
    samples_at_batch,
)
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
    DeadlineChoice,
    best_workers,
    cheapest_config,
    configuration_cost,
    display_time,
    pareto_frontier,
    plan_grid,
    suggest_deadline,
    time_to_target_s,
)
from core.plan.log_plan import (
    DEFAULT_LOG_SPEED,
    SCORE_COLUMNS,
    LogPlan,
    LogSpeedChoice,
    choose_log_speed,
    counted_overhead,
    leave_one_size_out,
    log_speed_choices,
    measured_speed_table,
    plan_from_logs,
    plan_on_device,
)
from core.plan.log_speed import LOG_SPEED_FAMILIES, PerGpuBatchSpeed, fit_per_gpu_batch
from core.plan.paleo_time import (
    StepCalibration,
    calibrate_paleo_step,
    paleo_calibration_point,
    paleo_device_for,
    paleo_net_for,
    paleo_time_to_target,
)
from core.plan.pollux_fit import fit_pollux_speed
from core.plan.pollux_speed import PolluxSpeedModel, pollux_step_time
from core.plan.run_steps import (
    RUN_METHODS,
    default_run,
    loss_threshold_from_runs,
    run_methods,
    steps_from_posterior,
    steps_from_run,
    steps_from_target_prediction,
)
from core.plan.speed import (
    FORMULAS_LATEX,
    MODES,
    PAPER_GLOBAL_BATCH,
    THETA_NAMES,
    SpeedModel,
    optimus_speed,
    paper_speed_model,
)
from core.plan.speed_family import (
    FittedSpeed,
    SpeedFamily,
    scale_to_step_time,
)
from core.plan.speed_fit import fit_speed_model
from core.plan.speed_registry import (
    SPEED_FAMILIES,
    get_speed_family,
)
from core.plan.speed_select import (
    SPEED_MODEL_CHOICES,
    THETA_SOURCES,
    SpeedFit,
    build_speed_model,
    fit_speed,
    speed_model_choices,
)
from core.plan.speed_table import (
    default_speed_mode,
    has_parameter_servers,
    read_speed_csv,
    read_speed_table,
    speed_table_from_logs,
)
from core.plan.steps import (
    SOURCES,
    STEPS_SOURCES,
    StepsEstimate,
    steps_from_batch_scaling,
    steps_from_calibration,
    steps_sources,
    typed_steps,
)
from core.plan.to_device import (
    BENCHMARK_CONFIGS,
    config_for_benchmark,
    default_device_for,
    step_from_meta,
    systems_json_for,
    transformer_from_logs,
)
from core.plan.transformer_speed import (
    TRANSFORMER_SPEED,
    TransformerSpeedModel,
    fit_transformer_speed,
    transformer_speed_model,
)

__all__ = [
    'EXAMPLE_STEP_TIME', 'EXAMPLE_THETA_S', 'STEPS_SOURCES', 'anchor_batch_of', 'default_run', 'steps_sources',
    'LogPlan', 'LogSpeedChoice', 'MEASURED_COLUMNS', 'PLAN_COLUMNS', 'SAMPLES_SOURCES', 'SCORE_COLUMNS',
    'SamplesAtBatch', 'DEFAULT_LOG_SPEED', 'LOG_SPEED_FAMILIES', 'PerGpuBatchSpeed', 'choose_log_speed',
    'counted_overhead', 'fastest_configuration', 'fit_per_gpu_batch', 'leave_one_size_out', 'log_speed_choices',
    'measured_configurations', 'measured_speed_table', 'measured_step_time', 'plan_from_logs', 'samples_at_batch',
    'Allocation', 'AllocationStep', 'COST_LATEX', 'Configuration', 'DeadlineChoice', 'FORMULAS_LATEX',
    'FittedSpeed', 'GOODPUT_COLUMNS', 'MODES', 'PAPER_GLOBAL_BATCH', 'PolluxSpeedModel', 'RUN_METHODS',
    'SCALING_RULES', 'SOURCES', 'SPEED_FAMILIES', 'SPEED_MODEL_CHOICES', 'ScalingRule', 'SpeedFamily', 'SpeedFit',
    'SpeedModel', 'StepsEstimate', 'THETA_NAMES', 'THETA_SOURCES', 'TIME_LATEX', 'TIME_RULE_LATEX',
    'batch_plan_grid', 'best_configuration', 'best_workers', 'build_speed_model', 'cheapest_config',
    'configuration_cost', 'default_speed_mode', 'display_time', 'fit_pollux_speed', 'fit_speed', 'fit_speed_model',
    'get_speed_family', 'goodput_curves', 'greedy_allocation', 'has_parameter_servers', 'loss_threshold_from_runs',
    'optimus_speed', 'paleo_device_for', 'paleo_net_for', 'paleo_time_to_target', 'paper_speed_model',
    'pareto_frontier', 'plan_grid',
    'plan_with_rule', 'pollux_step_time', 'read_speed_csv', 'read_speed_table', 'run_methods',
    'scale_to_step_time', 'speed_model_choices', 'speed_table_from_logs', 'steps_from_batch_scaling',
    'steps_from_calibration', 'steps_from_posterior', 'steps_from_run', 'steps_from_target_prediction',
    'suggest_deadline', 'time_to_target_s', 'typed_steps',
    'BENCHMARK_CONFIGS', 'config_for_benchmark', 'default_device_for', 'transformer_from_logs',
    'plan_on_device', 'step_from_meta',
    'systems_json_for', 'TRANSFORMER_SPEED', 'TransformerSpeedModel', 'fit_transformer_speed',
    'transformer_speed_model',
    'DECISION_COLUMNS', 'Decision', 'PlanDecisions', 'cheapest_for_deadline', 'efficiency_knee', 'plan_decisions',
    'time_at_count',
    'StepCalibration', 'calibrate_paleo_step', 'paleo_calibration_point',
]
