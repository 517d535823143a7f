"""Every logged value of every metric of many MLflow runs, many runs a request, lossless (issue 35).

MLflow's tracking server answers ``GET /ajax-api/2.0/mlflow/metrics/get-history-bulk``
(``run_id`` repeated, ``metric_key``, ``max_results``) with every logged value of one metric of
up to 100 runs, sorted by run id, then time, step and value (``mlflow/server/handlers.py``,
``get_metric_history_bulk_handler``; the same order as ``get_metric_history``).  It has no page
token and it **truncates**: at most ``max_results`` values in all, never more than 25,000.  So,
to miss nothing, :class:`HistoryReader`

* asks for as many runs as should fit in one answer: ``max_results - 1`` over the most values a
  run of that metric has had so far (first guessed from the latest step the run list gives), at
  most 100;
* takes an answer of ``max_results`` values as cut: the runs before the last run id in it are
  complete (the answer is sorted by run id; an unsorted answer is dropped and its runs asked for
  again in halves) and the others are asked for again; a run that fills an answer alone is read
  with ``get_metric_history``, which pages;
* checks each history against the run list: its largest step is at least the latest step the
  list gave (MLflow's latest value is that of the largest step), else it reads that history again
  with ``get_metric_history``.

Never ``get-history-bulk-interval``: it samples.  Requests go through MLflow's own HTTP helper
(``mlflow.utils.rest_utils.http_request``) with the credentials of the client's own REST store
(``RestStore.get_host_creds``, called before every request as MLflow's client does: the same
user, password, token and TLS settings as every other call of the client).  A tracking URI that is
not an HTTP server (``sqlite:``, ``file:``, a folder) or a server without the route (HTTP 404,
e.g. an older server, or a proxy that passes ``/api/`` only) is read one metric history at a
time with ``get_metric_history``, and :attr:`HistoryReader.note` says so.

Runs are read a chunk at a time (about ``chunk_points`` values), the next chunk fetched in a
thread while the caller reads the last one, so memory stays bounded by two chunks.  Within a
chunk, ``in_flight`` metrics are asked for at once (2 by default; MLflow's server runs 4 workers
by default), so that the server's work on one answer overlaps the transfer and parsing of another.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import pandas as pd

#: metrics written back by forecast_to_mlflow (not part of a run's series nor of its identity)
OWN_METRIC_PREFIX = "tta_"
#: MLflow's bulk route (never its ``-interval`` sibling, which samples) and its caps (``handlers.py``)
BULK_ENDPOINT = "/ajax-api/2.0/mlflow/metrics/get-history-bulk"
MAX_RUNS = 100
MAX_RESULTS = 25_000
#: values read ahead of the caller, a chunk of runs at a time; bulk requests in flight at once (one metric each)
CHUNK_POINTS = 300_000
IN_FLIGHT = 2


def metric_keys(run) -> list[str]:
    """The run's metric names, sorted, without those forecast_to_mlflow wrote."""
    return sorted(k for k in run.data.metrics if not k.startswith(OWN_METRIC_PREFIX))


def scalars_frame(rows: Sequence[tuple[str, int, int, float]]) -> pd.DataFrame:
    """``tag, step, wall_time, value`` from ``(key, step, timestamp in ms, value)`` rows, in their order."""
    return pd.DataFrame({"tag": pd.Series([r[0] for r in rows], dtype=object),
                         "step": pd.Series([int(r[1]) for r in rows], dtype="int64"),
                         "wall_time": pd.Series([r[2] / 1000.0 for r in rows], dtype="float64"),
                         "value": pd.Series([float(r[3]) for r in rows], dtype="float64")})


def history_rows(client, run_id: str, key: str) -> list[tuple[str, int, int, float]]:
    """Every logged value of one metric of one run (``MlflowClient.get_metric_history``, which pages)."""
    return [(key, int(m.step), int(m.timestamp), float(m.value)) for m in client.get_metric_history(run_id, key)]


def scalars_of(client, run) -> pd.DataFrame:
    """Every step of every metric of the run, one ``get_metric_history`` request per metric:
    ``tag, step, wall_time, value``."""
    return scalars_frame([row for key in metric_keys(run) for row in history_rows(client, run.info.run_id, key)])


def _latest_step(run, key: str) -> int:
    """The step of the run's latest value of ``key`` as the run list gives it (-1 when it does not)."""
    for m in getattr(run.data, "_metric_objs", None) or ():
        if m.key == key:
            return int(m.step)
    return -1


def rest_host_creds(client):
    """The ``get_host_creds`` of the client's REST store, or None when its tracking URI is not an HTTP server."""
    from mlflow.store.tracking.rest_store import RestStore

    store = getattr(getattr(client, "_tracking_client", None), "store", None)
    return store.get_host_creds if isinstance(store, RestStore) else None


class HistoryReader:
    """Metric histories of many runs, through the bulk route where the server has it (module docstring).

    ``bulk=False`` reads every history with ``get_metric_history`` (the reference the bulk reader
    is tested against).  ``max_results`` (at most 25,000) is the answer size asked for; a smaller
    one makes the server cut answers sooner (the tests use it).  ``requests`` counts bulk requests,
    ``reread`` the histories read again one at a time; ``note`` says why the bulk route was not
    used, None while it is.
    """

    def __init__(self, client, *, bulk: bool = True, max_results: int = MAX_RESULTS, max_runs: int = MAX_RUNS,
                 chunk_points: int = CHUNK_POINTS, in_flight: int = IN_FLIGHT) -> None:
        if not 1 <= max_results <= MAX_RESULTS or not 1 <= max_runs <= MAX_RUNS:
            raise ValueError(f"max_results must be in [1, {MAX_RESULTS}] and max_runs in [1, {MAX_RUNS}]; "
                             f"got {max_results} and {max_runs}.")
        self.client = client
        self.max_results, self.max_runs, self.chunk_points = max_results, max_runs, chunk_points
        self.in_flight = max(1, int(in_flight))
        self._lock = threading.Lock()
        self.creds = rest_host_creds(client) if bulk else None
        self.note: str | None = None
        if bulk and self.creds is None:
            uri = getattr(getattr(client, "_tracking_client", None), "tracking_uri", "the tracking URI")
            self.note = (f"read one metric history per request (get_metric_history): {uri} is not an HTTP "
                         "tracking server, so it has no bulk route")
        self.requests = self.reread = 0
        self._most: dict[str, int] = {}          # metric -> most values one run has had

    # ------------------------------------------------------------------ the caller's side
    def scalars(self, runs: Sequence) -> Iterator[tuple[object, pd.DataFrame | Exception]]:
        """``(run, its scalars frame)`` for every run, in order, or ``(run, exception)`` where reading failed."""
        chunks = self._chunks(runs)
        if not chunks:
            return
        with ThreadPoolExecutor(1, thread_name_prefix="mlflow-history") as pool:
            ahead: Future = pool.submit(self._chunk, chunks[0])
            for i, chunk in enumerate(chunks):
                done = ahead.result()
                if i + 1 < len(chunks):
                    ahead = pool.submit(self._chunk, chunks[i + 1])
                yield from zip(chunk, done)

    def _chunks(self, runs: Sequence) -> list[list]:
        chunks, size = [[]], 0
        for run in runs:
            guess = sum(max(_latest_step(run, k), 0) + 1 for k in metric_keys(run))
            if chunks[-1] and size + guess > self.chunk_points:
                chunks.append([])
                size = 0
            chunks[-1].append(run)
            size += guess
        return chunks if chunks[0] else []

    # ------------------------------------------------------------------ the worker's side
    def _chunk(self, runs: list) -> list[pd.DataFrame | Exception]:
        from mlflow.exceptions import MlflowException

        if self.creds is None:
            out: list[pd.DataFrame | Exception] = []
            for run in runs:
                try:
                    out.append(scalars_of(self.client, run))
                except (MlflowException, OSError) as exc:
                    out.append(exc)
            return out
        try:
            rows: dict[str, list] = {run.info.run_id: [] for run in runs}
            keys = sorted({k for run in runs for k in metric_keys(run)})
            with ThreadPoolExecutor(self.in_flight, thread_name_prefix="mlflow-bulk") as pool:
                answers = list(pool.map(lambda key: self._metric(key, [r for r in runs if key in r.data.metrics]),
                                        keys))
            if any(got is None for got in answers):   # no bulk route: every history one at a time from now on
                return self._chunk(runs)
            for got in answers:                       # in key order, as get_metric_history is asked
                for run_id, values in got.items():
                    rows[run_id].extend(values)
            return [scalars_frame(rows[run.info.run_id]) for run in runs]
        except (MlflowException, OSError) as exc:
            return [exc] * len(runs)

    def _metric(self, key: str, runs: list) -> dict[str, list] | None:
        """Every value of ``key`` of each run, run id -> rows; None when the server lacks the bulk route."""
        latest = {run.info.run_id: _latest_step(run, key) for run in runs}
        queue, out, cap = sorted(latest), {}, self.max_runs
        while queue:
            most = self._most.get(key) or max(latest[r] + 1 for r in queue[:cap])
            n = max(1, min(cap, len(queue), (self.max_results - 1) // max(most, 1)))
            ask, queue = queue[:n], queue[n:]
            values = self._request(key, ask)
            if values is None:
                return None
            by_run: dict[str, list] = {}
            ordered, asked, previous = True, set(ask), ""
            for v in values:
                run_id = str(v["run_id"])
                ordered = ordered and run_id in asked and run_id >= previous
                previous = run_id
                by_run.setdefault(run_id, []).append((key, int(v.get("step", 0)), int(v.get("timestamp", 0)),
                                                      float(v.get("value", 0.0))))
            if len(values) < self.max_results:           # not cut: every run asked for is complete
                complete = ask
            elif ordered:                                 # cut: the runs before the last one are complete
                last = str(values[-1]["run_id"])
                complete = [r for r in ask if r < last]
                queue = [r for r in ask if r >= last] + queue
                if not complete:                          # one run fills an answer alone: page through it
                    out[last], queue = self._reread(last, key), queue[1:]
            elif len(ask) > 1:                            # cut, and in an order not MLflow's: ask in halves
                complete, cap, queue = [], max(1, len(ask) // 2), ask + queue
            else:
                complete, out[ask[0]] = [], self._reread(ask[0], key)
            for run_id in complete:
                out[run_id] = by_run.get(run_id, [])
                self._most[key] = max(self._most.get(key, 0), len(out[run_id]), 1)
        for run_id, rows in out.items():                 # cut without a sign of it: read that history again
            if latest[run_id] >= 0 and (not rows or max(r[1] for r in rows) < latest[run_id]):
                out[run_id] = self._reread(run_id, key)
        return out

    def _reread(self, run_id: str, key: str) -> list:
        with self._lock:
            self.reread += 1
        return history_rows(self.client, run_id, key)

    def _request(self, key: str, run_ids: list[str]) -> list[dict] | None:
        """One bulk request; None when the server answers 404 (no such route)."""
        from mlflow.utils.rest_utils import http_request, verify_rest_response

        creds = self.creds
        if creds is None:                                # another metric's request met the 404 meanwhile
            return None
        response = http_request(creds(), BULK_ENDPOINT, "GET", raise_on_status=False,
                                params=[("run_id", r) for r in run_ids] + [("metric_key", key),
                                                                           ("max_results", self.max_results)])
        with self._lock:
            self.requests += 1
        if response.status_code == 404:
            self.note = (f"read one metric history per request (get_metric_history): the server answered "
                         f"HTTP 404 to its bulk route {BULK_ENDPOINT}")
            self.creds = None
            return None
        verify_rest_response(response, BULK_ENDPOINT)
        return list(response.json().get("metrics", []))
