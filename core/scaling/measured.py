"""Measured scaling: speed-up, parallel efficiency, compute vs communication, all-reduce bandwidth.

Input is a table of measured times per GPU count and per-GPU batch, read by
:mod:`core.scaling.table` (generic CSV, Pollux ``scalability.csv`` / ``placements.csv``).
Every multi-GPU row is compared with a **baseline** row at the smallest GPU count ``N0`` in the table (ideally 1):

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

import math
from dataclasses import dataclass, replace

import pandas as pd

from core.errors import InputError
from core.scaling.allreduce import allreduce_bytes, bandwidth_gb_per_s
from core.scaling.table import TABLE_COLUMNS
from core.validation import check_option, check_scalar

#: columns of :attr:`MeasuredScaling.rows`
RESULT_COLUMNS: tuple[str, ...] = (
    "scaling", "config", "gpus", "nodes", "placement", "batch_per_gpu", "global_batch",
    "baseline_gpus", "baseline_batch_per_gpu", "basis", "speedup", "ideal_speedup",
    "efficiency", "step_time_s", "compute_est_s", "communication_est_s", "comm_fraction",
    "steps_per_epoch", "epoch_time_s", "compute_est_epoch_s", "communication_est_epoch_s",
    "allreduce_bytes_per_step", "allreduce_bytes_per_epoch", "achieved_GB_per_s",
    "link_GB_per_s", "link_utilisation", "sync_time_s", "achieved_GB_per_s_sync", "flags",
)
ESTIMATE_NOTE = (
    "Compute and communication are estimates: compute per step = the baseline's time per "
    "sample × the per-GPU batch (strong scaling: T0·N0/N; weak: T0), communication = the "
    "rest. Where communication overlaps compute, the real communication time is longer; "
    "where small per-GPU batches run less efficiently, the real compute time is longer."
)


@dataclass(frozen=True, eq=False)   # holds DataFrames: compare fields, not objects
class MeasuredScaling:
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


def scaling_analysis(table: pd.DataFrame, *, n_params: int | None = None, itemsize: int = 4,
                     link_gbps: float | None = None) -> MeasuredScaling:
    """Speed-up, efficiency, compute/communication split and achieved all-reduce bandwidth.

    Parameters
    ----------
    table : pandas.DataFrame
        A canonical table from :func:`core.scaling.table.parse_scaling_table` or
        :func:`core.scaling.table.read_pollux_trace`.
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
    MeasuredScaling

    Raises
    ------
    InputError
        No row can be compared with the baseline (one GPU count only, or no shared per-GPU
        or global batch).

    Examples
    --------
    1 GPU at batch 128 takes 100 s an epoch; 2 GPUs at 64 each (same global batch: strong)
    take 60 s; 2 GPUs at 128 each (same per-GPU batch: weak) take 55 s:

    >>> from core.scaling.table import parse_scaling_table
    >>> csv = b"gpus,batch_per_gpu,epoch_time_s\\n1,128,100\\n2,64,60\\n2,128,55\\n"
    >>> r = scaling_analysis(parse_scaling_table(csv))
    >>> r.rows[["scaling", "speedup", "efficiency", "communication_est_epoch_s"]].round(4).values.tolist()
    [['strong', 1.6667, 0.8333, 10.0], ['weak', 1.8182, 0.9091, 5.0]]
    """
    table = _check_table(table)
    if n_params is not None:
        n_params = check_scalar(n_params, "n_params", int, min_val=1)
    itemsize = check_scalar(itemsize, "itemsize", int, min_val=1)
    if link_gbps is not None:
        link_gbps = check_scalar(link_gbps, "link_gbps", float, min_val=0, include_boundaries="neither")
    n0 = int(table["gpus"].min())
    baseline, base_notes = _baselines(table, n0)
    rows, skipped = [], 0
    # the first baseline row of each global batch and of each per-GPU batch (a lookup, not a scan per row)
    first: dict[str, dict] = {"global_batch": {}, "batch_per_gpu": {}}
    for base in baseline.to_dict("records"):
        for key, seen in first.items():
            value = base[key]
            if not pd.isna(value) and value not in seen:    # a missing batch matches nothing, as == does
                seen[value] = base
    for rec in table[table["gpus"] > n0].to_dict("records"):
        for kind, key, value in (("strong", "global_batch", rec["global_batch"]),
                                 ("weak", "batch_per_gpu", rec["batch_per_gpu"])):
            match = None if pd.isna(value) else first[key].get(value)
            if match is None:
                continue
            row = _compare(kind, rec, dict(match), n0, n_params, itemsize,
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
    return MeasuredScaling(rows=frame, baseline=baseline, baseline_gpus=n0, n_strong=n_strong,
                         n_weak=n_weak, notes=notes, n_params=n_params, itemsize=itemsize,
                         link_gbps=link_gbps)


def filter_rows(result: MeasuredScaling, *, scaling: str | None = None,
                batch_per_gpu: int | None = None, global_batch: int | None = None,
                max_nodes: int | None = None, fastest_only: bool = False) -> MeasuredScaling:
    """The same result with only the rows a chart should show (the notes are kept).

    Parameters
    ----------
    result : MeasuredScaling
    scaling : {"strong", "weak"}, optional
        Keep one kind of comparison.
    batch_per_gpu, global_batch : int, optional
        Keep the rows with this per-GPU or global batch.
    max_nodes : int, optional
        Keep the rows on at most this many nodes (rows without a node count stay).
    fastest_only : bool, default=False
        After the other filters, keep for each kind, GPU count and per-GPU batch only the
        row with the highest speed-up: the best placement of those GPUs over nodes (a
        Pollux trace measures many). Ties keep the first row; the row order is kept.

    Examples
    --------
    >>> from core.scaling.table import parse_scaling_table
    >>> csv = b"gpus,batch_per_gpu,epoch_time_s\\n1,128,100\\n2,64,60\\n2,128,55\\n"
    >>> r = scaling_analysis(parse_scaling_table(csv))
    >>> filter_rows(r, scaling="weak").rows["scaling"].tolist()
    ['weak']

    Two GPUs on one node (50 s) and on two nodes (80 s): the fastest placement stays.

    >>> csv = b"gpus,nodes,batch_per_gpu,epoch_time_s\\n1,1,128,100\\n2,1,128,50\\n2,2,128,80\\n"
    >>> r = scaling_analysis(parse_scaling_table(csv))
    >>> filter_rows(r, fastest_only=True).rows[["config", "speedup"]].values.tolist()
    [['2 GPUs on 1 node', 2.0]]
    """
    if scaling is not None:
        check_option(scaling, "scaling", ("strong", "weak"), fix="Pick one kind of comparison, or None for both")
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
    rows = rows[keep]
    if fastest_only:
        best = (rows.sort_values("speedup", ascending=False, kind="stable")
                .drop_duplicates(["scaling", "gpus", "batch_per_gpu"]).index)
        rows = rows[rows.index.isin(best)]
    return replace(result, rows=rows.reset_index(drop=True))


# --------------------------------------------------------------------------- analysis

def _check_table(table: pd.DataFrame) -> pd.DataFrame:
    if not isinstance(table, pd.DataFrame):
        raise InputError(f"table: expected the DataFrame from parse_scaling_table; got "
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
            label = "global batch" if key == "global_batch" else "per-GPU batch"
            notes.append(f"{kind.capitalize()} scaling ({what}): {len(part)} comparisons "
                         f"({label} {values}).")
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
