"""A table of runs (:meth:`~core.library.library.Library.runs`): its column types, the values a
filter can take, and whether each run reached a target.
"""

from __future__ import annotations

import json

import pandas as pd

from core.library.filters import target_spec_of
from core.library.records import RUN_COLUMNS
from core.targets import Target, accuracy_value


def filter_options(table: pd.DataFrame) -> dict[str, list]:
    """The values a filter can take in a table of runs (``Library.runs``): models, devices, tags, batches.

    >>> filter_options(pd.DataFrame({"model": ["resnet8", None, "resnet8"], "gpu": ["V100", "A100", None],
    ...                              "tags": ["b,a", None, "a"], "global_batch": [128, None, 64]}))
    {'model': ['resnet8'], 'gpu': ['A100', 'V100'], 'tag': ['a', 'b'], 'batch': [64, 128]}
    """
    tags = sorted({t for cell in table["tags"].dropna() for t in str(cell).split(",") if t})
    return {"model": sorted(table["model"].dropna().astype(str).unique()),
            "gpu": sorted(table["gpu"].dropna().astype(str).unique()), "tag": tags,
            "batch": sorted(int(b) for b in table["global_batch"].dropna().unique())}


def with_reached(table: pd.DataFrame, target: Target) -> pd.DataFrame:
    """``table`` (of :meth:`Library.runs`) with ``reached_target`` after ``best_acc``: whether each run's
    accuracy passed ``target`` (epoch-level, as ``core.runs.find_target_crossing``); empty without accuracy.

    A target on another metric (``val_loss<=3.28``) is not answered from the table (it keeps the best
    accuracy and the final loss only): the column is empty (None), never a loss read as an accuracy
    (:func:`reached_note` says so).

    >>> from core.targets import accuracy_target
    >>> with_reached(pd.DataFrame({"best_acc": [0.95, 0.9, None]}), accuracy_target(0.92))["reached_target"].tolist()
    [True, False, None]
    >>> with_reached(pd.DataFrame({"best_acc": [0.95]}), Target("val_loss", "<=", 3.28))["reached_target"].tolist()
    [None]
    """
    out = table.copy()
    value = accuracy_value(target)
    reached = [None if value is None or pd.isna(b) else bool(b >= value) for b in out["best_acc"]]
    out.insert(out.columns.get_loc("best_acc") + 1, "reached_target",
               pd.Series(reached, dtype=object, index=out.index))
    return out


def reached_note(target: Target) -> str | None:
    """Why the table's ``reached_target`` column is empty for ``target`` (None when the table answers it).

    >>> reached_note(Target("val_loss", "<=", 3.28))[:60]
    "The library's table keeps each run's best accuracy and final"
    >>> from core.targets import accuracy_target
    >>> reached_note(accuracy_target(0.92)) is None
    True
    """
    if accuracy_value(target) is not None:
        return None
    return (f"The library's table keeps each run's best accuracy and final loss only: whether a run reached "
            f"{target.metric} {'≥' if target.climbs else '≤'} {target.value:g} shows in the chart of the runs you "
            "choose.")


def empty_runs() -> pd.DataFrame:
    return typed_runs(pd.DataFrame({c: pd.Series(dtype=object) for c in RUN_COLUMNS}))


def typed_runs(table: pd.DataFrame) -> pd.DataFrame:
    """``RUN_COLUMNS`` in order, with whole numbers as nullable integers and text as text."""
    table = table.reindex(columns=list(RUN_COLUMNS))
    for c in ("run_id", "depth", "n_params", "global_batch", "n_points", "n_epochs", "steps_per_epoch",
              "samples_per_epoch", "n_nodes", "n_devices"):
        table[c] = pd.array(pd.to_numeric(table[c], errors="coerce"), dtype="Int64")
    for c in ("best_acc", "final_loss", "throughput"):
        table[c] = pd.to_numeric(table[c], errors="coerce").astype(float)
    for c in ("source", "model", "gpu", "dataset", "split", "tags", "fmt", "granularity", "status", "system",
              "content_hash"):
        table[c] = table[c].astype(object).where(table[c].notna(), None)
    table["added_at"] = pd.to_datetime(table["added_at"])
    # the logged metrics ("val_loss,loss") and the run's own target ("val_loss<=3.28") as text, not JSON
    table["metrics"] = [",".join(json.loads(m)) if isinstance(m, str) and m else None for m in table["metrics"]]
    table["target"] = [target_spec_of(t) if isinstance(t, str) and t else None for t in table["target"]]
    return table.reset_index(drop=True)
