"""Refit engines (a registry, :data:`ENGINES`): where the chunks of a library refit are fitted.

``local`` fits the chunks one after another in this process; ``dask`` hands them to a
``dask.distributed`` cluster (a ``LocalCluster`` of worker processes by default, or a running
scheduler's address), where each chunk is the local batched fit
(:func:`core.library.refit.fit_chunk`). Adding an engine touches this module only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

from core.errors import InputError
from core.logs import RunLog
from core.validation import check_option

#: fits one chunk of ``(run_id, RunLog)``: the fit records and the number fitted one by one
ChunkFn = Callable[[Sequence[tuple[int, RunLog]]], tuple[list[dict], int]]


class LocalEngine:
    """Fits each chunk in this process, one after another."""

    name = "local"

    def __init__(self, **_options) -> None:
        self.description = "local (this process, numpy batches)"

    def map(self, fn: ChunkFn, chunks: Iterable) -> Iterator:
        for chunk in chunks:
            yield fn(chunk)

    def close(self) -> None:
        pass


class DaskEngine:
    """Fits chunks on a ``dask.distributed`` cluster: a running scheduler (``scheduler``) or a ``LocalCluster``.

    At most two chunks per worker are in flight, so the runs are loaded from the library as the
    workers take them; results come back in completion order and are stored as they come.
    """

    name = "dask"

    def __init__(self, *, scheduler: str | None = None, n_workers: int = 2, **_options) -> None:
        from dask.distributed import Client, LocalCluster

        self.cluster = None
        if scheduler:
            try:
                self.client = Client(scheduler, timeout="20s")
            except (OSError, TimeoutError) as exc:
                raise InputError(f"--scheduler {scheduler}: expected a reachable Dask scheduler; {exc}. Start one "
                                 "(dask scheduler) or leave --scheduler out for a LocalCluster.") from None
            where = scheduler
        else:
            self.cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                        dashboard_address=None)
            self.client = Client(self.cluster)
            where = f"LocalCluster of {n_workers} worker process(es)"
        self.n_workers = max(1, len(self.client.scheduler_info().get("workers", {})) or n_workers)
        self.description = f"dask ({where})"

    def map(self, fn: ChunkFn, chunks: Iterable) -> Iterator:
        from dask.distributed import as_completed

        pending = as_completed()
        chunks = iter(chunks)
        for _ in range(2 * self.n_workers):
            chunk = next(chunks, None)
            if chunk is None:
                break
            pending.add(self.client.submit(fn, chunk, pure=False))
        for future in pending:
            yield future.result()
            chunk = next(chunks, None)
            if chunk is not None:
                pending.add(self.client.submit(fn, chunk, pure=False))

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


#: refit engines by name (adding one touches this module only)
ENGINES: dict[str, type] = {"local": LocalEngine, "dask": DaskEngine}


def get_engine(name: str, **options):
    check_option(name, "--engine", ENGINES)
    return ENGINES[name](**options)
