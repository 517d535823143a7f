"""The fitted law behind a forecast through the schedule: ``ScheduleModel`` (parameters, calibrated band) and
:func:`fit_model`, which takes the decay terms from the other runs (or the run's own fall of the rate), fits the
run's own level and chooses how much of it by leave-one-run-out (``core.prediction.schedule_fit``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from core.curves import LEVEL_PARAMS, ScheduleFamily, fit_schedule_law, schedule_features
from core.errors import FitError, InputError
from core.prediction.schedule_fit import (
    LEVEL_LADDER,
    MIN_POINTS_FOR,
    LevelCalibration,
    ScheduleFitCache,
    calibrate_levels,
    decay_seen,
    fit_level,
    no_drop,
    reference_level,
)
from core.prediction.schedule_runs import ScheduleRun
from core.schedules import PlannedSchedule

#: the smallest band spread used when no other run calibrates it (the fit's own scatter, at least this)
MIN_UNCALIBRATED_SPREAD = 2e-3


@dataclass(frozen=True, eq=False)
class ScheduleModel:
    """A fitted law for one observed run: everything a forecast under any plan needs."""

    family: ScheduleFamily
    params: dict[str, float]
    calibration: LevelCalibration
    cut: float
    level: float
    calibration_fallback: float = MIN_UNCALIBRATED_SPREAD
    #: no run was seen through a fall of its rate: the decay terms are "no drop"
    decay_unknown: bool = False

    def curve(self, schedule: PlannedSchedule, steps) -> np.ndarray:
        """The law's loss under ``schedule`` at ``steps``."""
        return self.family.evaluate(schedule_features(schedule, np.asarray(steps, dtype=float)), self.params)

    def half_width(self, steps) -> np.ndarray:
        """The band's half-width in log space at ``steps``: the calibration's spread (rms) at ``step / cut`` times the
        t quantile with as many degrees of freedom as cases (the fit's own scatter, flagged, when nothing calibrates
        it)."""
        ratio = np.maximum(np.asarray(steps, dtype=float) / self.cut, 1.0)
        spread, n = self.calibration.spread(ratio)
        if not self.calibration.cases:
            spread = np.full(ratio.shape, self.calibration_fallback)
            n = np.full(ratio.shape, 2)
        # errors taken to be normal about 0 with a spread estimated from n cases: a new case over that rms
        # follows Student's t with n degrees of freedom
        t = stats.t.ppf((1 + self.level) / 2, df=np.maximum(n, 1))
        return t * spread

    def crossings(self, schedule: PlannedSchedule, grid: np.ndarray, target: float,
                  curve: np.ndarray | None = None) -> tuple[float, float, float]:
        """The first steps at which the curve under ``schedule``, its band's lower edge and its upper edge reach
        ``target`` (a falling metric): found on ``grid`` (``curve`` on it, when already computed), refined by
        bisection between the grid points around each; ``inf`` where one never does within the grid."""
        curve = self.curve(schedule, grid) if curve is None else curve
        half = self.half_width(grid)

        def edge(sign: float):
            return lambda t: self.curve(schedule, t) * np.exp(sign * self.half_width(t))

        return tuple(first_crossing(edge(sign), grid, curve * np.exp(sign * half), target)
                     for sign in (0.0, -1.0, 1.0))


def first_crossing(curve, grid: np.ndarray, values: np.ndarray, target: float) -> float:
    """The first step of ``grid`` where ``values`` (``curve`` on the grid) are at or below ``target``, refined by
    bisection between the grid points around it (to half a step); ``inf`` when it never is.

    >>> line = lambda t: 10.0 - np.asarray(t, dtype=float) / 100
    >>> grid = np.array([0.0, 500.0, 1000.0])
    >>> round(first_crossing(line, grid, line(grid), 4.0)), first_crossing(line, grid, line(grid), -1.0)
    (600, inf)
    """
    below = np.flatnonzero(values <= target)
    if below.size == 0:
        return math.inf
    i = int(below[0])
    if i == 0:
        return float(grid[0])
    lo, hi = float(grid[i - 1]), float(grid[i])
    for _ in range(40):
        if hi - lo < 0.5:
            break
        mid = (lo + hi) / 2
        if float(np.asarray(curve(np.array([mid])))[0]) <= target:
            hi = mid
        else:
            lo = mid
    return hi


def fit_model(law: ScheduleFamily, run: ScheduleRun, seen: np.ndarray, donors: list[ScheduleRun], fraction: float,
               observed_step: float, level: float, cache: ScheduleFitCache
               ) -> tuple[ScheduleModel, dict[str, str], list[str]]:
    """The law fitted for ``run`` seen to ``observed_step`` (``core.prediction.through_schedule``, steps 2-3): its
    parameters, the leave-one-run-out calibration of its band, which parameter came from where, and flags."""
    flags: list[str] = []
    sources: dict[str, str] = {}
    steps_seen, values_seen = run.steps[seen], run.values[seen]
    n_seen = int(seen.sum())
    feats_seen = cache.features(run, steps_seen)
    own_decay = run.decays_before(observed_step)
    fit = None
    if donors:
        try:
            fit = cache.joint(law, donors)
        except (FitError, InputError) as exc:
            flags.append(f"the other runs could not be fitted together ({exc}); this run alone")
    if fit is not None and decay_seen(donors):
        decay = fit.decay
        names = ", ".join(sorted({d.source for d in donors if d.decays_before(float(d.steps[-1]))}))
        for n in law.decay_params:
            sources[n] = f"joint fit of {len(donors)} other runs; those seen through a fall of the rate: {names}"
    elif own_decay and n_seen >= len(law.param_names) + 2:
        decay = None
        for n in law.decay_params:
            sources[n] = f"this run's own observed part ({n_seen} evaluations, through a fall of its rate)"
    else:
        decay = no_drop(law)
        for n in law.decay_params:
            sources[n] = "no drop: no run was seen through a fall of its rate"
    same_group = any(d.group == run.group for d in donors)
    allowed = [k for k in LEVEL_LADDER if n_seen >= MIN_POINTS_FOR[k]]
    if decay is None:
        params = _fit_all(law, feats_seen, values_seen, flags)
        calibration = LevelCalibration(3, (), {}, "this run's own fit through its observed fall of the rate; "
                                                    "no other run to calibrate the band")
        model = ScheduleModel(law, params, calibration, observed_step, level,
                              calibration_fallback=max(_scatter(law, feats_seen, values_seen, params),
                                                       MIN_UNCALIBRATED_SPREAD))
        for n in LEVEL_PARAMS:
            sources[n] = sources[law.decay_params[0]]
        return model, sources, flags
    ref = reference_level(fit, law, feats_seen, values_seen, run.group) if fit is not None else None
    if ref is None:
        allowed = [k for k in allowed if k == 3]
    if not allowed:
        raise InputError(f"{run.source}: expected at least {MIN_POINTS_FOR[3]} evaluations seen to fit this run's own "
                         f"level, or other runs of the same data to lend it; got {n_seen} and no other run.")
    calibration = calibrate_levels(law, donors, fraction, same_group=same_group, allowed=allowed, cache=cache) \
        if donors else LevelCalibration(max(allowed), (), {}, "no other run: the band is not calibrated")
    k = calibration.k if calibration.k in allowed else max(allowed)
    try:
        params = fit_level(law, feats_seen, values_seen, decay, k, ref[1] if ref else None)
    except (FitError, InputError) as exc:
        raise InputError(f"{run.source}: the law could not be fitted to the observed part ({exc}).") from None
    own = f"this run's first {n_seen} evaluations (to step {observed_step:,.0f})"
    for n in LEVEL_PARAMS:
        if n in LEVEL_LADDER[k]:
            sources[n] = own
        else:
            sources[n] = (f"its own group's law among the other runs ({ref[0]})" if ref[0] == run.group
                          else f"the law of the other runs' group with the closest shape ({ref[0]})")
    if not calibration.cases:
        flags.append("the band is not calibrated on other runs (fewer than two could be cut at the same fraction): "
                     "it is the fit's own scatter and too narrow far from the observed part")
    elif not same_group and donors:
        flags.append("no other run of this run's group: each other run was forecast with its own group left out, "
                     "as this one is")
    model = ScheduleModel(law, params, calibration, observed_step, level,
                          calibration_fallback=max(_scatter(law, feats_seen, values_seen, params),
                                                   MIN_UNCALIBRATED_SPREAD),
                          decay_unknown=sources[law.decay_params[0]].startswith("no drop"))
    return model, sources, flags


def _fit_all(law: ScheduleFamily, feats, values: np.ndarray, flags: list[str]) -> dict[str, float]:
    try:
        fit = fit_schedule_law([(feats, values)], law)
    except FitError as exc:
        raise InputError(f"the law could not be fitted to the observed part ({exc}).") from None
    if fit.flags:
        flags.append("the law fitted on this run alone: " + "; ".join(fit.flags))
    return fit.params(0)


def _scatter(law: ScheduleFamily, feats, values: np.ndarray, params: dict[str, float]) -> float:
    pred = law.evaluate(feats, params)
    r = np.log(np.clip(pred, 1e-12, None)) - np.log(values)
    return float(np.sqrt(np.mean(np.square(r)))) if r.size else 0.0
