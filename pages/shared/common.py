"""Streamlit glue shared by every page, one facade over its four parts.

- ``pages.shared.state``: the session's keys, their starting values, choices kept across pages;
- ``pages.shared.cached``: cached calls into ``core`` (read, fit and analyse the runs in play);
- ``pages.shared.uploads``: the Logs uploader's files and the run library in a session;
- ``pages.shared.render``: the page boundary (``guarded``), the sidebar, charts and downloads.

It lives in ``pages/shared/`` so that Streamlit never lists it as a page (its legacy
pages-folder mode lists only ``pages/*.py``).  Nothing here computes a number: every value
comes from ``core``; these modules only cache, store and render.
"""

from __future__ import annotations

from core.untrusted import escape_markdown as plain
from pages.shared.batch_sets import BATCH_SOURCES, LOADED_RUNS, batch_set_files, load_batch_study
from pages.shared.boundary import guarded
from pages.shared.cached import (
    LoadedRuns,
    all_log_files,
    builtin_set_logs,
    content_digest,
    datasets_by_file,
    frame_key,
    is_library_run,
    library_logs,
    load_logs,
    load_runs,
    loaded_log,
    shared_fits,
)
from pages.shared.navigation import hand_over_to_app
from pages.shared.render import chart, detail_tabs, page_setup, show_errors, table_download
from pages.shared.state import (
    BUILTIN,
    CACHE,
    CALIBRATED_STEPS,
    DIGESTS,
    EDITS,
    FAMILY,
    HASH_FUNCS,
    KEPT,
    LIBRARY_DATASETS,
    LIBRARY_RUNS,
    ROUTE,
    SHARED,
    SPEED_UPLOADS,
    TARGET,
    UPLOADS,
    builtin_set_labels,
    init_state,
    keep_valid_choice,
)
from pages.shared.target import target_input, target_text
from pages.shared.uploads import (
    MAX_SESSION_UPLOAD_BYTES,
    UPLOAD_REFUSALS,
    UPLOADER,
    clear_uploads,
    library,
    load_library_runs,
    save_uploads_to_library,
    store_files,
    sync_uploads,
    unload_library_runs,
    uploader_key,
)

__all__ = [
    "BATCH_SOURCES", "BUILTIN", "CACHE", "CALIBRATED_STEPS", "DIGESTS", "EDITS", "FAMILY", "HASH_FUNCS", "KEPT",
    "LIBRARY_DATASETS", "LIBRARY_RUNS", "LOADED_RUNS", "MAX_SESSION_UPLOAD_BYTES", "ROUTE", "SHARED",
    "SPEED_UPLOADS", "TARGET", "UPLOADER", "UPLOADS", "UPLOAD_REFUSALS", "LoadedRuns", "all_log_files",
    "batch_set_files", "builtin_set_labels", "builtin_set_logs", "chart", "clear_uploads", "content_digest",
    "datasets_by_file",
    "detail_tabs",
    "frame_key", "guarded", "init_state", "is_library_run", "keep_valid_choice", "library", "library_logs",
    "load_batch_study", "load_library_runs", "load_logs", "load_runs", "loaded_log", "page_setup", "plain",
    "hand_over_to_app",
    "save_uploads_to_library", "shared_fits", "show_errors", "store_files", "sync_uploads", "table_download",
    "target_input", "target_text", "unload_library_runs", "uploader_key",
]
