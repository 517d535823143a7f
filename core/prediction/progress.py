"""Samples (tokens, steps) to a target in any direction, from the first part of a run and other runs.

The epoch machinery of ``core.prediction.predict`` answers "at which epoch will the accuracy pass
the target?". A language-model run counts progress in samples and tokens, evaluates every so many
samples, and its target is a loss or log-perplexity that falls (``eval_accuracy<=3.3``,
``val_loss<=3.28``). Three answers, each in the run's own progress unit:

* **extrapolation**: the power law with a floor ``L = E + A·D^(−α)`` (the ``pow3`` family,
  ``core.curves``) fitted to the observed evaluations against samples ``D``, inverted at the
  target: ``D* = (A / (L − E))^(1/α)``; never when the fitted floor ``E`` is at or past the target.
  A climbing accuracy is fitted as its error ``1 − acc``.
* **prior**: the progress to target of the other finished runs of the same metric, each said in the
  run's unit (``core.prediction.progress_units``: a run counted in tokens is pooled into one counted in
  samples or steps through the tokens both know, with each run's own factors; a run that cannot be
  converted is left out and named with its reason), at the same global batch where two or more are at
  it (else all of them, flagged): their median, with a
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
:mod:`core.prediction.progress_measure`; the extrapolation and the prior are made in
:mod:`core.prediction.progress_estimates`; the backtest is :mod:`core.prediction.progress_backtest`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import PurePosixPath

import numpy as np

from core.defaults import DEFAULT_LEVEL
from core.logs import RunLog
from core.prediction.conformal import conformal_quantiles, correlated_weight
from core.prediction.progress_estimates import ProgressCache, ProgressEstimate, extrapolate_progress, prior_progress
from core.prediction.progress_measure import (
    evaluation_points,
    first_points,
    observed_count,
    progress,
    progress_unit,
    seconds_per_unit,
    time_at_progress,
)
from core.prediction.schedule_changes import declared_end, schedule_flags, step_to_progress
from core.targets import Target, target_for
from core.validation import check_scalar

#: fewest backtest cases whose median error is taken out of the estimate (fewer: too noisy to correct by)
MIN_SHIFT_CASES = 12


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
    #: the training seconds at the posterior's progress (the answer the page shows), from the run's own logged times:
    #: the logged time there when the run met the target, else the time logged at the cut plus the rest at the run's
    #: pace (through the schedule: its pace as the other runs' pace changed over the same steps); None without
    time_estimate_s: float | None = None

    @property
    def time_to_target_s(self) -> float | None:
        """Wall time to target at the posterior's progress (``time_estimate_s``); None when unknown."""
        return self.time_estimate_s

    @property
    def time_text(self) -> str | None:
        """The time to target in words, as the page says it: the seconds at the run's logged pace, or why there are
        none when the run logs no wall time; None when there is no answer to time.

        >>> est = ProgressEstimate("posterior", "steps", 100.0, 90.0, 120.0)
        >>> f = ProgressForecast("a.csv", Target("loss", "<=", 2.5), "steps", 5, 50.0, "predicted", est, est, est,
        ...                      "prior", seconds_per_unit=0.5, time_estimate_s=52.0)
        >>> f.time_text, replace(f, seconds_per_unit=None, time_estimate_s=None).time_text
        ('time to target at the logged pace 52 s', 'no time to target: the log records no wall time that grows with \
its progress')
        """
        if self.status == "not predicted":
            return None
        if self.time_estimate_s is not None:
            verb = "logged time to target" if self.status == "reached" else "time to target at the logged pace"
            return f"{verb} {self.time_estimate_s:,.0f} s"
        if self.seconds_per_unit is None:
            return "no time to target: the log records no wall time that grows with its progress"
        return None

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
    return _folder(log.source)


@lru_cache(maxsize=4096)
def _folder(source: str) -> str:
    return str(PurePosixPath(source.replace("\\", "/")).parent)


def learn_trust(others: Sequence[RunLog], target: Target, *, fraction: float | None, n_observed: int | None = None,
                level: float = DEFAULT_LEVEL, same_group: bool = True, cache: ProgressCache | None = None) -> Trust:
    """Backtest the other finished runs at the same observed fraction: the prior's weight and the interval.

    Each finished run is cut at ``fraction`` of its evaluations (or at ``n_observed`` of them), its
    prior made from the remaining runs; the log errors of both sources give the variance-minimising
    weight ``w = (σx² − ρσpσx)/(σp² + σx² − 2ρσpσx)`` clipped to [0, 1], and the combined errors give the
    interval's log quantiles. Each run's progress to target and cut extrapolation are computed once
    (``cache``: across calls too, as a leave-one-out over many runs needs).
    """
    cache = ProgressCache() if cache is None else cache
    pairs = []
    finished = [o for o in others if cache.truth(o, target) is not None]
    for o in finished:
        truth = cache.truth(o, target)
        total = cache.evaluations(o, target)
        n = observed_count(total, fraction) if n_observed is None else min(n_observed, total)
        cut = cache.cut(o, target, n)
        # the backtest mimics the run's own case: when none of the others shares its group (system,
        # record), each backtested run's prior leaves its whole group out too
        rest = [r for r in finished if r is not o and (same_group or group_of(r) != group_of(o))]
        p = prior_progress(cut, rest, target, level=level, cache=cache)
        e = cache.extrapolation(o, target, n, level=level)
        ep = math.log(p.value / truth) if p.available else None
        ex = math.log(e.value / truth) if e.available else None
        pairs.append((ep, ex))
    return trust_from_errors(pairs, level=level)


def trust_from_errors(pairs: Sequence[tuple[float | None, float | None]], *, level: float = DEFAULT_LEVEL,
                      other: str = "extrapolation") -> Trust:
    """The prior's weight and the interval from the other runs' log errors ``(prior, other source)`` (None: that
    source had no answer for that run): the variance-minimising weight when three or more runs have both, the
    prior alone when only it answered three times, else equal weights (``learn_trust``; ``other`` names the
    second source in the description).

    >>> t = trust_from_errors([(0.1, 0.0), (-0.1, 0.01), (0.2, -0.01), (-0.2, 0.0)])   # the other source is better
    >>> t.prior_weight < 0.05, t.n_cases
    (True, 4)
    """
    both = [(a, b) for a, b in pairs if a is not None and b is not None]
    only_prior = [a for a, b in pairs if a is not None]
    if len(both) >= 3:
        ep, ex = np.array(both).T
        w, vp, vx, cov = correlated_weight(ep, ex)      # mean squared errors: bias counts too
        combined = w * ep + (1 - w) * ex
        q = conformal_quantiles(combined, level)
        return Trust(w, q, len(both), f"weights from a backtest of {len(both)} other runs "
                                      f"(prior rms {math.sqrt(vp):.1%}, {other} rms {math.sqrt(vx):.1%}, "
                                      f"correlation {cov / math.sqrt(max(vp * vx, 1e-24)):.2f})",
                     float(np.median(combined)))
    if len(only_prior) >= 3:
        e = np.array(only_prior)
        return Trust(1.0, conformal_quantiles(e, level), len(e),
                     f"the {other} had no answer in the backtest of {len(e)} other runs: the prior alone",
                     float(np.median(e)))
    return Trust(0.5, None, len(both), "too few finished runs to backtest: equal weights, the sources' own intervals")


def predict_progress(log: RunLog, others: Sequence[RunLog] = (), target: Target | None = None, *,
                     observe: float | None = None, level: float = DEFAULT_LEVEL,
                     cache: ProgressCache | None = None) -> ProgressForecast:
    """Prior, extrapolation and posterior of the progress to ``target`` of ``log`` (module docstring).

    Parameters
    ----------
    log : RunLog
        The run (in progress, or finished and cut with ``observe``).
    others : sequence of RunLog
        Other runs of the same workload (other systems, seeds or recipes): the prior and the backtest.
    target : Target, optional
        Default: the target the log declares, else ``acc>=0.92`` (:func:`core.targets.target_for`).
    observe : float, optional
        The fraction (0, 1) of ``log``'s evaluations seen, or a number of evaluations (>= 1); default all.
    level : float, default 0.8
    cache : ProgressCache, optional
        Shared by many predictions over the same runs (a leave-one-out): each other run's progress to
        target and cut extrapolation are computed once. The answer is the same with or without it.

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
    target = target_for(log, target)
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
                                replace(none, source="extrapolation"), measured, "measured", None, per_unit,
                                time_estimate_s=time_at_progress(seen, value))
    cache = ProgressCache() if cache is None else cache
    prior = prior_progress(seen, others, target, level=level, cache=cache)
    extrap = extrapolate_progress(seen, target, level=level)
    same_group = any(group_of(o) == group_of(log) for o in others)
    trust = learn_trust(others, target, fraction=fraction, n_observed=None if fraction is not None else n,
                        level=level, same_group=same_group, cache=cache) if prior.available else None
    posterior, method, weight = combine_progress(prior, extrap, trust, unit, floor=observed_progress)
    flags = []
    if trust is not None:
        flags.append(trust.description)
    if not prior.available:
        flags.append(f"prior: {prior.description}")
    if not extrap.available:
        flags.append(f"extrapolation: {extrap.description}")
    flags += schedule_flags(log, progress(log), observed_progress, posterior.value, unit)
    end = declared_end(log)
    if end is not None and posterior.value is not None and math.isfinite(posterior.value):
        at = step_to_progress(log.frame["global_step"].to_numpy(dtype=float), progress(log), end)
        if math.isfinite(at) and posterior.value > at:       # a forecast past the declared end is refused
            posterior = ProgressEstimate("posterior", unit, math.inf, posterior.low, math.inf,
                                         f"not by the declared schedule's last step {end:,.0f} ({at:,.0f} {unit}): "
                                         f"{posterior.description}")
            flags.append(f"the answer ({posterior.description.split(': ', 1)[-1]}) lay past the declared schedule's "
                         f"last step {end:,.0f}: refused")
    status = "predicted" if posterior.value is not None and math.isfinite(posterior.value) else "not predicted"
    time = time_at_progress(seen, posterior.value) if status == "predicted" else None
    return ProgressForecast(log.source, target, unit, n, observed_progress, status, prior, extrap, posterior,
                            method, weight, per_unit, tuple(flags), time_estimate_s=time)


def combine_progress(prior: ProgressEstimate, extrap: ProgressEstimate, trust: Trust | None, unit: str, *,
                     floor: float) -> tuple[ProgressEstimate, str, float | None]:
    """The posterior of ``prior`` and ``extrap`` (the run's own forecast) with ``trust``'s weight and interval
    (module docstring), at least ``floor`` (the progress already observed); its method and the prior's weight."""
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
    # the estimate as a value (the prior's own when it carries all the weight: no exp(log(x)) round trip,
    # so an interval edge at a zero error is the estimate itself, not 1 ulp beside it)
    base = prior.value if w >= 1.0 or not extrap.available else \
        math.exp(w * math.log(prior.value) + (1 - w) * math.log(extrap.value))
    if trust is not None and trust.quantiles is not None:
        lo_q, hi_q = trust.quantiles
        low, high = base * math.exp(-hi_q), base * math.exp(-lo_q)   # truth = estimate / exp(error)
        if trust.n_cases >= MIN_SHIFT_CASES:    # the backtest's median error, taken out of the estimate
            base *= math.exp(-trust.median)
    elif w >= 1.0:
        low, high = prior.low, prior.high
    else:
        low = math.exp(w * math.log(prior.low) + (1 - w) * math.log(extrap.low or prior.low))
        high = math.exp(w * math.log(prior.high) + (1 - w) * math.log(extrap.high)) \
            if extrap.high and math.isfinite(extrap.high) else math.inf
    value = max(base, floor)
    low, high = min(max(low, floor), value), max(high, value)
    method = "prior" if w >= 0.9 else "extrapolation" if w <= 0.1 else "prior × extrapolation"
    return ProgressEstimate("posterior", unit, value, low, high, f"{method} (prior weight {w:.2f})"), method, w
