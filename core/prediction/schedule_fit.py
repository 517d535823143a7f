"""The fits behind a forecast through the schedule, and what the other runs teach about its error.

* **Decay terms from the other runs** (:meth:`ScheduleFitCache.joint`): the other runs fitted at once, each group
  (one model size, one system, one record) with its own level and all sharing the decay terms
  (``core.curves.fit_schedule_law``). When no other run was seen through a fall of its rate the decay terms
  cannot be identified: they are set to no drop at all, and the forecast says so.
* **The run's own level** (:func:`fit_level`): ``L0`` (k = 1), ``L0, A`` (k = 2) or ``L0, A, α`` (k = 3) fitted on
  the run's observed evaluations, the decay terms fixed, the other level parameters taken from a reference
  law: the run's own group's among the other runs, else the group whose law has the shape closest to the
  observed points (:func:`reference_level`).
* **Leave-one-run-out on the other runs** (:func:`calibrate_levels`): each other run cut at the same observed
  fraction and forecast from the rest exactly as this run is (its group left out too when this run's group is
  not among the others), for each k; the k with the smallest error is the one used, and its errors, by how far
  past the cut they lie (the ratio ``step / cut``), make the forecast's band.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from core.curves import ScheduleFamily, ScheduleLawFit, fit_schedule_law, schedule_features
from core.errors import FitError, InputError
from core.prediction.schedule_runs import ScheduleRun, thinned

#: level parameters fitted on the run's own evaluations, by k
LEVEL_LADDER: dict[int, tuple[str, ...]] = {1: ("L0",), 2: ("L0", "A"), 3: ("L0", "A", "alpha")}
#: fewest observed evaluations for each k
MIN_POINTS_FOR: dict[int, int] = {1: 1, 2: 4, 3: 6}
#: fewest other runs' cases a k is judged on (and a band calibrated on)
MIN_CASES = 2
#: up to this many other runs, each leave-one-run-out case refits the others without it; beyond, the joint fit of
#: all of them stands for each (a jackknife shortcut: one run among many moves the decay terms little)
EXACT_LEAVE_OUT = 16
#: the most other runs used as cases (evenly spread over them)
MAX_CASES = 24
#: the horizon ratios (step / cut) the band's spread is tabulated at
RATIO_GRID = np.exp(np.linspace(0.0, math.log(400.0), 121))
LOG_RATIO_GRID = np.log(RATIO_GRID)


@dataclass
class ScheduleFitCache:
    """Features and joint fits computed once, shared by many forecasts over the same runs (a leave-one-out, a
    page's reruns). Keyed by the runs themselves (held here, so an id is never reused) and what was asked; a
    cached value is exactly the value that would be computed. Safe to share between threads."""

    _entries: dict = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def _get(self, key: tuple, holders: tuple, compute):
        with self._lock:
            hit = self._entries.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], holders)):
            return hit[1]
        value = compute()
        with self._lock:
            self._entries[key] = (holders, value)
        return value

    def __len__(self) -> int:
        return len(self._entries)

    def features(self, run: ScheduleRun, steps: np.ndarray):
        """The law's features of ``run``'s plan at ``steps``."""
        steps = np.asarray(steps, dtype=float)
        key = ("features", id(run.schedule), steps.tobytes())
        return self._get(key, (run.schedule,), lambda: schedule_features(run.schedule, steps))

    def fit_data(self, run: ScheduleRun, upto: float | None = None):
        """``(features, values)`` of ``run``'s evaluations (up to step ``upto``), thinned for a joint fit."""
        mask = np.ones(run.steps.size, bool) if upto is None else run.seen(upto)
        steps, values = thinned(run.steps[mask], run.values[mask])
        return self.features(run, steps), values

    def joint(self, family: ScheduleFamily, runs: Sequence[ScheduleRun]) -> ScheduleLawFit:
        """The joint fit of ``runs`` (module docstring), once per family and set of runs."""
        runs = sorted(runs, key=lambda r: r.source)
        key = ("joint", family.name, tuple(id(r.log) for r in runs))
        return self._get(key, tuple(r.log for r in runs), lambda: joint_fit(family, runs, self))


def decay_seen(runs: Sequence[ScheduleRun]) -> bool:
    """Whether any run's evaluations go past a material fall of its rate (its decay terms can be identified)."""
    return any(r.decays_before(float(r.steps[-1])) for r in runs if r.steps.size)


def no_drop(family: ScheduleFamily) -> dict[str, float]:
    """Decay terms that lower the loss by nothing (each at its lower bound: the law is a power law in the area)."""
    return {n: family.lower[n] for n in family.decay_params}


def joint_fit(family: ScheduleFamily, runs: Sequence[ScheduleRun], cache: ScheduleFitCache) -> ScheduleLawFit:
    """Fit ``runs`` at once: one level per group, the decay terms shared (fixed to no drop when no run saw one)."""
    data = [cache.fit_data(r) for r in runs]
    fixed = None if decay_seen(runs) else no_drop(family)
    peak = float(np.median([r.schedule.peak for r in runs]))
    return fit_schedule_law(data, family, groups=[r.group for r in runs], fixed=fixed, peak=peak)


def reference_level(fit: ScheduleLawFit, family: ScheduleFamily, features, values: np.ndarray, group: Hashable,
                    *, exclude: Hashable | None = None) -> tuple[Hashable, dict[str, float]] | None:
    """The level a run takes what it does not fit from: its own ``group``'s in ``fit``, else the group whose law has
    the shape closest to the observed ``values`` (the spread of the log residuals once their mean is taken out);
    None when ``fit`` has no other group (``exclude``: a group not to take)."""
    if group in fit.levels and group != exclude:
        return group, dict(fit.levels[group])
    best = None
    for g in fit.levels:
        if g == exclude:
            continue
        pred = family.evaluate(features, fit.params(g))
        if np.any(pred <= 0):
            continue
        r = np.log(pred) - np.log(values)
        score = float(np.std(r)) if r.size > 1 else 0.0
        if best is None or score < best[0]:
            best = (score, g)
    return None if best is None else (best[1], dict(fit.levels[best[1]]))


def fit_level(family: ScheduleFamily, features, values: np.ndarray, decay: Mapping[str, float], k: int,
              reference: Mapping[str, float] | None) -> dict[str, float]:
    """Every parameter of the run's law: ``LEVEL_LADDER[k]`` fitted on its observed ``values``, the rest of its level
    from ``reference``, the ``decay`` terms as given."""
    free = LEVEL_LADDER[k]
    if reference is None and k < 3:
        raise InputError(f"{family.name}: expected a reference level to fit {', '.join(free)} alone; got none.")
    fixed_level = {n: v for n, v in (reference or {}).items() if n not in free}
    start = {**(reference or {}), **decay} if reference else None
    fit = fit_schedule_law([(features, values)], family, fixed=dict(decay), fixed_levels={0: fixed_level},
                           start=start)
    return fit.params(0)


@dataclass(frozen=True)
class LevelCase:
    """One other run cut at the observed fraction and forecast from the rest: its log errors ``ln(L̂/L)`` at its
    evaluations past the cut, and how far past (``ratio = step / cut``)."""

    source: str
    k: int
    ratios: np.ndarray
    errors: np.ndarray
    end_error: float
    cut: float = math.nan
    params: dict = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class LevelCalibration:
    """What leave-one-run-out on the other runs teaches (module docstring)."""

    k: int
    cases: tuple[LevelCase, ...]
    scores: dict[int, float]
    description: str
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def n_cases(self) -> int:
        return len(self.cases)

    def spread(self, ratio) -> tuple[np.ndarray, np.ndarray]:
        """The rms log error of the cases at horizon ``ratio`` (non-decreasing in the ratio) and how many cases
        reached it; past the farthest case the spread stays at its last value."""
        ratio = np.atleast_1d(np.asarray(ratio, dtype=float))
        table, counts = self._table()
        if table is None:
            errs = np.concatenate([c.errors for c in self.cases]) if self.cases else np.array([])
            flat = math.sqrt(float(np.mean(np.square(errs)))) if errs.size else math.nan
            return np.full(ratio.shape, flat), np.full(ratio.shape, len(self.cases))
        return (np.interp(np.log(ratio), LOG_RATIO_GRID, table),
                np.interp(np.log(ratio), LOG_RATIO_GRID, counts).round().astype(int))

    def _table(self) -> tuple[np.ndarray | None, np.ndarray]:
        """The spread and case count at each ratio of ``RATIO_GRID`` (computed once)."""
        cached = self._cache.get("table")
        if cached is not None:
            return cached
        table = np.full(RATIO_GRID.size, np.nan)
        counts = np.zeros(RATIO_GRID.size, int)
        if self.cases:
            errs = np.array([np.interp(RATIO_GRID, c.ratios, c.errors) for c in self.cases])
            inside = np.array([(RATIO_GRID >= c.ratios[0]) & (RATIO_GRID <= c.ratios[-1]) for c in self.cases])
            n = inside.sum(axis=0)
            sq = np.where(inside, errs ** 2, 0.0).sum(axis=0)
            ok = n >= MIN_CASES
            table[ok] = np.sqrt(sq[ok] / n[ok])
            counts[ok] = n[ok]
        if not np.isfinite(table).any():
            cached = (None, counts)
        else:
            first = int(np.flatnonzero(np.isfinite(table))[0])
            table[:first] = table[first]
            counts[:first] = counts[first]         # nearer than the nearest case: its spread and its count
            table = np.fmax.accumulate(np.where(np.isfinite(table), table, -np.inf))
            cached = (table, np.maximum.accumulate(counts))
        self._cache["table"] = cached
        return cached

    def reach(self) -> float:
        """The farthest horizon ratio a case was checked at."""
        return max((float(c.ratios[-1]) for c in self.cases if c.ratios.size), default=1.0)


def calibrate_levels(family: ScheduleFamily, donors: Sequence[ScheduleRun], fraction: float, *, same_group: bool,
                     allowed: Sequence[int], cache: ScheduleFitCache) -> LevelCalibration:
    """Leave-one-run-out on ``donors`` at ``fraction`` for each k of ``allowed`` (module docstring).

    With more than ``EXACT_LEAVE_OUT`` other runs, each case takes the decay terms of the joint fit of all of them
    (one run among many moves that fit little), and at most ``MAX_CASES`` of them, evenly spread, are cases."""
    cases: list[LevelCase] = []
    exact = len(donors) <= EXACT_LEAVE_OUT
    chosen = list(donors) if len(donors) <= MAX_CASES else \
        [donors[int(i)] for i in np.unique(np.linspace(0, len(donors) - 1, MAX_CASES).round())]
    try:
        whole = None if exact else cache.joint(family, donors)
    except (FitError, InputError):
        return _choose([], allowed)            # nothing to learn from: the band is not calibrated (and says so)
    for d in chosen:
        cut = d.cut_step(fraction)
        seen = d.seen(cut)
        if not seen.any() or seen.all():
            continue
        pool = [r for r in donors if r is not d and (same_group or r.group != d.group)]
        mimics = True
        if not pool or (not decay_seen(pool) and decay_seen([r for r in donors if r is not d])):
            # this run's group is not among the others, and leaving each other run's group out leaves nothing to
            # learn from: the other run is forecast from its own group, which says nothing of a reference level
            # from another group, so only k = 3 (no reference level) is judged
            pool, mimics = [r for r in donors if r is not d], False
        if not pool:
            continue
        try:
            fit = cache.joint(family, pool) if exact else whole
        except (FitError, InputError):
            continue
        steps_seen, values_seen = d.steps[seen], d.values[seen]
        feats_seen = cache.features(d, steps_seen)
        ref = reference_level(fit, family, feats_seen, values_seen, d.group,
                              exclude=None if same_group else d.group)
        future = d.steps[~seen]
        feats_future = cache.features(d, future)
        for k in allowed:
            if seen.sum() < MIN_POINTS_FOR[k] or (k < 3 and (ref is None or not mimics)):
                continue
            try:
                params = fit_level(family, feats_seen, values_seen, fit.decay, k, ref[1] if ref else None)
            except (FitError, InputError):
                continue
            pred = family.evaluate(feats_future, params)
            if np.any(pred <= 0):
                continue
            errors = np.log(pred) - np.log(d.values[~seen])
            cases.append(LevelCase(d.source, k, future / cut, errors, float(errors[-1]), cut, params))
    return _choose(cases, allowed)


def _choose(cases: list[LevelCase], allowed: Sequence[int]) -> LevelCalibration:
    scores = {}
    for k in allowed:
        mine = [c for c in cases if c.k == k]
        if len(mine) >= MIN_CASES:
            scores[k] = float(np.mean([math.sqrt(float(np.mean(np.square(c.errors)))) for c in mine]))
    if scores:
        k = min(scores, key=lambda j: (scores[j], -j))
        what = (f"k = {k} ({', '.join(LEVEL_LADDER[k])} from this run) chosen by leave-one-run-out on "
                f"{len([c for c in cases if c.k == k])} other runs cut at the same fraction (rms error "
                + ", ".join(f"k={j}: {v:.2%}" for j, v in sorted(scores.items())) + ")")
    else:
        k = max(allowed)
        what = (f"fewer than {MIN_CASES} other runs could be cut at the same fraction and forecast: k = {k} "
                f"({', '.join(LEVEL_LADDER[k])} from this run), the band not calibrated on other runs")
    return LevelCalibration(k, tuple(c for c in cases if c.k == k), scores, what)
