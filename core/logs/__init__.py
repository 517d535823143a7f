"""Training logs: read files of several formats into one tidy ``RunLog``.

Modules: ``runlog`` (the ``RunLog`` shape, a leaf), ``reader`` (the reader registry: bytes → validated
``RunLog`` by the first reader whose ``sniff`` claims them; ``upload_types()`` for an uploader), one module
per format: ``csvlog`` (CSV logs; ``csv_roles``: formats and column roles; ``csv_steps``: steps and
epochs), ``mllog`` (MLCommons MLLOG logs, the MLPerf result files; ``mllog_events``: their events read
and collected), ``speedrun`` (NanoGPT speedrun text logs), ``hf_trainer`` (Hugging Face
``trainer_state.json``), ``tfevents`` (TensorBoard event files); ``noise`` (gradient-noise-scale
columns), ``files`` (several files at once, each one's error kept; uploads of one name told apart),
``points`` (runs too short to fit, refused by name), ``scalar_log`` (logged scalars to a ``RunLog`` without a
CSV text), ``naming`` (model, depth, device and batch from a
file name).
"""

from core.logs.files import (
    LogFiles,
    UploadNames,
    content_digest,
    name_uploads,
    read_log_files,
    upload_label,
)
from core.logs.hf_trainer import is_trainer_state, read_trainer_state
from core.logs.mllog import ABORTED_FLAG, benchmark_rule, read_mllog
from core.logs.mllog_events import is_mllog
from core.logs.naming import (
    RunMeta,
    depth_of,
    gpu_short_name,
    parse_run_name,
)
from core.logs.points import MIN_FIT_POINTS, check_points, is_forecastable
from core.logs.reader import (
    MAX_LOG_BYTES,
    READERS,
    ROLES,
    ColumnRoles,
    RunLog,
    detect_format,
    detect_roles,
    epoch_of_step,
    find_system_description,
    infer_steps_per_epoch,
    read_log,
    read_log_file,
    readable_formats,
    reader_for,
    reader_labels,
    system_description,
    upload_types,
)
from core.logs.runlog import FRAME_COLUMNS, PROGRESS_COLUMNS
from core.logs.scalar_log import log_from_scalars
from core.logs.speedrun import is_speedrun, read_speedrun
from core.logs.tfevents import is_event_data, is_event_file, table_for_reader, wide_scalars

__all__ = [
    'ABORTED_FLAG', 'ColumnRoles', 'FRAME_COLUMNS', 'LogFiles', 'MAX_LOG_BYTES', 'MIN_FIT_POINTS', 'PROGRESS_COLUMNS',
    'READERS', 'ROLES', 'RunLog', 'RunMeta', 'UploadNames', 'benchmark_rule', 'check_points',
    'content_digest', 'depth_of', 'detect_format', 'detect_roles', 'epoch_of_step',
    'find_system_description', 'gpu_short_name', 'infer_steps_per_epoch', 'is_event_data',
    'is_event_file', 'is_forecastable', 'is_mllog', 'is_speedrun', 'is_trainer_state', 'log_from_scalars',
    'name_uploads',
    'parse_run_name', 'read_log', 'read_log_file', 'read_log_files', 'read_mllog',
    'read_speedrun', 'read_trainer_state', 'readable_formats', 'reader_for', 'reader_labels', 'system_description',
    'table_for_reader', 'upload_label', 'upload_types', 'wide_scalars',
]
