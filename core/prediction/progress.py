"""Samples (tokens, steps) to a target in any direction, from the first part of a run and other runs.

The epoch machinery of ``core.prediction.predict`` answers "at which epoch will the accuracy pass
the target?". A language-model run counts progress in samples and tokens, evaluates every so many
samples, and its target is a loss or log-perplexity that falls (``eval_accuracy<=3.3``,
``val_loss<=3.28``). Three answers, each in the run's own progress unit:

* **extrapolation**: the power law with a floor ``L = E + A·D^(−α)`` (the ``pow3`` family,
  ``core.curves``) fitted to the observed evaluations against samples ``D``, inverted at the
  target: ``D* = (A / (L − E))^(1/α)``; never when the fitted floor ``E`` is at or past the target.
  A climbing accuracy is fitted as its error ``1 − acc``.
* **prior**: the samples to target of the other finished runs of the same metric, at the same
  global batch where two or more are at it (else all of them, flagged): their median, with a
  prediction interval in log space (``t`` quantile × sd × √(1 + 1/n), sd at least
  ``MIN_PRIOR_SD``, the seed-to-seed spread a single batch size shows).
* **posterior**: ``exp(w·ln prior + (1 − w)·ln extrapolation)`` with ``w`` learned from a
  **backtest on the other runs** cut at the same fraction of their evaluations (leave that run
  out of its own prior): the weight that minimises the variance of the combined log error given
  both sources' error variances and their correlation (so two errors that point the same way are
  not counted as independent), and an interval from the empirical quantiles of that combined
  error (whose median is taken out of the estimate when there are at least ``MIN_SHIFT_CASES`` cases: a
  drift both sources share is corrected). Which
  source carried the answer is said (``method``).

A run still in progress is never assumed to end at its target: everything in the log is the
observed part unless told otherwise. A run's progress unit and points are read by
:mod:`core.prediction.progress_measure`; the backtest is :mod:`core.prediction.progress_backtest`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

import numpy as np
from scipy import stats

from core.curves import fit_curve
from core.defaults import DEFAULT_LEVEL
from core.errors import FitError, FitWarning, InputError
from core.logs import RunLog
from core.prediction.conformal import conformal_quantiles, correlated_weight
from core.prediction.progress_measure import (
    evaluation_points,
    first_points,
    observed_count,
    progress,
    progress_to_target,
    progress_unit,
    seconds_per_unit,
)
from core.prediction.schedule_changes import schedule_flags
from core.runs import metric_column, run_target
from core.targets import Target
from core.validation import check_scalar

#: the least log-space spread a prior from other runs is given (seed noise at one batch size, ~2 %)
MIN_PRIOR_SD = 0.02
#: fewest evaluations a power law is fitted to
MIN_POINTS = 4
#: fewest backtest cases whose median error is taken out of the estimate (fewer: too noisy to correct by)
MIN_SHIFT_CASES = 12
#: the family of the extrapolation: a power law with a floor, L = E + A·D^(−α)
POWER_LAW = "pow3"


@dataclass(frozen=True)
class ProgressEstimate:
    """Progress to target (``value``, ``inf`` = may never get there) with a ``level`` interval.

    ``value`` None: this source has no answer (``description`` says why).
    """

    source: str
    unit: str
    value: float | None
    low: float | None = None
    high: float | None = None
    description: str = ""

    @property
    def available(self) -> bool:
        return self.value is not None and math.isfinite(self.value)

    def to_dict(self) -> dict:
        return {"source": self.source, "unit": self.unit, "value": self.value, "low": self.low,
                "high": self.high, "description": self.description}


@dataclass(frozen=True)
class ProgressForecast:
    """Prior, extrapolation and posterior of the progress to target of one run."""

    source: str
    target: Target
    unit: str
    n_observed: int
    observed_progress: float
    status: str                      # "predicted", "reached", "not predicted"
    prior: ProgressEstimate
    extrapolation: ProgressEstimate
    posterior: ProgressEstimate
    method: str
    prior_weight: float | None = None
    seconds_per_unit: float | None = None
    flags: tuple[str, ...] = ()

    @property
    def time_to_target_s(self) -> float | None:
        """Wall time to target at the observed pace (the posterior × seconds per unit), None when unknown."""
        if self.seconds_per_unit is None or not self.posterior.available:
            return None
        return self.posterior.value * self.seconds_per_unit

    def to_dict(self) -> dict:
        out = {"file": self.source, "metric": self.target.metric, "direction": self.target.direction,
               "target": self.target.value, "unit": self.unit, "observed_points": self.n_observed,
               "observed_progress": self.observed_progress, "status": self.status}
        for est in (self.prior, self.extrapolation, self.posterior):
            out[f"{est.source}"] = est.value
            out[f"{est.source}_low"] = est.low
            out[f"{est.source}_high"] = est.high
        out.update(method=self.method, prior_weight=self.prior_weight, time_to_target_s=self.time_to_target_s,
                   flags="; ".join(self.flags))
        return out


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
    low = float(x[-1]) if low is None else max(low * scale, float(x[-1]))
    high = math.inf if high is None else max(high * scale, value)
    return ProgressEstimate("extrapolation", unit, value, low, high,
                            f"power law with a floor (pow3) on {len(x)} evaluations")


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


def prior_progress(log: RunLog, others: Sequence[RunLog], target: Target, *,
                   level: float = DEFAULT_LEVEL) -> ProgressEstimate:
    """The progress to target of the other finished runs (module docstring)."""
    unit = progress_unit(log)
    pool = [o for o in others if o.source != log.source and progress_unit(o) == unit
            and metric_column(o, target.metric) is not None]
    done = [(o, progress_to_target(o, target)) for o in pool]
    done = [(o, v) for o, v in done if v is not None and v > 0]
    if not done:
        return ProgressEstimate("prior", unit, None, description="no other run that reached the target")
    batch = log.meta.global_batch
    same = [(o, v) for o, v in done if batch and o.meta.global_batch == batch]
    chosen, what = (same, f"{len(same)} other runs at global batch {batch:,}") if len(same) >= 2 else \
        (done, f"{len(done)} other runs" + (" (none at the same global batch)" if batch else ""))
    values = np.log([v for _, v in chosen])
    n = len(values)
    centre = float(np.median(values))
    sd = max(float(np.std(values, ddof=1)) if n > 1 else 0.0, MIN_PRIOR_SD)
    t = stats.t.ppf((1 + level) / 2, df=max(n - 1, 1))
    half = t * sd * math.sqrt(1 + 1 / n)
    return ProgressEstimate("prior", unit, math.exp(centre), math.exp(centre - half), math.exp(centre + half),
                            f"median of {what}")


@dataclass(frozen=True)
class Trust:
    """How much the backtest on other runs trusts each source (log-space errors)."""

    prior_weight: float
    quantiles: tuple[float, float] | None
    n_cases: int
    description: str
    median: float = 0.0


def group_of(log: RunLog) -> str:
    """The group a run belongs to (its folder: an MLPerf system, a speedrun record), for leave-one-group-out."""
    return str(PurePosixPath(log.source.replace("\\", "/")).parent)


def learn_trust(others: Sequence[RunLog], target: Target, *, fraction: float | None, n_observed: int | None = None,
                level: float = DEFAULT_LEVEL, same_group: bool = True) -> Trust:
    """Backtest the other finished runs at the same observed fraction: the prior's weight and the interval.

    Each finished run is cut at ``fraction`` of its evaluations (or at ``n_observed`` of them), its
    prior made from the remaining runs; the log errors of both sources give the variance-minimising
    weight ``w = (σx² − ρσpσx)/(σp² + σx² − 2ρσpσx)`` clipped to [0, 1], and the combined errors give the
    interval's log quantiles.
    """
    pairs = []
    finished = [o for o in others if progress_to_target(o, target) is not None]
    for o in finished:
        truth = progress_to_target(o, target)
        x, _ = evaluation_points(o, target)
        n = observed_count(len(x), fraction) if n_observed is None else min(n_observed, len(x))
        cut = first_points(o, target, n)
        # the backtest mimics the run's own case: when none of the others shares its group (system,
        # record), each backtested run's prior leaves its whole group out too
        rest = [r for r in finished if r is not o and (same_group or group_of(r) != group_of(o))]
        p = prior_progress(cut, rest, target, level=level)
        e = extrapolate_progress(cut, target, level=level)
        ep = math.log(p.value / truth) if p.available else None
        ex = math.log(e.value / truth) if e.available else None
        pairs.append((ep, ex))
    both = [(a, b) for a, b in pairs if a is not None and b is not None]
    only_prior = [a for a, b in pairs if a is not None]
    if len(both) >= 3:
        ep, ex = np.array(both).T
        w, vp, vx, cov = correlated_weight(ep, ex)      # mean squared errors: bias counts too
        combined = w * ep + (1 - w) * ex
        q = conformal_quantiles(combined, level)
        return Trust(w, q, len(both), f"weights from a backtest of {len(both)} other runs "
                                      f"(prior rms {math.sqrt(vp):.1%}, extrapolation rms {math.sqrt(vx):.1%}, "
                                      f"correlation {cov / math.sqrt(max(vp * vx, 1e-24)):.2f})",
                     float(np.median(combined)))
    if len(only_prior) >= 3:
        e = np.array(only_prior)
        return Trust(1.0, conformal_quantiles(e, level), len(e),
                     f"the extrapolation had no answer in the backtest of {len(e)} other runs: the prior alone",
                     float(np.median(e)))
    return Trust(0.5, None, len(both), "too few finished runs to backtest: equal weights, the sources' own intervals")


def predict_progress(log: RunLog, others: Sequence[RunLog] = (), target: Target | float | None = None, *,
                     observe: float | None = None, level: float = DEFAULT_LEVEL) -> ProgressForecast:
    """Prior, extrapolation and posterior of the progress to ``target`` of ``log`` (module docstring).

    Parameters
    ----------
    log : RunLog
        The run (in progress, or finished and cut with ``observe``).
    others : sequence of RunLog
        Other runs of the same workload (other systems, seeds or recipes): the prior and the backtest.
    target : Target or float, optional
        Default: the target the log declares, else ``acc>=0.92``.
    observe : float, optional
        The fraction (0, 1) of ``log``'s evaluations seen, or a number of evaluations (>= 1); default all.
    level : float, default 0.8

    Examples
    --------
    >>> from core.logs import read_log
    >>> rows = "".join(f"{s},{2.0 + 30 * (s * 100) ** -0.5:.6f}\\n" for s in range(1, 41))
    >>> log = read_log(("step,loss\\n" + rows).encode(), "llm.csv")
    >>> f = predict_progress(log, target=Target("loss", "<=", 2.5), observe=0.25)
    >>> round(f.extrapolation.value)        # (30 / 0.5)^2 / 100 = 36 steps
    36
    """
    level = check_scalar(level, "level", float, min_val=0, max_val=1, include_boundaries="neither")
    target = run_target(log, target)
    unit = progress_unit(log)
    x, y = evaluation_points(log, target)
    if observe is None:
        n = len(x)
        fraction = None
    elif observe < 1:
        n, fraction = observed_count(len(x), observe), observe
    else:
        n, fraction = min(int(observe), len(x)), None
    seen = first_points(log, target, n)
    others = [o for o in others if o.source != log.source]
    observed_progress = float(x[n - 1]) if n else 0.0
    per_unit = seconds_per_unit(seen)
    reached = target.first_met(y[:n])
    if reached is not None:
        value = float(x[reached])
        measured = ProgressEstimate("posterior", unit, value, value, value, "measured: the run met the target")
        none = ProgressEstimate("prior", unit, None, description="not needed")
        return ProgressForecast(log.source, target, unit, n, observed_progress, "reached", none,
                                replace(none, source="extrapolation"), measured, "measured", None, per_unit)
    prior = prior_progress(seen, others, target, level=level)
    extrap = extrapolate_progress(seen, target, level=level)
    same_group = any(group_of(o) == group_of(log) for o in others)
    trust = learn_trust(others, target, fraction=fraction, n_observed=None if fraction is not None else n,
                        level=level, same_group=same_group) if prior.available else None
    posterior, method, weight = _combine(prior, extrap, trust, unit, floor=observed_progress)
    flags = []
    if trust is not None:
        flags.append(trust.description)
    if not prior.available:
        flags.append(f"prior: {prior.description}")
    if not extrap.available:
        flags.append(f"extrapolation: {extrap.description}")
    flags += schedule_flags(log, progress(log), observed_progress, posterior.value, unit)
    status = "predicted" if posterior.value is not None else "not predicted"
    return ProgressForecast(log.source, target, unit, n, observed_progress, status, prior, extrap, posterior,
                            method, weight, per_unit, tuple(flags))


def _combine(prior: ProgressEstimate, extrap: ProgressEstimate, trust: Trust | None, unit: str, *,
             floor: float) -> tuple[ProgressEstimate, str, float | None]:
    if not prior.available and not extrap.available:
        value = math.inf if extrap.value == math.inf else None
        return ProgressEstimate("posterior", unit, value, description="no source"), "none", None
    if not prior.available:
        return replace(extrap, source="posterior", description="the extrapolation alone (no prior)"), \
            "extrapolation", 0.0
    if not extrap.available or trust is None:
        w = 1.0
    else:
        w = trust.prior_weight
    centre = math.log(prior.value) if w >= 1.0 or not extrap.available else \
        w * math.log(prior.value) + (1 - w) * math.log(extrap.value)
    if trust is not None and trust.quantiles is not None:
        lo_q, hi_q = trust.quantiles
        low, high = math.exp(centre - hi_q), math.exp(centre - lo_q)   # truth = estimate / exp(error)
        if trust.n_cases >= MIN_SHIFT_CASES:    # the backtest's median error, taken out of the estimate
            centre -= trust.median
    elif w >= 1.0:
        low, high = prior.low, prior.high
    else:
        low = math.exp(w * math.log(prior.low) + (1 - w) * math.log(extrap.low or prior.low))
        high = math.exp(w * math.log(prior.high) + (1 - w) * math.log(extrap.high)) \
            if extrap.high and math.isfinite(extrap.high) else math.inf
    value = max(math.exp(centre), floor)
    low, high = min(max(low, floor), value), max(high, value)
    method = "prior" if w >= 0.9 else "extrapolation" if w <= 0.1 else "prior × extrapolation"
    return ProgressEstimate("posterior", unit, value, low, high, f"{method} (prior weight {w:.2f})"), method, w
