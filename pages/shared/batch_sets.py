"""Cached batch-scaling studies for the pages: the run sets offered (built-in, or the runs loaded on
the Logs page), their files, and the study of one.

Part of ``pages/shared`` (re-exported by ``pages.shared.common``); caching as in
:mod:`pages.shared.cached`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from core.datasets import BATCH_RUN_SETS, batch_run_files
from core.defaults import DEFAULT_LEVEL
from core.logs import RunLog, read_log_files
from core.targets import Target
from pages.shared.bounded import bounded_resource
from pages.shared.cached import all_log_files, content_digest, library_logs
from pages.shared.state import SHARED

if TYPE_CHECKING:
    from core.batch import BatchStudy

#: the batch-scaling run sets a page offers: the built-in ones, then the runs loaded on the Logs page
LOADED_RUNS = "loaded"
BATCH_SOURCES: dict[str, str] = {**{k: v.label for k, v in BATCH_RUN_SETS.items()},
                                 LOADED_RUNS: "Runs loaded on the Logs page (sidebar sets, uploads, library runs)"}


def batch_set_files(key: str) -> tuple[tuple[str, bytes, str], ...]:
    """``(name, bytes, digest)`` of a built-in batch-scaling run set, or of every loaded file (``LOADED_RUNS``)."""
    if key == LOADED_RUNS:
        return tuple((n, b, d) for n, b, d, _ in all_log_files())
    return _batch_set_bytes(key)


@bounded_resource(**SHARED)
def _batch_study(key: str, digest: str, _files: tuple[tuple[str, bytes], ...], target: Target,
                 samples_per_epoch: int | None, _extra: tuple[RunLog, ...] = ()
                 ) -> tuple[BatchStudy, tuple[tuple[str, str], ...]]:
    from core.batch import batch_study

    read = read_log_files(_files)
    study = batch_study([*read.logs, *_extra], target=target, noise=read.noise,
                        samples_per_epoch=samples_per_epoch, level=DEFAULT_LEVEL)
    return study, read.errors


def load_batch_study(source: str, *, target: Target, samples_per_epoch: int | None = None
                     ) -> tuple[BatchStudy | None, tuple[tuple[str, str], ...], str]:
    """The batch-scaling study of a run set (``BATCH_SOURCES``): the study (None without runs), the files
    refused, and a digest of the runs (a cache key for charts).  ``target``: in either direction (a loss
    falls to it).  ``LOADED_RUNS`` includes the runs loaded from the
    library (without gradient statistics: the library keeps the tidy series only)."""
    files = batch_set_files(source)
    extra = tuple(library_logs()) if source == LOADED_RUNS else ()
    digest = "|".join([*(d for _, _, d in files), *(log.fingerprint() for log in extra)])
    if not files and not extra:
        return None, (), digest
    study, errors = _batch_study(source, digest, tuple((n, b) for n, b, _ in files), target, samples_per_epoch,
                                 extra)
    return study, errors, digest


@st.cache_resource(**SHARED)
def _batch_set_bytes(key: str) -> tuple[tuple[str, bytes, str], ...]:
    files = ((name, path.read_bytes()) for name, path in batch_run_files(key))
    return tuple((name, data, content_digest(data)) for name, data in files)
