"""Tables of measured training times: the accepted formats, read into one canonical table.

Three formats are accepted (header names are stripped and lower-cased):

* **generic**: ``gpus, batch_per_gpu`` and ``epoch_time_s`` and/or ``step_time_s`` (seconds;
  ``epoch_time``, ``step_time`` and ``sync_time`` are accepted for the ``_s`` names),
  optional ``nodes`` and ``sync_time_s``;
* **Pollux ``scalability.csv``**: ``num_nodes, num_replicas, local_bsz, step_time,
  sync_time`` (``num_replicas`` = GPUs, ``local_bsz`` = per-GPU batch, seconds);
* **Pollux ``placements.csv``**: ``placement, local_bsz, step_time, sync_time``, each digit of
  ``placement`` the GPUs used on one node (``1122``: 6 GPUs on 4 nodes).

``sync_time`` in the Pollux traces is the part of ``step_time`` spent synchronising
gradients (adaptdl's simulator takes ``step_time - sync_time`` as a step without
synchronisation). :func:`core.scaling.measured.scaling_analysis` works on the canonical table.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from core.datasets import DATA_DIR, TRAINING_SET_SIZES
from core.errors import InputError, LogFormatError
from core.tables import file_bytes, read_csv_frame
from core.validation import check_scalar

#: columns of the canonical table returned by :func:`parse_scaling_table`
TABLE_COLUMNS: tuple[str, ...] = (
    "source", "config", "gpus", "nodes", "placement", "batch_per_gpu", "global_batch",
    "measured", "step_time_s", "epoch_time_s", "steps_per_epoch", "sync_time_s",
)
GENERIC_REQUIRED: tuple[str, ...] = ("gpus", "batch_per_gpu")
GENERIC_TIMES: tuple[str, ...] = ("epoch_time_s", "step_time_s")
POLLUX_SCALABILITY: tuple[str, ...] = ("num_nodes", "num_replicas", "local_bsz", "step_time",
                                       "sync_time")
POLLUX_PLACEMENTS: tuple[str, ...] = ("placement", "local_bsz", "step_time", "sync_time")
_ALIASES = {"epoch_time": "epoch_time_s", "step_time": "step_time_s",
            "sync_time": "sync_time_s"}
#: the product's copy of the Pollux traces (data/pollux_traces, Apache-2.0)
POLLUX_DIR = DATA_DIR / "pollux_traces"


def pollux_jobs(root: str | Path = POLLUX_DIR) -> tuple[str, ...]:
    """Names of the job folders under ``root`` that hold a Pollux trace, sorted.

    Examples
    --------
    >>> pollux_jobs()
    ('bert', 'cifar10', 'deepspeech2', 'imagenet', 'ncf', 'yolov3')
    """
    root = Path(root)
    if not root.is_dir():
        return ()
    return tuple(sorted(d.name for d in root.iterdir() if d.is_dir() and (
        (d / "placements.csv").is_file() or (d / "scalability.csv").is_file())))


def parse_scaling_table(data: bytes | pd.DataFrame, *, source: str = "<input>",
                        n_samples: int | None = None) -> pd.DataFrame:
    """Read a table of measured times into the canonical table.

    Parameters
    ----------
    data : bytes or pandas.DataFrame
        CSV bytes (an upload) or a frame (an edited table; rows left entirely blank at its
        end, as an editor adds them, are dropped). Header names are stripped and
        lower-cased. Accepted formats:

        * generic: ``gpus, batch_per_gpu`` and ``epoch_time_s`` and/or ``step_time_s``
          (seconds), optional ``nodes`` and ``sync_time_s``;
        * Pollux ``scalability.csv``: ``num_nodes, num_replicas, local_bsz, step_time,
          sync_time``;
        * Pollux ``placements.csv``: ``placement, local_bsz, step_time, sync_time`` where
          each digit of ``placement`` is the GPUs used on one node.
    source : str, default="<input>"
        File name used in error messages and in the ``source`` column.
    n_samples : int, optional
        Samples per epoch; with it ``steps_per_epoch = ceil(n_samples / global_batch)``
        converts step times to epoch times and back.

    Returns
    -------
    pandas.DataFrame
        :data:`TABLE_COLUMNS`; ``measured`` is "epoch" when the table gave epoch times,
        else "step"; times it cannot derive are NaN.

    Raises
    ------
    LogFormatError
        Unknown columns, non-numeric or non-positive values, a repeated configuration.

    Examples
    --------
    >>> csv = b"gpus,batch_per_gpu,epoch_time_s\\n1,128,100\\n2,64,60\\n"
    >>> t = parse_scaling_table(csv, source="t.csv", n_samples=1280)
    >>> t[["gpus", "global_batch", "steps_per_epoch", "step_time_s"]].values.tolist()
    [[1.0, 128.0, 10.0, 10.0], [2.0, 128.0, 10.0, 6.0]]
    """
    if n_samples is not None:
        n_samples = check_scalar(n_samples, "n_samples", int, min_val=1)
    frame = _read_frame(data, source)
    kind = _detect_format(frame, source)
    if kind == "generic":
        table = _from_generic(frame, source)
    elif kind == "pollux-scalability":
        table = _from_scalability(frame, source)
    else:
        table = _from_placements(frame, source)
    table["source"] = source
    _refuse_repeats(table, source)
    return _complete_times(table, n_samples)


def read_scaling_table(path: str | Path, *, n_samples: int | None = None) -> pd.DataFrame:
    """:func:`parse_scaling_table` on a file; errors name the file."""
    path = Path(path)
    return parse_scaling_table(file_bytes(path), source=path.name, n_samples=n_samples)


def read_pollux_trace(job_dir: str | Path, *, n_samples: int | None = None) -> pd.DataFrame:
    """A Pollux job's ``placements.csv`` and ``scalability.csv`` as one canonical table.

    ``placements.csv`` holds the 1-GPU rows (placement ``1``), so together the two files give
    a 1-GPU baseline for every GPU count. ``n_samples`` defaults to
    :data:`core.datasets.TRAINING_SET_SIZES` for the job's folder name when known.

    Examples
    --------
    >>> t = read_pollux_trace("data/pollux_traces/cifar10")
    >>> int(t.gpus.min()), int(t.gpus.max()), int(t.steps_per_epoch.iloc[0])  # 50000/32
    (1, 64, 1563)
    """
    job_dir = Path(job_dir)
    if n_samples is None:
        n_samples = TRAINING_SET_SIZES.get(job_dir.name)
    parts = [read_scaling_table(job_dir / name, n_samples=n_samples)
             for name in ("placements.csv", "scalability.csv") if (job_dir / name).is_file()]
    if not parts:
        raise LogFormatError(job_dir.name, "expected placements.csv or scalability.csv in "
                             "the folder; got neither. Point at a Pollux trace folder.")
    return pd.concat(parts, ignore_index=True)


# --------------------------------------------------------------------------- reading

def _read_frame(data: bytes | pd.DataFrame, source: str) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        frame = data.copy()
        filled = np.flatnonzero(frame.notna().any(axis=1).to_numpy())
        frame = frame.iloc[:filled[-1] + 1 if len(filled) else 0]   # an editor's unfilled last rows
    elif isinstance(data, (bytes, bytearray)):
        frame = read_csv_frame(bytes(data), source, text_columns=("placement", " placement"))
    else:
        raise InputError(f"data: expected CSV bytes or a pandas DataFrame; got "
                        f"{type(data).__name__}. Read the file with read_scaling_table(path).")
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    if frame.empty:
        raise LogFormatError(source, "expected at least one row of measurements; got none. "
                             "Add one row per GPU count and batch size.")
    return frame


def _detect_format(frame: pd.DataFrame, source: str) -> str:
    cols = set(frame.columns)
    if set(POLLUX_PLACEMENTS) - {"step_time", "sync_time"} <= cols and "placement" in cols:
        return "pollux-placements"
    if {"num_nodes", "num_replicas", "local_bsz"} <= cols:
        return "pollux-scalability"
    if set(GENERIC_REQUIRED) <= cols and cols & (set(GENERIC_TIMES) | set(_ALIASES)):
        return "generic"
    raise LogFormatError(source, (
        "expected columns gpus, batch_per_gpu and epoch_time_s or step_time_s (or a Pollux "
        "scalability.csv: num_nodes, num_replicas, local_bsz, step_time, sync_time, or "
        f"placements.csv: placement, local_bsz, step_time, sync_time); got "
        f"{', '.join(map(str, frame.columns))}. Rename the columns (see docs/scaling.md)."))


def _numeric(frame: pd.DataFrame, column: str, source: str, *, integer: bool = False,
             optional: bool = False) -> pd.Series:
    if column not in frame.columns:
        if optional:
            return pd.Series(np.nan, index=frame.index)
        raise LogFormatError(source, f"expected a column {column}; got "
                             f"{', '.join(map(str, frame.columns))}. Add it.")
    values = pd.to_numeric(frame[column], errors="coerce").astype(float)
    present = frame[column].notna()
    bad = present & ~(np.isfinite(values) & (values > 0))
    if integer:
        bad |= present & np.isfinite(values) & (values != np.round(values))
    if not optional:
        bad |= ~present
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        what = "a whole number >= 1" if integer else "a number > 0"
        cell = frame[column].iloc[i]
        cell = cell.item() if hasattr(cell, "item") else cell
        raise LogFormatError(source, f"expected {column} to be {what} in every row; got "
                             f"{cell!r} in data row {i + 1}. Fix that cell.")
    return values


def _from_generic(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    frame = frame.rename(columns=_ALIASES)
    gpus = _numeric(frame, "gpus", source, integer=True)
    nodes = _numeric(frame, "nodes", source, integer=True, optional=True)
    if (nodes > gpus).any():
        i = int(np.flatnonzero((nodes > gpus).to_numpy())[0])
        raise LogFormatError(source, f"expected nodes <= gpus; got nodes={nodes.iloc[i]:g}, "
                             f"gpus={gpus.iloc[i]:g} in data row {i + 1}. Fix that row.")
    has_epoch = "epoch_time_s" in frame.columns
    out = pd.DataFrame({
        "gpus": gpus, "nodes": nodes, "placement": "",
        "batch_per_gpu": _numeric(frame, "batch_per_gpu", source, integer=True),
        "step_time_s": _numeric(frame, "step_time_s", source, optional=has_epoch),
        "epoch_time_s": _numeric(frame, "epoch_time_s", source, optional=not has_epoch),
        "sync_time_s": _numeric(frame, "sync_time_s", source, optional=True),
        "measured": "epoch" if has_epoch else "step",
    })
    out["config"] = [_config(g, None if math.isnan(n) else n)
                     for g, n in zip(out["gpus"], out["nodes"])]
    return out


def _from_scalability(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    gpus = _numeric(frame, "num_replicas", source, integer=True)
    nodes = _numeric(frame, "num_nodes", source, integer=True)
    out = pd.DataFrame({
        "gpus": gpus, "nodes": nodes, "placement": "",
        "batch_per_gpu": _numeric(frame, "local_bsz", source, integer=True),
        "step_time_s": _numeric(frame, "step_time", source),
        "epoch_time_s": np.nan,
        "sync_time_s": _numeric(frame, "sync_time", source, optional=True),
        "measured": "step",
    })
    out["config"] = [_config(g, n) for g, n in zip(gpus, nodes)]
    return out


def _from_placements(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    text = frame["placement"].astype(str).str.strip()
    ok = text.str.fullmatch(r"[0-9]+") & (text.str.strip("0") != "")
    if not ok.all():
        i = int(np.flatnonzero(~ok.to_numpy())[0])
        raise LogFormatError(source, f"expected placement digits (GPUs on each node, e.g. "
                             f"1122); got {text.iloc[i]!r} in data row {i + 1}. Fix that cell.")
    digits = [[int(c) for c in p if c != "0"] for p in text]
    out = pd.DataFrame({
        "gpus": [float(sum(d)) for d in digits], "nodes": [float(len(d)) for d in digits],
        "placement": ["".join(map(str, d)) for d in digits],
        "batch_per_gpu": _numeric(frame, "local_bsz", source, integer=True),
        "step_time_s": _numeric(frame, "step_time", source),
        "epoch_time_s": np.nan,
        "sync_time_s": _numeric(frame, "sync_time", source, optional=True),
        "measured": "step",
    })
    out["config"] = [f"placement {p}" for p in out["placement"]]
    return out


def _config(gpus: float, nodes: float | None) -> str:
    """``"1 GPU"``, ``"4 GPUs on 2 nodes"``."""
    text = f"{gpus:g} GPU" + ("" if gpus == 1 else "s")
    return text if nodes is None else text + f" on {nodes:g} node" + ("" if nodes == 1 else "s")


def _refuse_repeats(table: pd.DataFrame, source: str) -> None:
    key = table[["config", "batch_per_gpu"]]
    repeated = key.duplicated(keep=False)
    if repeated.any():
        rows = [str(i + 1) for i in np.flatnonzero(repeated.to_numpy())[:2]]
        first = table[repeated].iloc[0]
        raise LogFormatError(source, f"expected one row per configuration; got data rows "
                             f"{' and '.join(rows)} for {first['config']} at batch_per_gpu "
                             f"{first['batch_per_gpu']:g}. Keep one row (e.g. the median of "
                             "repeated measurements).")


def _complete_times(table: pd.DataFrame, n_samples: int | None) -> pd.DataFrame:
    table = table.copy()
    table["global_batch"] = table["gpus"] * table["batch_per_gpu"]
    if n_samples is None:
        table["steps_per_epoch"] = np.nan
    else:
        table["steps_per_epoch"] = np.ceil(n_samples / table["global_batch"])
        missing_step = table["step_time_s"].isna()
        table.loc[missing_step, "step_time_s"] = (table["epoch_time_s"]
                                                  / table["steps_per_epoch"])[missing_step]
        missing_epoch = table["epoch_time_s"].isna()
        table.loc[missing_epoch, "epoch_time_s"] = (table["step_time_s"]
                                                    * table["steps_per_epoch"])[missing_epoch]
    return table[list(TABLE_COLUMNS)].reset_index(drop=True)
