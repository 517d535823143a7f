"""``PlannedSchedule``: the learning rate at every step of a run, from its first to its last planned step.

A schedule is held as knots ``(step, lr)`` with linear interpolation between them, the way a CSV of
``step, lr`` rows describes it: a constant phase is two knots, a cosine a few hundred. Everything a
schedule-aware loss law needs is computed from the knots exactly:

* the rate at any step (:meth:`PlannedSchedule.lr_at`);
* the area under the rate from step 0 to ``t``, ``S(t) = ∫ η`` (:meth:`PlannedSchedule.area`): the
  multi-power law's ``S1(t) + S_W`` and the LR-annealing law's ``S1``;
* the decreases of the rate after the warm-up, as at most ``max_events`` drops (each the fall of the rate
  over a piece of a decaying segment, placed at the piece's middle, with the rate there:
  :meth:`PlannedSchedule.decay_events`): the loss-drop terms of both laws sum over them.

A run's steps count from 1; the rate before the first knot is the first knot's. Plans of millions of
steps (an MLPerf run's cosine over 1.2 M steps) stay a few hundred knots, never an array per step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from core.errors import InputError

#: the units a schedule's rates can be in: the optimiser's own rates, or multipliers of the peak rate
#: (a NanoGPT speedrun's ``get_lr`` returns multipliers; its optimisers' own rates differ per group)
LR_UNITS = ("absolute", "relative to peak")
#: the rate changes "materially" when it moves by more than this fraction of its peak after the warm-up
MATERIAL_CHANGE = 0.02


@dataclass(frozen=True, eq=False)
class PlannedSchedule:
    """The planned learning rate from step 0 to the last planned step (module docstring).

    Parameters
    ----------
    steps, lr : tuple of float
        The knots: increasing steps (the first >= 0) and the rate at each (>= 0, finite); the rate is
        linear between knots. ``steps[-1]`` is the last planned step.
    source : str
        Where the plan came from, in words ("declared: wsd:...", "the lr column of run.csv", ...).
    unit : {"absolute", "relative to peak"}, default "absolute"
    spec : str or None
        The declared spec it was built from, when it was.

    Examples
    --------
    >>> s = PlannedSchedule((0.0, 100.0, 200.0), (1.0, 1.0, 0.0), source="hand")
    >>> float(s.lr_at(150)), float(s.area(100)), float(s.area(200))     # 100 × 1, then a triangle of 50
    (0.5, 100.0, 150.0)
    >>> s.total_steps, s.warmup_end
    (200.0, 0.0)
    """

    steps: tuple[float, ...]
    lr: tuple[float, ...]
    source: str = ""
    unit: str = "absolute"
    spec: str | None = None
    _arrays: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        s = np.asarray(self.steps, dtype=float)
        r = np.asarray(self.lr, dtype=float)
        where = self.source or "schedule"
        if s.ndim != 1 or s.shape != r.shape or s.size < 2:
            raise InputError(f"{where}: expected at least two (step, lr) points of the same length; got "
                             f"{s.size} step(s) and {r.size} rate(s).")
        if not (np.all(np.isfinite(s)) and np.all(np.isfinite(r))):
            raise InputError(f"{where}: expected finite steps and learning rates; got NaN or inf.")
        if s[0] < 0 or np.any(np.diff(s) <= 0):
            raise InputError(f"{where}: expected steps >= 0 that increase row by row; got {_first_bad(s)}. "
                             "Sort the rows by step and drop repeated steps.")
        if np.any(r < 0):
            raise InputError(f"{where}: expected learning rates >= 0; got {float(r.min()):g}.")
        if not np.any(r > 0):
            raise InputError(f"{where}: expected a learning rate above 0 somewhere; got only zeros.")
        if self.unit not in LR_UNITS:
            raise InputError(f"{where}: expected a rate unit among {', '.join(LR_UNITS)}; got {self.unit!r}.")
        object.__setattr__(self, "steps", tuple(float(v) for v in s))
        object.__setattr__(self, "lr", tuple(float(v) for v in r))

    # ----------------------------------------------------------------- arrays (computed once; frozen content)
    def _get(self, name: str):
        arrays = self._arrays
        if not arrays:
            s = np.asarray(self.steps)
            r = np.asarray(self.lr)
            arrays["s"], arrays["r"] = s, r
            arrays["cum"] = np.r_[0.0, np.cumsum(np.diff(s) * (r[1:] + r[:-1]) / 2)] + s[0] * r[0]
        return arrays[name]

    @property
    def total_steps(self) -> float:
        """The last planned step."""
        return self.steps[-1]

    @property
    def peak(self) -> float:
        """The largest planned rate."""
        return max(self.lr)

    @property
    def warmup_end(self) -> float:
        """The step where the first rise of the rate ends (0 when the plan starts at its peak).

        >>> PlannedSchedule((0.0, 10.0, 20.0), (0.0, 1.0, 1.0)).warmup_end
        10.0
        """
        r = self._get("r")
        i = 0
        while i + 1 < r.size and r[i + 1] > r[i]:
            i += 1
        return float(self.steps[i])

    def lr_at(self, steps) -> np.ndarray:
        """The rate at ``steps`` (linear between knots; the first knot's rate before it, the last's after)."""
        return np.interp(np.asarray(steps, dtype=float), self._get("s"), self._get("r"))

    def area(self, steps) -> np.ndarray:
        """``∫_0^t η``: the sum of the rates over the steps up to ``t`` (module docstring)."""
        t = np.asarray(steps, dtype=float)
        s, r, cum = self._get("s"), self._get("r"), self._get("cum")
        i = np.clip(np.searchsorted(s, t, side="right") - 1, 0, s.size - 1)
        before = t < s[0]
        at = np.interp(t, s, r)
        out = cum[i] + (t - s[i]) * (r[i] + at) / 2
        return np.where(before, t * r[0], out)

    def decay_events(self, *, after: float | None = None, max_events: int = 200) -> tuple[np.ndarray, ...]:
        """The falls of the rate after step ``after`` (default: the warm-up's end) as at most ``max_events``
        drops: ``(step, drop, lr)`` arrays, each drop the fall of the rate over one piece of a falling segment,
        at the piece's middle step, with the rate there. A step schedule's drop is one event.

        >>> s = PlannedSchedule((0.0, 100.0, 101.0, 200.0), (1.0, 1.0, 0.1, 0.1))
        >>> [v.tolist() for v in s.decay_events()]
        [[100.5], [0.9], [0.55]]
        """
        start = self.warmup_end if after is None else float(after)
        key = ("events", start, int(max_events))
        cached = self._arrays.get(key)
        if cached is None:
            cached = self._arrays[key] = self._decay_events(start, int(max_events))
        return cached

    def _decay_events(self, start: float, max_events: int) -> tuple[np.ndarray, ...]:
        s, r = self._get("s"), self._get("r")
        falling = np.flatnonzero((r[1:] < r[:-1]) & (s[1:] > start))
        if falling.size == 0:
            return np.zeros(0), np.zeros(0), np.zeros(0)
        a = np.maximum(s[falling], start)
        b = s[falling + 1]
        ra, rb = self.lr_at(a), r[falling + 1]
        drop = ra - rb
        pieces = np.maximum(1, np.round(max_events * drop / drop.sum())).astype(int)
        pieces = np.minimum(pieces, np.maximum(1, (b - a).astype(int)))
        seg = np.repeat(np.arange(falling.size), pieces)
        first = np.r_[0, np.cumsum(pieces)[:-1]]
        j = np.arange(seg.size) - first[seg]                  # the piece's index within its segment
        width = (b - a)[seg] / pieces[seg]
        lo = a[seg] + j * width
        hi = lo + width
        slope = (rb - ra)[seg] / (b - a)[seg]
        lr_lo = ra[seg] + slope * (lo - a[seg])
        lr_hi = ra[seg] + slope * (hi - a[seg])
        steps, drops, rates = (lo + hi) / 2, lr_lo - lr_hi, (lr_lo + lr_hi) / 2
        if steps.size > max_events:         # more falling segments than events: merge neighbours, drop-weighted
            group = np.minimum((np.arange(steps.size) * max_events) // steps.size, max_events - 1)
            total = np.bincount(group, weights=drops)
            steps = np.bincount(group, weights=drops * steps) / total
            rates = np.bincount(group, weights=drops * rates) / total
            drops = total
        return steps, drops, rates

    # ----------------------------------------------------------------- what it says
    def changes_after(self, step: float) -> bool:
        """Whether the rate moves by more than ``MATERIAL_CHANGE`` of its peak between ``step`` (or the warm-up's
        end, whichever is later) and the plan's end.

        >>> flat, falling = PlannedSchedule((0.0, 100.0), (1.0, 1.0)), PlannedSchedule((0.0, 100.0), (1.0, 0.5))
        >>> flat.changes_after(10), falling.changes_after(10)
        (False, True)
        """
        start = max(float(step), self.warmup_end)
        grid = np.r_[start, [v for v in self.steps if v > start]]
        rates = self.lr_at(grid)
        return bool(np.ptp(rates) > MATERIAL_CHANGE * self.peak) if rates.size else False

    def cut_at(self, step: float) -> PlannedSchedule:
        """The plan up to ``step`` only (the part a run has trained through)."""
        step = float(step)
        if step >= self.total_steps:
            return self
        keep = [i for i, v in enumerate(self.steps) if v < step]
        steps = tuple(self.steps[i] for i in keep) + (step,)
        lr = tuple(self.lr[i] for i in keep) + (float(self.lr_at(step)),)
        if len(steps) < 2:
            steps, lr = (0.0, step), (lr[-1], lr[-1])
        return replace(self, steps=steps, lr=lr, _arrays={})

    def then(self, other: PlannedSchedule, *, at: float, source: str | None = None) -> PlannedSchedule:
        """This plan up to step ``at``, then ``other`` after it (a run's own past, then a new plan for its future).

        >>> past = PlannedSchedule((0.0, 100.0), (1.0, 1.0), source="log")
        >>> new = PlannedSchedule((0.0, 150.0, 200.0), (1.0, 1.0, 0.1), source="wsd")
        >>> joined = past.then(new, at=80)
        >>> joined.steps, joined.lr
        ((0.0, 80.0, 150.0, 200.0), (1.0, 1.0, 1.0, 0.1))
        """
        at = float(at)
        if other.unit != self.unit:
            raise InputError(f"{other.source or 'planned schedule'}: expected rates {self.unit}, as the run's own "
                             f"plan; got {other.unit}. Give the planned rates in the same unit.")
        if other.total_steps <= at:
            raise InputError(f"{other.source or 'planned schedule'}: expected a plan that goes past step {at:,.0f}, "
                             f"where the observed part ends; it ends at step {other.total_steps:,.0f}.")
        head = self.cut_at(at)              # what was trained stays as the log says it, to step ``at``
        tail = [(s, r) for s, r in zip(other.steps, other.lr) if s > at]
        first = float(other.lr_at(at))
        if not math.isclose(first, head.lr[-1], rel_tol=1e-9):
            # the new plan starts at its own rate within one step of ``at`` (a jump, not a ramp over the past)
            jump = at + min(1.0, (tail[0][0] - at) / 2)
            tail = [(jump, float(other.lr_at(jump)))] + tail
        steps = head.steps + tuple(s for s, _ in tail)
        lr = head.lr + tuple(r for _, r in tail)
        return PlannedSchedule(steps, lr, source=source or f"{self.source} to step {at:,.0f}, then {other.source}",
                               unit=self.unit, spec=other.spec)

    def held_to(self, step: float, *, source: str | None = None) -> PlannedSchedule:
        """This plan, its last rate held to ``step`` (a run in progress whose future is not declared, as a planner
        of its cool-down takes it: the stable phase goes on until a cool-down is chosen).

        >>> PlannedSchedule((0.0, 100.0), (0.0, 1.0)).held_to(300).steps
        (0.0, 100.0, 300.0)
        """
        if step <= self.total_steps:
            return self
        return replace(self, steps=self.steps + (float(step),), lr=self.lr + (self.lr[-1],),
                       source=source or f"{self.source}, its last rate held to step {step:,.0f}", _arrays={})

    def scaled(self, factor: float, *, source: str | None = None) -> PlannedSchedule:
        """A plan in multipliers of the peak as absolute rates, the peak being ``factor``."""
        if self.unit == "absolute":
            return self
        return replace(self, lr=tuple(r * float(factor) for r in self.lr), unit="absolute",
                       source=source or f"{self.source} × peak {factor:.3g}", _arrays={})

    def describe(self) -> str:
        """One line: where the plan came from and its length."""
        unit = "" if self.unit == "absolute" else " (rates relative to the peak)"
        return f"{self.source}: {self.total_steps:,.0f} steps, peak {self.peak:.3g}{unit}"

    def to_rows(self, n: int = 400) -> tuple[np.ndarray, np.ndarray]:
        """``(step, lr)`` at the knots and ``n`` evenly spaced steps (for a chart or a CSV)."""
        grid = np.union1d(np.linspace(self.steps[0], self.total_steps, n), self._get("s"))
        return grid, self.lr_at(grid)

    def key(self) -> tuple:
        """A hashable identity of the plan's content (for caches)."""
        return (self.steps, self.lr, self.unit)


def _first_bad(s: np.ndarray) -> str:
    if s[0] < 0:
        return f"step {s[0]:g}"
    i = int(np.flatnonzero(np.diff(s) <= 0)[0])
    return f"step {s[i + 1]:g} after step {s[i]:g}"


def schedule_from_points(steps, lr, *, source: str, unit: str = "absolute",
                         warmup_from_zero: bool = True) -> PlannedSchedule:
    """A plan through logged ``(step, lr)`` points, linear between them; rows with a missing rate are skipped.

    A log's first logged row is often past step 0 (a rate logged every 128 steps from step 2,176): with
    ``warmup_from_zero`` the rate before it is taken to rise linearly from 0 at step 0, as a warm-up does
    (declare the schedule when it did not). Repeated steps keep their last rate.

    >>> s = schedule_from_points([100, 200, 300], [1e-3, 1e-3, 5e-4], source="lr column")
    >>> s.steps, s.lr
    ((0.0, 100.0, 200.0, 300.0), (0.0, 0.001, 0.001, 0.0005))
    """
    s = np.asarray(steps, dtype=float)
    r = np.asarray(lr, dtype=float)
    ok = np.isfinite(s) & np.isfinite(r)
    s, r = s[ok], r[ok]
    if s.size < 2:
        raise InputError(f"{source}: expected at least two rows with a step and a learning rate; got {s.size}.")
    order = np.argsort(s, kind="stable")
    s, r = s[order], r[order]
    last = np.r_[s[1:] != s[:-1], True]
    s, r = s[last], r[last]
    if warmup_from_zero and s[0] > 1:
        s, r = np.r_[0.0, s], np.r_[0.0, r]
    return PlannedSchedule(tuple(s), tuple(r), source=source, unit=unit)
