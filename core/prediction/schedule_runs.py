"""What a forecast through the schedule reads of one run: its plan, its evaluations in optimiser steps, how its
steps turn into samples, tokens and seconds; and which other runs can lend it what it cannot identify.

A :class:`ScheduleRun` is built once per run and target (:func:`schedule_run`); :func:`schedule_pool` sorts
the other loaded runs into those a forecast can learn from and those left out, each with its reason (a run
counted in another rate unit, without the target's metric, without a plan, ...): a message never says that
no run could help when runs were dropped for another reason.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.errors import InputError
from core.logs import RunLog
from core.prediction.progress import group_of
from core.prediction.progress_measure import evaluation_table, progress, progress_unit
from core.prediction.schedule_changes import step_to_progress
from core.runs import metric_column
from core.schedules import PlannedSchedule, log_schedule
from core.targets import Target

#: fewest evaluations a run needs to lend its curve to others (a curve of fewer says little about its shape)
MIN_DONOR_POINTS = 5
#: the most evaluations of one run a joint fit uses (evenly thinned beyond: a 546-row curve weighs no more
#: than a 120-row one, and the fit stays fast)
MAX_FIT_POINTS = 80


@dataclass(frozen=True, eq=False)
class ScheduleRun:
    """One run as a law through the schedule reads it (module docstring).

    Attributes
    ----------
    log : RunLog
    group : str
        The run's group (its folder: a model size, an MLPerf system, a speedrun record): runs of one group
        share one level (``L0, A, α``) in a joint fit.
    schedule : PlannedSchedule
    steps, values : numpy.ndarray
        Optimiser step and metric value of each evaluation of the target's metric, in order.
    progress : numpy.ndarray
        The same evaluations in the run's progress unit (``unit``).
    unit : str
    """

    log: RunLog
    group: str
    schedule: PlannedSchedule
    steps: np.ndarray
    values: np.ndarray
    progress: np.ndarray
    unit: str

    @property
    def source(self) -> str:
        return self.log.source

    @property
    def last_step(self) -> float:
        """The last logged optimiser step of the run (its evaluations' or its rows')."""
        frame_last = float(np.nanmax(self.log.frame["global_step"].to_numpy(dtype=float)))
        return max(frame_last, float(self.steps[-1]) if self.steps.size else 0.0)

    def cut_step(self, fraction: float) -> float:
        """The step at ``fraction`` of the run's logged steps."""
        return fraction * self.last_step

    def seen(self, step: float) -> np.ndarray:
        """Which evaluations lie at or before ``step``."""
        return self.steps <= step + 1e-9

    def decays_before(self, step: float) -> bool:
        """Whether the plan's rate fell materially between the warm-up's end and ``step`` (a decay was seen)."""
        return self.schedule.cut_at(max(step, self.schedule.warmup_end + 1)).changes_after(0.0)

    def to_progress(self, step: float) -> float:
        """The run's progress (in ``unit``) at optimiser ``step``: interpolated in its logged rows, continued at
        the last logged rate past them."""
        if self.unit == "steps":
            return float(step)
        steps = self.log.frame["global_step"].to_numpy(dtype=float)
        return step_to_progress(steps, progress(self.log), step)

    def step_at(self, amount: float) -> float:
        """The optimiser step at which the run's progress is ``amount`` (the inverse of :meth:`to_progress`)."""
        if self.unit == "steps" or not math.isfinite(amount):
            return float(amount)
        steps = self.log.frame["global_step"].to_numpy(dtype=float)
        x = progress(self.log)
        ok = np.isfinite(steps) & np.isfinite(x) & (steps > 0) & (x > 0)
        steps, x = steps[ok], x[ok]
        if not steps.size:
            return math.nan
        order = np.argsort(x)
        steps, x = steps[order], x[order]
        if amount <= x[-1]:
            return float(np.interp(amount, x, steps))
        return float(steps[-1] * amount / x[-1])

    def next_evaluation(self, amount: float, *, after: float) -> float:
        """The first of the run's evaluations at or after progress ``amount``, where its evaluations up to step
        ``after`` come at a regular spacing (within 1 %), continued past them, and the last at the plan's end (a run
        evaluates when it stops); ``amount`` as it is otherwise. A run is at its target at an evaluation, so this is
        the progress its log would show.

        >>> import pandas as pd
        >>> from core.logs import read_log
        >>> log = read_log(b"step,lr,loss\\n100,1,3.0\\n200,1,2.9\\n300,1,2.8\\n", "a.csv")
        >>> from core.targets import Target
        >>> run = schedule_run(log, Target("loss", "<=", 2.5))
        >>> run.next_evaluation(333.0, after=300), run.next_evaluation(400.0, after=300)
        (400.0, 400.0)
        """
        if not math.isfinite(amount):
            return amount
        x = self.progress[self.seen(after)]
        if x.size < 3:
            return amount
        gaps = np.diff(x)
        spacing = float(np.median(gaps))
        if spacing <= 0 or np.max(np.abs(gaps - spacing)) > 0.01 * spacing or amount <= x[-1]:
            return amount
        snapped = float(x[-1] + math.ceil((amount - x[-1]) / spacing - 1e-9) * spacing)
        end = self.to_progress(self.schedule.total_steps)
        return min(snapped, end) if amount <= end else snapped

    def time_at(self, step: float) -> float | None:
        """The logged training time at ``step`` (seconds, interpolated), None past the log or without times."""
        t = self.log.frame["time_s"].to_numpy(dtype=float)
        s = self.log.frame["global_step"].to_numpy(dtype=float)
        ok = np.isfinite(t) & np.isfinite(s)
        if ok.sum() < 2 or step > s[ok].max() or step < s[ok].min():
            return None
        order = np.argsort(s[ok])
        return float(np.interp(step, s[ok][order], t[ok][order]))


def schedule_run(log: RunLog, target: Target, schedule: PlannedSchedule | None = None) -> ScheduleRun:
    """``log`` as a :class:`ScheduleRun` for ``target`` (its own plan unless ``schedule`` is given).

    Raises
    ------
    InputError
        The target's metric climbs (the laws model a falling loss), the log lacks it, or no plan is known.
    """
    if target.climbs:
        raise InputError(f"{log.source}: expected a target that falls (a loss, a log-perplexity) for a forecast "
                         f"through the schedule; got {target.spec}. The laws model a falling loss.")
    if metric_column(log, target.metric) is None:
        raise InputError(f"{log.source}: expected the metric {target.metric!r} of the target {target.spec}; the log "
                         f"has {', '.join(sorted(log.metrics)) or 'none'}.")
    schedule = schedule if schedule is not None else log_schedule(log)
    if schedule is None:
        raise InputError(f"{log.source}: expected a planned learning-rate schedule (an lr column, a declared "
                         "schedule in the log, --planned-schedule FILE.csv or --schedule KIND:total=N,...); got none.")
    x, steps, y = evaluation_table(log, target)
    keep = np.isfinite(steps) & (steps > 0) & (y > 0)
    return ScheduleRun(log, group_of(log), schedule, steps[keep], y[keep], x[keep], progress_unit(log))


def schedule_pool(others: Sequence[RunLog], target: Target, *, unit: str, exclude: str
                  ) -> tuple[list[ScheduleRun], list[tuple[str, str]]]:
    """The other runs a forecast can learn from, and those left out with their reason (module docstring)."""
    pool, left_out = [], []
    for other in others:
        if other.source == exclude:
            continue
        if metric_column(other, target.metric) is None:
            left_out.append((other.source, f"no {target.metric} (the target's metric)"))
            continue
        try:
            run = schedule_run(other, target)
        except InputError as exc:
            left_out.append((other.source, str(exc).removeprefix(f"{other.source}: ")))
            continue
        if run.schedule.unit != unit:
            left_out.append((other.source, f"its rates are {run.schedule.unit}, this run's {unit}"))
        elif run.steps.size < MIN_DONOR_POINTS:
            left_out.append((other.source, f"{run.steps.size} evaluation(s) of {target.metric}; at least "
                                           f"{MIN_DONOR_POINTS} lend a curve"))
        else:
            pool.append(run)
    return pool, left_out


def thinned(steps: np.ndarray, values: np.ndarray, n: int = MAX_FIT_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """At most ``n`` evaluations, evenly spaced in index, the last kept.

    >>> thinned(np.arange(10.0), np.arange(10.0), 4)[0].tolist()
    [0.0, 3.0, 6.0, 9.0]
    """
    if steps.size <= n:
        return steps, values
    idx = np.unique(np.round(np.linspace(0, steps.size - 1, n)).astype(int))
    return steps[idx], values[idx]


def time_per_step(run: ScheduleRun, upto: float) -> float | None:
    """The run's mean seconds per step over its logged part up to ``upto`` (None without two timed rows)."""
    s = run.log.frame["global_step"].to_numpy(dtype=float)
    t = run.log.frame["time_s"].to_numpy(dtype=float)
    ok = np.isfinite(s) & np.isfinite(t) & (s <= upto + 1e-9)
    if ok.sum() < 2 or np.ptp(s[ok]) <= 0:
        return None
    slope = float(np.polyfit(s[ok], t[ok], 1)[0])
    return slope if slope > 0 and math.isfinite(slope) else None


#: plans match up to a progress when, past both warm-ups, their rates (each over its peak) differ by at most this,
#: and the areas under them by at most this share of the area (``same_plan``)
PLAN_MATCH_TOLERANCE = 0.05


def same_plan(a: ScheduleRun, b: ScheduleRun, upto: float, *, points: int = 200, b_per_a: float | None = None) -> bool:
    """Whether runs ``a`` and ``b`` trained on the same schedule, as multiples of each one's peak rate and a function
    of their progress (their unit: steps, samples or tokens), up to ``upto``: past both warm-ups, within
    ``PLAN_MATCH_TOLERANCE`` of the peak, and the areas under them within the same share. Only then is the progress
    at which one reached a loss evidence of when the other will (the loss follows the rates: a cool-down reaches
    it sooner). ``upto`` is in ``a``'s unit; ``b_per_a`` (``b``'s units in one of ``a``'s, from
    ``core.prediction.progress_units``) compares runs counted in different units; without it they must share one.

    >>> from core.logs import read_log
    >>> from core.schedules import build_schedule
    >>> def run(plan):
    ...     rows = "".join(f"{s},{float(plan.lr_at(s)):.6g},{3.0 - s / 1e5:.5f}\\n" for s in range(100, 2001, 100))
    ...     log = read_log(("step,lr,loss\\n" + rows).encode(), "a.csv")
    ...     return ScheduleRun(log, "a", plan, *[np.arange(100, 2001, 100.0)] * 3, "steps")
    >>> flat = run(build_schedule("constant", total=2000, peak=1e-3, warmup=100))
    >>> wsd = run(build_schedule("wsd", total=2000, peak=1e-3, warmup=100, decay_start=1500, final=1e-4))
    >>> same_plan(flat, wsd, 1400), same_plan(flat, wsd, 1900)
    (True, False)
    """
    scale = 1.0 if b_per_a is None else float(b_per_a)
    if (b_per_a is None and a.unit != b.unit) or a.schedule.unit != b.schedule.unit \
            or not (upto > 0 and math.isfinite(upto)) or not (scale > 0 and math.isfinite(scale)):
        return False
    if upto > a.to_progress(a.schedule.total_steps) or upto * scale > b.to_progress(b.schedule.total_steps):
        return False
    grid = np.linspace(0.0, upto, points)
    # each in multiples of its own peak: runs at other batches differ in peak rate by recipe (what the prior's
    # batch scaling accounts for), not in the schedule's shape
    ra = a.schedule.lr_at(_steps_at(a, grid)) / max(a.schedule.peak, 1e-300)
    rb = b.schedule.lr_at(_steps_at(b, grid * scale)) / max(b.schedule.peak, 1e-300)
    warm = max(a.to_progress(a.schedule.warmup_end), b.to_progress(b.schedule.warmup_end) / scale)
    after = grid >= warm
    if after.any() and float(np.max(np.abs(ra[after] - rb[after]))) > PLAN_MATCH_TOLERANCE:
        return False
    area_a, area_b = float(np.trapezoid(ra, grid)), float(np.trapezoid(rb, grid))
    return abs(area_a - area_b) <= PLAN_MATCH_TOLERANCE * max(area_a, area_b)


def _steps_at(run: ScheduleRun, amounts: np.ndarray) -> np.ndarray:
    """:meth:`ScheduleRun.step_at` at many progress values at once (0 at 0)."""
    if run.unit == "steps":
        return amounts
    steps = run.log.frame["global_step"].to_numpy(dtype=float)
    x = progress(run.log)
    ok = np.isfinite(steps) & np.isfinite(x) & (steps > 0) & (x > 0)
    steps, x = steps[ok], x[ok]
    if not steps.size:
        return np.full(amounts.shape, np.nan)
    order = np.argsort(x)
    steps, x = np.r_[0.0, steps[order]], np.r_[0.0, x[order]]
    inside = np.interp(amounts, x, steps)
    return np.where(amounts <= x[-1], inside, steps[-1] * amounts / x[-1])
