"""Loss laws through a learning-rate schedule: their protocol, what they read of a schedule, and their fit.

A step-curve family (``core.curves.family``) sees the loss as a function of the step alone and cannot see a
cool-down coming. These families see it as a function of the learning rates seen so far:

* **multi-power law** (Luo et al., "A Multi-Power Law for Loss Curve Prediction Across Learning Rate
  Schedules", ICLR 2025, arXiv 2503.12811, Eq. 1):
  ``L(t) = L0 + A·(S1(t) + S_W)^(−α) − LD(t)``, ``LD(t) = B·Σ_{k≤t} (η_{k−1} − η_k)·G(η_k^(−γ)·S_k(t))``,
  ``G(x) = 1 − (C·x + 1)^(−β)``, ``S_k(t) = Σ_{τ=k..t} η_τ``; ``S1(t) + S_W`` is the area under the rate up to
  ``t``, warm-up included. Seven parameters.
* **LR-annealing law** (Tissue et al., "Scaling Law with Learning Rate Annealing", arXiv 2408.11029, Eq. 1):
  ``L(t) = L0 + A·S1(t)^(−α) − C·S2(t)``, ``S2(t) = Σ_{i≤t} m_i``, ``m_i = λ·m_{i−1} + (η_{i−1} − η_i)``,
  ``λ = 0.999``; summed over the falls of the rate, ``S2(t) = Σ_k Δ_k·(1 − λ^(t−k+1))/(1 − λ)``. Four parameters.

The laws live in ``core.curves.multi_power`` and ``core.curves.lr_annealing``; ``core.curves.registry`` names
them all (``SCHEDULE_FAMILIES``). Both sums run over the falls of the rate after the warm-up
(``PlannedSchedule.decay_events``: at most a few
hundred drops, each the fall over a piece of a decaying segment, so a plan of 10⁶ steps costs no more than one
of 10³). The first three parameters (``L0, A, α``: the run's power law in the area) are its **level**; the
others (**decay**) say how much a fall of the rate lowers the loss, and a run seen before its cool-down
cannot identify them: :func:`fit_schedule_law` fits several runs at once, each group of runs (one model on
one data set) with its own level and all sharing the decay terms, and fixes any parameter it is given.

Fits are robust least squares (Huber, scale ``ROBUST_SCALE``) on log residuals ``ln L̂ − ln L``, positive
parameters in log space, as the papers fit them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from scipy.optimize import least_squares
from threadpoolctl import threadpool_limits

from core.errors import FitError, InputError

#: the Huber scale of the log residuals: 0.1 % of the loss (the papers' δ = 1e-3)
ROBUST_SCALE = 1e-3
#: falls of the rate a curve is summed over (a cosine's continuous fall is cut into this many pieces)
MAX_EVENTS = 80
LEVEL_PARAMS = ("L0", "A", "alpha")


class Schedule(Protocol):
    """What a law reads of a planned schedule (``core.schedules.PlannedSchedule`` provides it)."""

    def area(self, steps) -> np.ndarray: ...

    def decay_events(self, *, after: float | None = None, max_events: int = 200) -> tuple[np.ndarray, ...]: ...


@dataclass(frozen=True, eq=False)
class ScheduleFeatures:
    """What a law needs of one schedule at the steps ``t`` it is evaluated at (computed once per run)."""

    steps: np.ndarray          # t
    area: np.ndarray           # S(t) = ∫_0^t η
    event_lr: np.ndarray       # η at each fall
    event_drop: np.ndarray     # the fall Δη
    since: np.ndarray          # (len(t), n_events): S(t) − S(k) where the fall k is before t, else 0
    before: np.ndarray         # (len(t), n_events): the fall k lies before t
    lags: np.ndarray           # (len(t), n_events): t − k (steps since the fall), 0 where it lies after


def schedule_features(schedule: Schedule, steps, *, max_events: int = MAX_EVENTS) -> ScheduleFeatures:
    """The :class:`ScheduleFeatures` of ``schedule`` at ``steps``."""
    t = np.asarray(steps, dtype=float)
    area = np.asarray(schedule.area(t), dtype=float)
    ek, ed, ee = schedule.decay_events(max_events=max_events)
    before = ek[None, :] <= t[:, None]
    since = np.where(before, area[:, None] - np.asarray(schedule.area(ek))[None, :], 0.0)
    lags = np.where(before, t[:, None] - ek[None, :], 0.0)
    return ScheduleFeatures(t, area, ee, ed, np.maximum(since, 0.0), before, lags)


#: the exponents a level's start is searched over (``_level_guess``)
LEVEL_ALPHA_GRID = np.linspace(0.05, 1.5, 30)


def _level_guess(area: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """The level ``L0 + A·S1^-α`` closest to the losses over a grid of α (for each α, ``L0`` and ``A`` by linear
    least squares, ``L0 >= 0`` and ``A > 0``): a start near the valley the three parameters share; α = 0.5 with
    ``L0`` below the lowest loss and ``A`` through the first point when no α of the grid fits so."""
    L0 = 0.8 * float(np.min(y))
    a0 = float(np.min(area[area > 0])) if np.any(area > 0) else 1.0
    guess = {"L0": L0, "A": max((float(y[np.argmin(area)]) - L0) * a0 ** 0.5, 1e-6), "alpha": 0.5}
    ok = (area > 0) & np.isfinite(y)
    if ok.sum() < 3:
        return guess
    s, v = area[ok], y[ok]
    best = math.inf
    for alpha in LEVEL_ALPHA_GRID:
        x = np.power(s, -alpha)
        X = np.column_stack([np.ones_like(x), x])
        (l0, a), *_ = np.linalg.lstsq(X, v, rcond=None)
        if not (l0 >= 0 and a > 0):
            continue
        sse = float(np.sum(np.square(l0 + a * x - v)))
        if sse < best:
            best, guess = sse, {"L0": float(l0), "A": float(a), "alpha": float(alpha)}
    return guess


@dataclass(frozen=True)
class ScheduleFamily:
    """A loss law through the schedule (module docstring).

    Attributes
    ----------
    name, label, formula : str
    param_names : tuple of str
        Level parameters first (``LEVEL_PARAMS``), then the decay terms.
    decay_params : tuple of str
        What a run seen before its cool-down cannot identify.
    loss : callable
        ``loss(features, params) -> L`` at the features' steps.
    lower, upper : dict of str to float
        Bounds of each parameter (natural units).
    log_params : tuple of str
        Parameters fitted in log space (positive, spanning decades).
    decay_starts : callable
        ``decay_starts(peak) -> list of dict``: starting values of the decay terms for rates of ``peak``.
    jac : callable
        ``jac(features, params) -> (n, n_params)``: the derivatives of the loss by each parameter, in the order
        of ``param_names`` (checked against finite differences by the tests).
    reference : str
        Where the law is published.
    example : dict of str to float
        Parameters of a realistic law (every name of ``param_names``): what the contract tests
        (tests/contracts) evaluate on two schedules and fit back, naming no family.
    """

    name: str
    label: str
    formula: str
    param_names: tuple[str, ...]
    decay_params: tuple[str, ...]
    loss: Callable[[ScheduleFeatures, Sequence[float]], np.ndarray]
    lower: Mapping[str, float]
    upper: Mapping[str, float]
    log_params: tuple[str, ...]
    decay_starts: Callable[[float], list[dict[str, float]]]
    jac: Callable[[ScheduleFeatures, Sequence[float]], np.ndarray]
    reference: str = ""
    example: Mapping[str, float] = field(default_factory=dict)

    @property
    def level_params(self) -> tuple[str, ...]:
        return tuple(n for n in self.param_names if n not in self.decay_params)

    def evaluate(self, features: ScheduleFeatures, params: Mapping[str, float]) -> np.ndarray:
        """The law at the features' steps for ``params`` (a dict with every parameter)."""
        return self.loss(features, [params[n] for n in self.param_names])


# --------------------------------------------------------------------------- the fit
@dataclass(frozen=True)
class ScheduleLawFit:
    """Several runs fitted at once: the decay terms shared, each group's level its own.

    Attributes
    ----------
    family : str
    decay : dict
        The shared decay terms (fitted, or as fixed).
    levels : dict
        Group → its level parameters (``L0``, ``A``, ``alpha``).
    stderr : dict
        ``"<group>.<name>"`` or ``"<name>"`` (shared) → standard error; ``inf`` when it cannot be estimated,
        ``0`` never (a fixed parameter has none and is absent).
    fixed : tuple of str
        Parameters that were given, not fitted.
    n_points : int
    rms : float
        Root mean square of the log residuals (a relative error of the loss).
    converged : bool
    flags : tuple of str
    """

    family: str
    decay: dict[str, float]
    levels: dict[Hashable, dict[str, float]]
    stderr: dict[str, float]
    fixed: tuple[str, ...]
    n_points: int
    rms: float
    converged: bool
    flags: tuple[str, ...] = field(default=())

    def params(self, group: Hashable) -> dict[str, float]:
        """Every parameter of ``group``'s law."""
        return {**self.levels[group], **self.decay}


def _transform(name: str, family: ScheduleFamily, value: float) -> float:
    return math.log(value) if name in family.log_params else value


def _untransform(name: str, family: ScheduleFamily, value: float) -> float:
    return math.exp(value) if name in family.log_params else value


def fit_schedule_law(curves: Sequence[tuple[ScheduleFeatures, np.ndarray]], family: ScheduleFamily, *,
                     groups: Sequence[Hashable] | None = None, fixed: Mapping[str, float] | None = None,
                     fixed_levels: Mapping[Hashable, Mapping[str, float]] | None = None,
                     start: Mapping[str, float] | None = None, peak: float | None = None) -> ScheduleLawFit:
    """Fit ``family`` to several runs' losses at once (module docstring).

    Parameters
    ----------
    curves : sequence of (ScheduleFeatures, y)
        Each run's features at its evaluated steps and its losses there (> 0).
    family : ScheduleFamily
    groups : sequence, optional
        The group of each run (one level per group); default: one group for all.
    fixed : mapping, optional
        Parameters not fitted (shared ones such as the decay terms taken from other runs).
    fixed_levels : mapping, optional
        Group → level parameters not fitted for that group.
    start : mapping, optional
        Starting values (a reference law's, ``"<group>.<name>"`` or ``"<name>"``), tried first.
    peak : float, optional
        The rates' typical peak, to scale the decay terms' starting values (default: 1).

    Raises
    ------
    InputError
        No points, a non-positive loss, or a group with fewer points than free parameters.
    FitError
        The optimiser did not finish from any start.

    Examples
    --------
    Noise-free losses of one run under a step schedule are recovered:

    >>> from core.curves.lr_annealing import LR_ANNEALING
    >>> from core.schedules import build_schedule
    >>> s = build_schedule("step", total=20000, peak=1.0, warmup=500, drops=(12000,), factor=0.3)
    >>> t = np.arange(600, 20001, 200.0)
    >>> f = schedule_features(s, t)
    >>> truth = {"L0": 2.0, "A": 3.0, "alpha": 0.4, "C": 2e-4}
    >>> fit = fit_schedule_law([(f, LR_ANNEALING.evaluate(f, truth))], LR_ANNEALING)
    >>> {k: float(f'{v:.3g}') for k, v in fit.params(0).items()}
    {'L0': 2.0, 'A': 3.0, 'alpha': 0.4, 'C': 0.0002}
    """
    law = family
    fixed = dict(fixed or {})
    groups = list(groups) if groups is not None else [0] * len(curves)
    if not curves or len(groups) != len(curves):
        raise InputError(f"{law.name}: expected one group per run and at least one run; got {len(curves)} run(s) "
                         f"and {len(groups)} group(s).")
    ys = [np.asarray(y, dtype=float) for _, y in curves]
    if any(y.size == 0 or not np.all(np.isfinite(y)) or np.any(y <= 0) for y in ys):
        raise InputError(f"{law.name}: expected finite losses > 0 at every evaluated step; got a missing, "
                         "infinite or non-positive one.")
    order = list(dict.fromkeys(groups))
    fixed_levels = {g: dict(v) for g, v in (fixed_levels or {}).items()}
    free: list[tuple[str, Hashable | None]] = [(n, None) for n in law.decay_params if n not in fixed]
    for g in order:
        free += [(n, g) for n in law.level_params if n not in fixed and n not in fixed_levels.get(g, {})]
    n_points = sum(y.size for y in ys)
    if n_points < len(free) + 1:
        raise InputError(f"{law.name}: expected more evaluated points than the {len(free)} parameters fitted; got "
                         f"{n_points}. Observe more of the run or take more terms from other runs.")
    logs = [np.log(y) for y in ys]

    def params_of(x) -> dict[Hashable, list[float]]:
        values = {**fixed}
        per = {g: {**values, **fixed_levels.get(g, {})} for g in order}
        for (n, g), v in zip(free, x):
            v = _untransform(n, law, v)
            if g is None:
                for d in per.values():
                    d[n] = v
            else:
                per[g][n] = v
        return {g: [d[n] for n in law.param_names] for g, d in per.items()}

    def residuals(x) -> np.ndarray:
        per = params_of(x)
        out = []
        for (f, _), g, ly in zip(curves, groups, logs):
            pred = law.loss(f, per[g])
            out.append(np.log(np.clip(pred, 1e-12, None)) - ly)
        r = np.concatenate(out)
        return np.where(np.isfinite(r), r, 1e3)

    # d residual / d x: (dL/dθ) / L, times θ for a parameter fitted in log space; a group's level only moves its
    # own runs' rows
    index = {n: i for i, n in enumerate(law.param_names)}
    rows = np.cumsum([0] + [y.size for y in ys])

    def jacobian(x) -> np.ndarray:
        per = params_of(x)
        J = np.zeros((rows[-1], len(free)))
        for i, ((f, _), g) in enumerate(zip(curves, groups)):
            p = per[g]
            pred = np.clip(law.loss(f, p), 1e-12, None)
            d = law.jac(f, p) / pred[:, None]
            for j, (n, gg) in enumerate(free):
                if gg is None or gg == g:
                    col = d[:, index[n]]
                    J[rows[i]:rows[i + 1], j] = col * (p[index[n]] if n in law.log_params else 1.0)
        return np.where(np.isfinite(J), J, 0.0)

    lower = [_transform(n, law, law.lower[n]) for n, _ in free]
    upper = [_transform(n, law, law.upper[n]) for n, _ in free]
    starts = _starts(law, free, curves, groups, order, ys, start, peak or 1.0)
    best = None
    # a fit of levels alone (the decay terms given) is scaled by the Jacobian's columns: L0, A and α lie along a
    # narrow valley on a short curve, where unscaled steps ran out of evaluations far from the optimum (measured:
    # 600 evaluations and a 1.2 % misfit against 28 and none, on a noise-free power law seen to a quarter of its
    # steps). With decay terms free the unscaled steps are kept: scaled, the multi-power law's fits of the
    # paper's curves fell into worse minima
    x_scale = "jac" if all(g is not None for _, g in free) else 1.0
    # the optimiser's many small SVDs run ~50x slower with a multi-threaded BLAS on a loaded machine (the threads
    # wait for each other): one thread for the fit
    with threadpool_limits(1, user_api="blas"):
        for x0 in starts:
            x0 = np.clip(x0, np.array(lower) + 1e-9, np.array(upper) - 1e-9)
            try:
                r = least_squares(residuals, x0, jac=jacobian, bounds=(lower, upper), loss="huber",
                                  f_scale=ROBUST_SCALE, max_nfev=200 * max(1, len(free)), x_scale=x_scale)
            except (ValueError, np.linalg.LinAlgError):
                continue
            if best is None or r.cost < best.cost:
                best = r
    if best is None:
        raise FitError(f"{law.name}: the optimiser did not finish from any start on {len(curves)} run(s).")
    return _package(law, best, free, order, fixed, fixed_levels, params_of, n_points)


def _starts(law, free, curves, groups, order, ys, start, peak) -> list[np.ndarray]:
    level = {}
    for g in order:
        idx = [i for i, gg in enumerate(groups) if gg == g]
        area = np.concatenate([curves[i][0].area for i in idx])
        level[g] = _level_guess(area, np.concatenate([ys[i] for i in idx]))
    candidates = ([dict(start)] if start else []) + law.decay_starts(peak)
    out: list[np.ndarray] = []
    for decay in candidates:
        x = []
        for n, g in free:
            if g is None:
                v = decay.get(n)
            else:
                v = decay.get(f"{g}.{n}", decay.get(n, level[g][n]))
            if v is None:
                v = law.decay_starts(peak)[0][n]
            x.append(_transform(n, law, float(v)))
        if not any(np.array_equal(x, o) for o in out):
            out.append(np.array(x))
    return out


def _package(law, r, free, order, fixed, fixed_levels, params_of, n_points) -> ScheduleLawFit:
    per = params_of(r.x)
    names = law.param_names
    decay = {n: per[order[0]][names.index(n)] for n in law.decay_params}
    levels = {g: {n: per[g][names.index(n)] for n in law.level_params} for g in order}
    stderr: dict[str, float] = {}
    flags: list[str] = []
    nfree = n_points - len(free)
    try:
        jac = r.jac
        cov = np.linalg.pinv(jac.T @ jac) * (2 * r.cost / max(nfree, 1))
        se = np.sqrt(np.clip(np.diag(cov), 0, None))
        if not np.all(np.isfinite(se)) or np.any(se == 0):
            raise np.linalg.LinAlgError
    except (np.linalg.LinAlgError, ValueError):
        se = np.full(len(free), np.inf)
    for (n, g), s, x in zip(free, se, r.x):
        value = _untransform(n, law, x)
        key = n if g is None else f"{g}.{n}"
        stderr[key] = float(s * value) if n in law.log_params else float(s)
        lo, hi = law.lower[n], law.upper[n]
        if np.isclose(value, lo, rtol=1e-6, atol=1e-12) or np.isclose(value, hi, rtol=1e-6):
            flags.append(f"{key} at its bound {value:.3g}")
    rms = float(np.sqrt(np.mean(np.square(r.fun))))
    fixed_names = tuple(fixed) + tuple(f"{g}.{n}" for g, d in fixed_levels.items() for n in d)
    return ScheduleLawFit(law.name, decay, levels, stderr, fixed_names, n_points, rms, bool(r.success), tuple(flags))


