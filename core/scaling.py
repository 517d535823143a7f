"""Measured scaling: speed-up, parallel efficiency, compute vs communication, all-reduce bandwidth.

Input is a table of measured times per GPU count and per-GPU batch (see
:func:`parse_scaling_table` for the three accepted formats). Every multi-GPU row is compared
with a **baseline** row at the smallest GPU count ``N0`` in the table (ideally 1):

* **strong scaling**: same *global* batch (``N · b == N0 · b0``): the same work per step is
  split over more GPUs; ideal speed-up ``N / N0``.
* **weak scaling**: same *per-GPU* batch (``b == b0``): every GPU keeps its work, the global
  batch grows with ``N``; speed-up is measured in samples per second (an epoch is a fixed
  amount of data), ideal ``N / N0``.

A row can take part in both (it then appears twice) or in neither. Definitions:

* ``speedup``: ``T0_epoch / T_epoch`` when both rows were measured per epoch, otherwise the
  throughput ratio ``(G / t) / (G0 / t0)`` from step times (``G`` the global batch).
* ``efficiency = speedup / (N / N0)``; a run slower than its baseline has speed-up < 1 and
  efficiency < N0 / N, and is flagged, never refused.
* **Estimates** (assumptions, not measurements): each GPU's compute per step is the
  baseline's compute per sample times its own per-GPU batch, ``compute = t0 · b / b0``
  (strong scaling: ``t0 · N0 / N``; weak: ``t0``); communication is the rest,
  ``t − compute``. With ``N0 = 1`` the baseline does no communication; with ``N0 > 1``
  "communication" is only the time beyond the baseline's. Per epoch both are multiplied by
  the run's steps per epoch. Tables with epoch times and no dataset size use
  ``compute_epoch = T0_epoch · N0 / N``.
* **All-reduce lower bound**: each of ``N`` processes must send at least
  ``2 (N − 1) / N · X · itemsize`` bytes per all-reduce of ``X`` items (one per step).
  Achieved bandwidth = those bytes / the estimated communication time per step, in
  GB/s with **GB = 1e9 bytes**; a link's nominal rate is given in Gbit/s and shown as
  ``link_gbps / 8`` GB/s.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from core import _check
from core.errors import InputError, LogFormatError

GB = 1e9
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
#: columns of :attr:`ScalingResult.rows`
RESULT_COLUMNS: tuple[str, ...] = (
    "scaling", "config", "gpus", "nodes", "placement", "batch_per_gpu", "global_batch",
    "baseline_gpus", "baseline_batch_per_gpu", "basis", "speedup", "ideal_speedup",
    "efficiency", "step_time_s", "compute_est_s", "communication_est_s", "comm_fraction",
    "steps_per_epoch", "epoch_time_s", "compute_est_epoch_s", "communication_est_epoch_s",
    "allreduce_bytes_per_step", "allreduce_bytes_per_epoch", "achieved_GB_per_s",
    "link_GB_per_s", "link_utilisation", "sync_time_s", "achieved_GB_per_s_sync", "flags",
)
#: training-set sizes of the Pollux jobs whose datasets are standard (others: pass n_samples)
POLLUX_DATASET_SIZES: dict[str, int] = {
    "cifar10": 50_000,        # CIFAR-10 training set
    "imagenet": 1_281_167,    # ILSVRC-2012 training set
}
ESTIMATE_NOTE = (
    "Compute and communication are estimates: compute per step = the baseline's time per "
    "sample × the per-GPU batch (strong scaling: T0·N0/N; weak: T0), communication = the "
    "rest. Overlap of communication with compute makes the real communication larger."
)


@dataclass(frozen=True)
class ScalingResult:
    """Result of :func:`scaling_analysis`.

    Attributes
    ----------
    rows : pandas.DataFrame
        :data:`RESULT_COLUMNS`, one row per (measured row, comparison); ``scaling`` is
        "strong" or "weak".
    baseline : pandas.DataFrame
        The baseline rows (canonical table columns), one per per-GPU batch.
    baseline_gpus : int
        ``N0``, the smallest GPU count in the table.
    n_strong, n_weak : int
        How many comparisons of each kind the table supports.
    notes : tuple of str
        What the table supports and how the numbers were made; a page shows them as they are.
    n_params : int or None
    itemsize : int
    link_gbps : float or None
    """

    rows: pd.DataFrame
    baseline: pd.DataFrame
    baseline_gpus: int
    n_strong: int
    n_weak: int
    notes: tuple[str, ...]
    n_params: int | None
    itemsize: int
    link_gbps: float | None

    def to_dict(self) -> dict:
        return dict(baseline_gpus=self.baseline_gpus, n_strong=self.n_strong,
                    n_weak=self.n_weak, notes=list(self.notes), n_params=self.n_params,
                    itemsize=self.itemsize, link_gbps=self.link_gbps,
                    rows=_records(self.rows))


def allreduce_bytes(n_params: int, n_procs: int, *, itemsize: int = 4) -> float:
    """Lower bound on the bytes each process sends in one all-reduce.

    Parameters
    ----------
    n_params : int
        X, items reduced (the model's parameter count), >= 1.
    n_procs : int
        N, processes taking part, >= 1.
    itemsize : int, default=4
        Bytes per item (4 for float32, 2 for float16).

    Returns
    -------
    float
        ``2 · (N − 1) / N · X · itemsize`` (0 for one process).

    Notes
    -----
    Each process must send its ``X/N`` share of the reduce-scatter ``N − 1`` times and the
    same again in the all-gather; ring all-reduce meets the bound.

    Examples
    --------
    >>> allreduce_bytes(1_000_000, 4)   # 2 * 3/4 * 1e6 * 4
    6000000.0
    >>> allreduce_bytes(1_000_000, 1)
    0.0
    """
    x = _check.count("n_params", n_params)
    n = _check.count("n_procs", n_procs)
    size = _check.count("itemsize", itemsize)
    return 2.0 * (n - 1) / n * x * size


def bandwidth_gb_per_s(n_bytes: float, seconds: float) -> float:
    """``n_bytes / seconds / 1e9`` (GB = 1e9 bytes); NaN when ``seconds <= 0``.

    Examples
    --------
    >>> bandwidth_gb_per_s(6e6, 0.003)
    2.0
    """
    return float(n_bytes) / seconds / GB if seconds > 0 else math.nan


def parse_scaling_table(data: bytes | pd.DataFrame, *, source: str = "<input>",
                        n_samples: int | None = None) -> pd.DataFrame:
    """Read a table of measured times into the canonical table.

    Parameters
    ----------
    data : bytes or pandas.DataFrame
        CSV bytes (an upload) or a frame (an edited table). Header names are stripped and
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
        n_samples = _check.count("n_samples", n_samples)
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
    try:
        data = path.read_bytes()
    except OSError as err:
        raise LogFormatError(path.name, f"expected a readable CSV file; got {err.strerror}. "
                             "Check the path.") from err
    return parse_scaling_table(data, source=path.name, n_samples=n_samples)


def read_pollux_trace(job_dir: str | Path, *, n_samples: int | None = None) -> pd.DataFrame:
    """A Pollux job's ``placements.csv`` and ``scalability.csv`` as one canonical table.

    ``placements.csv`` holds the 1-GPU rows (placement ``1``), so together the two files give
    a 1-GPU baseline for every GPU count. ``n_samples`` defaults to
    :data:`POLLUX_DATASET_SIZES` for the job's folder name when known.

    Examples
    --------
    >>> t = read_pollux_trace("data/pollux_traces/cifar10")
    >>> int(t.gpus.min()), int(t.gpus.max()), int(t.steps_per_epoch.iloc[0])  # 50000/32
    (1, 64, 1563)
    """
    job_dir = Path(job_dir)
    if n_samples is None:
        n_samples = POLLUX_DATASET_SIZES.get(job_dir.name)
    parts = [read_scaling_table(job_dir / name, n_samples=n_samples)
             for name in ("placements.csv", "scalability.csv") if (job_dir / name).is_file()]
    if not parts:
        raise LogFormatError(job_dir.name, "expected placements.csv or scalability.csv in "
                             "the folder; got neither. Point at a Pollux trace folder.")
    return pd.concat(parts, ignore_index=True)


def scaling_analysis(table: pd.DataFrame, *, n_params: int | None = None, itemsize: int = 4,
                     link_gbps: float | None = None) -> ScalingResult:
    """Speed-up, efficiency, compute/communication split and achieved all-reduce bandwidth.

    Parameters
    ----------
    table : pandas.DataFrame
        A canonical table from :func:`parse_scaling_table` / :func:`read_pollux_trace`.
    n_params : int, optional
        X, the model's parameter count (e.g. ``core.models.parameter_count(name)``); without
        it the all-reduce and bandwidth columns are NaN.
    itemsize : int, default=4
        Bytes per parameter in the all-reduce.
    link_gbps : float, optional
        The link's nominal bandwidth in **gigabits** per second (e.g. 100 for 100 Gb
        Ethernet); shown as ``link_gbps / 8`` GB/s next to the achieved bandwidth.

    Returns
    -------
    ScalingResult

    Raises
    ------
    InputError
        No row can be compared with the baseline (one GPU count only, or no shared per-GPU
        or global batch).

    Examples
    --------
    1 GPU at batch 128 takes 100 s an epoch; 2 GPUs at 64 each (same global batch: strong)
    take 60 s; 2 GPUs at 128 each (same per-GPU batch: weak) take 55 s:

    >>> csv = b"gpus,batch_per_gpu,epoch_time_s\\n1,128,100\\n2,64,60\\n2,128,55\\n"
    >>> r = scaling_analysis(parse_scaling_table(csv))
    >>> r.rows[["scaling", "speedup", "efficiency", "communication_est_epoch_s"]].round(4).values.tolist()
    [['strong', 1.6667, 0.8333, 10.0], ['weak', 1.8182, 0.9091, 5.0]]
    """
    table = _check_table(table)
    if n_params is not None:
        n_params = _check.count("n_params", n_params)
    itemsize = _check.count("itemsize", itemsize)
    if link_gbps is not None:
        link_gbps = _check.positive("link_gbps", link_gbps)
    n0 = int(table["gpus"].min())
    baseline, base_notes = _baselines(table, n0)
    rows, skipped = [], 0
    for rec in table[table["gpus"] > n0].to_dict("records"):
        for kind, key, value in (("strong", "global_batch", rec["global_batch"]),
                                 ("weak", "batch_per_gpu", rec["batch_per_gpu"])):
            match = baseline[baseline[key] == value]
            if match.empty:
                continue
            row = _compare(kind, rec, match.iloc[0].to_dict(), n0, n_params, itemsize,
                           link_gbps)
            if row is None:
                skipped += 1
            else:
                rows.append(row)
    frame = pd.DataFrame(rows, columns=list(RESULT_COLUMNS))
    n_strong = int((frame["scaling"] == "strong").sum())
    n_weak = int((frame["scaling"] == "weak").sum())
    if frame.empty:
        raise InputError(_nothing_to_compare(table, n0))
    notes = _notes(frame, n0, base_notes, skipped, n_params, table)
    return ScalingResult(rows=frame, baseline=baseline, baseline_gpus=n0, n_strong=n_strong,
                         n_weak=n_weak, notes=notes, n_params=n_params, itemsize=itemsize,
                         link_gbps=link_gbps)


def filter_rows(result: ScalingResult, *, scaling: str | None = None,
                batch_per_gpu: int | None = None, global_batch: int | None = None,
                max_nodes: int | None = None) -> ScalingResult:
    """The same result with only the rows a chart should show (the notes are kept).

    Examples
    --------
    >>> csv = b"gpus,batch_per_gpu,epoch_time_s\\n1,128,100\\n2,64,60\\n2,128,55\\n"
    >>> r = scaling_analysis(parse_scaling_table(csv))
    >>> filter_rows(r, scaling="weak").rows["scaling"].tolist()
    ['weak']
    """
    if scaling is not None and scaling not in ("strong", "weak"):
        raise InputError(f"scaling: expected 'strong', 'weak' or None; got {scaling!r}. "
                         "Pick one kind of comparison.")
    rows = result.rows
    keep = pd.Series(True, index=rows.index)
    if scaling is not None:
        keep &= rows["scaling"] == scaling
    if batch_per_gpu is not None:
        keep &= rows["batch_per_gpu"] == batch_per_gpu
    if global_batch is not None:
        keep &= rows["global_batch"] == global_batch
    if max_nodes is not None:
        keep &= ~(rows["nodes"] > max_nodes)
    return replace(result, rows=rows[keep].reset_index(drop=True))


# --------------------------------------------------------------------------- reading

def _read_frame(data: bytes | pd.DataFrame, source: str) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        frame = data.copy()
    elif isinstance(data, (bytes, bytearray)):
        try:
            frame = pd.read_csv(io.BytesIO(bytes(data)), skipinitialspace=True,
                                dtype={"placement": str, " placement": str})
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
            raise LogFormatError(source, f"expected a CSV table; got unreadable text "
                                 f"({err}). Save the table as CSV with a header row.") from err
    else:
        raise TypeError(f"data: expected CSV bytes or a pandas DataFrame; got "
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
    out["config"] = [f"{g:g} GPUs" + ("" if math.isnan(n) else f" on {n:g} nodes")
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
    out["config"] = [f"{g:g} GPUs on {n:g} nodes" for g, n in zip(gpus, nodes)]
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


# --------------------------------------------------------------------------- analysis

def _check_table(table: pd.DataFrame) -> pd.DataFrame:
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"table: expected the DataFrame from parse_scaling_table; got "
                        f"{type(table).__name__}.")
    missing = [c for c in TABLE_COLUMNS if c not in table.columns]
    if missing:
        raise InputError(f"table: expected the columns of parse_scaling_table; got no "
                         f"{', '.join(missing)}. Pass the table through parse_scaling_table.")
    if table.empty:
        raise InputError("table: expected at least one row; got none. Add measurements.")
    return table


def _baselines(table: pd.DataFrame, n0: int) -> tuple[pd.DataFrame, list[str]]:
    """One baseline row per per-GPU batch at N0 GPUs (the fastest when several)."""
    base = table[table["gpus"] == n0].copy()
    base["_t"] = base["epoch_time_s"].where(base["measured"] == "epoch", base["step_time_s"])
    notes = []
    counts = base.groupby("batch_per_gpu")["config"].count()
    if (counts > 1).any():
        notes.append(f"Several {n0}-GPU placements share a batch size; the fastest is the "
                     "baseline.")
    base = base.sort_values(["batch_per_gpu", "_t"]).drop_duplicates("batch_per_gpu")
    return base.drop(columns="_t").reset_index(drop=True), notes


def _compare(kind: str, rec: dict, base: dict, n0: int, n_params: int | None, itemsize: int,
             link_gbps: float | None) -> dict | None:
    n = int(rec["gpus"])
    ideal = n / n0
    steps = rec["steps_per_epoch"]
    if rec["measured"] == "epoch" and base["measured"] == "epoch":
        basis, speedup = "epoch", base["epoch_time_s"] / rec["epoch_time_s"]
    elif not (math.isnan(rec["step_time_s"]) or math.isnan(base["step_time_s"])):
        basis = "step"
        speedup = (rec["global_batch"] / rec["step_time_s"]) / (base["global_batch"]
                                                              / base["step_time_s"])
    else:
        return None                    # one measured per epoch, one per step, no n_samples
    compute = base["step_time_s"] * rec["batch_per_gpu"] / base["batch_per_gpu"]
    comm = rec["step_time_s"] - compute
    if math.isnan(compute):            # epoch times without n_samples
        compute_epoch = base["epoch_time_s"] * n0 / n
    else:
        compute_epoch = compute * steps
    comm_epoch = rec["epoch_time_s"] - compute_epoch
    bytes_step = allreduce_bytes(n_params, n, itemsize=itemsize) if n_params else math.nan
    achieved = bandwidth_gb_per_s(bytes_step, comm) if comm > 0 else math.nan
    sync = rec["sync_time_s"]
    link = link_gbps / 8 if link_gbps else math.nan
    flags = []
    if speedup < 1:
        flags.append(f"slower than the {n0}-GPU baseline (speed-up {speedup:.2f} < 1, "
                     f"efficiency {speedup / ideal:.3f} < {n0}/{n})")
    if comm <= 0 or comm_epoch <= 0:
        flags.append("no time left for communication (super-linear): bandwidth not estimated")
    if link_gbps and rec["nodes"] == 1:
        flags.append("all GPUs on one node: they share the intra-node link (NVLink/PCIe), "
                     "not the network link given")
    elif achieved / link > 1:
        flags.append("achieved bandwidth above the nominal link: communication overlaps "
                     "compute, or a faster link carried it")
    return dict(
        scaling=kind, config=rec["config"], gpus=n, nodes=rec["nodes"],
        placement=rec["placement"], batch_per_gpu=int(rec["batch_per_gpu"]),
        global_batch=int(rec["global_batch"]), baseline_gpus=n0,
        baseline_batch_per_gpu=int(base["batch_per_gpu"]), basis=basis, speedup=speedup,
        ideal_speedup=ideal, efficiency=speedup / ideal, step_time_s=rec["step_time_s"],
        compute_est_s=compute, communication_est_s=comm,
        comm_fraction=comm / rec["step_time_s"] if not math.isnan(comm) else
        comm_epoch / rec["epoch_time_s"],
        steps_per_epoch=steps, epoch_time_s=rec["epoch_time_s"],
        compute_est_epoch_s=compute_epoch, communication_est_epoch_s=comm_epoch,
        allreduce_bytes_per_step=bytes_step, allreduce_bytes_per_epoch=bytes_step * steps,
        achieved_GB_per_s=achieved, link_GB_per_s=link, link_utilisation=achieved / link,
        sync_time_s=sync,
        achieved_GB_per_s_sync=bandwidth_gb_per_s(bytes_step, sync) if sync > 0 else math.nan,
        flags="; ".join(flags),
    )


def _nothing_to_compare(table: pd.DataFrame, n0: int) -> str:
    counts = sorted(int(g) for g in table["gpus"].unique())
    return ("table: expected rows at two or more GPU counts that share a per-GPU batch (weak "
            "scaling) or a global batch (strong scaling) with a row at the smallest count, "
            f"{n0}; got GPU counts {counts} with per-GPU batches "
            f"{sorted(int(b) for b in table['batch_per_gpu'].unique())}. Add a {n0}-GPU row "
            "at a matching batch size.")


def _notes(frame: pd.DataFrame, n0: int, base_notes: list[str], skipped: int,
           n_params: int | None, table: pd.DataFrame) -> tuple[str, ...]:
    notes = []
    for kind, key, what in (("strong", "global_batch", "same global batch"),
                            ("weak", "batch_per_gpu", "same per-GPU batch")):
        part = frame[frame["scaling"] == kind]
        if part.empty:
            notes.append(f"No {kind}-scaling comparison: no row shares a {what.split()[1]} "
                         f"{what.split()[2]} with a {n0}-GPU row.")
        else:
            values = ", ".join(str(v) for v in sorted(part[key].unique()))
            notes.append(f"{kind.capitalize()} scaling ({what}): {len(part)} comparisons "
                         f"({key.replace('_', ' ')} {values}).")
    if n0 > 1:
        notes.append(f"No 1-GPU row: speed-ups are relative to {n0} GPUs and 'communication' "
                     f"is the time beyond the {n0}-GPU baseline, which includes its own.")
    notes.append(ESTIMATE_NOTE)
    notes += base_notes
    if skipped:
        notes.append(f"{skipped} comparisons skipped: epoch times and step times cannot be "
                     "compared without the dataset size (n_samples).")
    if n_params is None:
        notes.append("All-reduce bytes and bandwidth need the parameter count (n_params).")
    if table["steps_per_epoch"].isna().all():
        notes.append("Per-epoch values need the dataset size (n_samples).")
    n_slow = int((frame["speedup"] < 1).sum())
    if n_slow:
        notes.append(f"{n_slow} comparisons are slower than the baseline (speed-up < 1).")
    return tuple(notes)


def _records(frame: pd.DataFrame) -> list[dict]:
    return [{k: (None if isinstance(v, float) and math.isnan(v) else
                 v.item() if hasattr(v, "item") else v) for k, v in row.items()}
            for row in frame.to_dict("records")]
