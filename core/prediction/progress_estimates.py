"""The two estimates a progress prediction combines, each a ProgressEstimate: the power law
extrapolated from the run's own evaluations, and the prior from the other runs; and ProgressCache,
the per-run work a backtest does once.
"""

from __future__ import annotations

import math
import threading
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from core.curves import fit_curve
from core.defaults import DEFAULT_LEVEL
from core.errors import FitError, FitWarning, InputError
from core.logs import RunLog
from core.prediction.progress_measure import (
    evaluation_points,
    first_points,
    progress_to_target,
    progress_unit,
)
from core.prediction.progress_units import (
    DATA_UNITS,
    ProgressUnits,
    left_out_summary,
    pooled_value,
    progress_units,
)
from core.runs import metric_column
from core.targets import Target

#: the least log-space spread a prior from other runs is given (seed noise at one batch size, ~2 %)
MIN_PRIOR_SD = 0.02
#: fewest evaluations a power law is fitted to
MIN_POINTS = 4
#: the family of the extrapolation: a power law with a floor, L = E + A·D^(−α)
POWER_LAW = "pow3"


@dataclass(frozen=True)
class ProgressEstimate:
    """Progress to target (``value``, ``inf`` = may never get there) with a ``level`` interval.

    ``value`` None: this source has no answer (``description`` says why). ``left_out``: the other runs a prior
    did not pool, each with its reason (``(source, reason)``), for a page or the command line to list.
    """

    source: str
    unit: str
    value: float | None
    low: float | None = None
    high: float | None = None
    description: str = ""
    left_out: tuple[tuple[str, str], ...] = ()

    @property
    def available(self) -> bool:
        return self.value is not None and math.isfinite(self.value)

    def to_dict(self) -> dict:
        return {"source": self.source, "unit": self.unit, "value": self.value, "low": self.low,
                "high": self.high, "description": self.description, "left_out": [list(p) for p in self.left_out]}


@dataclass
class ProgressCache:
    """Per-run results a backtest needs again and again, computed once: each finished run's progress to
    target, and the extrapolation of its first ``n`` evaluations.

    Leave-one-out over ``N`` runs backtests every other run for each held-out one: without a cache each
    run's crossing is found ``N²`` times and its cut curve fitted ``N`` times. Entries are keyed by the
    run object itself (held here, so its id is never reused), the target and what was cut; a cached value
    is exactly the value that would be computed. Safe to share between threads.

    >>> from core.logs import read_log
    >>> log = read_log(b"step,loss\\n1,4.0\\n2,3.5\\n3,3.2\\n", "a.csv")
    >>> cache = ProgressCache()
    >>> cache.truth(log, Target("loss", "<=", 3.28)), len(cache)
    (3.0, 1)
    """

    _entries: dict = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self._entries)

    def counts(self) -> dict[str, int]:
        """Entries held by kind (``truth``, ``extrapolation``, ``cut``, ...): the work done once."""
        with self._lock:
            kinds = [key[0] for key in self._entries]
        return {k: kinds.count(k) for k in dict.fromkeys(kinds)}

    def _get(self, key: tuple, log: RunLog, compute):
        with self._lock:
            hit = self._entries.get(key)
        if hit is not None and hit[0] is log:
            return hit[1]
        value = compute()
        with self._lock:
            self._entries[key] = (log, value)
        return value

    def truth(self, log: RunLog, target: Target) -> float | None:
        """:func:`progress_to_target`, once per run and target."""
        return self._get(("truth", id(log), target.spec), log, lambda: progress_to_target(log, target))

    def unit(self, log: RunLog) -> str:
        """:func:`progress_unit`, once per run."""
        return self._get(("unit", id(log)), log, lambda: progress_unit(log))

    def units(self, log: RunLog) -> ProgressUnits:
        """:func:`core.prediction.progress_units.progress_units`: the run's factors between its units, once per run."""
        return self._get(("units", id(log)), log, lambda: progress_units(log, self.unit(log)))

    def has_metric(self, log: RunLog, metric: str) -> bool:
        """Whether the run logs ``metric`` (:func:`core.runs.metric_column`), once per run and metric."""
        return self._get(("metric", id(log), metric), log, lambda: metric_column(log, metric) is not None)

    def evaluations(self, log: RunLog, target: Target) -> int:
        """How many evaluations of the target's metric the run holds (:func:`evaluation_points`)."""
        return self._get(("evaluations", id(log), target.spec), log, lambda: len(evaluation_points(log, target)[0]))

    def cut(self, log: RunLog, target: Target, n: int) -> RunLog:
        """:func:`first_points`: the run cut after its ``n``-th evaluation, once per run, target and ``n``."""
        return self._get(("cut", id(log), target.spec, n), log, lambda: first_points(log, target, n))

    def extrapolation(self, log: RunLog, target: Target, n: int, *, level: float) -> ProgressEstimate:
        """:func:`extrapolate_progress` of the run's first ``n`` evaluations, once per run, target and ``n``."""
        return self._get(("extrapolation", id(log), target.spec, n, level), log,
                         lambda: extrapolate_progress(self.cut(log, target, n), target, level=level))


# --------------------------------------------------------------------------- the three answers
def extrapolate_progress(log: RunLog, target: Target, *, level: float = DEFAULT_LEVEL,
                         seed: int = 0) -> ProgressEstimate:
    """The power law with a floor fitted to ``log``'s evaluations, inverted at ``target`` (module docstring)."""
    unit = progress_unit(log)
    x, y = evaluation_points(log, target)
    hit = target.first_met(y)
    if hit is not None:
        return ProgressEstimate("extrapolation", unit, float(x[hit]), float(x[hit]), float(x[hit]),
                                "already at target in the observed part")
    if target.climbs:
        if target.metric not in ("acc", "accuracy") and not np.all((y >= 0) & (y <= 1)):
            return ProgressEstimate("extrapolation", unit, None,
                                    description=f"a climbing metric other than an accuracy ({target.metric}) "
                                                "is not extrapolated")
        y, level_y = 1.0 - y, 1.0 - target.value
    else:
        level_y = target.value
    if len(x) < MIN_POINTS:
        return ProgressEstimate("extrapolation", unit, None,
                                description=f"{len(x)} evaluation(s) seen; at least {MIN_POINTS} are fitted")
    scale = float(x[0])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FitWarning)
            fit = fit_curve(x / scale, y, family=POWER_LAW, name=log.source)
    except (FitError, InputError) as exc:
        return ProgressEstimate("extrapolation", unit, None, description=f"not fitted: {exc}")
    raw = fit.step_at(level_y)
    if not math.isfinite(raw):
        return ProgressEstimate("extrapolation", unit, math.inf, float(x[-1]), math.inf,
                                f"the fitted floor {fit.floor:.4g} does not reach {target.value:g}")
    value = max(raw * scale, float(x[-1]))
    low, high = _draw_interval(fit, level_y, level=level, seed=seed)
    description = f"power law with a floor (pow3) on {len(x)} evaluations"
    if low is not None and low * scale > value:
        # the floor is barely below the target: most parameter draws reach it much later or never, so their
        # quantiles lie above the best fit's own answer; the interval starts at the best fit instead
        description += ("; the parameter draws' lower quantile lay above the best fit (a floor close to the "
                        "target): the interval starts at the best fit")
    low = float(x[-1]) if low is None else min(max(low * scale, float(x[-1])), value)
    high = math.inf if high is None else max(high * scale, value)
    return ProgressEstimate("extrapolation", unit, value, low, high, description)


def _draw_interval(fit, level_y: float, *, level: float, seed: int) -> tuple[float | None, float | None]:
    if not fit.errorbars:
        return None, None
    rng = np.random.default_rng(seed)
    try:
        draws = rng.multivariate_normal(np.array(fit.values), np.array(fit.cov), size=2000, method="eigh")
    except (np.linalg.LinAlgError, ValueError):
        return None, None
    curve = fit.curve
    draws = np.clip(draws, curve.lower, curve.upper)
    steps = np.asarray(curve.inverse(level_y, *draws.T), dtype=float)
    steps = np.sort(np.where(np.isfinite(steps), steps, np.inf))
    lo, hi = (steps[min(int(q * len(steps)), len(steps) - 1)] for q in ((1 - level) / 2, (1 + level) / 2))
    return float(lo), float(hi)


def _batch(units: ProgressUnits, shared: str) -> tuple[float | None, float | None] | None:
    """A run's batch as it declares it: (samples a step, tokens a step), either None where unknown; None when its
    progress is pooled in steps or epochs (no batch is known)."""
    if shared not in DATA_UNITS:
        return None
    return units.per_step("samples"), units.per_step("tokens")


def _batch_text(batch: tuple[float | None, float | None]) -> str:
    samples, tokens = batch
    if samples is None:
        return f"{tokens:,.0f} tokens a step"
    return f"global batch {samples:,.0f}" + (f" ({tokens:,.0f} tokens a step)" if tokens is not None else "")


def _pool(log: RunLog, others: Sequence[RunLog], target: Target, cache: ProgressCache) -> tuple[list, list]:
    """The other runs' progress to target in ``log``'s unit, each with its batch and whether its value was converted
    ((run, value, batch, converted)), and the runs left out ((source, kind, reason): ``metric``, ``target``,
    ``unit``)."""
    mine = cache.units(log)
    done, left_out = [], []
    for o in others:
        if o.source == log.source:
            continue
        if not cache.has_metric(o, target.metric):
            left_out.append((o.source, "metric", f"does not log {target.metric}"))
            continue
        truth = cache.truth(o, target)
        if truth is None or truth <= 0:
            left_out.append((o.source, "target", f"did not reach {target.spec}"))
            continue
        value, shared = pooled_value(truth, cache.units(o), mine)
        if value is None:
            left_out.append((o.source, "unit", shared))
            continue
        done.append((o, value, _batch(cache.units(o), shared), value != truth))
    return done, left_out


def prior_progress(log: RunLog, others: Sequence[RunLog], target: Target, *,
                   level: float = DEFAULT_LEVEL, cache: ProgressCache | None = None) -> ProgressEstimate:
    """The progress to target of the other finished runs, each said in ``log``'s unit (module docstring).

    Every other run that logs the target's metric and reached the target is pooled when its progress can be put
    in ``log``'s unit (:func:`core.prediction.progress_units.pooled_value`: through tokens or samples, with each
    run's own factors); the others are named in ``left_out`` with their reason, and counted by reason in the
    description. ``cache`` remembers each run's progress to target and factors across calls.
    """
    cache = ProgressCache() if cache is None else cache
    unit = cache.unit(log)
    mine = cache.units(log)
    done, left_out = _pool(log, others, target, cache)
    named = tuple((src, why) for src, _, why in left_out)
    if not done:
        text = "no other run given" if not left_out else \
            f"no other run to pool in {unit}: {left_out_summary(left_out)}"
        return ProgressEstimate("prior", unit, None, description=text, left_out=named)
    batch = _batch(mine, "samples")
    same = [(v, c) for _, v, b, c in done if b is not None and b == batch]
    chosen, what = (same, f"{len(same)} other runs at {_batch_text(batch)}") if len(same) >= 2 else \
        ([(v, c) for _, v, _, c in done], f"{len(done)} other runs" +
         (" (fewer than two at this run's batch)" if any(b is not None for _, _, b, _ in done) else ""))
    converted = sum(c for _, c in chosen)
    if converted:
        what += f" ({converted} converted into {unit})"
    if left_out:
        what += f"; left out: {left_out_summary(left_out)}"
    raw = sorted(v for v, _ in chosen)
    values = np.log(raw)
    n = len(values)
    # the median in log space, taken on the values themselves (the middle one, or the geometric mean of
    # the middle two): exp(log(x)) is not x in floating point, and a run measured at the same samples
    # as the median must not fall 1 ulp outside an interval that ends there
    median = raw[n // 2] if n % 2 else math.sqrt(raw[n // 2 - 1] * raw[n // 2])
    centre = math.log(median)
    sd = max(float(np.std(values, ddof=1)) if n > 1 else 0.0, MIN_PRIOR_SD)
    t = stats.t.ppf((1 + level) / 2, df=max(n - 1, 1))
    half = t * sd * math.sqrt(1 + 1 / n)
    return ProgressEstimate("prior", unit, median, math.exp(centre - half), math.exp(centre + half),
                            f"median of {what}", left_out=named)
