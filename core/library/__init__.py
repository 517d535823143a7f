"""The run library: every run and fit in one DuckDB file or on a PostgreSQL server, shared by a team (see
docs/library.md).

Modules: ``store`` (which store, the interface every store gives, migrations on open; the kinds in
``store_duckdb``: one file under a lock, and ``store_postgres``: a server's transactions), ``schema``
(the tables, one migration per version), ``records`` (a ``RunLog`` as rows and back), ``library``
(``Library``: add, list, filter, load, tag, remove), ``access`` (whether the dashboard may delete;
the removed runs and the audit as the page shows them), ``adding`` (a run waiting to be written, what
became of it, the write of one run), ``run_table`` (a table of runs: types, filter values, target
reached), ``settings`` (the actor and keeping period from the environment), ``filters`` (``FILTER``
text), ``sources`` (files, folders, TensorBoard runs and the built-in data, read within bounds),
``fits`` (fits made once and stored), ``refit`` (every run refitted in numpy batches), ``refit_engines``
(where the chunks are fitted: local, Dask), ``speed`` (measured-speed tables), ``exchange`` (Parquet
export and import, compaction), ``callbacks`` (logs written as training goes).
"""

from core.library.access import WEB_DELETE_ENV_VAR, audit_log, recently_deleted, web_delete_policy
from core.library.adding import AddReport, PendingRun, check_tags
from core.library.callbacks import TrainingLog, add_logs_to_library, device_name, lightning_callback, log_path
from core.library.exchange import compact, export_library, export_zip, import_library
from core.library.filters import FILTER_KEYS, RunFilter, metric_options
from core.library.fits import fit_library
from core.library.library import Library
from core.library.mlflow_source import add_mlflow, forecast_to_mlflow, is_mlflow_source, parse_source
from core.library.records import RUN_COLUMNS, content_hash, data_hash, library_name
from core.library.refit import refit_library
from core.library.refit_engines import ENGINES

#: lightning_callback stays though no other area imports it: the public API of docs/library.md's example and the README
# names used outside the area since the trim (issue 34)
from core.library.run_table import (
    filter_options,
    reached_note,
    with_reached,
)
from core.library.settings import ACTOR_ENV_VAR, KEEP_DAYS_ENV_VAR, default_actor, keep_days_setting
from core.library.sources import add_builtin, add_paths, parameter_count_of
from core.library.speed import add_speed_table, speed_table_bytes

__all__ = [
    'reached_note', 'ENGINES', 'add_mlflow', 'forecast_to_mlflow', 'is_mlflow_source', 'parse_source',
    'refit_library', 'ACTOR_ENV_VAR', 'KEEP_DAYS_ENV_VAR', 'WEB_DELETE_ENV_VAR', 'data_hash', 'default_actor',
    'keep_days_setting', 'web_delete_policy', 'audit_log', 'recently_deleted', 'AddReport', 'FILTER_KEYS',
    'Library', 'PendingRun', 'RUN_COLUMNS', 'RunFilter', 'metric_options', 'TrainingLog', 'add_builtin',
    'add_logs_to_library', 'add_paths', 'add_speed_table', 'check_tags', 'compact', 'content_hash', 'device_name',
    'export_library', 'export_zip', 'filter_options', 'fit_library', 'import_library', 'library_name',
    'lightning_callback', 'log_path', 'parameter_count_of', 'speed_table_bytes', 'with_reached',
]
