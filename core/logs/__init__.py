"""Training logs: read files of several formats into one tidy ``RunLog``.

Modules: ``reader`` (bytes → validated ``RunLog``: formats, column roles, steps and epochs),
``mllog`` (MLCommons MLLOG logs, the MLPerf result files; ``read_log`` hands them over),
``noise`` (gradient-noise-scale columns), ``files`` (several files at once, each one's error kept),
``naming`` (model, depth, device and batch from a file name).
"""

from core.logs.files import (
    LogFiles,
    read_log_files,
)
from core.logs.mllog import (
    ABORTED_FLAG,
    is_mllog,
    read_mllog,
)
from core.logs.naming import (
    RunMeta,
    depth_of,
    gpu_short_name,
    parse_run_name,
)
from core.logs.reader import (
    MAX_LOG_BYTES,
    ROLES,
    ColumnRoles,
    RunLog,
    detect_format,
    detect_roles,
    epoch_of_step,
    infer_steps_per_epoch,
    read_log,
    read_log_file,
)

__all__ = [
    'ABORTED_FLAG', 'ColumnRoles', 'LogFiles', 'MAX_LOG_BYTES', 'ROLES', 'RunLog', 'RunMeta', 'depth_of',
    'detect_format', 'detect_roles', 'epoch_of_step', 'gpu_short_name', 'infer_steps_per_epoch', 'is_mllog',
    'parse_run_name', 'read_log', 'read_log_file', 'read_log_files', 'read_mllog',
]
