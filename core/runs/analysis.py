"""One analysis per run (log → fit → target) and the table of fits.

The table's columns are the contract of ``python -m core fit`` and of the Logs page; the
Calibrate page reads the same table (see ``core.calibrate``).
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

import numpy as np
import pandas as pd

from core.curves import FitResult, fit_curve
from core.errors import FitError, FitWarning, InputError, LogFormatError
from core.logs import MIN_FIT_POINTS, RunLog, read_log_file
from core.runs.evaluations import metric_column, rows_holding
from core.runs.targets import TargetCrossing, find_target_crossing
from core.targets import Target, accuracy_value, target_for, target_label

#: columns of the fits table, in order (``python -m core fit`` prints them)
FIT_TABLE_COLUMNS: tuple[str, ...] = (
    "file", "model", "gpu", "split", "depth", "steps_per_epoch", "n_points",
    "b0", "b1", "b2", "b0_se", "b1_se", "b2_se", "r2",
    "step_to_target", "epoch_to_target", "loss_at_target", "flags",
    "metric", "direction", "target", "samples_to_target", "tokens_to_target", "time_to_target_s",
)
#: extra columns after the contract ones
EXTRA_COLUMNS: tuple[str, ...] = ("target_acc", "criterion", "format", "granularity")


@dataclass(frozen=True, eq=False)
class RunAnalysis:
    """A log, its fitted loss curve (``None`` when it could not be fitted) and its target."""

    log: RunLog
    fit: FitResult | None
    crossing: TargetCrossing
    fit_problem: str = ""

    @property
    def key(self) -> str:
        """What makes this analysis unique (a cache key): the log's content and the target asked for."""
        c = self.crossing
        family = self.fit.family if self.fit is not None else ""
        return f"{self.log.fingerprint()}|{c.target.spec}|{c.criterion}|{family}|{self.fit_problem}"

    @property
    def flags(self) -> tuple[str, ...]:
        out = list(self.log.flags)
        if self.fit_problem:
            out.append(self.fit_problem)
        if self.fit is not None:
            out.extend(self.fit.flags)
        c = self.crossing
        if not c.reached:
            out.append(c.note if c.note.startswith("no ") else f"never reached target {target_label(c.target)}")
        else:
            if accuracy_value(c.target) is None:        # another metric than the accuracy: said which
                out.append(f"reached target {c.target.spec}")
            if c.note:
                out.append(c.note)
        return tuple(out)

    def row(self) -> dict:
        """The run's row of the fits table (NaN / None where not applicable)."""
        meta, fit, c = self.log.meta, self.fit, self.crossing
        names = ("b0", "b1", "b2")
        params = {n: fit.params.get(n, math.nan) if fit else math.nan for n in names}
        ses = {f"{n}_se": fit.stderr.get(n, math.nan) if fit else math.nan for n in names}
        return {
            "file": self.log.source, "model": meta.model, "gpu": meta.gpu, "split": meta.split,
            "depth": meta.depth, "steps_per_epoch": self.log.steps_per_epoch,
            "n_points": self.log.n_points, **params, **ses,
            "r2": fit.r2 if fit else math.nan,
            "step_to_target": c.step if c.reached else None,
            "epoch_to_target": c.epoch if c.reached else None,
            "loss_at_target": c.loss if c.reached else None,
            "flags": "; ".join(self.flags),
            "metric": c.target.metric, "direction": c.target.direction, "target": c.target.value,
            "samples_to_target": c.samples if c.reached else None,
            "tokens_to_target": c.tokens if c.reached else None,
            "time_to_target_s": c.time_s if c.reached else None,
            "target_acc": accuracy_value(c.target), "criterion": c.criterion,
            "format": self.log.fmt,
            "granularity": self.log.granularity,
        }


@dataclass(frozen=True)
class RunFit:
    """A log's fitted loss curve, or why there is none (``fit`` None, ``problem`` a sentence)."""

    fit: FitResult | None
    problem: str = ""


def fit_run(log: RunLog, *, family: str = "optimus", metric: str = "loss") -> RunFit:
    """Fit the loss curve of ``log`` (it does not depend on the target's value, so pages cache it per log).

    ``metric`` names the falling metric to fit (default the loss role; a loss target's own metric,
    such as ``eval_loss``, where the log has it). A log without it (an accuracy trace) or with too
    few points gets no fit and a ``problem`` saying why; nothing here raises for a readable log.
    """
    column = metric_column(log, metric) if metric != "loss" else ("loss" if log.has_loss else None)
    if column is None:
        return RunFit(None)
    frame = rows_holding(log.frame, column)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FitWarning)
            fit = fit_curve(frame["global_step"].to_numpy(), frame[column].to_numpy(),
                            family=family, name=log.source)
    except (FitError, InputError) as exc:
        return RunFit(None, f"not fitted: {exc}")
    return RunFit(fit)


def analyse_run(log: RunLog, *, target: Target | None = None, criterion: str = "epoch",
                family: str = "optimus", fitted: RunFit | None = None) -> RunAnalysis:
    """Fit the loss curve of ``log`` and find where it met its target.

    ``target``: the user's; None: the target the log declares (an MLLOG or speedrun log's own), else
    ``acc>=0.92`` (:func:`core.targets.target_for` decides).
    For a falling target the curve fitted is the target's metric (``fit_metric``).
    ``fitted`` reuses a fit made earlier by :func:`fit_run` (with the same ``family``).
    """
    target = target_for(log, target)
    crossing = find_target_crossing(log, target, criterion=criterion)
    fitted = fitted if fitted is not None else fit_run(log, family=family, metric=fit_metric(log, target))
    return RunAnalysis(log, fitted.fit, crossing, fit_problem=fitted.problem)


def fit_metric(log: RunLog, target: Target) -> str:
    """The metric whose curve is fitted for ``target``: its own metric when it falls and the log has it, else the loss.

    >>> from core.logs import read_log
    >>> log = read_log(b"step,loss,acc\\n1,2.0,0.5\\n2,1.0,0.7\\n", "a.csv")
    >>> fit_metric(log, Target("acc", ">=", 0.9)), fit_metric(log, Target("loss", "<=", 0.5))
    ('loss', 'loss')
    """
    if not target.climbs and metric_column(log, target.metric) not in (None, "acc"):
        return target.metric
    return "loss"


def _analyse_path(path: str, target: Target | None, criterion: str, family: str,
                  steps_per_epoch: int | None) -> tuple[dict | None, str | None]:

    try:
        log = read_log_file(path, source=path, steps_per_epoch=steps_per_epoch, min_points=MIN_FIT_POINTS)
    except LogFormatError as exc:
        return None, str(exc)
    return analyse_run(log, target=target, criterion=criterion, family=family).row(), None


def fit_files(paths: Iterable[str], *, target: Target | None = None, criterion: str = "epoch",
              family: str = "optimus", steps_per_epoch: int | None = None, jobs: int = 1,
              extra: bool = True) -> tuple[pd.DataFrame, list[str]]:
    """Read, fit and analyse log files: the fits table and one message per rejected file.

    ``target``: the one for every log; None: each log's own target, else ``acc>=0.92`` (``target_for``).
    ``jobs > 1`` spreads the files over that many processes (rows keep the order of
    ``paths``); the numbers are the same as with ``jobs=1``.
    """
    paths = [str(p) for p in paths]
    args = [(p, target, criterion, family, steps_per_epoch) for p in paths]
    if jobs > 1 and len(paths) > 1:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
        with ProcessPoolExecutor(max_workers=min(jobs, len(paths)), mp_context=ctx) as pool:
            results = list(pool.map(_analyse_path, *zip(*args), chunksize=max(1, len(paths) // (4 * jobs))))
    else:
        results = [_analyse_path(*a) for a in args]
    rows = [r for r, _ in results if r is not None]
    errors = [e for _, e in results if e is not None]
    columns = list(FIT_TABLE_COLUMNS) + (list(EXTRA_COLUMNS) if extra else [])
    return _typed_table(pd.DataFrame(rows, columns=columns)), errors


def _typed_table(table: pd.DataFrame) -> pd.DataFrame:
    for col in ("depth", "steps_per_epoch", "epoch_to_target"):
        table[col] = pd.array(table[col], dtype="Int64")
    for col in ("step_to_target", "loss_at_target", "target", "samples_to_target", "tokens_to_target",
                "time_to_target_s"):
        table[col] = pd.to_numeric(table[col], errors="coerce").astype(float)
    return table


def fits_table(analyses: Iterable[RunAnalysis], *, extra: bool = True) -> pd.DataFrame:
    """The table of fits, one row per run, columns ``FIT_TABLE_COLUMNS`` (+ ``EXTRA_COLUMNS``)."""
    return fits_table_of_rows([a.row() for a in analyses], extra=extra)


def fits_table_of_rows(rows: Iterable[dict], *, extra: bool = True) -> pd.DataFrame:
    """The table of fits from rows as :meth:`RunAnalysis.row` makes them (stored rows, say), typed alike."""
    columns = list(FIT_TABLE_COLUMNS) + (list(EXTRA_COLUMNS) if extra else [])
    return _typed_table(pd.DataFrame(list(rows), columns=columns))


def select_runs(analyses: Iterable[RunAnalysis], view: str) -> list[RunAnalysis]:
    """The runs a view shows: ``"__all__"``, ``"__train__"``, ``"__val__"`` or one file name.

    >>> select_runs([], "__all__")
    []
    """
    analyses = list(analyses)
    if view == "__all__":
        return analyses
    if view in ("__train__", "__val__"):
        return [a for a in analyses if a.log.meta.split == view.strip("_")]
    return [a for a in analyses if a.log.source == view]


def run_key(log: RunLog) -> tuple:
    """Which training run a log belongs to: its folder, model, device and batch (not its split).

    A train log and its ``_val`` twin share a key; a name that says nothing parsable (``metrics.csv``)
    is its own run, keyed by the file name without a split suffix.

    >>> from core.logs import read_log
    >>> csv = b"step,loss\\n1,2.0\\n2,1.0\\n3,0.5\\n"
    >>> run_key(read_log(csv, "resnet20_V100.csv")) == run_key(read_log(csv, "resnet20_V100_val.csv"))
    True
    >>> run_key(read_log(csv, "metrics.csv")) == run_key(read_log(csv, "other.csv"))
    False
    """
    m = log.meta
    path = PurePosixPath(log.source.replace("\\", "/"))
    folder = str(path.parent)
    if m.model is None and m.gpu is None:
        stem = re.sub(r"_(val|valid|validation|test|train)$", "", path.stem, flags=re.IGNORECASE)
        return (folder, stem, None, m.global_batch, None)
    return (folder, m.model, m.gpu, m.global_batch, m.depth)


def step_scales(analyses: Iterable[RunAnalysis]) -> dict[str, float]:
    """Per log, the factor that puts its steps on its training run's step axis.

    A validation log counts its own (fewer) steps per epoch; drawn beside the training log it
    must use the training run's steps: ``train steps per epoch / val steps per epoch`` when the
    training twin (same ``run_key``) and both step counts are known, else 1.

    >>> from core.logs import read_log
    >>> rows = lambda n: "epoch,step,loss\\n" + "".join(f"{e},{s},{1 / (e * n + s)}\\n" for e in (1, 2, 3)
    ...                                               for s in range(1, n + 1))
    >>> train, val = (analyse_run(read_log(rows(n).encode(), name)) for n, name in
    ...               ((8, "resnet20_V100.csv"), (2, "resnet20_V100_val.csv")))
    >>> step_scales([train, val])
    {'resnet20_V100.csv': 1.0, 'resnet20_V100_val.csv': 4.0}
    """
    analyses = list(analyses)
    train = {run_key(a.log): a.log.steps_per_epoch for a in analyses if a.log.meta.split == "train"}
    out = {}
    for a in analyses:
        spe, own = train.get(run_key(a.log)), a.log.steps_per_epoch
        split = a.log.meta.split
        out[a.log.source] = float(spe) / own if split != "train" and spe and own and a.log.granularity == "step" \
            else 1.0
    return out


def loss_curves(analyses: Iterable[RunAnalysis], *, model: str, split: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The measured loss curve ``(global step, loss)`` of each run of ``model`` in ``split``, by GPU.

    What the Calibrate page draws beside a held-out architecture's predicted curves.
    """
    return {a.log.meta.gpu: (a.log.frame["global_step"].to_numpy(), a.log.frame["loss"].to_numpy())
            for a in analyses if a.log.meta.model == model and a.log.meta.split == split and a.log.has_loss}


def epoch_summary(log: RunLog) -> pd.DataFrame:
    """Per epoch: last global step, mean loss and final (running) accuracy.

    Computed once per log and kept with it (a ``RunLog`` never changes): do not modify the
    returned table.

    >>> from core.logs.reader import read_log
    >>> csv = b"epoch,step,loss,acc\\n1,1,2.0,0.1\\n1,2,1.0,0.3\\n2,1,0.8,0.5\\n2,2,0.6,0.7\\n"
    >>> epoch_summary(read_log(csv, "r.csv"))[["epoch", "step", "loss", "acc"]].to_numpy().tolist()
    [[1.0, 2.0, 1.5, 0.3], [2.0, 4.0, 0.7, 0.7]]
    """
    memo = log.__dict__.setdefault("_memo", {})
    if "epoch_summary" not in memo:
        memo["epoch_summary"] = _epoch_summary(log)
    return memo["epoch_summary"]


def _epoch_summary(log: RunLog) -> pd.DataFrame:
    frame = log.frame.dropna(subset=["epoch"])
    if frame.empty:
        return pd.DataFrame(columns=["epoch", "step", "loss", "acc"])
    g = frame.groupby("epoch", sort=True)
    out = pd.DataFrame({"step": g["global_step"].max(), "loss": g["loss"].mean(),
                        "acc": g["acc"].last()}).reset_index()
    out["epoch"] = out["epoch"].astype(float)
    return out


def thin_indices(n: int, max_points: int = 3000) -> np.ndarray:
    """At most ``max_points`` indices of ``range(n)`` spread evenly in log-index space.

    Keeps every early point (where the curve bends) and thins the long tail, always
    keeping the first and last.

    >>> thin_indices(5, 10).tolist()
    [0, 1, 2, 3, 4]
    >>> idx = thin_indices(100_000, 500); (len(idx) <= 500, int(idx[0]), int(idx[-1]))
    (True, 0, 99999)
    """
    if n <= max_points:
        return np.arange(n)
    idx = np.unique(np.round(np.geomspace(1, n, max_points)).astype(int) - 1)
    return idx
