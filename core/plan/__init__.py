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

from core.plan.allocation import Allocation, greedy_allocation
from core.plan.decisions import knee_value, plan_decisions
from core.plan.examples import EXAMPLE_STEP_TIME, EXAMPLE_THETA_S
from core.plan.from_logs import SAMPLES_SOURCES, measured_configurations, measured_step_time, samples_at_batch
from core.plan.goodput import (
    SCALING_RULES,
    TIME_RULE_LATEX,
    ScalingRule,
    batch_plan_grid,
    goodput_curves,
    plan_with_rule,
)
from core.plan.grid import (
    COST_LATEX,
    TIME_LATEX,
    DeadlineChoice,
    best_workers,
    cheapest_config,
    display_time,
    duration_text,
    duration_unit,
    pareto_frontier,
    plan_grid,
    suggest_deadline,
    time_text,
)
from core.plan.log_plan import LogPlan, plan_from_logs, plan_on_device
from core.plan.log_speed_choice import log_speed_choices
from core.plan.paleo_time import (
    paleo_calibration_point,
    paleo_device_for,
    paleo_net_for,
    paleo_time_to_target,
)
from core.plan.run_steps import default_run, run_methods, steps_from_run
from core.plan.steps import (
    SOURCES,
    StepsEstimate,
    steps_from_batch_scaling,
    steps_from_calibration,
    steps_sources,
    typed_steps,
)
from core.plan.to_device import default_device_for, transformer_from_logs

#: plan_on_device stays though no other area imports it: docs/plan.md presents it as the call for a plan on a device
__all__ = [
    'EXAMPLE_STEP_TIME', 'EXAMPLE_THETA_S', 'default_run', 'steps_sources',
    'LogPlan', 'SAMPLES_SOURCES',
    'log_speed_choices', 'measured_configurations',
    'measured_step_time', 'plan_from_logs', 'samples_at_batch', 'Allocation', 'COST_LATEX',
    'DeadlineChoice', 'SCALING_RULES', 'SOURCES', 'ScalingRule',
    'StepsEstimate', 'TIME_LATEX', 'TIME_RULE_LATEX', 'batch_plan_grid', 'best_workers',
    'cheapest_config', 'display_time', 'duration_text', 'duration_unit', 'time_text',
    'goodput_curves', 'greedy_allocation',
    'paleo_device_for', 'paleo_net_for', 'paleo_time_to_target', 'pareto_frontier',
    'plan_grid', 'plan_with_rule', 'run_methods', 'steps_from_batch_scaling', 'steps_from_calibration',
    'steps_from_run', 'suggest_deadline',
    'typed_steps', 'default_device_for', 'transformer_from_logs',
    'plan_on_device',
    'knee_value', 'plan_decisions',
    'paleo_calibration_point',
]
