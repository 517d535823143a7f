"""The run library: every run and fit in one DuckDB file, shared by a team (see docs/library.md)."""

from core.library.filters import FILTER_KEYS, RunFilter
from core.library.library import AddReport, AddResult, Library, PendingRun, Progress, check_tags
from core.library.records import RUN_COLUMNS, content_hash, library_name
from core.library.store import ENV_VAR, MEMORY, Store, default_db_path

__all__ = [
    'AddReport', 'AddResult', 'ENV_VAR', 'FILTER_KEYS', 'Library', 'MEMORY', 'PendingRun', 'Progress',
    'RUN_COLUMNS', 'RunFilter', 'Store', 'check_tags', 'content_hash', 'default_db_path', 'library_name',
]
