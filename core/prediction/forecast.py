"""The one call every page uses: the epoch at target predicted from the first epochs of a run,
its interval widened by what the other loaded runs teach, and combined with a prior.

``forecast_epoch_at_target`` cuts the run after ``n`` epochs, predicts from that cut alone
(``core.prediction.predict``, within the current phase of the learning-rate schedule when one
is known), learns how much to widen the interval from the *other* runs cut at the same
fraction (``core.prediction.backtest.inflation_from_other_runs``, leave-one-run-out) and
widens it.  With a prior (``core.prediction.prior``: other batch sizes of the same job, or a
calibration over the other architectures) it also returns the posterior
(``core.prediction.posterior``): prior, extrapolation and posterior side by side.  The Logs
page (predict from the first N epochs), the Plan page (a run that has not reached the target)
and the Calibrate page (held-out runs short of the target) all call it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from core.defaults import DEFAULT_LEVEL
from core.logs import RunLog
from core.prediction.backtest import inflation_from_other_runs, observed_epochs
from core.prediction.combined import other_case, variances_of_cases
from core.prediction.intervals import MIN_INNER_EPOCHS, FitCache
from core.prediction.log_series import first_epochs, n_epochs
from core.prediction.posterior import Posterior, combine, combine_correlated
from core.prediction.posterior_calibrated import OtherCase, combine_calibrated
from core.prediction.predict import predict_epoch_at_target, widen
from core.prediction.prior import Prior
from core.prediction.run_prior import prior_for_run
from core.prediction.schedule import Schedule, check_schedule, resolve_schedule
from core.prediction.target_prediction import TargetPrediction
from core.runs import find_target_crossing, run_key
from core.targets import DEFAULT_TARGET, Target, require_accuracy
from core.validation import check_option

#: the posterior method the pages use (``bench/posterior.py`` measured it against the alternatives)
DEFAULT_POSTERIOR_METHOD = "precision"
#: the fewest epochs a run needs before its first epochs can predict the rest: an inner fit on
#: ``MIN_INNER_EPOCHS`` epochs and one epoch after it to check the fit against
MIN_PREDICTION_EPOCHS = MIN_INNER_EPOCHS + 1


def can_forecast(log: RunLog) -> bool:
    """Whether ``log`` can be forecast from its first epochs: an accuracy column and at least
    ``MIN_PREDICTION_EPOCHS`` epochs."""
    return log.has_acc and n_epochs(log) >= MIN_PREDICTION_EPOCHS


#: the posterior methods :func:`forecast_epoch_at_target` can use
FORECAST_POSTERIOR_METHODS = ("precision", "backtest", "correlated", "calibrated")


@dataclass(frozen=True, eq=False)
class Forecast:
    """A prediction of the epoch at target with the widening learned from other runs.

    Attributes
    ----------
    prediction : TargetPrediction
        Already widened by ``inflation`` when there was one.
    inflation : float or None
        The factor learned from other runs (None: the run's own interval is kept).
    n_cases : int
        How many predictions of the other runs the factor was learned from.
    prior : Prior or None
        The prior used (None: none was asked for).
    posterior : Posterior or None
        The prior and the extrapolation combined (None without a prior).
    schedule : Schedule or None
        The learning-rate schedule the prediction used.
    """

    prediction: TargetPrediction
    inflation: float | None
    n_cases: int
    prior: Prior | None = None
    posterior: Posterior | None = None
    schedule: Schedule | None = None

    @property
    def interval_source(self) -> str:
        """Where the interval's width comes from, in one clause a page can show."""
        if self.inflation is not None:
            how = "widened" if self.inflation > 1 else "narrowed" if self.inflation < 1 else "kept"
            return (f"{how} ×{self.inflation:.2f}, learned from {self.n_cases} predictions of the other loaded "
                    "runs at the same observed fraction (leave-one-run-out)")
        return (f"from this run's own observed epochs only (only {self.n_cases} cases in other runs to "
                "calibrate on)")


def forecast_epoch_at_target(log: RunLog, others: Sequence[RunLog], *, n_epochs_seen: int | None = None,
                             target: Target = DEFAULT_TARGET, family: str = "auto",
                             route: str = "accuracy", level: float = DEFAULT_LEVEL,
                             cache: FitCache | None = None, prior: Prior | str | None = None,
                             schedule: Schedule | str | None = None,
                             datasets_by_file: dict[str, str] | None = None,
                             posterior_method: str = DEFAULT_POSTERIOR_METHOD) -> Forecast:
    """Predict where ``log`` passes ``target`` (an accuracy, ``acc>=A``) from its first ``n_epochs_seen`` epochs
    (all by default).

    Parameters
    ----------
    log : RunLog
        The run to predict; only its first ``n_epochs_seen`` epochs are read.
    others : sequence of RunLog
        The loaded runs to learn the widening from (``log`` and its own val/train twin may be
        among them: they are left out by run, never used).
    n_epochs_seen : int, optional
        Epochs to predict from; ``None`` uses the whole log (extrapolating a run that ended
        before the target).
    target, family, route, level
        As in :func:`core.prediction.predict.predict_epoch_at_target`.
    cache : FitCache, optional
        Shares fits between the prediction and the other runs' predictions.
    prior : Prior, "auto" or None
        A prior to combine with the extrapolation; ``"auto"``: ``prior_for_run(log, others)``
        (other batch sizes of the same job, else a calibration over the other architectures;
        ``datasets_by_file`` names what each file trained on); None: no posterior.
    schedule : Schedule, str or None
        The learning-rate schedule: declared (text such as ``"step:30,60"``); ``"auto"``: from
        an ``lr`` column of the observed epochs, else detected from them; None: none.  A
        declared schedule applies to the other runs of the same model too.
    posterior_method : {"precision", "backtest", "correlated", "calibrated"}
        ``"backtest"``: precision weighting with each source's variance from its log errors on the
        other finished runs cut at the same fraction (:func:`core.prediction.combined.variances_of_cases`);
        ``"correlated"``: the other finished runs, cut at the same fraction, each predicted
        and given a prior from the rest (leave-one-run-out, ``log`` left out too), teach the
        weight and the interval (:func:`core.prediction.posterior.combine_correlated`);
        ``"calibrated"``: the same cases choose the source and scale its interval
        (:func:`core.prediction.posterior_calibrated.combine_calibrated`).  These three are slower by
        one prior per other run.

    Examples
    --------
    >>> from core.logs import read_log
    >>> rows = "".join(f"{e},{e},{1 / e:.6f},{1 - 0.8 * 0.5 ** (e / 4):.6f}\\n" for e in range(1, 25))
    >>> log = read_log(("epoch,step,loss,acc\\n" + rows).encode(), "run.csv")
    >>> from core.targets import accuracy_target
    >>> f = forecast_epoch_at_target(log, [log], n_epochs_seen=10, target=accuracy_target(0.92),
    ...                              family="exp3")
    >>> f.prediction.epoch, f.inflation     # error 0.8·2^(−e/4) <= 0.08 at e = 13.3: epoch 14
    (14.0, None)
    """
    require_accuracy(target, "the forecast of the epoch at target")
    cache = cache if cache is not None else FitCache()
    total = n_epochs(log)
    n = total if n_epochs_seen is None else int(n_epochs_seen)
    observed = log if n >= total else first_epochs(log, n)
    sched = resolve_schedule(observed) if schedule == "auto" else check_schedule(schedule)
    p = predict_epoch_at_target(observed, target=target, family=family, route=route, level=level,
                                cache=cache, schedule=sched)
    declared = sched if schedule not in (None, "auto") else None
    inflation, n_cases = inflation_from_other_runs(list(others), log, n_epochs_seen=n, target=target,
                                                   family=family, route=route, level=level, cache=cache,
                                                   schedule=declared)
    if inflation is not None and p.status == "predicted":
        p = widen(p, inflation)
    if prior is None:
        return Forecast(p, inflation, n_cases, schedule=sched)
    if isinstance(prior, str):
        prior = prior_for_run(log, others, target=target, level=level, datasets_by_file=datasets_by_file)
    measured = None
    if p.status == "reached":
        c = find_target_crossing(observed, target)
        measured = float(c.epoch) if c.reached and c.epoch is not None else None
    check_option(posterior_method, "posterior_method", FORECAST_POSTERIOR_METHODS)
    if posterior_method in ("backtest", "correlated", "calibrated") and measured is None:
        cases = cases_from_other_runs(log, others, n_epochs_seen=n, target=target, family=family,
                                      route=route, level=level, cache=cache, datasets_by_file=datasets_by_file)
        if posterior_method == "backtest":
            post = combine(prior, p, n_epochs_observed=n, level=level, method="backtest",
                           variances=variances_of_cases(cases))
        elif posterior_method == "calibrated":
            post = combine_calibrated(prior, p, n_epochs_observed=n, level=level, others=cases)
        else:
            errors = [(math.log(a - 0.5) - mu_p, math.log(a - 0.5) - mu_x) for a, mu_p, _, mu_x, _ in cases]
            post = combine_correlated(prior, p, n_epochs_observed=n, level=level, errors=errors)
    else:
        post = combine(prior, p, n_epochs_observed=n, level=level, measured_epoch=measured)
    return Forecast(p, inflation, n_cases, prior=prior, posterior=post, schedule=sched)


def errors_from_other_runs(log: RunLog, others: Sequence[RunLog], *, n_epochs_seen: int,
                           target: Target = DEFAULT_TARGET, family: str = "auto", route: str = "accuracy",
                           level: float = DEFAULT_LEVEL, cache: FitCache | None = None,
                           datasets_by_file: dict[str, str] | None = None) -> list[tuple[float, float]]:
    """The ``(prior, extrapolation)`` log errors (:func:`core.prediction.posterior.log_errors`) of the
    other finished runs cut at ``log``'s observed fraction, each with its prior from the runs other
    than it and ``log`` (leave-one-run-out; a run's val/train twin counts as the run)."""
    return [(math.log(a - 0.5) - mu_p, math.log(a - 0.5) - mu_x)
            for a, mu_p, _, mu_x, _ in cases_from_other_runs(log, others, n_epochs_seen=n_epochs_seen,
                                                             target=target, family=family, route=route,
                                                             level=level, cache=cache,
                                                             datasets_by_file=datasets_by_file)]


def cases_from_other_runs(log: RunLog, others: Sequence[RunLog], *, n_epochs_seen: int,
                          target: Target = DEFAULT_TARGET, family: str = "auto", route: str = "accuracy",
                          level: float = DEFAULT_LEVEL, cache: FitCache | None = None,
                          datasets_by_file: dict[str, str] | None = None) -> list[OtherCase]:
    """The :data:`~core.prediction.posterior_calibrated.OtherCase` ``(actual, μp, σp, μx, σx)`` of
    every other finished run cut at ``log``'s observed fraction, each with its prior from the runs
    other than it and ``log`` (leave-one-run-out; a run's val/train twin counts as the run): what
    the ``"correlated"`` and ``"calibrated"`` posteriors learn from.  ``log``'s own epochs past
    ``n_epochs_seen`` are never read."""
    cache = cache if cache is not None else FitCache()
    fraction = n_epochs_seen / max(n_epochs(log), 1)
    key = run_key(log)
    out = []
    for other in others:
        if run_key(other) == key:
            continue
        crossing = find_target_crossing(other, target)
        total = n_epochs(other)
        seen = observed_epochs(total, fraction)
        if not crossing.reached or crossing.epoch is None or crossing.epoch <= seen or seen >= total:
            continue
        cut = first_epochs(other, seen)
        p = predict_epoch_at_target(cut, target=target, family=family, route=route, level=level, cache=cache,
                                    schedule=resolve_schedule(cut))
        pool = [o for o in others if run_key(o) not in (key, run_key(other))]
        prior = prior_for_run(other, pool, target=target, level=level, datasets_by_file=datasets_by_file)
        out.append(other_case(crossing.epoch, prior, p))
    return out
