"""The one call for progress to a target: through the planned schedule when it matters, else a power law.

:func:`forecast_progress` picks the route from the target and the run, so that pages and the command line
never choose between methods:

* **through the schedule** (``core.prediction.through_schedule``) when the target falls and a plan is known
  past the observed part (the user's, the log's lr column, or the schedule the log declares): a warm-up, a
  cosine, a WSD cool-down, a step, and a constant rate too (where the laws are a power law in the rate's area:
  the forecast still knows where the plan ends and gives the loss there);
* **a power law in the run's progress** (``core.prediction.progress.predict_progress``) otherwise: no plan, a
  climbing metric, or a run in progress whose logged rates end where it does and whose log declares nothing
  further (the rest of its schedule is not known: declare it with ``--schedule`` or ``--planned-schedule``).

The prior and the extrapolation of the power-law route are given beside the answer either way (what the
other runs' crossings and the run's own curve say, without the schedule).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from core.curves import FAMILIES
from core.defaults import DEFAULT_LEVEL
from core.errors import InputError
from core.logs import RunLog
from core.prediction.progress import ProgressForecast, combine_progress, group_of, predict_progress, trust_from_errors
from core.prediction.progress_estimates import ProgressCache, ProgressEstimate, extrapolate_progress, prior_progress
from core.prediction.progress_measure import evaluation_table, first_points, progress_showcase, seconds_per_unit
from core.prediction.progress_units import left_out_summary, pooled_value
from core.prediction.schedule_fit import ScheduleFitCache
from core.prediction.schedule_runs import ScheduleRun, same_plan
from core.prediction.through_schedule import (
    FAMILY_CHOICES,
    ScheduleForecast,
    case_forecasts,
    forecast_through_schedule,
    time_at_step,
)
from core.schedules import declared_schedule, log_schedule
from core.targets import Target, target_for
from core.validation import check_option


@dataclass(frozen=True, eq=False)
class LossForecast:
    """The answer for a target in the run's progress (module docstring).

    Attributes
    ----------
    progress : ProgressForecast
        Prior, extrapolation and posterior in the run's unit; the posterior is the forecast through the schedule
        when ``schedule`` is set.
    schedule : ScheduleForecast or None
        The whole curve through the planned schedule, when that route was taken.
    route : str
        ``"through the schedule (multi-power)"`` or ``"power law in <unit>"``.
    why : str
        Why this route.
    """

    progress: ProgressForecast
    schedule: ScheduleForecast | None
    route: str
    why: str

    @property
    def target(self) -> Target:
        return self.progress.target


def schedule_route_applies(log: RunLog, target: Target, planned=None, *, observe: float | None = None
                           ) -> tuple[bool, str]:
    """Whether a forecast of ``log`` to ``target``, seen to ``observe`` (a fraction of its steps; None: all of it),
    goes through the schedule, and why (module docstring)."""
    if target.climbs:
        return False, f"{target.spec} climbs: the laws through the schedule model a falling loss"
    plan = declared_schedule(planned) if planned is not None else log_schedule(log)
    if plan is None:
        return False, "no planned learning-rate schedule is known (no lr column, none declared)"
    if planned is None and (observe is None or observe >= 1):
        _, steps, _ = evaluation_table(log, target)
        last = float(steps[-1]) if steps.size else 0.0
        if plan.total_steps <= last:
            return False, (f"the log's learning rates end at step {plan.total_steps:,.0f}, where it does, and it "
                           "declares nothing further: the rest of its schedule is not known (declare it with "
                           "--schedule or --planned-schedule to forecast through it)")
    if not plan.changes_after(0.0):
        return True, (f"the planned rate is constant after the warm-up ({plan.source}): through it the law is a "
                      "power law in the rate's area, to the plan's end")
    return True, f"the planned rate changes ({plan.source})"


def forecast_showcase(logs: Sequence[RunLog], target: Target | None = None, metric: str | None = None
                      ) -> RunLog | None:
    """The run a page's forecast opens on: :func:`core.prediction.progress_showcase` among the runs whose forecast goes
    through a schedule whose rate changes (a cool-down to show), else among all of them."""
    logs = list(logs)
    # cut as the page's forecast cuts it (a fraction of the run): the whole lr column is then its plan
    through = [lg for lg in logs if schedule_route_applies(lg, target_for(lg, target), observe=0.5)[0]
               and (plan := log_schedule(lg)) is not None and plan.changes_after(0.0)]
    return progress_showcase(through or logs, target, metric) or progress_showcase(logs, target, metric)


def forecast_progress(log: RunLog, others: Sequence[RunLog] = (), target: Target | None = None, *,
                      observe: float | None = None, planned=None, family: str = "auto",
                      level: float = DEFAULT_LEVEL, cache: ProgressCache | None = None,
                      schedule_cache: ScheduleFitCache | None = None) -> LossForecast:
    """The forecast of ``log``'s progress to ``target`` by the route that applies (module docstring).

    ``observe`` is the fraction of the log seen: of its steps on the schedule route, of its evaluations on
    the power-law route (the same on evenly evaluated runs), or a number of evaluations (>= 1, power law
    only). ``planned`` (a :class:`core.schedules.PlannedSchedule` or a spec) replaces the log's plan after the
    observed part; ``family``: ``auto`` or a key of ``core.curves.SCHEDULE_FAMILIES``.

    Examples
    --------
    No planned schedule: the power law in the run's steps, as before; a constant planned rate: through it, to the
    plan's end.

    >>> from core.logs import read_log
    >>> rows = [(s, 2.0 + 30 * (s * 100) ** -0.5) for s in range(1, 41)]
    >>> log = read_log(("step,loss\\n" + "".join(f"{s},{v:.6f}\\n" for s, v in rows)).encode(), "llm.csv")
    >>> f = forecast_progress(log, target=Target("loss", "<=", 2.5), observe=0.25)
    >>> f.route, round(f.progress.extrapolation.value)
    ('power law in steps', 36)
    >>> planned = read_log(("step,lr,loss\\n" + "".join(f"{s},1e-3,{v:.6f}\\n" for s, v in rows)).encode(), "lr.csv")
    >>> g = forecast_progress(planned, target=Target("loss", "<=", 2.5), observe=0.25)
    >>> g.route, g.schedule.schedule.total_steps
    ('through the schedule (lr-annealing)', 40.0)
    """
    target = target_for(log, target)
    check_option(family, "family", tuple(dict.fromkeys(("auto", *FAMILY_CHOICES, *FAMILIES))))
    power_law = observe
    if observe is not None and observe >= 1 and not target.climbs:
        observe = count_as_fraction(log, target, observe)       # the schedule route counts in steps
    applies, why = schedule_route_applies(log, target, planned, observe=observe)
    if not applies:
        if planned is not None and not target.climbs:
            raise InputError(f"{log.source}: the planned schedule cannot be used: {why}.")
        f = predict_progress(log, others, target, observe=power_law, level=level, cache=cache)
        return LossForecast(f, None, f"power law in {f.unit}", why)
    if family not in FAMILY_CHOICES:
        family = "auto"                    # a power-law family named: the schedule route takes its own law
    try:
        s = forecast_through_schedule(log, others, target, observe=observe, planned=planned, family=family,
                                      level=level, cache=schedule_cache)
    except InputError as exc:
        if planned is not None or not str(exc).startswith(f"{log.source}: expected at least"):
            raise
        # too few evaluations seen to fit the law and no other run to lend its level: the power law, which says
        # what it can (and refuses past a declared end), with the reason
        f = predict_progress(log, others, target, observe=power_law, level=level, cache=cache)
        reason = str(exc).removeprefix(f"{log.source}: ")
        return LossForecast(f, None, f"power law in {f.unit}",
                            f"{why}, but the law through it cannot be fitted: {reason}")
    return LossForecast(_as_progress(log, others, target, s, level, cache), s, f"through the schedule ({s.family})",
                        why)


def count_as_fraction(log: RunLog, target: Target, count: float) -> float | None:
    """``count`` evaluations of the target's metric as the fraction of the log's steps they reach (None: all of
    them), so that a count given to ``--observe`` cuts the run where the power-law route would."""
    _, steps, _ = evaluation_table(log, target)
    n = int(count)
    if steps.size == 0 or n >= steps.size:
        return None
    last = float(log.frame["global_step"].max())
    return float(steps[max(n, 1) - 1]) / last if last > 0 else None


def _as_progress(log: RunLog, others, target: Target, s: ScheduleForecast, level: float,
                 cache: ProgressCache | None) -> ProgressForecast:
    """The schedule forecast in the power-law route's shape (module docstring): the prior from the other runs'
    crossings and the forecast through the schedule, combined with the weights and the interval a backtest on the
    other runs teaches (``trust_from_errors``, as the power-law route combines its two sources); the power law's
    extrapolation is given beside them for comparison. A posterior past the plan's last step is none."""
    x, steps, _ = evaluation_table(log, target)
    n = int((steps <= s.observed_step + 1e-9).sum())
    seen = first_points(log, target, max(n, 1))
    observed = float(x[n - 1]) if n else 0.0
    others = [o for o in others if o.source != log.source]
    cache = ProgressCache() if cache is None else cache
    evidence, apart = _same_rates(s.run, others, s.donors, target, cache)
    prior = prior_progress(seen, evidence, target, level=level, cache=cache)
    prior = replace(prior, left_out=(*((src, why) for src, _, why in apart), *prior.left_out))
    if not prior.available and apart:
        prior = replace(prior, description=f"no other run to pool: {left_out_summary(apart)}")
    elif apart:
        prior = replace(prior, description=f"{prior.description}; left out: {left_out_summary(apart)}")
    extrap = extrapolate_progress(seen, target, level=level)
    flags = [f"schedule: {s.schedule.source}"] + list(s.flags)
    if s.left_out:
        flags.append("left out of the other runs: " + "; ".join(f"{src} ({why})" for src, why in s.left_out))
    method = f"through the schedule ({s.family})"
    if s.status == "reached":
        measured = ProgressEstimate("posterior", s.unit, s.progress_to_target, s.progress_to_target,
                                    s.progress_to_target, "measured: the run met the target")
        return ProgressForecast(log.source, target, s.unit, n, observed, "reached", prior, extrap, measured,
                                "measured", None, seconds_per_unit(seen), tuple(flags),
                                time_estimate_s=time_at_step(s, s.run.step_at(s.progress_to_target)))
    end = s.run.to_progress(s.schedule.total_steps)
    own = _schedule_estimate(s)
    trust = _schedule_trust(s, others, target, level, cache) if prior.available else None
    if len(evidence) < len(others):
        flags.append(f"prior: the crossings of the {len(evidence)} other runs that trained on the same rates as this "
                     f"one up to where they reached the target; {len(others) - len(evidence)} others trained on "
                     "other rates (their crossings say nothing of this run's: the forecast through the schedule "
                     "uses their curves)")
    if trust is not None and trust.quantiles is None:
        # too few other runs to learn how far to trust each source: the forecast through the schedule, whose band
        # its own leave-one-run-out calibrates, answers alone (equal weights would take a schedule-blind prior at
        # half its word)
        flags.append(f"posterior: {trust.description}: the forecast through the schedule alone")
        trust = None
    weight = None
    # the forecast's central curve does not reach the target within the plan: the crossings of the runs on the
    # same schedule answer where the backtest trusts them more than the forecast, or else where the forecast's own
    # band reaches the target by then (a crossing the band rules out is a run of another kind: a larger model
    # reaching a smaller one's loss early)
    trusted_prior = trust is not None and trust.prior_weight >= 0.5
    band_allows = (not own.available and prior.available and s.progress_low is not None
                   and math.isfinite(s.progress_low) and prior.value >= s.progress_low)
    if not own.available and not trusted_prior and band_allows:
        posterior = replace(prior, source="posterior", description=(
            f"{prior.description}: the forecast's curve does not reach the target by the plan's last step, its band "
            f"does from {s.progress_low:,.0f} {s.unit}, so the crossings of the runs on the same schedule answer"))
        method = f"{method}: the other runs' crossings"
    elif trust is None or (not own.available and not trusted_prior):
        posterior = replace(own, source="posterior")          # the forecast alone (not within the plan: none)
    else:                                                     # no answer of its own: the crossings, if trusted
        posterior, _, weight = combine_progress(prior, own, trust, s.unit, floor=observed)
        posterior = replace(posterior, description=f"{posterior.description}: the other runs' crossings × the "
                                                   f"forecast through the schedule; {trust.description}")
        method = f"{method} × prior" if weight is not None and weight > 0.1 else method
    if trust is not None:
        flags.append(f"posterior: {trust.description}")
    if posterior.value is None or not math.isfinite(posterior.value) or posterior.value > end:
        posterior = ProgressEstimate("posterior", s.unit, math.inf, posterior.low, math.inf,
                                     f"not by the plan's last step {s.schedule.total_steps:,.0f}: "
                                     f"{posterior.description}")
    else:                                  # the run is at its target at an evaluation: its first after the answer
        high = posterior.high if posterior.high is not None and posterior.high <= end else math.inf
        snap = [s.run.next_evaluation(v, after=s.observed_step) if v is not None else None
                for v in (posterior.value, posterior.low, high)]
        posterior = replace(posterior, value=snap[0], low=snap[1], high=snap[2])
    status = "predicted" if math.isfinite(posterior.value) else "not predicted"
    # the time at the answer the page shows (the posterior, at the evaluation it falls on): the run's logged time to
    # the cut, then its pace through the schedule (never the forecast's own crossing between two evaluations)
    time = time_at_step(s, s.run.step_at(posterior.value)) if math.isfinite(posterior.value) else None
    return ProgressForecast(log.source, target, s.unit, n, observed, status, prior, extrap, posterior, method,
                            weight, seconds_per_unit(seen), tuple(flags), time_estimate_s=time)


def _schedule_estimate(s: ScheduleForecast) -> ProgressEstimate:
    """The forecast through the schedule as a source of progress: its crossing with its interval, or no answer
    (``inf``) when it does not reach the target within the plan."""
    if s.status == "not within the plan":
        return ProgressEstimate("extrapolation", s.unit, math.inf, s.progress_low, math.inf,
                                f"not reached by the plan's last step {s.schedule.total_steps:,.0f}")
    return ProgressEstimate("extrapolation", s.unit, s.progress_to_target, s.progress_low,
                            s.progress_high if s.progress_high is not None else math.inf,
                            f"through the schedule ({s.family}): {s.band}")


def _schedule_trust(s: ScheduleForecast, others, target: Target, level: float, cache: ProgressCache):
    """The backtest on the other runs (the forecast's own leave-one-run-out cases): each one's prior from the rest
    and its forecast through its schedule, against when it reached the target."""
    pairs = []
    same_group = any(d.group == s.run.group for d in s.donors)
    for d, cut, steps in case_forecasts(s):
        truth = cache.truth(d.log, target)
        if truth is None or truth <= 0:
            continue
        rest = [o for o in others if o.source != d.source and (same_group or group_of(o) != d.group)]
        rest, _ = _same_rates(d, rest, s.donors, target, cache)
        p = prior_progress(d.log, rest, target, level=level, cache=cache)
        # a forecast that does not reach the target within the plan erred by at least the plan's end over the truth:
        # counted so (a failure of that source, never left out of its record)
        amount = d.next_evaluation(d.to_progress(steps if math.isfinite(steps) else d.schedule.total_steps),
                                   after=cut)
        pairs.append((math.log(p.value / truth) if p.available else None,
                      math.log(amount / truth) if amount and amount > 0 else None))
    return trust_from_errors(pairs, level=level, other="forecast through the schedule") if pairs else None


def _same_rates(run: ScheduleRun, others: Sequence[RunLog], donors: Sequence[ScheduleRun], target: Target,
                cache: ProgressCache) -> tuple[list[RunLog], list[tuple[str, str, str]]]:
    """The other runs whose crossing of ``target`` is evidence of ``run``'s: those that trained on the same rates as
    ``run``, as a function of progress, up to where they reached it (``same_plan``; a run counted in another unit is
    compared through the units both know, ``core.prediction.progress_units``), and the rest as (source, kind, reason):
    no plan known, did not reach the target, cannot be converted, or trained on other rates."""
    plans = {d.source: d for d in donors}
    mine = cache.units(run.log)
    out, apart = [], []
    for o in others:
        d = plans.get(o.source)
        if d is None:
            apart.append((o.source, "plan", "its learning-rate plan is not known"))
            continue
        reached = cache.truth(o, target)
        if reached is None or not reached > 0:
            apart.append((o.source, "target", f"did not reach {target.spec}"))
            continue
        b_per_a = None
        if d.unit != run.unit:
            one, why = pooled_value(1.0, mine, cache.units(o))       # one of this run's units in the other's
            if one is None:
                apart.append((o.source, "unit", why))
                continue
            b_per_a = one
        if same_plan(run, d, reached / (b_per_a or 1.0), b_per_a=b_per_a):
            out.append(o)
        else:
            apart.append((o.source, "rates", "trained on other rates"))
    return out, apart
