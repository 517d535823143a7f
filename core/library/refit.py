"""Refit every run of the library (or every run a filter matches) and store the fits, at scale (issue 20).

The Optimus fits of many runs are made **at once in numpy** (:func:`batched_optimus`): the runs'
binned points are padded into one array and a Levenberg–Marquardt solver with Marquardt's
scaling and the bounds ``b ≥ 0`` (a parameter at its bound whose gradient points out of the
box is held there for that step) iterates all of them together, each run with its own damping,
until each has converged.  It minimises the same objective as :func:`core.curves.fit_curve`
(the same log-spaced bins weighted by their counts, the same bounds) and the statistics
(standard errors from the Jacobian's pseudo-inverse as ``curve_fit`` makes them, R² and the
residual variance on every point, the flags) are computed as ``fit_curve`` computes them, so the
stored fits are those of the per-run fit (``tests/core/library/test_refit.py`` checks the
parameters against it).  A run the batch does not bring to convergence, a family other than
Optimus, and a log the fitter refuses are fitted one by one by ``fit_curve`` itself.

The chunks are fitted by an engine of :mod:`core.library.refit_engines` (``local`` or
``dask``); runs are loaded from the library a chunk at a time, in bulk
(:func:`core.library.refit_io.load_logs`: two queries, Arrow), by the process that fits them (a
Dask worker loads its own chunk), and each chunk's fits are stored as soon as it comes back, in
one statement and one short transaction, so an interruption keeps every chunk stored.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.curves import DEFAULT_MAX_POINTS, FitResult, bin_log_spaced, fit_result, get_family, validate_xy
from core.errors import FitError, FitWarning, InputError
from core.library.filters import RunFilter
from core.library.fits import FIT_KEY, fit_record
from core.library.library import Library, Progress
from core.library.refit_engines import get_engine
from core.library.refit_io import load_logs
from core.library.store import Store
from core.logs import RunLog
from core.runs import RunFit, analyse_run, fit_run
from core.targets import DEFAULT_TARGET, Target, require_accuracy

#: runs per chunk: loaded together, fitted in batches and stored in one statement (a Dask task)
DEFAULT_CHUNK = 2000
#: runs fitted together by the solver (sorted by length, so that little is padding)
SUB_BATCH = 128
#: iterations of the batched solver before a run is handed to the per-run fit
MAX_ITER = 400


# --------------------------------------------------------------------------- the batched solver
def _model(p: np.ndarray, K: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    u = p[:, 0:1] * K + p[:, 1:2]
    inv = 1.0 / u
    return inv + p[:, 2:3], inv


def _cost(p: np.ndarray, K: np.ndarray, Y: np.ndarray, W: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        f, _ = _model(p, K)
        s = np.sum(W * (f - Y) ** 2, axis=1)
    return np.where(np.isfinite(s), s, np.inf)


def _normal(p: np.ndarray, K: np.ndarray, Y: np.ndarray, W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """J^T W J (B, 3, 3) and J^T W r (B, 3) of every run (batched matrix products)."""
    f, inv = _model(p, K)
    d = -inv * inv
    J = np.empty((K.shape[0], 3, K.shape[1]))                    # (B, 3, M)
    np.multiply(d, K, out=J[:, 0])
    J[:, 1] = d
    J[:, 2] = 1.0
    WJ = J * W[:, None, :]
    A = WJ @ J.transpose(0, 2, 1)
    g = (WJ @ (f - Y)[:, :, None])[:, :, 0]
    return A, g


def batched_initial(K: np.ndarray, Y: np.ndarray, W: np.ndarray) -> np.ndarray:
    """The Optimus starting points of many runs at once: ``core.curves.optimus``'s rule (the best weighted
    straight line through ``1/(y − b2) = b0·k + b1`` over the floors ``b2`` = 0, 0.3, ..., 0.97 × min y),
    clipped into the bounds as ``fit_curve`` clips it."""
    y_min = np.where(W > 0, Y, np.inf).min(axis=1)
    sw, sk, skk = W.sum(axis=1), (W * K).sum(axis=1), (W * K * K).sum(axis=1)
    best = np.full((K.shape[0], 3), np.nan)
    best_sse = np.full(K.shape[0], np.inf)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for frac in (0.0, 0.3, 0.6, 0.8, 0.9, 0.97):
            b2 = frac * y_min
            z = 1.0 / np.maximum(Y - b2[:, None], 1e-12)
            sz, skz = (W * z).sum(axis=1), (W * K * z).sum(axis=1)
            det = sw * skk - sk * sk
            b0 = np.maximum((sw * skz - sk * sz) / det, 1e-12)
            b1 = np.maximum((skk * sz - sk * skz) / det, 1e-12)
            trial = np.stack([b0, b1, b2], axis=1)
            sse = _cost(trial, K, Y, W)
            better = np.isfinite(sse) & (sse < best_sse)
            best[better], best_sse[better] = trial[better], sse[better]
    span = np.maximum(np.abs(best), 1.0) * 1e-9
    return np.maximum(best, span)


def batched_optimus(K: np.ndarray, Y: np.ndarray, W: np.ndarray, p0: np.ndarray, *, tol: float = 1e-12,
                    max_iter: int = MAX_ITER) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares Optimus parameters ``(b0, b1, b2) ≥ 0`` of many runs at once.

    ``K``, ``Y``, ``W`` are (runs, points) arrays of steps, values and weights (weight 0 pads a
    shorter run), ``p0`` (runs, 3) the starting points.  Returns the parameters and, per run,
    whether it converged (relative fall of the cost below ``tol``, or no step that lowers it).

    >>> k = np.arange(1, 501.0)[None, :]; y = 1 / (2e-3 * k + 0.5) + 0.3
    >>> p, ok = batched_optimus(k, y, np.ones_like(k), np.array([[1e-3, 1.0, 0.1]]))
    >>> [round(float(v), 8) for v in p[0]], bool(ok[0])
    ([0.002, 0.5, 0.3], True)
    """
    p = np.array(p0, dtype=float, copy=True)
    n = p.shape[0]
    lam = np.full(n, 1e-3)
    done = np.zeros(n, dtype=bool)
    active = np.arange(n)
    cost = _cost(p, K, Y, W)
    eye = np.eye(3)
    for _ in range(max_iter):
        if active.size == 0:
            break
        Ka, Ya, Wa, pa = K[active], Y[active], W[active], p[active]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            A, g = _normal(pa, Ka, Ya, Wa)
        frozen = (pa <= 0.0) & (g > 0.0)
        diag = np.maximum(np.einsum("bii->bi", A), 1e-300)
        M = A + lam[active, None, None] * diag[:, :, None] * eye
        keep = ~frozen
        M = M * keep[:, :, None] * keep[:, None, :] + frozen[:, :, None] * eye
        rhs = -np.where(frozen, 0.0, g)
        bad = ~np.isfinite(M).all(axis=(1, 2)) | ~np.isfinite(rhs).all(axis=1)
        M[bad], rhs[bad] = eye, 0.0
        try:
            step = np.linalg.solve(M, rhs[:, :, None])[:, :, 0]
        except np.linalg.LinAlgError:
            step = np.stack([np.linalg.lstsq(m, r, rcond=None)[0] for m, r in zip(M, rhs)])
        trial = np.maximum(pa + step, 0.0)
        new = _cost(trial, Ka, Ya, Wa)
        old = cost[active]
        better = new < old
        p[active[better]] = trial[better]
        cost[active[better]] = new[better]
        lam[active] = np.where(better, np.maximum(lam[active] / 3.0, 1e-12), lam[active] * 8.0)
        small = better & ((old - new) <= tol * old)           # trf's ftol test, as fit_curve stops
        stuck = ~better & ((lam[active] > 1e14) | bad)
        finished = small | stuck
        done[active[finished]] = True
        active = active[~finished]
    return p, done


def _pad(rows: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    width = max(len(k) for k, _, _ in rows)
    K = np.ones((len(rows), width))
    Y = np.zeros((len(rows), width))
    W = np.zeros((len(rows), width))
    for i, (k, y, w) in enumerate(rows):
        K[i, :len(k)], Y[i, :len(k)], W[i, :len(k)] = k, y, w
    return K, Y, W


def _pcov_unit(curve, params: np.ndarray, bk: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``curve_fit``'s covariance with ``absolute_sigma``: the pseudo-inverse of J^T J by SVD (weighted J)."""
    J = curve.jac(bk, *params) * np.sqrt(counts)[:, None]
    _, s, VT = np.linalg.svd(J, full_matrices=False)
    threshold = np.finfo(float).eps * max(J.shape) * s[0]
    s = s[s > threshold]
    VT = VT[:s.size]
    pcov = (VT.T / s**2) @ VT
    if np.isnan(pcov).any():
        pcov = np.full((len(params), len(params)), np.inf)
    return pcov


def _result(curve, k: np.ndarray, y: np.ndarray, bk: np.ndarray, counts: np.ndarray, popt: np.ndarray
            ) -> FitResult:
    """The ``FitResult`` of parameters ``popt``, its statistics made as ``fit_curve`` makes them."""
    return fit_result(curve, popt, _pcov_unit(curve, popt, bk, counts), k, y, n_fitted=int(bk.size))


def fit_runs_batched(logs: Sequence[RunLog], *, family: str = "optimus", tol: float = 1e-12,
                     max_points: int = DEFAULT_MAX_POINTS) -> tuple[list[RunFit], int]:
    """:func:`core.runs.analysis.fit_run` of every log, the Optimus fits made in one batch.

    Returns the fits (in the order of ``logs``) and how many were made one by one instead
    (another family, a log the fitter refuses, a run the batch did not bring to convergence).
    """
    out: list[RunFit | None] = [None] * len(logs)
    if family != "optimus":
        return [fit_run(log, family=family) for log in logs], len(logs)
    curve = get_family(family)
    prepared, where = [], []
    for i, log in enumerate(logs):
        loss = log.frame["loss"].to_numpy(dtype=float)
        has = ~np.isnan(loss)
        if not has.any():
            out[i] = RunFit(None)
            continue
        try:
            k, y = validate_xy(log.frame["global_step"].to_numpy(dtype=float)[has], loss[has], log.source, 3)
        except InputError:
            continue                           # fit_run below gives the same refusal
        bk, by, counts = bin_log_spaced(k, y, max_points=max_points)
        prepared.append((k, y, bk, by, counts))
        where.append(i)
    order = sorted(range(len(prepared)), key=lambda j: len(prepared[j][2]))    # like lengths together: less padding
    for start in range(0, len(order), SUB_BATCH):
        group = order[start:start + SUB_BATCH]
        K, Y, W = _pad([(prepared[j][2], prepared[j][3], prepared[j][4]) for j in group])
        params, ok = batched_optimus(K, Y, W, batched_initial(K, Y, W), tol=tol)
        for n, j in enumerate(group):
            if not ok[n] or not np.all(np.isfinite(params[n])):
                continue
            k, y, bk, _, counts = prepared[j]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                try:
                    out[where[j]] = RunFit(_result(curve, k, y, bk, counts, params[n]))
                except (FitError, np.linalg.LinAlgError, ValueError):
                    out[where[j]] = None
    one_by_one = 0
    for i, fit in enumerate(out):
        if fit is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FitWarning)
                out[i] = fit_run(logs[i], family=family)
            one_by_one += 1
    return out, one_by_one


def fit_chunk(chunk: Sequence[tuple[int, RunLog]], target: Target, criterion: str,
              family: str = "optimus") -> tuple[list[dict], int]:
    """The ``fits`` rows of a chunk of ``(run_id, RunLog)``: what an engine runs (in this process or a worker)."""

    fits, one_by_one = fit_runs_batched([log for _, log in chunk], family=family)
    records = []
    for (run_id, log), fitted in zip(chunk, fits):
        analysis = analyse_run(log, target=target, criterion=criterion, family=family, fitted=fitted)
        record = fit_record(run_id, analysis.row(), analysis)
        record["family"] = family
        records.append(record)
    return records, one_by_one


# --------------------------------------------------------------------------- refit
@dataclass(frozen=True)
class RefitSummary:
    """What a refit did."""

    engine: str
    n_runs: int
    n_fitted: int
    n_one_by_one: int
    n_chunks: int
    seconds: float
    cancelled: bool = False

    def describe(self) -> str:
        rate = f"{self.seconds / self.n_fitted * 1000:.2f} ms per run" if self.n_fitted else "nothing to fit"
        text = (f"refitted {self.n_fitted} of {self.n_runs} run(s) in {self.n_chunks} chunk(s) with {self.engine}: "
                f"{self.seconds:.1f} s, {rate}; {self.n_one_by_one} fitted one by one.")
        if self.cancelled:
            text += " Stopped before the end: every chunk stored is complete; run it again for the rest."
        return text


def fit_stored_chunk(run_ids: Sequence[int], store: Store | str, target: Target, criterion: str,
                     family: str = "optimus") -> tuple[list[dict], int]:
    """Load a chunk of runs from ``store`` (a store, or the target another process opens it by) in bulk and fit
    it: what an engine runs, in this process or in a worker that loads its own chunk."""
    if isinstance(store, str):
        from core.library.stores import open_store

        store = open_store(store)
    return fit_chunk(load_logs(store, run_ids), target, criterion, family)


def write_fits(store: Store, records: list[dict]) -> None:
    """A chunk's fits in one statement (replacing stored ones): DuckDB inserts the frame, PostgreSQL copies it
    into a temporary table and inserts from there."""
    if not records:
        return
    with store.transaction() as con:
        con.insert_frame("fits", pd.DataFrame(records), on_conflict="replace", key=FIT_KEY)


def _loaded_ahead(store: Store, groups: list[list[int]]) -> Iterator[list[tuple[int, RunLog]]]:
    """Each group's runs (``load_logs``), the next one loading in a thread while the caller fits this one: the
    database's share of a load (DuckDB's query, PostgreSQL's server process) overlaps the fit."""
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="refit-load")
    try:
        pending = pool.submit(load_logs, store, groups[0]) if groups else None
        for i in range(len(groups)):
            logs = pending.result()
            pending = pool.submit(load_logs, store, groups[i + 1]) if i + 1 < len(groups) else None
            yield logs
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def refit_library(library: Library, run_filter: RunFilter | str | None = None, *, engine: str = "local",
                  chunk: int | None = None, target: Target = DEFAULT_TARGET, criterion: str = "epoch",
                  family: str = "optimus", progress: Progress | None = None, **engine_options) -> RefitSummary:
    """Refit every run the filter matches with ``engine`` and store (replace) their fits, chunk by chunk.

    Each chunk is loaded in bulk (:func:`core.library.refit_io.load_logs`), fitted in batches and its
    fits written in one statement.  The local engine loads in this process; a Dask worker loads
    its own chunk from the store (a file or a server's URL), so that loading spreads over the
    workers and only the ids and the fits cross the network (an in-memory library, which no
    other process can open, sends its runs instead).  ``progress(done, total, label)`` follows
    every chunk stored; returning False stops there (the chunks stored stay).  Ctrl-C does the
    same: what was stored stays.  ``target`` applies to every run: an accuracy (the ``fits`` table keys a
    fit by its ``target_acc``; another metric is refused).
    """
    from functools import partial

    require_accuracy(target, "refit (the library's stored fits)")
    started = time.perf_counter()
    ids = [int(i) for i in library.runs(run_filter)["run_id"]]
    size = int(chunk or DEFAULT_CHUNK)
    groups = [ids[i:i + size] for i in range(0, len(ids), size)]
    store = library.store
    if ids:
        store.prepare_bulk_read()
    runner = get_engine(engine, **engine_options)
    options = {"target": target, "criterion": criterion, "family": family}
    where = None if runner.name == "local" else store.worker_target()
    if where is None:               # this process loads (the next chunk while one is fitted), or a worker cannot
        fn, work = partial(fit_chunk, **options), _loaded_ahead(store, groups)
    else:
        fn, work = partial(fit_stored_chunk, store=where, **options), iter(groups)
    done = one_by_one = n_chunks = 0
    cancelled = False
    try:
        for records, slow in runner.map(fn, work):
            write_fits(store, records)
            done += len(records)
            one_by_one += slow
            n_chunks += 1
            if progress is not None and progress(done, len(ids), f"chunk {n_chunks}") is False:
                cancelled = True
                break
    finally:
        runner.close()
    return RefitSummary(runner.description, len(ids), done, one_by_one, n_chunks, time.perf_counter() - started,
                        cancelled)


def max_relative_difference(a: dict[str, float], b: dict[str, float], *, floor: float = 1e-9) -> float:
    """The largest ``|a - b| / max(|a|, |b|)`` over the parameters both hold; two values both at most
    ``floor`` (a parameter at its bound 0, as the fit's flags count it) are equal.

    >>> round(max_relative_difference({"b0": 1.0, "b2": 3e-20}, {"b0": 1.001, "b2": 0.0}), 9)   # 0.001/1.001
    0.000999001
    """
    worst = 0.0
    for key in a.keys() & b.keys():
        x, y = float(a[key]), float(b[key])
        scale = max(abs(x), abs(y))
        if scale > floor and math.isfinite(scale):
            worst = max(worst, abs(x - y) / scale)
    return worst
