"""Training logs: read files of several formats into one tidy ``RunLog``.

Modules: ``runlog`` (the ``RunLog`` shape, a leaf), ``reader`` (the reader registry: bytes → validated
``RunLog`` by the first reader whose ``sniff`` claims them; ``UPLOAD_TYPES`` for an uploader), one module
per format: ``csvlog`` (CSV logs; ``csv_roles``: formats and column roles; ``csv_steps``: steps and
epochs), ``mllog`` (MLCommons MLLOG logs, the MLPerf result files; ``mllog_events``: their events read
and collected), ``speedrun`` (NanoGPT speedrun text logs), ``hf_trainer`` (Hugging Face
``trainer_state.json``), ``tfevents`` (TensorBoard event files); ``noise`` (gradient-noise-scale
columns), ``files`` (several files at once, each one's error kept; uploads of one name told apart),
``points`` (runs too short to fit, refused by name), ``scalar_log`` (logged scalars to a ``RunLog`` without a
CSV text), ``naming`` (model, depth, device and batch from a
file name).
"""

from core.logs.files import content_digest, name_uploads, read_log_files
from core.logs.mllog import ABORTED_FLAG, benchmark_rule
from core.logs.mllog_events import is_mllog
from core.logs.naming import (
    RunMeta,
    depth_of,
    gpu_short_name,
    parse_run_name,
)

# names used outside the area since the trim (issue 34)
from core.logs.points import (
    MIN_FIT_POINTS,
    is_forecastable,
)
from core.logs.reader import (
    MAX_LOG_BYTES,
    READERS,
    ROLES,
    ColumnRoles,
    RunLog,
    detect_roles,
    epoch_of_step,
    read_log,
    read_log_file,
    readable_formats,
    reader_for,
    reader_labels,
    system_description,
    upload_types,
)
from core.logs.runlog import FRAME_COLUMNS
from core.logs.scalar_log import log_from_scalars
from core.logs.speedrun import is_speedrun
from core.logs.tfevents import table_for_reader, wide_scalars

__all__ = [
    'is_forecastable', 'reader_for', 'reader_labels', 'upload_types', 'ABORTED_FLAG', 'ColumnRoles',
    'FRAME_COLUMNS', 'MAX_LOG_BYTES', 'MIN_FIT_POINTS', 'READERS', 'ROLES', 'RunLog', 'RunMeta', 'benchmark_rule',
    'content_digest', 'depth_of', 'detect_roles', 'epoch_of_step', 'gpu_short_name', 'is_mllog', 'is_speedrun',
    'log_from_scalars', 'name_uploads', 'parse_run_name', 'read_log', 'read_log_file', 'read_log_files',
    'readable_formats', 'system_description', 'table_for_reader', 'wide_scalars',
]
