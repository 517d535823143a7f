"""Plan: steps to target ÷ speed = time to target, and its cost, over parameter servers and workers.

The speed (a step's time on ``w`` GPUs) is :mod:`core.speed`'s, the one step-time area. Modules here: ``steps``
(steps to target from a calibration or a number, the StepsEstimate), ``run_steps`` (steps to target from a logged
run), ``grid`` (time and cost of every configuration, frontier, deadline), ``allocation`` (greedy allocation of a
budget), ``goodput`` (the plan when the batch follows the workers: scaling rules, goodput, the best (w, M)),
``paleo_time`` (Paleo's time to target beside Optimus), ``from_logs`` (the plan straight from training logs: their
step times and samples to target; ``log_plan``, the plan from them, page and CLI), ``to_device`` (the transformer
model calibrated on logs), ``examples`` (the page's example θ and step), ``decisions`` (what a team decides from a
plan table: the time at a chosen count, the efficiency knee, the cheapest count meeting a deadline).
"""

from core.plan.allocation import Allocation, AllocationStep, Configuration, greedy_allocation
from core.plan.decisions import (
    DECISION_COLUMNS,
    Decision,
    PlanDecisions,
    cheapest_for_deadline,
    efficiency_knee,
    knee_value,
    plan_decisions,
    time_at_count,
)
from core.plan.examples import EXAMPLE_STEP_TIME, EXAMPLE_THETA_S
from core.plan.from_logs import (
    MEASURED_COLUMNS,
    PLAN_COLUMNS,
    SAMPLES_SOURCES,
    SamplesAtBatch,
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
    duration_text,
    duration_unit,
    pareto_frontier,
    plan_grid,
    suggest_deadline,
    time_text,
    time_to_target_s,
    with_time_and_cost,
)
from core.plan.log_plan import LogPlan, counted_overhead, plan_from_logs, plan_on_device
from core.plan.log_speed_choice import (
    DEFAULT_LOG_SPEED,
    SCORE_COLUMNS,
    LogSpeedChoice,
    choose_log_speed,
    leave_one_size_out,
    log_speed_choices,
    measured_speed_table,
)
from core.plan.paleo_time import (
    paleo_calibration_point,
    paleo_device_for,
    paleo_net_for,
    paleo_time_to_target,
)
from core.plan.run_steps import (
    RUN_METHODS,
    default_run,
    loss_threshold_from_runs,
    run_methods,
    steps_from_posterior,
    steps_from_run,
    steps_from_target_prediction,
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

__all__ = [
    'EXAMPLE_STEP_TIME', 'EXAMPLE_THETA_S', 'STEPS_SOURCES', 'anchor_batch_of', 'default_run', 'steps_sources',
    'LogPlan', 'LogSpeedChoice', 'MEASURED_COLUMNS', 'PLAN_COLUMNS', 'SAMPLES_SOURCES', 'SCORE_COLUMNS',
    'SamplesAtBatch', 'DEFAULT_LOG_SPEED', 'choose_log_speed', 'counted_overhead',
    'leave_one_size_out', 'log_speed_choices', 'measured_configurations', 'measured_speed_table',
    'measured_step_time', 'plan_from_logs', 'samples_at_batch', 'Allocation', 'AllocationStep', 'COST_LATEX',
    'Configuration', 'DeadlineChoice', 'GOODPUT_COLUMNS', 'RUN_METHODS', 'SCALING_RULES', 'SOURCES', 'ScalingRule',
    'StepsEstimate', 'TIME_LATEX', 'TIME_RULE_LATEX', 'batch_plan_grid', 'best_configuration', 'best_workers',
    'cheapest_config', 'configuration_cost', 'display_time', 'duration_text', 'duration_unit', 'time_text',
    'goodput_curves', 'greedy_allocation',
    'loss_threshold_from_runs', 'paleo_device_for', 'paleo_net_for', 'paleo_time_to_target', 'pareto_frontier',
    'plan_grid', 'plan_with_rule', 'run_methods', 'steps_from_batch_scaling', 'steps_from_calibration',
    'steps_from_posterior', 'steps_from_run', 'steps_from_target_prediction', 'suggest_deadline', 'time_to_target_s',
    'with_time_and_cost',
    'typed_steps', 'BENCHMARK_CONFIGS', 'config_for_benchmark', 'default_device_for', 'transformer_from_logs',
    'plan_on_device', 'step_from_meta', 'systems_json_for', 'DECISION_COLUMNS', 'Decision', 'PlanDecisions',
    'cheapest_for_deadline', 'efficiency_knee', 'knee_value', 'plan_decisions', 'time_at_count',
    'paleo_calibration_point',
]
