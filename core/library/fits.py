"""Fits of the library's runs, made once and remembered: the table of fits ``python -m core fit`` prints.

A run's fit depends on its series (fixed once added), the curve family, the target accuracy
and the criterion; it is stored under those four (``fits`` table) and reused until the run is
removed.  Runs are loaded and fitted in batches outside the lock; each batch of fits is
written in one short transaction.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.library.filters import RunFilter
from core.library.library import Library, Progress, utc_now
from core.library.records import library_name
from core.runs import analyse_run, fits_table_of_rows
from core.targets import DEFAULT_TARGET, Target, require_accuracy

#: runs loaded and fitted between two writes of their fits
FIT_BATCH = 32
#: what a stored fit is stored under (the ``fits`` table's primary key)
FIT_KEY = ("run_id", "family", "target_acc", "criterion")
#: the columns of the ``fits`` table
FIT_COLUMNS = ("run_id", "family", "target_acc", "criterion", "params", "stderr", "r2", "flags", "step_to_target",
               "epoch_to_target", "loss_at_target", "fitted_at")


@dataclass(frozen=True)
class LibraryFits:
    """The fits table of the runs a filter matched (``file`` = ``source (library #id)``), how many
    were fitted now (the rest were stored), and whether it was stopped before the end."""

    table: pd.DataFrame
    n_fitted: int
    n_stored: int
    cancelled: bool = False
    datasets: dict[str, str] | None = None


def _json_floats(values: dict) -> str:
    return json.dumps({k: (None if v is None or not math.isfinite(float(v)) else float(v)) for k, v in values.items()})


def fit_record(run_id: int, row: dict, analysis) -> dict:
    fit = analysis.fit
    return {"run_id": run_id, "family": "",
            "target_acc": float(row["target_acc"]), "criterion": row["criterion"],
            "params": _json_floats(fit.params if fit else {}), "stderr": _json_floats(fit.stderr if fit else {}),
            "r2": None if fit is None or not math.isfinite(fit.r2) else float(fit.r2), "flags": row["flags"],
            "step_to_target": row["step_to_target"], "epoch_to_target": row["epoch_to_target"],
            "loss_at_target": row["loss_at_target"], "fitted_at": utc_now()}


def _row_from(run: dict, fit: dict) -> dict:
    """A fits-table row (``RunAnalysis.row`` columns) from a ``runs`` row and a stored ``fits`` row."""
    params = {k: (np.nan if v is None else v) for k, v in json.loads(fit["params"]).items()}
    stderr = {k: (np.inf if v is None else v) for k, v in json.loads(fit["stderr"]).items()}
    names = ("b0", "b1", "b2")
    fitted = bool(params)

    def value(v):
        return None if v is None or (isinstance(v, float) and math.isnan(v)) else v

    return {"file": library_name(int(run["run_id"]), run["source"]), "model": run["model"], "gpu": run["gpu"],
            "split": run["split"], "depth": run["depth"], "steps_per_epoch": run["steps_per_epoch"],
            "n_points": run["n_points"],
            **{n: params.get(n, np.nan) for n in names},
            **{f"{n}_se": stderr.get(n, np.nan) if fitted else np.nan for n in names},
            "r2": np.nan if fit["r2"] is None or pd.isna(fit["r2"]) else fit["r2"],
            "step_to_target": value(fit["step_to_target"]), "epoch_to_target": value(fit["epoch_to_target"]),
            "loss_at_target": value(fit["loss_at_target"]), "flags": fit["flags"],
            # a stored fit is for an accuracy target (fits.target_acc): its metric, direction and value
            "metric": "acc", "direction": ">=", "target": fit["target_acc"],
            "target_acc": fit["target_acc"], "criterion": fit["criterion"], "format": run["fmt"],
            "granularity": run["granularity"]}


def _stored(library: Library, ids: list[int], family: str, target: Target, criterion: str) -> dict[int, dict]:
    """The stored fits of ``ids`` for an accuracy ``target`` (the ``fits`` table keys them by its value)."""
    if not ids:
        return {}
    with library.store.connect() as con:
        if con is None:
            return {}
        table = con.frame(f"SELECT * FROM fits WHERE family = ? AND target_acc = ? AND criterion = ? AND run_id IN "
                          f"({', '.join('?' for _ in ids)})", [family, target.value, criterion, *ids])
    return {int(r["run_id"]): r for r in table.to_dict("records")}


def fit_library(library: Library, run_filter: RunFilter | str | None = None, *,
                target: Target = DEFAULT_TARGET, criterion: str = "epoch", family: str = "optimus",
                progress: Progress | None = None, extra: bool = True) -> LibraryFits:
    """The fits table of every run the filter matches, fitting (and storing) those without a stored fit.

    ``target`` applies to every run; a stored fit is for an accuracy target (the ``fits`` table's
    ``target_acc``), so another metric is refused (:func:`core.targets.require_accuracy`).
    ``progress(done, total, label)`` follows every run; returning False stops after the
    current batch is written (the table then holds the runs done so far).
    """
    require_accuracy(target, "the library's stored fits (fit --from-library, calibrate --from-library)")
    runs = library.runs(run_filter)
    by_id = {int(r["run_id"]): r for r in runs.to_dict("records")}
    ids = list(by_id)
    stored = _stored(library, ids, family, target, criterion)
    rows: dict[int, dict] = {i: _row_from(by_id[i], stored[i]) for i in ids if i in stored}
    todo = [i for i in ids if i not in stored]
    done, cancelled, n_fitted = len(rows), False, 0
    if progress is not None and rows and progress(done, len(ids), "stored fits") is False:
        cancelled = True
    for start in range(0, len(todo), FIT_BATCH):
        if cancelled:
            break
        records = []
        for run_id, log in library.get_many(todo[start:start + FIT_BATCH]):
            analysis = analyse_run(log, target=target, criterion=criterion, family=family)
            row = analysis.row()
            record = fit_record(run_id, row, analysis)
            record["family"] = family
            records.append(record)
            rows[run_id] = _row_from(by_id[run_id], record)
            done += 1
            n_fitted += 1
            if progress is not None and progress(done, len(ids), log.source) is False:
                cancelled = True
                break
        if records:
            with library.store.transaction() as con:
                con.insert_frame("fits", pd.DataFrame(records), on_conflict="replace", key=FIT_KEY)
    table = fits_table_of_rows([rows[i] for i in ids if i in rows], extra=extra)
    datasets = {library_name(i, by_id[i]["source"]): by_id[i]["dataset"] for i in ids
                if i in rows and by_id[i]["dataset"]}
    return LibraryFits(table, n_fitted, len(stored), cancelled, datasets)
