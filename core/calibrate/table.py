"""The table of fitted runs that calibration learns from, in one normalised shape.

Two inputs are accepted: the course's table (``model,gpu,split,b0,b1,b2,epoch_to_92acc,
step_to_92acc,loss_92acc,epoch_steps``; ``-1`` means "never reached") and the output of
``python -m core fit`` / the Logs page (``core.runs.analysis.FIT_TABLE_COLUMNS``).  Both become a
frame with the columns of ``CALIBRATION_COLUMNS``.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from core.curves import degenerate_reason
from core.errors import InputError, LogFormatError
from core.logs import depth_of, gpu_short_name
from core.tables import file_bytes, read_csv_frame
from core.targets import DEFAULT_TARGET, Target, accuracy_value
from core.validation import check_option

CALIBRATION_COLUMNS: tuple[str, ...] = (
    "model", "depth", "gpu", "gpu_short", "split", "b0", "b1", "b2", "steps_per_epoch",
    "step_to_target", "epoch_to_target", "loss_at_target", "target_acc", "target_spec", "dataset", "source",
    "excluded",
)
#: the splits a fitted run's curve can be of (the ``split`` column; ``--split``)
SPLITS: tuple[str, ...] = ("train", "val")
COURSE_COLUMNS = ("model", "gpu", "split", "b0", "b1", "b2", "epoch_to_92acc", "step_to_92acc",
                  "loss_92acc", "epoch_steps")
FIT_COLUMNS = ("model", "gpu", "split", "b0", "b1", "b2", "steps_per_epoch", "step_to_target",
               "epoch_to_target", "loss_at_target")


#: why a run without a model name is left out
NO_MODEL = "no model name (name the architecture, e.g. resnet20, in the file name or on the Logs page)"


def _text(values: pd.Series, empty: str = "") -> list[str]:
    """Cells as stripped text; missing or blank cells (NaN, None, "nan") become ``empty``."""
    out = []
    for v in values:
        text = v.strip() if isinstance(v, str) else ""
        out.append(text if text and text.lower() not in ("nan", "none") else empty)
    return out


def _never_to_nan(values: pd.Series) -> pd.Series:
    v = pd.to_numeric(values, errors="coerce").astype(float)
    return v.where(v >= 0)


def _exclusion(row: pd.Series) -> str:
    reasons = []
    if not all(math.isfinite(row[p]) for p in ("b0", "b1", "b2")):
        reasons.append("no fitted parameters")
    else:
        why = degenerate_reason(row["b0"], row["b1"], row["b2"])
        if why:
            reasons.append(why)
    if not row["model"]:
        reasons.append(NO_MODEL)
    elif row["depth"] is None or (isinstance(row["depth"], float) and math.isnan(row["depth"])):
        reasons.append("depth unknown (name the model like resnet20)")
    return "; ".join(reasons)


def normalise_fits(table: pd.DataFrame, *, source: str = "table", dataset: str | None = None,
                   target: Target | None = None, datasets_by_file: dict[str, str] | None = None
                   ) -> pd.DataFrame:
    """The calibration frame of a course table or a fits table.

    ``dataset`` names what the runs trained on (``cifar10``, ``mnist1d``; it picks the
    parameter counts in ``core.calibrate.methods.architecture_parameters``);
    ``datasets_by_file`` sets it per row of a fits table by its ``file`` column.
    ``target`` is what a fits table's runs were fitted for when the table does not record it (no
    ``metric,direction,target`` nor ``target_acc`` columns); a table's own record comes first.  The
    course table records ``acc>=0.92``.

    Rows whose fit is degenerate (see ``core.curves.degenerate_reason``) or whose depth is
    unknown keep their place with the reason in ``excluded``; callers drop them by default.

    Raises
    ------
    InputError
        When the table has neither the course's columns nor the fit table's.
    """
    cols = set(table.columns)
    if set(COURSE_COLUMNS) <= cols:
        out = pd.DataFrame({
            "model": _text(table["model"]), "gpu": _text(table["gpu"], "unknown"),
            "split": _text(table["split"], "train"),
            "b0": table["b0"], "b1": table["b1"], "b2": table["b2"],
            "steps_per_epoch": table["epoch_steps"],
            "step_to_target": _never_to_nan(table["step_to_92acc"]),
            "epoch_to_target": _never_to_nan(table["epoch_to_92acc"]),
            "loss_at_target": _never_to_nan(table["loss_92acc"]),
        })
        out["target_acc"] = DEFAULT_TARGET.value
        out["target_spec"] = DEFAULT_TARGET.spec
        out["dataset"] = dataset or "cifar10"
    elif set(FIT_COLUMNS) <= cols:
        out = table[list(FIT_COLUMNS)].copy()
        out["model"] = _text(out["model"])
        out["gpu"] = _text(out["gpu"], "unknown")
        out["split"] = _text(out["split"], "train")
        for c in ("step_to_target", "epoch_to_target", "loss_at_target"):
            out[c] = pd.to_numeric(out[c], errors="coerce").astype(float)
        if "target_acc" in cols:
            out["target_acc"] = pd.to_numeric(table["target_acc"], errors="coerce").astype(float)
        else:
            given = None if target is None else accuracy_value(target)
            out["target_acc"] = math.nan if given is None else given
        if {"metric", "direction", "target"} <= cols:
            out["target_spec"] = [None if pd.isna(m) else f"{m}{d}{float(v):g}"
                                  for m, d, v in zip(table["metric"], table["direction"], table["target"])]
        elif "target_acc" in cols or target is None:
            out["target_spec"] = [None if pd.isna(a) else f"acc>={float(a):g}" for a in out["target_acc"]]
        else:
            out["target_spec"] = target.spec
        out["dataset"] = dataset or "other"
        if datasets_by_file and "file" in cols:
            out["dataset"] = [datasets_by_file.get(f, d) for f, d in zip(table["file"], out["dataset"])]
    else:
        raise InputError(f"{source}: expected the course's columns ({', '.join(COURSE_COLUMNS)}) or the "
                         f"fit table's ({', '.join(FIT_COLUMNS)}); got {', '.join(map(str, table.columns))}.")
    for c in ("b0", "b1", "b2", "steps_per_epoch"):
        out[c] = pd.to_numeric(out[c], errors="coerce").astype(float)
    out["depth"] = [depth_of(m) for m in out["model"]]
    out["depth"] = pd.to_numeric(out["depth"], errors="coerce").astype(float)
    out["gpu_short"] = [gpu_short_name(g) for g in out["gpu"]]
    out["source"] = source
    out["excluded"] = [_exclusion(r) for _, r in out.iterrows()]
    return out[list(CALIBRATION_COLUMNS)].reset_index(drop=True)


def read_fits_table(data: bytes | str | Path, *, source: str | None = None, dataset: str | None = None
                    ) -> pd.DataFrame:
    """Read a fits CSV (course table or ``python -m core fit`` output) into the calibration frame.

    Raises
    ------
    LogFormatError
        When the file cannot be read as CSV or lacks the needed columns.
    """
    if isinstance(data, (str, Path)):
        path = Path(data)
        source = source or path.name
        data = file_bytes(path, source=source)
    source = source or "fits.csv"
    table = read_csv_frame(data, source, text_columns=("model", "gpu", "split", "file", "flags"))
    try:
        return normalise_fits(table, source=source, dataset=dataset)
    except InputError as exc:
        raise LogFormatError(source, str(exc).split(": ", 1)[1]) from None


def unnamed_runs(fits: pd.DataFrame) -> list[int]:
    """Positions (0-based rows of the calibration frame) of the runs left out for having no model name.

    >>> t = normalise_fits(pd.DataFrame({"model": ["resnet20", float("nan")], "gpu": ["V100", "V100"],
    ...     "split": "train", "b0": 1e-3, "b1": 1.0, "b2": 0.1, "steps_per_epoch": 391, "step_to_target": 900,
    ...     "epoch_to_target": 3, "loss_at_target": 0.5}))
    >>> unnamed_runs(t), t.loc[1, "excluded"].startswith("no model name")
    ([1], True)
    """
    return [i for i, m in enumerate(fits["model"]) if not m]


def usable(fits: pd.DataFrame, *, split: str | None = None) -> pd.DataFrame:
    """The rows calibration may learn from (not excluded; the given split)."""
    rows = fits[fits["excluded"] == ""]
    if split is not None:
        rows = rows[rows["split"] == split]
    return rows.reset_index(drop=True)


def excluded_rows(fits: pd.DataFrame, *, split: str | None = None) -> pd.DataFrame:
    """The rows left out, with their reason."""
    rows = fits[fits["excluded"] != ""]
    if split is not None:
        rows = rows[rows["split"] == split]
    return rows[["model", "gpu", "split", "b0", "b1", "b2", "excluded"]].reset_index(drop=True)


def architectures(fits: pd.DataFrame) -> list[str]:
    """Model names ordered by depth (then name)."""
    rows = fits.drop_duplicates("model")
    return list(rows.sort_values(["depth", "model"], na_position="last")["model"])


def check_holdout(fits: pd.DataFrame, holdout: str) -> str:
    """Validate a held-out architecture name against the table."""
    names = list(np.unique(fits["model"]))
    return check_option(holdout, "holdout", names)
