"""Scaling: measured speed-up and efficiency, parameter-server rounds, sync vs async, batch size.

Modules: ``table`` (measured epoch times in one shape; Pollux traces), ``measured`` (speed-up,
efficiency, compute/communication split), ``allreduce`` (all-reduce bytes, bandwidth, link
rates), ``ps_job`` (a parameter-server job and the crossover worker count), ``ps_rounds`` (its
rounds and total time), ``ps_schedule`` (who does what when), ``sync_async`` (schedules and
stale gradients), ``worker_table`` (worker timings from an edited table), ``batch_size`` (the
linear learning-rate rule, warm-up).
"""

from core.scaling.allreduce import (
    DEFAULT_MODEL,
    DEFAULT_PARAMS,
    GB,
    LINK_PRESETS_GBPS,
    allreduce_bytes,
    bandwidth_gb_per_s,
)
from core.scaling.batch_size import (
    LARGE_BATCH_TEXT,
    BatchSizePlan,
    batch_size_plan,
    lr_at_step,
    steps_per_epoch,
)
from core.scaling.measured import ESTIMATE_NOTE, RESULT_COLUMNS, MeasuredScaling, filter_rows, scaling_analysis
from core.scaling.ps_job import BATCH_KINDS, ROUND_MODE_TEXT, ROUND_MODES, PSJob, at_machines, crossover_machines
from core.scaling.ps_rounds import (
    LOCAL_TRAINING_NOTE,
    MAX_DEFAULT_MACHINES,
    LocalTraining,
    PSRounds,
    local_then_send,
    ps_rounds,
    ps_time_vs_machines,
)
from core.scaling.ps_schedule import ACTIVITIES, SCHEDULE_COLUMNS, SERVER, local_schedule, ps_schedule
from core.scaling.ps_study import PSStudy, ps_study
from core.scaling.sync_async import (
    STALENESS_BOUND_SOURCES,
    STALENESS_BOUND_TEXT,
    TIMELINE_COLUMNS,
    UPDATE_COLUMNS,
    AsyncSchedule,
    SyncSchedule,
    async_schedule,
    staleness_bound,
    sync_schedule,
)
from core.scaling.table import (
    GENERIC_REQUIRED,
    GENERIC_TIMES,
    POLLUX_DIR,
    POLLUX_PLACEMENTS,
    POLLUX_SCALABILITY,
    TABLE_COLUMNS,
    parse_scaling_table,
    pollux_jobs,
    read_pollux_trace,
    read_scaling_table,
)
from core.scaling.worker_table import WORKER_START_COLUMN, schedule_inputs

__all__ = [
    'PSStudy', 'ps_study',
    'DEFAULT_MODEL', 'DEFAULT_PARAMS',
    'ACTIVITIES', 'AsyncSchedule', 'BATCH_KINDS', 'BatchSizePlan', 'ESTIMATE_NOTE', 'GB', 'GENERIC_REQUIRED',
    'GENERIC_TIMES', 'LARGE_BATCH_TEXT', 'LINK_PRESETS_GBPS', 'LOCAL_TRAINING_NOTE', 'LocalTraining',
    'MAX_DEFAULT_MACHINES', 'MeasuredScaling', 'POLLUX_DIR', 'POLLUX_PLACEMENTS',
    'POLLUX_SCALABILITY', 'PSJob', 'PSRounds', 'RESULT_COLUMNS', 'ROUND_MODES', 'ROUND_MODE_TEXT',
    'SCHEDULE_COLUMNS', 'SERVER', 'STALENESS_BOUND_SOURCES', 'STALENESS_BOUND_TEXT', 'SyncSchedule',
    'TABLE_COLUMNS', 'TIMELINE_COLUMNS', 'UPDATE_COLUMNS', 'WORKER_START_COLUMN', 'allreduce_bytes',
    'async_schedule', 'at_machines', 'bandwidth_gb_per_s', 'batch_size_plan', 'crossover_machines',
    'filter_rows', 'local_schedule', 'local_then_send', 'lr_at_step', 'parse_scaling_table', 'pollux_jobs',
    'ps_rounds', 'ps_schedule', 'ps_time_vs_machines', 'read_pollux_trace', 'read_scaling_table',
    'scaling_analysis', 'schedule_inputs', 'staleness_bound', 'steps_per_epoch', 'sync_schedule',
]
