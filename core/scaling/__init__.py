"""Scaling: measured speed-up and efficiency, parameter-server rounds, sync vs async, batch size.

Modules: ``table`` (measured epoch times in one shape; Pollux traces), ``measured`` (speed-up,
efficiency, compute/communication split), ``allreduce`` (all-reduce bytes, bandwidth, link
rates), ``ps_job`` (a parameter-server job and the crossover worker count), ``ps_rounds`` (its
rounds and total time), ``ps_schedule`` (who does what when), ``sync_async`` (schedules and
stale gradients), ``worker_table`` (worker timings from an edited table), ``batch_size`` (the
linear learning-rate rule, warm-up).
"""

from core.scaling.allreduce import DEFAULT_PARAMS, LINK_PRESETS_GBPS, allreduce_bytes
from core.scaling.batch_size import LARGE_BATCH_TEXT, BatchSizePlan, batch_size_plan, lr_at_step
from core.scaling.measured import MeasuredScaling, filter_rows, scaling_analysis
from core.scaling.ps_job import BATCH_KINDS, ROUND_MODE_TEXT, ROUND_MODES, PSJob, crossover_machines
from core.scaling.ps_rounds import LOCAL_TRAINING_NOTE, local_then_send, ps_rounds, ps_time_vs_machines
from core.scaling.ps_schedule import ACTIVITIES, SERVER, local_schedule, ps_schedule
from core.scaling.ps_study import PSStudy, ps_study
from core.scaling.sync_async import (
    STALENESS_BOUND_SOURCES,
    STALENESS_BOUND_TEXT,
    UPDATE_COLUMNS,
    AsyncSchedule,
    SyncSchedule,
    async_schedule,
    staleness_bound,
    sync_schedule,
)
from core.scaling.table import POLLUX_DIR, parse_scaling_table, pollux_jobs, read_pollux_trace, read_scaling_table
from core.scaling.worker_table import schedule_inputs

__all__ = [
    'PSStudy', 'ps_study',
    'DEFAULT_PARAMS',
    'ACTIVITIES', 'AsyncSchedule', 'BATCH_KINDS', 'BatchSizePlan',
    'LARGE_BATCH_TEXT', 'LINK_PRESETS_GBPS', 'LOCAL_TRAINING_NOTE',
    'MeasuredScaling', 'POLLUX_DIR',
    'PSJob', 'ROUND_MODES', 'ROUND_MODE_TEXT',
    'SERVER', 'STALENESS_BOUND_SOURCES', 'STALENESS_BOUND_TEXT', 'SyncSchedule',
    'UPDATE_COLUMNS', 'allreduce_bytes',
    'async_schedule', 'batch_size_plan', 'crossover_machines',
    'filter_rows', 'local_schedule', 'local_then_send', 'lr_at_step', 'parse_scaling_table', 'pollux_jobs',
    'ps_rounds', 'ps_schedule', 'ps_time_vs_machines', 'read_pollux_trace', 'read_scaling_table',
    'scaling_analysis', 'schedule_inputs', 'staleness_bound', 'sync_schedule',
]
