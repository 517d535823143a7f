"""The forecast of a run's loss through its planned learning-rate schedule: the whole curve with its band, the
loss at the schedule's end, and the progress to a target, from the run's observed part and the other runs.

A curve in steps alone cannot see a cool-down coming. Here the loss is a law of the rates seen so far
(``core.curves``: the multi-power law, or the LR-annealing law):

1. **the plan** (``core.schedules``): what the user declares replaces the run's own plan after the observed
   part; else the log's lr column (the whole file's, when a finished log is cut to backtest: the rest of a
   planned schedule is known), else the schedule the log declares. A forecast past its last step is refused;
2. **the decay terms** come from the other loaded runs (one joint fit: each group of runs with its own level,
   the decay terms shared), since a run seen before its cool-down cannot identify them;
3. **the run's own level** (``L0``; ``L0, A``; or ``L0, A, α``) is fitted on its observed evaluations, the rest
   taken from its group's law among the other runs, or from the group whose law has the closest shape; which
   of the three is chosen by leave-one-run-out on the other runs cut at the same observed fraction, whose
   errors also make the **80 % band** (their rms at each horizon ``step / cut``, times a t quantile);
4. the **answer**: the loss at every planned step (and its band), at the schedule's end, and the first step
   where the curve reaches the target, with the steps where the band's edges reach it; in samples, tokens
   and seconds where the run says how its steps convert.

Which parameters came from which runs is said (``param_sources``), and every run left out with its reason.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from core.curves import (
    DEFAULT_SCHEDULE_FAMILY,
    SCHEDULE_FAMILIES,
    get_schedule_family,
    schedule_features,
)
from core.defaults import DEFAULT_LEVEL
from core.errors import InputError
from core.logs import RunLog
from core.prediction.schedule_fit import ScheduleFitCache
from core.prediction.schedule_model import ScheduleModel, first_crossing, fit_model
from core.prediction.schedule_runs import ScheduleRun, schedule_pool, schedule_run, time_per_step
from core.schedules import PlannedSchedule, declared_schedule, joined_plan, resolve_planned_schedule
from core.targets import Target, target_for
from core.validation import check_option, check_scalar

#: the families a forecast through the schedule takes (``auto``: the registry's default)
FAMILY_CHOICES = ("auto", *SCHEDULE_FAMILIES)
#: points of the forecast grid between the observed end and the plan's end (half linear, half geometric)
GRID_POINTS = 600


@dataclass(frozen=True, eq=False)
class ScheduleForecast:
    """The forecast of one run through its planned schedule (module docstring).

    ``steps_to_target`` is ``inf`` when the curve does not reach the target by the plan's end (``status``
    ``"not within the plan"``); ``steps_high`` is ``inf`` when the band's upper edge does not. Progress in the
    run's ``unit`` and seconds are None where the run cannot say how its steps convert.
    """

    source: str
    target: Target
    family: str
    unit: str
    schedule: PlannedSchedule
    observed_step: float
    fraction: float
    observed_steps: np.ndarray
    observed_values: np.ndarray
    steps: np.ndarray
    metric: np.ndarray
    metric_low: np.ndarray
    metric_high: np.ndarray
    metric_at_end: float
    metric_at_end_low: float
    metric_at_end_high: float
    status: str
    steps_to_target: float | None
    steps_low: float | None
    steps_high: float | None
    progress_to_target: float | None
    progress_low: float | None
    progress_high: float | None
    time_to_target_s: float | None
    time_low_s: float | None
    time_high_s: float | None
    params: dict[str, float]
    param_sources: dict[str, str]
    band: str
    n_cases: int
    left_out: tuple[tuple[str, str], ...]
    model: ScheduleModel | None = field(default=None, repr=False)
    run: ScheduleRun | None = field(default=None, repr=False)
    donors: tuple[ScheduleRun, ...] = field(default=(), repr=False)
    flags: tuple[str, ...] = ()

    @property
    def n_observed(self) -> int:
        return int(self.observed_steps.size)

    @property
    def seconds_per_step(self) -> float | None:
        """The run's own mean training seconds per step over its observed part (None without times)."""
        return None if self.run is None else time_per_step(self.run, self.observed_step)

    def sources_text(self) -> str:
        """Which parameters came from where, one clause per source: ``"B, C, beta, gamma from ...; L0 from ..."``."""
        by_source: dict[str, list[str]] = {}
        for name, where in self.param_sources.items():
            by_source.setdefault(where, []).append(name)
        return "; ".join(f"{', '.join(names)} from {where}" for where, names in by_source.items())

    def to_dict(self) -> dict:
        return {"file": self.source, "metric": self.target.metric, "direction": self.target.direction,
                "target": self.target.value, "family": self.family, "unit": self.unit, "status": self.status,
                "observed_step": self.observed_step, "observed_points": self.n_observed,
                "metric_at_end": self.metric_at_end, "metric_at_end_low": self.metric_at_end_low,
                "metric_at_end_high": self.metric_at_end_high, "steps_to_target": self.steps_to_target,
                "steps_low": self.steps_low, "steps_high": self.steps_high,
                "progress_to_target": self.progress_to_target, "progress_low": self.progress_low,
                "progress_high": self.progress_high, "time_to_target_s": self.time_to_target_s,
                "schedule": self.schedule.source, "params": dict(self.params),
                "param_sources": dict(self.param_sources), "band": self.band, "flags": "; ".join(self.flags)}


# --------------------------------------------------------------------------- the forecast
def forecast_through_schedule(log: RunLog, others: Sequence[RunLog] = (), target: Target | None = None, *,
                              observe: float | None = None, planned=None, family: str = "auto",
                              level: float = DEFAULT_LEVEL, cache: ScheduleFitCache | None = None
                              ) -> ScheduleForecast:
    """The forecast of ``log`` through its planned schedule (module docstring).

    Parameters
    ----------
    log : RunLog
        The run: in progress, or finished and cut with ``observe``.
    others : sequence of RunLog
        Other runs of the same data (other sizes, other schedules, other systems or seeds): the decay terms,
        the reference level, and the leave-one-run-out that calibrates the band.
    target : Target, optional
        A falling target (``loss<=2.97``); default: the log's own.
    observe : float, optional
        The fraction (0, 1) of the log's steps seen; default: all of it (a run in progress).
    planned : PlannedSchedule or str, optional
        A plan (or spec ``KIND:total=N,...``) that replaces the log's own after the observed part.
    family : "auto" or a key of ``core.curves.SCHEDULE_FAMILIES``, default "auto"
        ``auto``: ``core.curves.DEFAULT_SCHEDULE_FAMILY`` (the LR-annealing law).
    level : float, default 0.8
    cache : ScheduleFitCache, optional
        Shared by many forecasts over the same runs; the answer is the same with or without it.

    Raises
    ------
    InputError
        A climbing target, no plan, an observed part past the plan's end, or nothing observed.

    Examples
    --------
    Two runs of one law (noise-free), under step schedules that drop the rate five-fold at step 16,000 and at
    step 10,000, each logging its rate; the first is seen to 40 % of its steps, before its drop, and the second
    saw its drop, so the forecast knows what a drop does:

    >>> from core.logs import read_log
    >>> from core.curves import MULTI_POWER
    >>> from core.schedules import build_schedule
    >>> truth = {"L0": 2.0, "A": 0.3, "alpha": 0.4, "B": 300.0, "C": 2.0, "beta": 0.5, "gamma": 0.5}
    >>> def run(name, drop):
    ...     s = build_schedule("step", total=20000, peak=1e-3, warmup=600, drops=(drop,), factor=0.2)
    ...     t = np.union1d(np.arange(600, 20001, 200.0), [drop - 1])
    ...     y = MULTI_POWER.evaluate(schedule_features(s, t), truth)
    ...     rows = "".join(f"{a:.0f},{b:.8g},{c:.6f}\\n" for a, b, c in zip(t, s.lr_at(t), y))
    ...     return read_log(("step,lr,loss\\n" + rows).encode(), name)
    >>> seen, other = run("a/seen.csv", 16000), run("a/other.csv", 10000)
    >>> f = forecast_through_schedule(seen, [other], Target("loss", "<=", 1.9), observe=0.4, family="multi-power")
    >>> round(f.metric_at_end, 4), round(float(seen.frame["loss"].iloc[-1]), 4)     # forecast, logged
    (1.8872, 1.8872)
    >>> f.status, round(f.steps_to_target, -2), int(seen.frame["global_step"][seen.frame["loss"] <= 1.9].iloc[0])
    ('predicted', 18000.0, 18200)
    """
    level = check_scalar(level, "level", float, min_val=0, max_val=1, include_boundaries="neither")
    check_option(family, "schedule family", FAMILY_CHOICES)
    target = target_for(log, target)
    cache = ScheduleFitCache() if cache is None else cache
    whole = schedule_run(log, target)       # the whole file's plan (a backtest knows the rest of it)
    if whole.steps.size == 0:
        raise InputError(f"{log.source}: expected evaluations of {target.metric}; got none.")
    cut = whole.last_step if observe is None else float(check_scalar(
        observe, "observe", float, min_val=0, max_val=1, include_boundaries="neither")) * whole.last_step
    seen = whole.seen(cut)
    if not seen.any():
        raise InputError(f"{log.source}: expected at least one evaluation at or before step {cut:,.0f} (the observed "
                         f"part); the first is at step {whole.steps[0]:,.0f}. Observe more of the run.")
    observed_step = float(max(cut, whole.steps[seen][-1]))
    schedule = resolve_planned_schedule(log, planned, observed_step=observed_step) if planned is not None \
        else whole.schedule
    if schedule is None:
        raise InputError(f"{log.source}: expected a planned learning-rate schedule; got none.")
    run = ScheduleRun(log, whole.group, schedule, whole.steps, whole.values, whole.progress, whole.unit)
    if observed_step >= schedule.total_steps:
        raise InputError(f"{log.source}: expected an observed part that ends before the plan's last step "
                         f"{schedule.total_steps:,.0f}; it ends at step {observed_step:,.0f}. Plan a longer "
                         "schedule (--planned-schedule or --schedule) to forecast past it.")
    fraction = observed_step / (whole.last_step if observe is not None else schedule.total_steps)
    donors, left_out = schedule_pool(others, target, unit=schedule.unit, exclude=log.source)
    law = get_schedule_family(DEFAULT_SCHEDULE_FAMILY if family == "auto" else family)
    model, sources, flags = fit_model(law, run, seen, donors, fraction, observed_step, level, cache)
    return _answer(model, run, schedule, target, seen, observed_step, fraction, donors, left_out, sources, flags)


#: the beginnings of the flags a forecast raises about its plan (``_answer``): a new plan raises its own
PLAN_FLAGS = ("the forecast does not reach", "no run was seen through a fall", "the band past",
              "time to target unknown")


def _grid(start: float, end: float) -> np.ndarray:
    half = GRID_POINTS // 2
    return np.unique(np.r_[np.linspace(start, end, half), np.geomspace(max(start, 1.0), end, half)])


def _answer(model: ScheduleModel, run: ScheduleRun, schedule: PlannedSchedule, target: Target, seen: np.ndarray,
            observed_step: float, fraction: float, donors: list[ScheduleRun], left_out, sources, flags
            ) -> ScheduleForecast:
    steps = _grid(observed_step, schedule.total_steps)
    metric = model.curve(schedule, steps)
    half = model.half_width(steps)
    low, high = metric * np.exp(-half), metric * np.exp(half)
    hit = target.first_met(run.values[seen])
    end_half = float(half[-1])
    if hit is not None:
        status = "reached"
        s = float(run.steps[seen][hit])
        s_lo = s_hi = s
    else:
        s, s_lo, s_hi = model.crossings(schedule, steps, target.value, curve=metric)
        status = "predicted" if math.isfinite(s) else "not within the plan"
        if not math.isfinite(s):
            flags = [*flags, f"the forecast does not reach {target.spec} by the plan's last step "
                             f"{schedule.total_steps:,.0f} (loss there {metric[-1]:.4g}); a longer plan or a "
                             "cool-down may: see the schedule planner"]
    horizon = s if math.isfinite(s) else schedule.total_steps
    if model.decay_unknown and schedule.cut_at(horizon).changes_after(observed_step):
        flags = [*flags, "no run was seen through a fall of its learning rate, so the drop the planned fall brings "
                         "is unknown and left out: read the forecast past the fall as pessimistic"]
    band = (model.calibration.description + f"; band: the {len(model.calibration.cases)} cases' rms log error at each "
            f"step / cut, × t quantile" if model.calibration.cases else model.calibration.description)
    if model.calibration.cases and schedule.total_steps / observed_step > model.calibration.reach():
        flags = [*flags, f"the band past {model.calibration.reach():.2g}× the observed steps holds the other runs' "
                         "farthest error: no other run was checked that far ahead"]
    progress = [None if v is None or not math.isfinite(v) else
                run.next_evaluation(run.to_progress(v), after=observed_step) for v in (s, s_lo, s_hi)]
    times = [_time_at(run, donors, v, observed_step) if v is not None and math.isfinite(v) else None
             for v in (s, s_lo, s_hi)]
    if times[0] is None and run.log.frame["time_s"].notna().any() and status == "predicted":
        flags = [*flags, "time to target unknown: the run's time per step could not be read"]
    return ScheduleForecast(
        source=run.source, target=target, family=model.family.name, unit=run.unit, schedule=schedule,
        observed_step=observed_step, fraction=fraction, observed_steps=run.steps[seen],
        observed_values=run.values[seen], steps=steps, metric=metric, metric_low=low, metric_high=high,
        metric_at_end=float(metric[-1]), metric_at_end_low=float(metric[-1] * math.exp(-end_half)),
        metric_at_end_high=float(metric[-1] * math.exp(end_half)), status=status,
        steps_to_target=s, steps_low=s_lo, steps_high=s_hi, progress_to_target=progress[0],
        progress_low=progress[1], progress_high=progress[2], time_to_target_s=times[0], time_low_s=times[1],
        time_high_s=times[2], params=dict(model.params), param_sources=sources, band=band,
        n_cases=len(model.calibration.cases), left_out=tuple(left_out), model=model, run=run, donors=tuple(donors),
        flags=tuple(flags))


def _time_at(run: ScheduleRun, donors: Sequence[ScheduleRun], step: float, cut: float) -> float | None:
    """Training seconds at ``step``: the run's time at the cut plus the steps after it at its observed pace, scaled
    by how much the other runs' pace changed between the same steps (a recipe whose late steps are slower)."""
    start = run.time_at(cut)
    pace = time_per_step(run, cut)
    if start is None or pace is None:
        return None
    if step <= cut:
        return run.time_at(step)
    ratios = []
    for d in donors:
        t0, t1, p = d.time_at(cut), d.time_at(step), time_per_step(d, cut)
        if t0 is not None and t1 is not None and p:
            ratios.append((t1 - t0) / (step - cut) / p)
    scale = float(np.median(ratios)) if ratios else 1.0
    return start + (step - cut) * pace * scale


def time_at_step(forecast: ScheduleForecast, step: float) -> float | None:
    """Training seconds at ``step`` of the forecast run (its pace, scaled as the other runs' pace changed)."""
    if forecast.run is None or step is None or not math.isfinite(step):
        return None
    return _time_at(forecast.run, forecast.donors, step, forecast.observed_step)


def case_forecasts(forecast: ScheduleForecast) -> list[tuple[ScheduleRun, float, float]]:
    """What the leave-one-run-out forecast of each other run said of the same target: ``(run, cut step, steps to
    target)`` (``inf``: not by the end of its plan), with the law and level that the forecast chose."""
    model = forecast.model
    if model is None:
        return []
    by_source = {d.source: d for d in forecast.donors}
    out = []
    for case in model.calibration.cases:
        d = by_source.get(case.source)
        if d is None or not case.params:
            continue
        grid = _grid(case.cut, d.schedule.total_steps)
        curve = model.family.evaluate(schedule_features(d.schedule, grid), case.params)
        s = first_crossing(lambda t, p=case.params, run=d: model.family.evaluate(schedule_features(run.schedule, t),
                                                                                 p),
                           grid, curve, forecast.target.value)
        out.append((d, case.cut, s))
    return out


def what_if(forecast: ScheduleForecast, planned, *, source: str | None = None) -> ScheduleForecast:
    """The same observed run and fitted law under another plan after its observed part (``planned``: a
    :class:`PlannedSchedule` or a spec); the band keeps its spread by horizon.

    Raises
    ------
    InputError
        The forecast has no fitted law (a run already at target), or the plan does not reach past the cut.
    """
    model, run = forecast.model, forecast.run
    if model is None or run is None:
        raise InputError(f"{forecast.source}: expected a fitted forecast to replan; got one already at its target.")
    schedule = joined_plan(forecast.schedule, declared_schedule(planned), at=forecast.observed_step,
                           run=forecast.source, source=source)
    run = replace(run, schedule=schedule)
    kept = [f for f in forecast.flags if not f.startswith(PLAN_FLAGS)]     # the new plan says its own
    return _answer(model, run, schedule, forecast.target, run.seen(forecast.observed_step), forecast.observed_step,
                   forecast.fraction, list(forecast.donors), forecast.left_out, forecast.param_sources, kept)
