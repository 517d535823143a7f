"""Backtests: predict the epoch at target from the first part of finished logs, and score it.

Definitions (``docs/prediction.md`` has the long version)
---------------------------------------------------------
* **Observed part.** For a log of ``E`` epochs and an observed fraction ``f``, the first
  ``n = floor(f·E)`` epochs (at least 1).  The prediction is made by ``core.prediction.predict.predict_epoch_at_target``
  on ``first_epochs(log, n)``: the rest of the log is cut away before anything is fitted, so it cannot leak
  into the prediction, the family choice or the interval.
* **Actual epoch.** Where the whole log passed the target (``core.runs.targets``, epoch-level criterion).
* **Row status.** ``"scored"``: the target was reached in the unseen epochs; only these rows have
  ``error_pct`` and ``covered`` and enter the error and coverage statistics.  ``"observed"``: the target
  was already passed in the observed epochs (nothing to predict; excluded).  ``"never"``: the whole log
  never passes the target; reported apart, with ``beyond_log`` saying whether the prediction put the
  target after the log's end (or never).  ``"too short"``: fewer than 2 epochs in the log; ``"no epochs"``:
  epochs are unknown (give steps per epoch); ``"no accuracy"``: no accuracy column, no target.
* **Error.** ``error_pct = 100·(epoch_pred − epoch_actual)/epoch_actual`` (``inf`` when the prediction is
  "never"); ``covered``: ``epoch_low <= epoch_actual <= epoch_high``.
* **Routes.** The contract columns are the accuracy route (the accuracy curve fitted and
  inverted directly); the ``*_via_loss`` columns are the loss route (loss fitted, inverted
  at a threshold ``L``).  ``L`` comes from the observed epochs of the same run
  (``loss_threshold="observed"``, the default) or from other runs (``"runs"``: the median
  loss at target of the other runs that reached it; never the run's own).
* **Target.** ``target`` (absolute, an accuracy ``acc>=A``) or ``target_rel`` (a fraction of the log's final
  accuracy: the *definition* of the target then reads the end of the log, the prediction
  does not; rows say which in ``target_definition``).
* **Calibration of the interval.** ``calibration="self"``: each run's interval comes from
  the backtest inside its own observed epochs (inflation 1).  ``"runs"``: the inflation of
  a run's interval is learned from the *other* runs of the same backtest (leave-one-run-out,
  a run being the train and val logs of one model/device/batch): for each scored case of
  another run at the same observed fraction and route, the smallest factor of
  ``INFLATION_GRID`` that would have covered it; the ``level`` quantile of those is used
  (``self`` when fewer than ``MIN_CALIBRATION_CASES`` such cases exist).

``core.prediction.tables`` condenses the tables (per-fraction summary, family scores).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from core.errors import InputError
from core.logs import RunLog
from core.prediction.backtest_table import BacktestCase, cases_table
from core.prediction.combined import (
    check_priors,
    leave_one_run_out_cases,
    leave_one_run_out_errors,
    leave_one_run_out_variances,
    posterior_of,
)
from core.prediction.intervals import DEFAULT_LEVEL, FitCache
from core.prediction.log_series import first_epochs, n_epochs
from core.prediction.predict import check_family, predict_epoch_at_target, widen
from core.prediction.schedule import Schedule, check_schedule, resolve_schedule
from core.prediction.target_prediction import TargetPrediction
from core.runs import epoch_summary, find_target_crossing, run_key
from core.targets import ACCURACY_METRIC, DEFAULT_TARGET, Target, require_accuracy, target_for
from core.validation import check_option, check_scalar

DEFAULT_FRACTIONS: tuple[float, ...] = (0.3, 0.5, 0.7)
#: where a backtest's interval width is learned: the other runs (leave-one-run-out) or each run's own epochs
INTERVAL_CALIBRATIONS: tuple[str, ...] = ("runs", "self")
#: where the loss route's loss at target comes from: the observed epochs, or the other runs' median
LOSS_THRESHOLDS: tuple[str, ...] = ("observed", "runs")
#: inflation factors tried when learning the interval's width from other runs
INFLATION_GRID = np.round(np.geomspace(0.5, 16.0, 31), 4)
MIN_CALIBRATION_CASES = 3


# --------------------------------------------------------------------------- small pieces
def observed_epochs(total_epochs: int, fraction: float) -> int:
    """``floor(fraction·total_epochs)``, at least 1.

    >>> observed_epochs(24, 0.5), observed_epochs(24, 0.3), observed_epochs(3, 0.1)
    (12, 7, 1)
    """
    return max(1, int(math.floor(fraction * total_epochs + 1e-9)))


def check_fractions(fractions: Iterable[float]) -> tuple[float, ...]:
    out = tuple(float(f) for f in fractions)
    if not out or any(not 0 < f < 1 for f in out):
        raise InputError(f"fractions: expected observed fractions in (0, 1); got {list(out)!r}.")
    return out


def final_accuracy(log: RunLog) -> float:
    """The accuracy of the log's last epoch (NaN without accuracy)."""
    table = epoch_summary(log).dropna(subset=["acc"])
    return float(table["acc"].iloc[-1]) if len(table) else math.nan


def relative_target(log: RunLog, rel: float) -> tuple[Target, str]:
    """The target ``acc >= rel × final accuracy`` of ``log`` and how it was defined (``--target-rel``); it
    reads the end of the log to *define* the target only, the prediction never reads it.

    >>> from core.logs.reader import read_log
    >>> log = read_log(b"epoch,step,loss,acc\\n1,1,2.0,0.5\\n2,2,1.0,0.8\\n", "r.csv")
    >>> t, how = relative_target(log, 0.9); t.spec, how
    ('acc>=0.72', '0.9 × final accuracy 0.8')
    """
    rel = check_scalar(rel, "target_rel", float, min_val=0, max_val=1, include_boundaries="neither")
    final = final_accuracy(log)
    if not math.isfinite(final):
        raise InputError(f"{log.source}: expected an accuracy column to define a target relative to the "
                         "final accuracy; the log has none. Give an absolute target (--target acc>=A) instead.")
    return Target(ACCURACY_METRIC, ">=", rel * final), f"{rel:g} × final accuracy {final:.4g}"


def target_of_case(log: RunLog, target: Target, target_rel: float | None) -> tuple[Target, str]:
    """(the target of ``log``'s backtest, how it was defined): ``target_rel`` of its final accuracy when given
    (:func:`relative_target`), else ``target_for(log, target)`` (an accuracy: the epoch route's)."""
    if target_rel is not None:
        return relative_target(log, target_rel)
    target = target_for(log, target)
    require_accuracy(target, "the backtest of the epoch at target")
    return target, "absolute"


def _cases(log: RunLog, *, fractions, target, target_rel, family, routes, loss_threshold,
           level, correct, cache, schedule=None) -> list[BacktestCase]:
    target, definition = target_of_case(log, target, target_rel)
    crossing = find_target_crossing(log, target)
    actual = crossing.epoch if crossing.reached else None
    total = n_epochs(log)
    out = []
    for f in fractions:
        n = observed_epochs(total, f)
        if total < 2 or not log.has_acc:
            status = "no accuracy" if not log.has_acc else ("no epochs" if total == 0 else "too short")
            out.append(BacktestCase(log, f, total, n, target, definition, actual, status, {}, family))
            continue
        status = "never" if actual is None else ("observed" if actual <= n else "scored")
        preds, sched = {}, None
        if status != "observed":
            observed = first_epochs(log, n)
            # "auto": what the observed epochs show (an lr column, else a jump in the curve), never the rest
            sched = resolve_schedule(observed) if schedule == "auto" else check_schedule(schedule)
            for route in routes:
                preds[route] = predict_epoch_at_target(
                    observed, target=target, family=family, route=route,
                    loss_threshold=loss_threshold if route == "loss" else None, level=level,
                    correct=correct, cache=cache, schedule=sched)
        out.append(BacktestCase(log, f, total, n, target, definition, actual, status, preds, family, sched))
    return out


def backtest_run(log: RunLog, *, fractions: Iterable[float] = DEFAULT_FRACTIONS,
                 target: Target | None = None, target_rel: float | None = None,
                 family: str = "auto", loss_threshold: float | None = None,
                 level: float = DEFAULT_LEVEL, correct: bool = True,
                 cache: FitCache | None = None) -> pd.DataFrame:
    """Backtest one log: a row per observed fraction (columns ``BACKTEST_COLUMNS + EXTRA_COLUMNS``).

    The interval is calibrated on the run's own observed epochs (``calibration="self"`` of
    ``backtest_logs``); see the module docstring for every definition.

    Examples
    --------
    >>> from core.logs.reader import read_log
    >>> rows = "".join(f"{e},{e},{1 / e:.6f},{1 - 0.8 * 0.5 ** (e / 4):.6f}\\n" for e in range(1, 25))
    >>> log = read_log(("epoch,step,loss,acc\\n" + rows).encode(), "run.csv")
    >>> from core.targets import accuracy_target
    >>> t = backtest_run(log, fractions=[0.3, 0.5, 0.7], target=accuracy_target(0.92), family="exp3")
    >>> t[["observed_fraction", "status", "epoch_pred", "epoch_actual"]].values.tolist()
    [[0.3, 'scored', 14.0, 14], [0.5, 'scored', 14.0, 14], [0.7, 'observed', nan, 14]]
    """
    cases = _cases(log, fractions=check_fractions(fractions), target=target,
                   target_rel=target_rel, family=check_family(family), routes=("accuracy", "loss"),
                   loss_threshold=loss_threshold, level=level, correct=correct,
                   cache=cache or FitCache())
    return cases_table(cases)


# --------------------------------------------------------------------------- many runs
def backtest_logs(logs: Sequence[RunLog], *, fractions: Iterable[float] = DEFAULT_FRACTIONS,
                  target: Target | None = None, target_rel: float | None = None,
                  family: str = "auto", calibration: str = "runs", loss_threshold: str = "observed",
                  level: float = DEFAULT_LEVEL, correct: bool = True,
                  cache: FitCache | None = None, schedule: Schedule | str | None = None,
                  priors=None, posterior_method: str = "precision", priors_without=None) -> pd.DataFrame:
    """Backtest several logs: a row per log and observed fraction.

    Parameters
    ----------
    logs : sequence of RunLog
    fractions : iterable of float, default (0.3, 0.5, 0.7)
    target : Target, optional
        An accuracy that climbs (``acc>=A``): the epoch route's; None: each log's own (``target_for``).
    target_rel : float, optional
        A fraction of each log's final accuracy instead of ``target`` (:func:`relative_target`).
    family : str, default "auto"
    calibration : {"runs", "self"}, default "runs"
        Where the interval's inflation comes from (module docstring).
    loss_threshold : {"observed", "runs"}, default "observed"
        Where the loss route's ``L`` comes from (module docstring).
    level : float, default 0.8
    correct : bool, default True
        Drift-correct the predictions (``core.prediction.intervals``).
    cache : FitCache, optional
        Share fits between calls (the same logs backtested with other options).
    schedule : Schedule, str or None
        The learning-rate schedule of every log (declared, e.g. ``"step:30,60"``), ``"auto"``
        (each log's observed epochs: its ``lr`` column, else a jump in its curve) or None.
    priors : mapping of file to Prior, optional
        Each log's prior (``core.prediction.combined.priors_for_logs``: from the *other*
        logs); the rows then also hold the prior, the posterior and their errors
        (``PRIOR_COLUMNS``).
    posterior_method : {"precision", "backtest", "correlated"}, default "precision"
        How the posterior weighs them (``core.prediction.posterior``); ``"backtest"`` learns the
        two variances from the other runs' cases at the same fraction, ``"correlated"`` the
        weight (their errors' correlation counted) and the split-conformal interval.
    priors_without : mapping, optional
        ``{run key K: {file: prior}}`` (``core.prediction.combined.priors_without_each_run``): the
        priors the learning methods give the other runs' cases when run ``K`` is predicted, so that
        nothing of ``K`` beyond its observed epochs reaches its row.  Without it those cases use
        ``priors`` (each from every other run, ``K`` included).

    Returns
    -------
    pandas.DataFrame
        Columns ``BACKTEST_COLUMNS + EXTRA_COLUMNS`` (``+ PRIOR_COLUMNS`` with priors).
    """
    priors = check_priors(priors, logs)
    if priors is not None and target_rel is not None:
        raise InputError("priors: expected an absolute target (acc>=A) to compare with other runs; got a "
                         "relative one. Drop target_rel or the priors.")
    cases = backtest_cases(logs, fractions=fractions, target=target, target_rel=target_rel, family=family,
                           calibration=calibration, loss_threshold=loss_threshold, level=level, correct=correct,
                           cache=cache, schedule=schedule)
    return table_with_posteriors(cases, priors, level=level, posterior_method=posterior_method,
                                 priors_without=priors_without)


def table_with_posteriors(cases: list[BacktestCase], priors=None, *, level: float = DEFAULT_LEVEL,
                          posterior_method: str = "precision", priors_without=None) -> pd.DataFrame:
    """The table of :func:`backtest_cases`' cases, each with its prior and posterior when ``priors`` are given.

    The cases (the extrapolations) do not depend on the posterior's method: a benchmark computes them
    once and tries every method here.  ``priors_without``: ``{run key K: {file: prior}}``, the other
    runs' priors that never saw run ``K`` (``_with_posteriors``).
    """
    if priors is not None:
        priors = {c.log.source: priors.get(c.log.source) for c in cases}
        cases = _with_posteriors(cases, priors, level=level, method=posterior_method, priors_without=priors_without)
    return cases_table(cases, with_priors=priors is not None)


def backtest_cases(logs: Sequence[RunLog], *, fractions: Iterable[float] = DEFAULT_FRACTIONS,
                   target: Target | None = None, target_rel: float | None = None,
                   family: str = "auto", calibration: str = "runs", loss_threshold: str = "observed",
                   level: float = DEFAULT_LEVEL, correct: bool = True,
                   cache: FitCache | None = None, schedule: Schedule | str | None = None) -> list[BacktestCase]:
    """The cases of :func:`backtest_logs` (same arguments) before any prior or posterior."""
    check_option(calibration, "calibration", INTERVAL_CALIBRATIONS)
    check_option(loss_threshold, "loss_threshold", LOSS_THRESHOLDS)
    fractions = check_fractions(fractions)
    family = check_family(family)
    schedule = schedule if schedule == "auto" else check_schedule(schedule)
    cache = cache if cache is not None else FitCache()
    thresholds = _thresholds_from_other_runs(logs, target, target_rel) if loss_threshold == "runs" \
        else [None] * len(logs)
    cases: list[BacktestCase] = []
    for log, threshold in zip(logs, thresholds):
        cases += _cases(log, fractions=fractions, target=target, target_rel=target_rel,
                        family=family, routes=("accuracy", "loss"), loss_threshold=threshold,
                        level=level, correct=correct, cache=cache, schedule=schedule)
    if calibration == "runs":
        cases = _calibrate_on_other_runs(cases, level)
    return cases


def _with_posteriors(cases: list[BacktestCase], priors, *, level: float, method: str,
                     priors_without=None) -> list[BacktestCase]:
    """Each case with its log's prior and the posterior of that prior and its extrapolation.

    ``priors_without``: ``{run key K: {file: prior}}``, each file's prior from the runs other than
    its own and ``K``; the methods that learn from other runs' cases then give those cases, when
    run ``K`` is predicted, priors that never saw ``K`` (as ``predict`` does).  Without it they
    use ``priors`` (each from every other run, ``K`` included).
    """
    chosen = [priors.get(c.log.source) for c in cases]
    keys = [run_key(c.log) for c in cases]
    learn = {"correlated": leave_one_run_out_errors, "backtest": leave_one_run_out_variances,
             "calibrated": leave_one_run_out_cases}.get(method)
    learned = [None] * len(cases)
    if learn is not None:
        args = ([c.fraction for c in cases], [c.actual for c in cases], [c.status == "scored" for c in cases])
        preds = [c.predictions.get("accuracy") for c in cases]
        if priors_without is None:
            learned = learn(keys, *args, chosen, preds)
        else:
            for key in dict.fromkeys(keys):
                without = priors_without.get(key, {})
                theirs = [chosen[j] if keys[j] == key else without.get(c.log.source) for j, c in enumerate(cases)]
                for j, v in enumerate(learn(keys, *args, theirs, preds)):
                    if keys[j] == key:
                        learned[j] = v
    out = []
    for c, prior, v in zip(cases, chosen, learned):
        post = None
        if c.status in ("scored", "never"):
            post = posterior_of(prior, c.predictions.get("accuracy"), c.n_observed, level=level, method=method,
                                variances=v if method == "backtest" else None,
                                errors=v if method == "correlated" else None,
                                others=v if method == "calibrated" else None)
        out.append(replace(c, prior=prior, posterior=post))
    return out


def _thresholds_from_other_runs(logs, target: Target | None, target_rel: float | None) -> list[float | None]:
    """Per log: the median loss at target over the *other* runs that reached it (NaN if none)."""
    keys = [run_key(log) for log in logs]
    losses = []
    for log in logs:
        crossing = find_target_crossing(log, target_of_case(log, target, target_rel)[0])
        losses.append(crossing.loss if crossing.reached and crossing.loss is not None else math.nan)
    out = []
    for i in range(len(logs)):
        others = [v for j, v in enumerate(losses) if keys[j] != keys[i] and math.isfinite(v)]
        out.append(float(np.median(others)) if others else math.nan)
    return out


def needed_inflation(prediction: TargetPrediction, actual: int) -> float:
    """The smallest factor of ``INFLATION_GRID`` whose interval contains ``actual`` (inf if none).

    NaN when the interval does not depend on the factor (no prediction, no inner checks).
    """
    if prediction.status != "predicted" or prediction.drift is None or not prediction.drift.usable:
        return math.nan
    for s in INFLATION_GRID:
        p = widen(prediction, float(s))
        if p.epoch_low <= actual <= p.epoch_high:
            return float(s)
    return math.inf


def _calibrate_on_other_runs(cases: list[BacktestCase], level: float) -> list[BacktestCase]:
    keys = [run_key(c.log) for c in cases]
    needed: dict[tuple[int, str], float] = {}
    for i, c in enumerate(cases):
        if c.status == "scored":
            for route, p in c.predictions.items():
                needed[(i, route)] = needed_inflation(p, c.actual)
    out = []
    for i, c in enumerate(cases):
        preds = dict(c.predictions)
        for route, p in c.predictions.items():
            pool = [v for (j, r), v in needed.items()
                    if r == route and keys[j] != keys[i] and cases[j].fraction == c.fraction
                    and not math.isnan(v)]
            if len(pool) >= MIN_CALIBRATION_CASES:
                s = float(np.quantile(np.array(pool), level, method="higher"))
                preds[route] = widen(p, s if math.isfinite(s) else float(INFLATION_GRID[-1]))
        out.append(replace(c, predictions=preds))
    return out


def inflation_from_other_runs(logs: Sequence[RunLog], log: RunLog, *, n_epochs_seen: int,
                              target: Target = DEFAULT_TARGET, family: str = "auto",
                              route: str = "accuracy", level: float = DEFAULT_LEVEL,
                              cache: FitCache | None = None, schedule=None) -> tuple[float | None, int]:
    """The interval inflation that ``log``'s prediction after ``n_epochs_seen`` epochs should get,
    learned from the *other* runs of ``logs`` at the same observed fraction (leave-one-run-out).

    Each other run (a different ``run_key``: its own val log is not another run) is cut at
    the same fraction of its epochs and predicted; where the rest of it shows the target, the
    smallest factor of ``INFLATION_GRID`` that would have covered it is noted.  Returns the
    ``level`` quantile of those factors and how many cases it used; ``(None, n)`` when fewer
    than ``MIN_CALIBRATION_CASES`` exist (the caller then keeps the run's own interval).
    A ``schedule`` (declared for ``log``) applies to the other runs of the same model.
    """
    require_accuracy(target, "the interval learned from other runs")
    fraction = n_epochs_seen / max(n_epochs(log), 1)
    cache = cache if cache is not None else FitCache()
    pool = []
    for other in logs:
        if run_key(other) == run_key(log):
            continue
        crossing = find_target_crossing(other, target)
        total = n_epochs(other)
        seen = observed_epochs(total, fraction)
        if not crossing.reached or crossing.epoch is None or crossing.epoch <= seen or seen >= total:
            continue
        same = schedule if schedule is not None and other.meta.model == log.meta.model else None
        p = predict_epoch_at_target(first_epochs(other, seen), target=target, family=family, route=route,
                                    level=level, cache=cache, schedule=same)
        need = needed_inflation(p, int(crossing.epoch))
        if not math.isnan(need):
            pool.append(need)
    if len(pool) < MIN_CALIBRATION_CASES:
        return None, len(pool)
    s = float(np.quantile(np.array(pool), level, method="higher"))
    return (s if math.isfinite(s) else float(INFLATION_GRID[-1])), len(pool)
