"""Which cool-down reaches the target soonest: warmup-stable-decay plans for a run in its stable phase.

A WSD run can start its cool-down at any step of its stable phase still to come. For a run seen to step ``n``
(its law fitted by :func:`core.prediction.forecast_through_schedule`), each candidate plan keeps the run's
current rate from ``n`` to ``decay_start = total × (1 − fraction)``, then cools down over the last
``fraction`` of the steps in ``shape`` (``core.schedules.COOLDOWN_SHAPES``: 1−sqrt, linear, exponential) to
``final`` (default 10 % of the current rate). Each is forecast with the same law and band: the loss at its end,
the probability it is at or below the target there (log-normal with the band's spread), and the steps at
which its curve and its band's edges reach the target.

The **shortest** plan is the one with the fewest total steps whose probability of ending at the target is at
least ``probability`` (0.8); with a step time and a deadline, the plan that fits the deadline and has the
best chance.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from core.defaults import DEFAULT_LEVEL
from core.errors import InputError
from core.logs import RunLog
from core.prediction.schedule_fit import ScheduleFitCache
from core.prediction.through_schedule import ScheduleForecast, ScheduleModel, forecast_through_schedule
from core.runs import metric_column
from core.schedules import COOLDOWN_SHAPES, PlannedSchedule, build_schedule, log_schedule
from core.targets import LOSS_METRIC, Target, target_for
from core.validation import check_option, check_scalar

#: the table :func:`plan_cooldown` returns, in order (``python -m core schedule`` prints it)
COOLDOWN_COLUMNS = ("total_steps", "decay_start", "shape", "metric_at_end", "metric_at_end_low",
                    "metric_at_end_high", "steps_to_target", "steps_low", "steps_high", "time_to_target_s",
                    "decay_fraction", "p_reach", "total_time_s", "shortest", "fits_deadline")
#: default cool-down shapes and fractions of the steps (the range the WSD literature uses)
DEFAULT_SHAPES = ("1-sqrt", "linear", "exp")
DEFAULT_FRACTIONS = (0.1, 0.15, 0.2, 0.25, 0.3)
#: candidate total lengths between the observed step and the longest allowed
N_TOTALS = 30
#: points of each candidate's curve the crossing is found on (then refined by bisection)
CANDIDATE_POINTS = 160


@dataclass(frozen=True)
class CooldownPlan:
    """Candidate cool-downs, best first, and the two answers (module docstring)."""

    table: pd.DataFrame
    shortest: dict | None
    within_deadline: dict | None
    probability: float
    description: str


def cooldown_candidates(logs: Sequence[RunLog], target: Target | None = None) -> list[RunLog]:
    """The runs a cool-down can be planned for: a falling target (``target``, else each run's own; a run whose own
    target climbs is measured on its loss) and a planned schedule, in the order given."""
    out = []
    for log in logs:
        t = target_for(log, target)
        if t.climbs:
            t = Target(LOSS_METRIC, "<=", 1.0)
        if metric_column(log, t.metric) is not None and log_schedule(log) is not None:
            out.append(log)
    return out


def in_progress(log: RunLog) -> bool:
    """Whether ``log`` stops before its plan's last step (a run in progress: its cool-down can still be planned).

    >>> from core.logs import read_log
    >>> in_progress(read_log(b"step,lr,loss\\n100,1e-3,3.0\\n200,1e-3,2.9\\n", "a.csv"))   # its lr column is its plan
    False
    """
    plan = log_schedule(log)
    last = float(np.nanmax(log.frame["global_step"].to_numpy(dtype=float)))
    return plan is not None and last < plan.total_steps


def default_cooldown_target(log: RunLog, others: Sequence[RunLog], target: Target | None = None) -> Target:
    """What a cool-down is planned towards when nothing else is asked: ``target`` when the user chose it (origin
    ``user``), it falls and ``log`` logs its metric; else the run's own falling target; else the lowest loss another
    loaded run logged (reach what the best run reached), else 2 % under this run's last logged loss.

    >>> from core.logs import read_log
    >>> a = read_log(b"step,lr,loss\\n100,1e-3,3.0\\n200,1e-3,2.9\\n", "a.csv")
    >>> b = read_log(b"step,lr,loss\\n100,1e-3,3.0\\n200,1e-4,2.8\\n", "b.csv")
    >>> default_cooldown_target(a, [b]).spec, default_cooldown_target(a, []).spec
    ('loss<=2.8', 'loss<=2.842')
    """
    chosen = target if target is not None and target.origin == "user" else None
    for t in (chosen, log.target):
        if t is not None and not t.climbs and metric_column(log, t.metric) is not None:
            return t
    best = [float(np.nanmin(o.metric_series(LOSS_METRIC))) for o in others
            if o.source != log.source and metric_column(o, LOSS_METRIC) is not None]
    best = [b for b in best if math.isfinite(b)]
    if best:
        return Target(LOSS_METRIC, "<=", min(best), "default")
    last = float(log.metric_series(LOSS_METRIC).dropna().iloc[-1])
    return Target(LOSS_METRIC, "<=", round(0.98 * last, 4), "default")


def candidate_schedule(past: PlannedSchedule, *, at: float, total: float, fraction: float, shape: str,
                       final: float | None = None) -> PlannedSchedule:
    """``past`` up to step ``at``, then its rate there held to ``total × (1 − fraction)`` and a cool-down of ``shape``
    to ``final`` (default 10 % of that rate) at ``total``.

    >>> from core.schedules import parse_schedule_spec
    >>> past = parse_schedule_spec("constant:total=10000,peak=1e-3")
    >>> s = candidate_schedule(past, at=4000, total=8000, fraction=0.25, shape="linear")
    >>> s.total_steps, float(s.lr_at(6000)), round(float(s.lr_at(7000)), 6), round(float(s.lr_at(8000)), 6)
    (8000.0, 0.001, 0.00055, 0.0001)
    """
    rate = float(past.lr_at(at))
    start = total * (1 - fraction)
    if start < at:
        raise InputError(f"cool-down: expected it to start at or after step {at:,.0f} (the observed part's end); "
                         f"a {fraction:.0%} cool-down of {total:,.0f} steps starts at {start:,.0f}.")
    final = 0.1 * rate if final is None else final
    spec = f"wsd:total={total:.0f},peak={rate:.6g},decay_start={start:.0f},final={final:.6g},shape={shape}"
    plan = build_schedule("wsd", total=total, peak=rate, decay_start=start, final=final, shape=shape,
                          unit=past.unit, spec=spec, source=f"cool-down {shape} over the last {fraction:.0%} of "
                                                            f"{total:,.0f} steps")
    return past.then(plan, at=at, source=plan.source)


def evaluate_candidate(model: ScheduleModel, schedule: PlannedSchedule, target_value: float, cut: float
                       ) -> dict[str, float]:
    """The loss at ``schedule``'s end with its band, the probability it is at the target there, and the steps at
    which the curve and the band's edges first reach ``target_value`` (``inf``: not within the plan)."""
    grid = np.unique(np.r_[np.linspace(cut, schedule.total_steps, CANDIDATE_POINTS // 2),
                           np.linspace(max(cut, schedule.total_steps * 0.6), schedule.total_steps,
                                       CANDIDATE_POINTS // 2)])
    curve = model.curve(schedule, grid)
    half = float(model.half_width([schedule.total_steps])[0])
    z = stats.norm.ppf((1 + model.level) / 2)
    sigma = max(half / z, 1e-12)
    steps, low, high = model.crossings(schedule, grid, target_value, curve=curve)
    return {"metric_at_end": float(curve[-1]), "metric_at_end_low": float(curve[-1] * math.exp(-half)),
            "metric_at_end_high": float(curve[-1] * math.exp(half)),
            "p_reach": float(stats.norm.cdf((math.log(target_value) - math.log(curve[-1])) / sigma)),
            "steps_to_target": steps, "steps_low": low, "steps_high": high}


def decay_fractions_between(low: float, high: float, step: float = 0.05) -> tuple[float, ...]:
    """Cool-down lengths from ``low`` to ``high`` (fractions of the total steps) every ``step``, both ends kept.

    >>> decay_fractions_between(0.1, 0.3)
    (0.1, 0.15, 0.2, 0.25, 0.3)
    >>> decay_fractions_between(0.2, 0.2)
    (0.2,)
    """
    low = check_scalar(low, "decay fraction", float, min_val=0, max_val=1, include_boundaries="neither")
    high = check_scalar(high, "decay fraction", float, min_val=0, max_val=1, include_boundaries="neither")
    if high < low:
        raise InputError(f"decay fractions: expected LOW <= HIGH; got {low}:{high}.")
    n = int(round((high - low) / step))
    return tuple(dict.fromkeys(round(low + (high - low) * i / n, 6) for i in range(n + 1))) if n else (low,)


def cooldown_forecast(log: RunLog, others: Sequence[RunLog] = (), target: Target | None = None, *,
                      observe: float | None = None, max_steps: float | None = None, family: str = "auto",
                      level: float = DEFAULT_LEVEL, cache: ScheduleFitCache | None = None) -> ScheduleForecast:
    """The forecast a cool-down is planned from: ``log`` through its own plan, seen to ``observe`` of its steps.

    Seen whole (a run in progress), a run whose logged rates end where its log does and that declares nothing
    further is taken to **hold its last rate** to ``max_steps`` (default: twice its steps so far): its stable
    phase goes on until a cool-down is chosen, which is what the planner then chooses."""
    planned = None
    if observe is None:
        plan = log_schedule(log)
        last = float(np.nanmax(log.frame["global_step"].to_numpy(dtype=float)))
        if plan is not None and plan.total_steps <= last:
            end = float(max_steps) if max_steps and max_steps > last else 2.0 * last
            planned = plan.held_to(end, source=f"{plan.source}, its last rate held to step {end:,.0f} "
                                                            "(a run in progress: the stable phase goes on)")
    return forecast_through_schedule(log, others, target, observe=observe, planned=planned, family=family,
                                     level=level, cache=cache)


def plan_cooldown(forecast: ScheduleForecast, *, shapes: Sequence[str] = DEFAULT_SHAPES,
                  decay_fractions: Sequence[float] = DEFAULT_FRACTIONS, max_steps: float | None = None,
                  final: float | None = None, step_time_s: float | None = None, deadline_s: float | None = None,
                  probability: float = 0.8, n_totals: int = N_TOTALS) -> CooldownPlan:
    """Candidate cool-downs for the run ``forecast`` was made of (module docstring).

    Parameters
    ----------
    forecast : ScheduleForecast
        The run's forecast through its own plan (its law and band are reused).
    shapes : sequence of str, default ("1-sqrt", "linear", "exp")
    decay_fractions : sequence of float, default 0.1 … 0.3
        Cool-down lengths as fractions of the total steps.
    max_steps : float, optional
        The longest total considered; default 1.5 × the run's own planned total.
    final : float, optional
        The rate the cool-down ends at (default 10 % of the run's current rate).
    step_time_s, deadline_s : float, optional
        Seconds per step (for times) and a deadline (the plans that end within it).
    probability : float, default 0.8
        The chance of ending at the target a plan must have to count as reaching it.

    Raises
    ------
    InputError
        A forecast without a fitted law (the run is already at its target), a bad shape or fraction.
    """
    model = forecast.model
    if model is None or forecast.status == "reached":
        raise InputError(f"{forecast.source}: expected a run still short of its target; it reached "
                         f"{forecast.target.spec} at step {forecast.steps_to_target:,.0f} in the part seen. Plan a "
                         "cool-down to a lower target.")
    for shape in shapes:
        check_option(shape, "cool-down shape", COOLDOWN_SHAPES)
    fractions = [check_scalar(f, "decay fraction", float, min_val=0, max_val=1, include_boundaries="neither")
                 for f in decay_fractions]
    probability = check_scalar(probability, "probability", float, min_val=0, max_val=1, include_boundaries="neither")
    cut = forecast.observed_step
    longest = float(max_steps) if max_steps else 1.5 * forecast.schedule.total_steps
    if step_time_s and deadline_s:
        longest = min(longest, deadline_s / step_time_s)
    if longest <= cut * 1.01:
        raise InputError(f"{forecast.source}: expected a longest plan past the observed step {cut:,.0f}; got "
                         f"{longest:,.0f} steps (--max-steps, or deadline / step time).")
    past = forecast.schedule
    totals = np.unique(np.round(np.linspace(cut / (1 - min(fractions)) if min(fractions) < 1 else cut,
                                            longest, n_totals)))
    rows, refusals = [], []
    for total in totals:
        for fraction in fractions:
            if total * (1 - fraction) < cut:
                continue
            for shape in shapes:
                try:
                    plan = candidate_schedule(past, at=cut, total=float(total), fraction=fraction, shape=shape,
                                              final=final)
                except InputError as exc:
                    refusals.append(str(exc))
                    continue
                row = {"total_steps": float(total), "decay_start": float(total * (1 - fraction)), "shape": shape,
                       "decay_fraction": fraction, **evaluate_candidate(model, plan, forecast.target.value, cut)}
                rows.append(row)
    if not rows and refusals:
        raise InputError(f"{forecast.source}: no candidate cool-down could be built: {refusals[0]}")
    if not rows:
        raise InputError(f"{forecast.source}: no candidate cool-down starts after the observed step {cut:,.0f} "
                         f"within {longest:,.0f} steps; allow more steps (--max-steps).")
    table = pd.DataFrame(rows)
    table["time_to_target_s"] = table["steps_to_target"] * step_time_s if step_time_s else np.nan
    table["total_time_s"] = table["total_steps"] * step_time_s if step_time_s else np.nan
    table["fits_deadline"] = (table["total_time_s"] <= deadline_s) if (step_time_s and deadline_s) else True
    ok = table["p_reach"] >= probability
    table["shortest"] = False
    shortest = None
    if ok.any():
        best = table[ok].sort_values(["total_steps", "p_reach"], ascending=[True, False]).index[0]
        table.loc[best, "shortest"] = True
        shortest = table.loc[best].to_dict()
    within = table[table["fits_deadline"]]
    within_deadline = (within.sort_values(["p_reach", "metric_at_end"], ascending=[False, True]).iloc[0].to_dict()
                       if len(within) else None)
    table["_order"] = np.where(ok, 0, 1)
    table = table.sort_values(["_order", "total_steps", "p_reach"], ascending=[True, True, False])
    table = table.drop(columns="_order").reset_index(drop=True)[list(COOLDOWN_COLUMNS)]
    if shortest is not None:
        what = (f"shortest plan reaching {forecast.target.spec} with ≥ {probability:.0%} probability: "
                f"{shortest['total_steps']:,.0f} steps, a {shortest['shape']} cool-down from step "
                f"{shortest['decay_start']:,.0f} (P = {shortest['p_reach']:.0%})")
    else:
        what = (f"no candidate within {longest:,.0f} steps reaches {forecast.target.spec} with ≥ {probability:.0%} "
                "probability; allow more steps (--max-steps)")
    return CooldownPlan(table, shortest, within_deadline, probability, what)
