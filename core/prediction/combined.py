"""Prior, extrapolation and posterior of one backtest case, and the priors of a set of logs.

``core.prediction.backtest`` scores the extrapolation of the first epochs; with priors
(``backtest_logs(..., priors=...)``) each row also gets the prior, the posterior and their
errors (``PRIOR_COLUMNS``), so the three can be compared at every observed fraction.  The
posterior's ``"backtest"`` method learns its two variances here, from the *other* runs'
cases at the same observed fraction (leave-one-run-out).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from core.defaults import DEFAULT_LEVEL
from core.errors import InputError
from core.logs import RunLog
from core.prediction.posterior import (
    Posterior,
    backtest_variances,
    combine,
    combine_correlated,
    extrapolation_belief,
    log_errors,
    prior_belief,
)
from core.prediction.posterior_calibrated import OtherCase, combine_calibrated
from core.prediction.prior import Prior
from core.prediction.run_prior import prior_for_run
from core.prediction.target_prediction import TargetPrediction
from core.runs import run_key
from core.targets import Target, target_for

#: the columns ``backtest_logs`` adds when it is given priors
PRIOR_COLUMNS: tuple[str, ...] = (
    "prior_epoch", "prior_low", "prior_high", "prior_error_pct", "prior_covered",
    "posterior_epoch", "posterior_low", "posterior_high", "posterior_error_pct", "posterior_covered",
    "posterior_method", "prior_source", "schedule", "flags",
)


def priors_for_logs(logs: Sequence[RunLog], *, extra: Sequence[RunLog] = (), fits: pd.DataFrame | None = None,
                    target: Target | None = None, level: float = DEFAULT_LEVEL,
                    datasets_by_file: dict[str, str] | None = None) -> dict[str, Prior]:
    """Each log's prior from the *other* logs (and ``extra`` logs, and a fits table): never its own.

    ``core.prediction.run_prior.prior_for_run``: other batch sizes of the same job when at least two
    reached the target, else a calibration over the other architectures. Each log's target is
    ``target_for(log, target)``.
    """
    pool = list(logs) + [e for e in extra if e.source not in {lg.source for lg in logs}]
    return {log.source: prior_for_run(log, pool, target=target_for(log, target), level=level, fits=fits,
                                      datasets_by_file=datasets_by_file) for log in logs}


def priors_without_each_run(logs: Sequence[RunLog], others: Sequence[RunLog], *,
                            target: Target | None = None, level: float = DEFAULT_LEVEL,
                            datasets_by_file: dict[str, str] | None = None) -> dict[tuple, dict[str, Prior]]:
    """``{run key K: {file: prior}}``: each of ``logs``' prior from ``others`` without run ``K``'s files
    (nor its own), for every run ``K`` among ``logs``.

    What the posteriors that learn from other runs' cases (``"backtest"``, ``"correlated"``,
    ``"calibrated"``) give those cases when ``K`` is predicted: a prior that never saw ``K``, as
    ``predict`` gives them (``core.prediction.forecast.cases_from_other_runs``: logs only, no fits
    table).  ``backtest_logs(..., priors_without=...)`` uses it.  One prior per pair of runs.
    """
    keys = dict.fromkeys(run_key(log) for log in logs)
    return {key: {log.source: prior_for_run(log, [o for o in others if run_key(o) != key],
                                            target=target_for(log, target),
                                            level=level, datasets_by_file=datasets_by_file)
                  for log in logs if run_key(log) != key}
            for key in keys}


def whole(c: float) -> float:
    """The whole epoch containing the continuous epoch ``c`` (``ceil``; NaN and inf kept).

    >>> whole(12.0), whole(12.3), whole(math.inf)
    (12.0, 13.0, inf)
    """
    return float(math.ceil(c - 1e-9)) if math.isfinite(c) else c


def log_error(actual: int | None, epoch: float | None) -> float:
    """``ln((actual − 1/2)/(epoch − 1/2))`` of whole epochs (NaN when either is missing)."""
    if actual is None or epoch is None or not math.isfinite(epoch) or epoch <= 0.5:
        return math.nan
    return math.log((actual - 0.5) / (epoch - 0.5))


def prior_cells(prior: Prior | None, actual: int | None, scored: bool) -> dict:
    cells = {"prior_epoch": None, "prior_low": None, "prior_high": None, "prior_error_pct": None,
             "prior_covered": None, "prior_source": None}
    if prior is None:
        return cells
    cells["prior_source"] = prior.source if prior.available else f"none: {prior.description}"
    if not prior.available:
        return cells
    lo, hi = prior.interval()
    e = whole(prior.epoch)
    cells.update(prior_epoch=e, prior_low=whole(lo) if lo > 0 else 1.0, prior_high=whole(hi))
    if scored:
        cells["prior_error_pct"] = 100.0 * (e - actual) / actual
        cells["prior_covered"] = bool(cells["prior_low"] <= actual <= cells["prior_high"])
    return cells


def posterior_cells(post: Posterior | None, actual: int | None, scored: bool) -> dict:
    cells = {"posterior_epoch": None, "posterior_low": None, "posterior_high": None, "posterior_error_pct": None,
             "posterior_covered": None, "posterior_method": None}
    if post is None:
        return cells
    cells["posterior_method"] = post.method
    if not post.available:
        return cells
    cells.update(posterior_epoch=post.epoch, posterior_low=post.epoch_low, posterior_high=post.epoch_high)
    if scored:
        cells["posterior_error_pct"] = 100.0 * (post.epoch - actual) / actual
        cells["posterior_covered"] = bool(post.epoch_low <= actual <= post.epoch_high)
    return cells


def posterior_of(prior: Prior | None, prediction: TargetPrediction | None, n: int, *, level: float,
                 method: str, variances: tuple[float, float] | None = None,
                 errors: Sequence[tuple[float, float]] | None = None,
                 others: Sequence[OtherCase] | None = None) -> Posterior:
    """The posterior of one case (the extrapolation is the accuracy route's); ``"correlated"`` learns
    from ``errors`` (the other runs' :func:`~core.prediction.posterior.log_errors`), ``"calibrated"``
    from ``others`` (the other runs' :data:`~core.prediction.posterior_calibrated.OtherCase`)."""
    if method == "correlated":
        return combine_correlated(prior, prediction, n_epochs_observed=n, level=level, errors=errors or ())
    if method == "calibrated":
        return combine_calibrated(prior, prediction, n_epochs_observed=n, level=level, others=others or ())
    return combine(prior, prediction, n_epochs_observed=n, level=level, method=method, variances=variances)


def leave_one_run_out_errors(keys: Sequence, fractions: Sequence[float], actuals: Sequence[int | None],
                             scored: Sequence[bool], priors: Sequence[Prior | None],
                             predictions: Sequence[TargetPrediction | None]) -> list[list[tuple[float, float]]]:
    """Per case: the ``(prior, extrapolation)`` log errors of the scored cases of the *other* runs
    (another key) at the same observed fraction (NaN where a source had no answer)."""
    errs = [log_errors(a, p, x) if s and a is not None else (math.nan, math.nan)
            for a, s, p, x in zip(actuals, scored, priors, predictions)]
    return [[errs[j] for j in range(len(keys)) if keys[j] != k and fractions[j] == f and scored[j]]
            for k, f in zip(keys, fractions)]


def other_case(actual: int | None, prior: Prior | None, prediction: TargetPrediction | None) -> OtherCase:
    """``(actual, μp, σp, μx, σx)`` of one finished case (:data:`~core.prediction.posterior_calibrated.OtherCase`)."""
    mu_x, sd_x, _ = extrapolation_belief(prediction)
    return (float(actual), *prior_belief(prior), mu_x, sd_x)


def leave_one_run_out_cases(keys: Sequence, fractions: Sequence[float], actuals: Sequence[int | None],
                            scored: Sequence[bool], priors: Sequence[Prior | None],
                            predictions: Sequence[TargetPrediction | None]) -> list[list[OtherCase]]:
    """Per case: the :func:`other_case` of every scored case of the *other* runs (another key) at the
    same observed fraction (what ``"calibrated"`` learns from; never the case's own run).

    >>> from core.prediction.prior import Prior
    >>> p = Prior(10.0, 0.1, "given", "a prior")
    >>> out = leave_one_run_out_cases(["a", "a", "b"], [0.5, 0.5, 0.5], [12, 12, 20], [True, True, True],
    ...                               [p, p, p], [None, None, None])
    >>> [[c[0] for c in cs] for cs in out]          # run a sees only b's epoch; b sees a's two logs
    [[20.0], [20.0], [12.0, 12.0]]
    """
    cases = [other_case(a, p, x) if s and a is not None else None
             for a, s, p, x in zip(actuals, scored, priors, predictions)]
    return [[cases[j] for j in range(len(keys)) if keys[j] != k and fractions[j] == f and cases[j] is not None]
            for k, f in zip(keys, fractions)]


def variances_of_cases(cases: Sequence[OtherCase]) -> tuple[float, float]:
    """``(σp, σx)`` of the ``"backtest"`` posterior from other runs' cases (:func:`other_case`): the root
    mean squared log errors of each source (``backtest_variances``); what ``predict`` and ``backtest``
    (:func:`leave_one_run_out_variances`) both use.

    Truth epoch 21; a prior of median 20.5 (continuous: ln(20.5/20.0)) and an extrapolation of whole
    epoch 20 (ln(20.5/19.5)):

    >>> import math
    >>> case = (21.0, math.log(20.5), 0.2, math.log(19.5), 0.1)
    >>> [round(v, 6) for v in variances_of_cases([case] * 3)]
    [0.024693, 0.05001]
    """
    err_p = [log_error(int(a), math.exp(mu_p)) if math.isfinite(mu_p) else math.nan for a, mu_p, _, _, _ in cases]
    err_x = [math.log(a - 0.5) - mu_x if math.isfinite(mu_x) and math.isfinite(sd_x) else math.nan
             for a, _, _, mu_x, sd_x in cases]
    return backtest_variances(err_p, err_x)


def leave_one_run_out_variances(keys: Sequence, fractions: Sequence[float], actuals: Sequence[int | None],
                                scored: Sequence[bool], priors: Sequence[Prior | None],
                                predictions: Sequence[TargetPrediction | None]) -> list[tuple[float, float]]:
    """Per case: :func:`variances_of_cases` over the scored cases of the *other* runs (another key) at the
    same observed fraction (:func:`leave_one_run_out_cases`)."""
    return [variances_of_cases(cases)
            for cases in leave_one_run_out_cases(keys, fractions, actuals, scored, priors, predictions)]


def check_priors(priors, logs: Sequence[RunLog]) -> Mapping[str, Prior] | None:
    """``priors`` as a mapping from each log's source to its prior (missing logs get none)."""
    if priors is None:
        return None
    if not isinstance(priors, Mapping):
        raise InputError(f"priors: expected a mapping from file to Prior; got {type(priors).__name__}.")
    return {lg.source: priors.get(lg.source) for lg in logs}


def summary_of(table: pd.DataFrame) -> pd.DataFrame:
    """Per observed fraction: median |error| and coverage of the prior, the extrapolation and the posterior.

    The extrapolation's row counts the refused and unfitted cases apart (``n_flagged``): they have no
    error; the prior and the posterior always answer when a prior exists.
    """
    rows = []
    for f, g in table[table["status"] == "scored"].groupby("observed_fraction", sort=True):
        for what, err, cov in (("prior", "prior_error_pct", "prior_covered"),
                               ("extrapolation", "error_pct", "covered"),
                               ("posterior", "posterior_error_pct", "posterior_covered")):
            e = pd.to_numeric(g[err], errors="coerce")
            c = g[cov].dropna().astype(bool)
            rows.append({"observed_fraction": float(f), "prediction": what, "n_scored": len(g),
                         "n_answered": int(e.notna().sum()), "n_flagged": int(e.isna().sum()),
                         "median_abs_error_pct": float(np.median(np.abs(e.dropna()))) if e.notna().any() else math.nan,
                         "coverage": float(c.mean()) if len(c) else math.nan})
    return pd.DataFrame(rows, columns=["observed_fraction", "prediction", "n_scored", "n_answered", "n_flagged",
                                       "median_abs_error_pct", "coverage"])
