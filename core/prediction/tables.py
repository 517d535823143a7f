"""Tables made from backtests: the per-fraction summary, each family's score, the convergence of a prediction.

``backtest_summary`` and ``summary_line`` condense a table of ``core.prediction.backtest``;
``family_scores`` and ``convergence_of_prediction`` are what the Logs page's family
selector and "predicted epoch against epochs seen" chart show.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from core.curves import auto_families
from core.errors import InputError
from core.logs import RunLog
from core.prediction.backtest import backtest_logs
from core.prediction.forecast import forecast_epoch_at_target
from core.prediction.intervals import DEFAULT_LEVEL, FitCache
from core.prediction.log_series import first_epochs, n_epochs
from core.prediction.posterior import combine
from core.prediction.predict import predict_epoch_at_target
from core.prediction.prior import Prior
from core.prediction.schedule import Schedule, check_schedule, resolve_schedule
from core.prediction.target_prediction import TargetPrediction
from core.runs import find_target_crossing
from core.targets import DEFAULT_TARGET, Target, require_accuracy

_SUFFIX = {"accuracy": "", "loss": "_via_loss"}


def backtest_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per observed fraction: counts, median |error| (%) and coverage, for both routes.

    Only ``"scored"`` rows enter the error and coverage; ``never_beyond_log`` counts the
    never-reached runs whose prediction put the target after the log's end.

    >>> t = pd.DataFrame({"observed_fraction": [0.5] * 4, "status": ["scored", "scored", "observed", "never"],
    ...                   "error_pct": [10.0, -30.0, None, None], "covered": [True, False, None, None],
    ...                   "beyond_log": [None, None, None, True],
    ...                   "error_pct_via_loss": [5.0, 15.0, None, None], "covered_via_loss": [True, True, None, None]})
    >>> s = backtest_summary(t).iloc[0]
    >>> int(s.n_scored), float(s.median_abs_error_pct), float(s.coverage), float(s.coverage_via_loss)  # |10|, |-30|
    (2, 20.0, 0.5, 1.0)
    """
    rows = []
    for f, g in table.groupby("observed_fraction", sort=True):
        scored = g[g["status"] == "scored"]
        never = g[g["status"] == "never"]
        row = {"observed_fraction": float(f), "n_rows": len(g), "n_scored": len(scored),
               "n_observed": int((g["status"] == "observed").sum()), "n_never": len(never),
               "never_beyond_log": int(never["beyond_log"].fillna(False).astype(bool).sum())}
        for sfx in ("", "_via_loss"):
            err = pd.to_numeric(scored[f"error_pct{sfx}"], errors="coerce").dropna()
            cov = scored[f"covered{sfx}"].dropna().astype(bool)
            row[f"n_predicted{sfx}"] = len(err)
            row[f"median_abs_error_pct{sfx}"] = float(np.median(np.abs(err))) if len(err) else math.nan
            row[f"coverage{sfx}"] = float(cov.mean()) if len(cov) else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def summary_line(summary: pd.DataFrame, *, family: str, level: float = DEFAULT_LEVEL) -> str:
    """One line: per fraction, the median |error| and the coverage of both routes."""
    def pct(v):
        return "n/a" if math.isnan(v) else ("inf (most predictions say never)" if math.isinf(v) else f"{v:.1f} %")

    def cov(v):
        return "n/a" if not math.isfinite(v) else f"{100 * v:.0f} %"

    parts = []
    for r in summary.itertuples():
        parts.append(f"f={r.observed_fraction:g}: median |error| {pct(r.median_abs_error_pct)}, "
                     f"{level:.0%} coverage {cov(r.coverage)} ({r.n_scored} scored, {r.n_observed} "
                     f"observed, {r.n_never} never); via loss {pct(r.median_abs_error_pct_via_loss)}, "
                     f"{cov(r.coverage_via_loss)} ({r.n_predicted_via_loss} predicted)")
    return f"summary [family {family}]: " + "; ".join(parts)


# --------------------------------------------------------------------------- for the pages
def family_scores(logs: RunLog | Sequence[RunLog], *, fractions: Iterable[float] = (0.5,),
                  target: Target = DEFAULT_TARGET, target_rel: float | None = None,
                  route: str = "accuracy", calibration: str = "self", cache: FitCache | None = None) -> pd.DataFrame:
    """Each family's backtest error and coverage over ``logs`` (for a family selector).

    One row per family of ``core.curves.auto_families()`` and for ``"auto"``: ``n_scored``,
    ``median_abs_error_pct``, ``coverage``, over the scored rows of all ``fractions``.
    """
    logs = [logs] if isinstance(logs, RunLog) else list(logs)
    sfx = _SUFFIX.get(route)
    if sfx is None:
        raise InputError(f"route: expected 'accuracy' or 'loss'; got {route!r}.")
    rows = []
    cache = cache if cache is not None else FitCache()  # "auto" reuses every family's fits
    for family in (*auto_families(), "auto"):
        table = backtest_logs(logs, fractions=fractions, target=target, target_rel=target_rel,
                              family=family, calibration=calibration, cache=cache)
        scored = table[table["status"] == "scored"]
        err = pd.to_numeric(scored[f"error_pct{sfx}"], errors="coerce").dropna()
        cov = scored[f"covered{sfx}"].dropna().astype(bool)
        rows.append({"family": family, "route": route, "n_scored": len(err),
                     "median_abs_error_pct": float(np.median(np.abs(err))) if len(err) else math.nan,
                     "coverage": float(cov.mean()) if len(cov) else math.nan})
    return pd.DataFrame(rows)


def convergence_of_prediction(log: RunLog, *, target: Target = DEFAULT_TARGET,
                              family: str = "auto", route: str = "accuracy", min_epochs: int = 2,
                              level: float = DEFAULT_LEVEL, cache: FitCache | None = None,
                              prior: Prior | None = None, schedule: Schedule | str | None = None) -> pd.DataFrame:
    """The prediction made after each number of epochs seen (``min_epochs`` .. last but one).

    Once the epochs seen include the one where the whole log passes the target, every later row
    is that measured epoch (prediction, its interval and the posterior alike), as ``predict`` says.

    Columns: ``epochs_seen, family, status, epoch_pred, epoch_low, epoch_high, epoch_raw,
    epoch_actual`` (the last is the same on every row: what the whole log shows).  With a
    ``prior``, also ``prior_epoch, prior_low, prior_high`` (the same on every row: the prior
    does not read the run), ``posterior_epoch, posterior_low, posterior_high,
    posterior_method`` and ``schedule_change`` (the schedule's change epochs seen so far, one
    per row where it applies; ``schedule="auto"`` reads each cut's lr column or curve).
    """
    require_accuracy(target, "the convergence of the epoch prediction")
    crossing = find_target_crossing(log, target)
    actual = crossing.epoch if crossing.reached else None
    cache = cache if cache is not None else FitCache()
    rows = []
    for n in range(max(1, int(min_epochs)), n_epochs(log)):
        cut = first_epochs(log, n)
        sched = resolve_schedule(cut) if schedule == "auto" else check_schedule(schedule)
        p = predict_epoch_at_target(cut, target=target, family=family,
                                    route=route, level=level, cache=cache, schedule=sched)
        measured = float(actual) if actual is not None and actual <= n else None
        row = {"epochs_seen": n, "family": p.family, "status": p.status,
               "epoch_pred": p.epoch if p.status == "predicted"
               else (math.inf if p.status == "unreachable" else math.nan),
               "epoch_low": p.epoch_low, "epoch_high": p.epoch_high, "epoch_raw": p.epoch_raw,
               "epoch_actual": actual}
        if measured is not None:     # the target passed in the epochs seen: every later point is the measurement
            row.update(status="reached", epoch_pred=measured, epoch_low=measured, epoch_high=measured)
        if prior is not None:
            row.update(_posterior_columns(prior, p, n, level, sched, measured))
        rows.append(row)
    columns = ["epochs_seen", "family", "status", "epoch_pred", "epoch_low", "epoch_high", "epoch_raw",
               "epoch_actual"] + (list(_POSTERIOR_COLUMNS) if prior is not None else [])
    frame = pd.DataFrame(rows, columns=columns)
    numeric = ["epoch_pred", "epoch_low", "epoch_high", "epoch_raw"] + (
        [c for c in _POSTERIOR_COLUMNS if c not in ("posterior_method",)] if prior is not None else [])
    for col in numeric:
        frame[col] = pd.to_numeric(frame[col], errors="coerce").astype(float)
    frame["epoch_actual"] = pd.array(frame["epoch_actual"], dtype="Int64")
    return frame


_POSTERIOR_COLUMNS = ("prior_epoch", "prior_low", "prior_high", "posterior_epoch", "posterior_low", "posterior_high",
                      "posterior_method", "schedule_change")


def _posterior_columns(prior: Prior, p: TargetPrediction, n: int, level: float, sched: Schedule | None,
                       measured: float | None = None) -> dict:
    post = combine(prior, p, n_epochs_observed=n, level=level, measured_epoch=measured)
    lo, hi = prior.interval() if prior.available else (math.nan, math.nan)
    seen = [d for d in (sched.markers() if sched is not None else ()) if d < n]
    return {"prior_epoch": prior.epoch if prior.available else math.nan, "prior_low": lo, "prior_high": hi,
            "posterior_epoch": post.epoch, "posterior_low": post.epoch_low, "posterior_high": post.epoch_high,
            "posterior_method": post.method, "schedule_change": max(seen) if seen else math.nan}


def extrapolate_unreached(logs: Sequence[RunLog], *, model: str, split: str, target: Target = DEFAULT_TARGET,
                          family: str = "auto", route: str = "accuracy", cache: FitCache | None = None
                          ) -> pd.DataFrame:
    """Runs of ``model`` (``split``) whose logs end before the target, extrapolated by ``family``.

    Each such log is predicted from all its epochs, with the interval widened as learned from
    the other runs (:func:`core.prediction.forecast.forecast_epoch_at_target`).  Columns ``source, gpu,
    epoch, low, high, family`` (``high`` may be ``inf``: the run may never get there); runs
    the family cannot extrapolate are left out.
    """
    require_accuracy(target, "the extrapolation of runs short of the target")
    logs = list(logs)
    cache = cache if cache is not None else FitCache()
    rows = []
    for log in logs:
        if log.meta.model != model or log.meta.split != split or not log.has_acc:
            continue
        if find_target_crossing(log, target).reached or n_epochs(log) < 4:
            continue
        p = forecast_epoch_at_target(log, logs, target=target, family=family, route=route, cache=cache).prediction
        if p.status != "predicted":
            continue
        rows.append({"source": log.source, "gpu": log.meta.gpu, "epoch": p.epoch, "low": p.epoch_low,
                     "high": p.epoch_high, "family": p.family})
    return pd.DataFrame(rows, columns=["source", "gpu", "epoch", "low", "high", "family"])
