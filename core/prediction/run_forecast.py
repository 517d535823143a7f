"""The one call that forecasts a run to its target: it picks the route from the target and the run.

:func:`forecast_run` is what the ``predict`` command and the Logs page call; neither chooses a method:

* the **epoch route** (:data:`EPOCHS`, :func:`core.prediction.forecast.forecast_epoch_at_target`) for a climbing
  accuracy (``acc>=A``) on a log of epochs that can be forecast from its first ones (an accuracy column and at least
  ``MIN_PREDICTION_EPOCHS`` epochs: ``can_forecast``): the epoch at target from the first epochs, the prior from the
  other runs (other batch sizes of the job, else a calibration over the other architectures) and the posterior;
* the **progress route** (:data:`PROGRESS`, :func:`core.prediction.progress_route.forecast_progress`) for any
  other target, or a log without such epochs: through the planned learning-rate schedule where one is known, else a
  power law in the run's own unit (samples, tokens, steps), with the prior and posterior in that unit.

Which target applies is :func:`core.targets.target_for`'s decision (the user's, else the log's, else
``acc>=0.92``). :class:`RunForecast` holds either route's answer, its row of :data:`FORECAST_COLUMNS` (the
``predict`` command's CSV) and the sentences that say where each part came from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from core.defaults import DEFAULT_LEVEL
from core.errors import InputError
from core.logs import RunLog
from core.prediction.backtest import observed_epochs
from core.prediction.combined import whole
from core.prediction.forecast import (
    DEFAULT_POSTERIOR_METHOD,
    MIN_PREDICTION_EPOCHS,
    Forecast,
    can_forecast,
    forecast_epoch_at_target,
)
from core.prediction.intervals import FitCache
from core.prediction.log_series import n_epochs
from core.prediction.prior import Prior
from core.prediction.progress_estimates import ProgressCache
from core.prediction.progress_route import LossForecast, forecast_progress
from core.prediction.run_prior import prior_for_run
from core.prediction.schedule_fit import ScheduleFitCache
from core.schedules import PlannedSchedule, is_schedule_spec
from core.targets import Target, target_for
from core.validation import check_option

#: the epoch at an accuracy target, from the first epochs
EPOCHS = "epochs"
#: the progress (samples, tokens, steps) to any target, through the schedule or by a power law
PROGRESS = "progress"
#: the routes :func:`forecast_run` takes
FORECAST_ROUTES = (EPOCHS, PROGRESS)

#: the columns of a forecast's row (the ``predict`` command's CSV): the epoch route fills the epoch columns (and the
#: samples where the log knows its samples per epoch), the progress route the progress columns
FORECAST_COLUMNS = ("file", "observed_epochs", "prior_epoch", "prior_low", "prior_high", "extrapolated_epoch",
                    "extrap_low", "extrap_high", "posterior_epoch", "posterior_low", "posterior_high", "method",
                    "flags", "metric", "direction", "target", "unit", "prior_samples", "extrapolation_samples",
                    "posterior_samples", "posterior_samples_low", "posterior_samples_high", "time_to_target_s",
                    "posterior_progress", "posterior_progress_low", "posterior_progress_high",
                    "metric_at_end", "metric_at_end_low", "metric_at_end_high", "schedule", "route")


def route_for(log: RunLog, target: Target | None = None) -> tuple[str, str]:
    """The route a forecast of ``log`` to ``target`` (``target_for(log, target)``) takes, and why (module
    docstring).

    >>> from core.logs import read_log
    >>> from core.targets import accuracy_target
    >>> rows = "".join(f"{e},{10 * e},{2 / e},{0.5 + e / 100}\\n" for e in range(1, 9))
    >>> course = read_log(("epoch,step,loss,acc\\n" + rows).encode(), "a.csv")
    >>> route_for(course)[0], route_for(course, Target("loss", "<=", 1.0))[0]
    ('epochs', 'progress')
    >>> route_for(read_log(b"step,loss,acc\\n1,2.0,0.5\\n2,1.5,0.6\\n", "steps.csv"), accuracy_target(0.9))[0]
    'progress'
    """
    target = target_for(log, target)
    if not target.is_accuracy:
        return PROGRESS, f"{target.spec} is not an accuracy that climbs: its progress in the run's own unit"
    if not can_forecast(log):
        return PROGRESS, (f"{target.spec} on a log without {MIN_PREDICTION_EPOCHS} epochs of accuracy to forecast "
                          "from: its progress in the run's own unit")
    return EPOCHS, f"{target.spec} is an accuracy on a log of epochs: the epoch at target"


def route_for_runs(logs: Sequence[RunLog], target: Target) -> str:
    """The route a page's forecast of one of ``logs`` to ``target`` takes: :data:`EPOCHS` when some run goes by
    it (:func:`route_for`), else :data:`PROGRESS`."""
    return EPOCHS if any(route_for(log, target)[0] == EPOCHS for log in logs) else PROGRESS


@dataclass(frozen=True, eq=False)
class RunForecast:
    """A run forecast to its target by the route that applies (module docstring).

    Attributes
    ----------
    source : str
    target : Target
        The target that applied (``core.targets.target_for``).
    route : {"epochs", "progress"}
    why : str
        Why this route.
    n_epochs_seen : int or None
        The epochs the epoch route saw (None on the progress route).
    epochs : Forecast or None
        The epoch route's answer (prior, extrapolation, posterior in epochs).
    progress : LossForecast or None
        The progress route's answer (through the schedule or a power law, in the run's unit).
    samples_per_epoch : float or None
        The log's samples per epoch (the epoch route's answer in samples).
    notes : tuple of str
        What was asked for and not applied on this route.
    """

    source: str
    target: Target
    route: str
    why: str
    n_epochs_seen: int | None = None
    epochs: Forecast | None = None
    progress: LossForecast | None = None
    samples_per_epoch: float | None = None
    notes: tuple[str, ...] = ()

    def row(self, file: str | None = None) -> dict:
        """The row of :data:`FORECAST_COLUMNS` (``file``: the name to print, the log's source by default)."""
        row = dict.fromkeys(FORECAST_COLUMNS)
        row.update(self._progress_cells() if self.route == PROGRESS else self._epoch_cells())
        row["file"] = self.source if file is None else file
        return row

    def lines(self) -> list[str]:
        """Where each part of the answer came from, one sentence each."""
        if self.route == PROGRESS:
            a, f = self.progress, self.progress.progress
            out = [f"target {self.target.spec}; route: {a.route} ({a.why}); prior: {f.prior.description or 'none'}; "
                   f"extrapolation: {f.extrapolation.description}; posterior: {f.posterior.description} ({f.unit})"]
            if a.schedule is not None:
                out.append(f"parameters: {a.schedule.sources_text()}")
            if f.prior.left_out:                      # every run the prior left out, each with its reason
                out.append("prior: left out: " + "; ".join(f"{src} ({why})" for src, why in f.prior.left_out))
        else:
            f = self.epochs
            out = [f"prior: {f.prior.description}; extrapolation: {f.prediction.family} ({f.prediction.status}); "
                   f"posterior: {f.posterior.description}"
                   + (f"; schedule {f.schedule.describe()}" if f.schedule is not None else "")]
        return out + list(self.notes)

    def _epoch_cells(self) -> dict:
        f = self.epochs
        prior, p, post = f.prior, f.prediction, f.posterior
        pe = pl = ph = None
        if prior is not None and prior.available:
            lo, hi = prior.interval()
            pe, pl, ph = whole(prior.epoch), (whole(lo) if lo > 0 else 1.0), whole(hi)
        xe, xl, xh = (p.epoch, p.epoch_low, p.epoch_high) if p.status == "predicted" else (None, None, None)
        flags = list(p.flags) + (list(post.flags) if post is not None else [])
        spe = self.samples_per_epoch

        def samples(epochs):
            return None if spe is None or epochs is None else float(epochs) * spe

        cells = {"observed_epochs": self.n_epochs_seen, "prior_epoch": pe, "prior_low": pl, "prior_high": ph,
                 "extrapolated_epoch": xe, "extrap_low": xl, "extrap_high": xh,
                 "flags": "; ".join(dict.fromkeys(flags)), "metric": self.target.metric,
                 "direction": self.target.direction, "target": self.target.value,
                 "unit": "samples" if spe is not None else None, "prior_samples": samples(pe),
                 "extrapolation_samples": samples(xe), "time_to_target_s": None}
        if post is not None:
            cells.update(posterior_epoch=post.epoch, posterior_low=post.epoch_low, posterior_high=post.epoch_high,
                         method=post.method, posterior_samples=samples(post.epoch),
                         posterior_samples_low=samples(post.epoch_low),
                         posterior_samples_high=samples(post.epoch_high))
        return cells

    def _progress_cells(self) -> dict:
        """The ``*_samples`` columns only in samples, never an epoch of the accuracy columns; the metric at the
        plan's end through the schedule."""
        a = self.progress
        f, s = a.progress, a.schedule

        def samples(value):
            return value if f.unit == "samples" else None

        return {"method": f.method, "flags": "; ".join(f.flags), "metric": f.target.metric,
                "direction": f.target.direction, "target": f.target.value, "unit": f.unit,
                "prior_samples": samples(f.prior.value), "extrapolation_samples": samples(f.extrapolation.value),
                "posterior_samples": samples(f.posterior.value), "posterior_samples_low": samples(f.posterior.low),
                "posterior_samples_high": samples(f.posterior.high), "time_to_target_s": f.time_to_target_s,
                "posterior_progress": f.posterior.value, "posterior_progress_low": f.posterior.low,
                "posterior_progress_high": f.posterior.high,
                "metric_at_end": s.metric_at_end if s else None,
                "metric_at_end_low": s.metric_at_end_low if s else None,
                "metric_at_end_high": s.metric_at_end_high if s else None,
                "schedule": s.schedule.source if s else None, "route": a.route}


def forecast_table(forecasts: Sequence[RunForecast]) -> pd.DataFrame:
    """The rows of ``forecasts`` as one table of :data:`FORECAST_COLUMNS`."""
    return pd.DataFrame([f.row() for f in forecasts], columns=list(FORECAST_COLUMNS))


def epochs_seen(log: RunLog, observe: float | None) -> int:
    """The epochs of ``log`` the epoch route sees: all (``observe`` None), a fraction (< 1) or a number of them.

    >>> from core.logs import read_log
    >>> rows = "".join(f"{e},{e},1,0.5\\n" for e in range(1, 25))
    >>> log = read_log(("epoch,step,loss,acc\\n" + rows).encode(), "r.csv")
    >>> epochs_seen(log, None), epochs_seen(log, 0.5), epochs_seen(log, 10), epochs_seen(log, 40)
    (24, 12, 10, 24)
    """
    total = n_epochs(log)
    if observe is None:
        return total
    return observed_epochs(total, observe) if observe < 1 else min(int(observe), total)


def forecast_run(log: RunLog, others: Sequence[RunLog] = (), target: Target | None = None, *,
                 observe: float | None = None, schedule: PlannedSchedule | str | None = "auto", family: str = "auto",
                 level: float = DEFAULT_LEVEL, prior: Prior | str | None = "auto", fits: pd.DataFrame | None = None,
                 datasets_by_file: dict[str, str] | None = None, posterior_method: str = DEFAULT_POSTERIOR_METHOD,
                 curve_route: str = "accuracy", fit_cache: FitCache | None = None,
                 progress_cache: ProgressCache | None = None, schedule_cache: ScheduleFitCache | None = None,
                 route: str | None = None) -> RunForecast:
    """``log`` forecast to ``target`` (None: ``target_for(log)``) by the route that applies (module docstring).

    Parameters
    ----------
    log, others : RunLog, sequence of RunLog
        The run, and the other runs its prior (and the widening of its interval) come from.
    target : Target or None
    observe : float or None
        The part of ``log`` seen: all of it (None), a fraction (< 1: of its epochs, of its steps through the
        schedule, of its evaluations by the power law), or a count (of epochs, of evaluations).
    schedule : PlannedSchedule, str or None
        ``"auto"``: the log's own (an lr column or a declared plan; drops seen in the observed epochs); a schedule
        in epochs (``step:30,60``, ``cosine:100``; the epoch route); a planned schedule in optimiser steps (a
        :class:`~core.schedules.PlannedSchedule` or ``KIND:total=N,...``; the progress route, which forecasts a
        falling target through it: a climbing accuracy is refused); None: none.
    family, level : str, float
    prior : Prior, "auto" or None
        The epoch route's prior (``"auto"``: :func:`~core.prediction.run_prior.prior_for_run` with ``fits`` and
        ``datasets_by_file``); the progress route makes its own.
    posterior_method : str
        The epoch route's (:data:`~core.prediction.forecast.FORECAST_POSTERIOR_METHODS`); the progress route's
        posterior learns its weights from a backtest of the other runs (a note says so when another was asked).
    curve_route : {"accuracy", "loss"}
        The epoch route's curve: the accuracy, or the loss through a threshold.
    fit_cache, progress_cache, schedule_cache
        Fits shared between calls.
    route : {"epochs", "progress"} or None
        None: the route this run takes (:func:`route_for`). A page that forecasts its runs by the one route core
        picks for them together (:func:`route_for_runs`) names it: beside a run of a loss, a course run is then
        forecast in its own progress unit to its own accuracy target, as the page's other runs are.

    Examples
    --------
    >>> from core.logs import read_log
    >>> rows = "".join(f"{e},{e},{1 / e:.6f},{1 - 0.8 * 0.5 ** (e / 4):.6f}\\n" for e in range(1, 25))
    >>> course = read_log(("epoch,step,loss,acc\\n" + rows).encode(), "run.csv")
    >>> f = forecast_run(course, target=None, observe=10, family="exp3", prior=None)
    >>> f.route, f.target.spec, f.row()["extrapolated_epoch"]
    ('epochs', 'acc>=0.92', 14.0)
    >>> steps = "".join(f"{s},{2.0 + 30 * (s * 100) ** -0.5:.6f}\\n" for s in range(1, 41))
    >>> g = forecast_run(read_log(("step,loss\\n" + steps).encode(), "llm.csv"), target=Target("loss", "<=", 2.5),
    ...                  observe=0.25)
    >>> g.route, g.progress.route, round(g.progress.progress.extrapolation.value)
    ('progress', 'power law in steps', 36)
    """
    target = target_for(log, target)
    own, why = route_for(log, target)
    if route is None or route == own:
        route = own
    elif check_option(route, "route", FORECAST_ROUTES) == EPOCHS:
        raise InputError(f"{log.source}: cannot be forecast from its first epochs to {target.spec}: {why}.")
    else:
        why = "the route of the runs forecast with it"
    planned = schedule if isinstance(schedule, PlannedSchedule) or (
        isinstance(schedule, str) and is_schedule_spec(schedule)) else None
    if route == PROGRESS:
        answer = forecast_progress(log, others, target, observe=observe, planned=planned, family=family,
                                   level=level, cache=progress_cache, schedule_cache=schedule_cache)
        notes = ()
        if posterior_method != DEFAULT_POSTERIOR_METHOD:
            notes = (f"--posterior-method {posterior_method} not applied: it combines epochs to an accuracy target; "
                     f"a target in {answer.progress.unit} has the progress posterior above (its weights and interval "
                     "from a backtest of the other loaded runs)",)
        return RunForecast(log.source, target, route, why, progress=answer, notes=notes)
    if planned is not None:
        raise InputError(f"{log.source}: a planned schedule in optimiser steps is forecast through with a falling "
                         f"target; {target.spec} climbs. Give the schedule in epochs (--schedule step:30,60) or a "
                         "loss target.")
    n = epochs_seen(log, observe)
    if isinstance(prior, str):
        prior = prior_for_run(log, others, target=target, level=level, fits=fits, datasets_by_file=datasets_by_file)
    f = forecast_epoch_at_target(log, others, n_epochs_seen=n, target=target, family=family, route=curve_route,
                                 level=level, prior=prior, schedule=schedule, posterior_method=posterior_method,
                                 datasets_by_file=datasets_by_file, cache=fit_cache)
    return RunForecast(log.source, target, route, why, n_epochs_seen=n, epochs=f,
                       samples_per_epoch=samples_per_epoch(log))


def samples_per_epoch(log: RunLog) -> float | None:
    """The samples in one of the log's epochs: declared, else its global batch × steps per epoch; None unknown."""
    m = log.meta
    if m.samples_per_epoch:
        return float(m.samples_per_epoch)
    if m.global_batch and log.steps_per_epoch:
        return float(m.global_batch * log.steps_per_epoch)
    return None
