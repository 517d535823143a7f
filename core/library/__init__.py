"""The run library: every run and fit in one DuckDB file, shared by a team (see docs/library.md).

Modules: ``store`` (where the file lives, the lock, short connections, migrations on open),
``schema`` (the tables, one migration per version), ``records`` (a ``RunLog`` as rows and back),
``library`` (``Library``: add, list, filter, load, tag, remove), ``filters`` (``FILTER`` text),
``sources`` (files, folders, TensorBoard runs and the built-in data, read within bounds),
``fits`` (fits made once and stored), ``speed`` (measured-speed tables), ``exchange`` (Parquet
export and import, compaction), ``callbacks`` (logs written as training goes).
"""

from core.library.callbacks import (
    LOG_COLUMNS,
    TrainingLog,
    add_logs_to_library,
    device_name,
    lightning_callback,
    log_path,
)
from core.library.exchange import (
    CompactSummary,
    ExportSummary,
    compact,
    export_library,
    export_zip,
    import_library,
    read_manifest,
)
from core.library.filters import FILTER_KEYS, RunFilter
from core.library.fits import LibraryFits, fit_library
from core.library.library import (
    AddReport,
    AddResult,
    Library,
    PendingRun,
    Progress,
    check_tags,
    filter_options,
    with_reached,
)
from core.library.mlflow_source import add_mlflow, forecast_to_mlflow, is_mlflow_source, parse_source
from core.library.records import RUN_COLUMNS, content_hash, library_name
from core.library.refit import ENGINES, refit_library
from core.library.sources import (
    Collected,
    Source,
    add_builtin,
    add_paths,
    collect_sources,
    parameter_count_of,
    read_source,
)
from core.library.speed import add_speed_table, speed_table_bytes, speed_tables
from core.library.store import ENV_VAR, MEMORY, Store, default_db_path

__all__ = [
    'ENGINES', 'add_mlflow', 'forecast_to_mlflow', 'is_mlflow_source', 'parse_source', 'refit_library',
    'AddReport', 'AddResult', 'Collected', 'CompactSummary', 'ENV_VAR', 'ExportSummary', 'FILTER_KEYS',
    'LOG_COLUMNS', 'Library', 'LibraryFits', 'MEMORY', 'PendingRun', 'Progress', 'RUN_COLUMNS', 'RunFilter',
    'Source', 'Store', 'TrainingLog', 'add_builtin', 'add_logs_to_library', 'add_paths', 'add_speed_table',
    'check_tags', 'collect_sources', 'compact', 'content_hash', 'default_db_path', 'device_name', 'export_library',
    'export_zip', 'filter_options', 'fit_library', 'import_library', 'library_name', 'lightning_callback', 'log_path',
    'parameter_count_of',
    'read_manifest', 'read_source', 'speed_table_bytes', 'speed_tables', 'with_reached',
]
