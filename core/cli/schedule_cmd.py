"""``python -m core schedule LOG --prior-from LOGS... --target "METRIC<=V" --observe F [--shapes 1-sqrt,linear,exp]
[--decay-fraction 0.1:0.3] [--max-steps N] [--step-time S] [--deadline-s D]``.

Which cool-down gets LOG to a falling target soonest: LOG is forecast through its own plan from its first F of
steps (``core.prediction.forecast_through_schedule``: the decay terms from the other runs, its own level, the
band from leave-one-run-out), then under every warmup-stable-decay plan that holds its current rate and cools
down over the last 10-30 % of a total length (``core.prediction.plan_cooldown``). One CSV row per candidate,
best first: ``total_steps, decay_start, shape, metric_at_end, metric_at_end_low, metric_at_end_high,
steps_to_target, steps_low, steps_high, time_to_target_s`` (``inf``: not reached by the plan's end), then
``decay_fraction, p_reach`` (the chance the loss at the end is at the target), ``total_time_s``, ``shortest``
(the shortest plan that reaches the target with 80 % probability) and ``fits_deadline``. A sentence on stderr
names the shortest plan, and with ``--deadline-s`` the best plan that fits the deadline.

Exit status 0, or 2 when LOG cannot be read or forecast (one ``<file>: <problem>`` line on stderr).
"""

from __future__ import annotations

import argparse

from core.cli.common import (
    add_option,
    add_target_arguments,
    complain,
    fraction,
    naming,
    option,
    positive_float,
    print_csv,
    read_prior_sources,
)
from core.curves import DEFAULT_SCHEDULE_FAMILY, SCHEDULE_FAMILIES
from core.defaults import DEFAULT_LEVEL
from core.errors import InputError
from core.logs import read_log_file
from core.prediction import DEFAULT_COOLDOWN_FRACTIONS, cooldown_forecast, decay_fractions_between, plan_cooldown
from core.schedules import COOLDOWN_SHAPES


def shapes(text: str) -> tuple[str, ...]:
    """argparse type: cool-down shapes of ``core.schedules.COOLDOWN_SHAPES``, comma-separated."""
    out = tuple(s.strip() for s in text.split(",") if s.strip())
    if not out:
        raise argparse.ArgumentTypeError(f"expected shapes among {', '.join(COOLDOWN_SHAPES)}; got {text!r}")
    return tuple(_shape(s) for s in out)


_shape = option(COOLDOWN_SHAPES, what="shape")
shapes.options = COOLDOWN_SHAPES


def decay_fractions(text: str) -> tuple[float, ...]:
    """argparse type: ``LOW:HIGH`` (every 0.05 between them, ``core.prediction.decay_fractions_between``) or a
    comma-separated list of fractions in (0, 1)."""
    try:
        if ":" in text:
            lo, hi = (float(v) for v in text.split(":"))
            values = decay_fractions_between(lo, hi)
        else:
            values = tuple(float(v) for v in text.split(",") if v.strip())
    except (ValueError, InputError):
        raise argparse.ArgumentTypeError(f"expected LOW:HIGH or fractions such as 0.1,0.2 in (0, 1); got "
                                         f"{text!r}") from None
    if not values or any(not 0 < v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"expected fractions of the steps in (0, 1); got {text!r}")
    return values


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log", metavar="LOG", help="the run in progress (or a finished run cut with --observe)")
    parser.add_argument("--prior-from", nargs="+", default=[], metavar="LOGS",
                        help="other runs of the same data (other sizes, schedules, seeds): the decay terms and "
                             "the band")
    add_target_arguments(parser)
    parser.add_argument("--observe", type=fraction, default=None, metavar="F",
                        help="the fraction of LOG's steps seen (default: all of it, a run in progress)")
    parser.add_argument("--shapes", type=shapes, default=("1-sqrt", "linear", "exp"),
                        help=f"cool-down shapes, among {', '.join(COOLDOWN_SHAPES)} (default 1-sqrt,linear,exp)")
    parser.add_argument("--decay-fraction", type=decay_fractions, default=DEFAULT_COOLDOWN_FRACTIONS,
                        metavar="LOW:HIGH", help="cool-down lengths as fractions of the total (default 0.1:0.3)")
    parser.add_argument("--max-steps", type=positive_float, default=None,
                        help="the longest total considered (default 1.5 × LOG's planned total)")
    parser.add_argument("--final-lr", type=positive_float, default=None,
                        help="the rate a cool-down ends at (default 10 %% of LOG's current rate)")
    parser.add_argument("--step-time", type=positive_float, default=None, metavar="S",
                        help="seconds per step: time_to_target_s and total_time_s")
    parser.add_argument("--deadline-s", type=positive_float, default=None,
                        help="a deadline in seconds (needs --step-time): the plans that end within it")
    parser.add_argument("--probability", type=fraction, default=0.8,
                        help="the chance of ending at the target a plan must have (default 0.8)")
    add_option(parser, "--family", ("auto", *SCHEDULE_FAMILIES), default="auto",
                        help=f"the law through the schedule (default auto: {DEFAULT_SCHEDULE_FAMILY})")
    parser.add_argument("--level", type=fraction, default=DEFAULT_LEVEL, help="band coverage (default 0.8)")


def run(args: argparse.Namespace) -> int:
    others, _fits, rejected = read_prior_sources(args.prior_from, args_with_defaults(args))
    with naming(args.log):
        log = read_log_file(args.log, source=args.log)
        forecast = cooldown_forecast(log, others, args.target, observe=args.observe,
                                     max_steps=args.max_steps, family=args.family, level=args.level)
        plan = plan_cooldown(forecast, shapes=args.shapes, decay_fractions=args.decay_fraction,
                             max_steps=args.max_steps, final=args.final_lr, step_time_s=args.step_time,
                             deadline_s=args.deadline_s, probability=args.probability)
    print_csv(plan.table)
    complain(f"{args.log}: {plan.description}; observed to step {forecast.observed_step:,.0f}; own plan "
             f"({forecast.schedule.source}) ends at loss {forecast.metric_at_end:.4g}")
    if args.deadline_s and args.step_time:
        best = plan.within_deadline
        complain(f"{args.log}: within the deadline ({args.deadline_s:,.0f} s = {args.deadline_s / args.step_time:,.0f} "
                 "steps): " + (f"{best['total_steps']:,.0f} steps, {best['shape']} cool-down from step "
                               f"{best['decay_start']:,.0f}, P = {best['p_reach']:.0%}" if best else "no plan fits"))
    elif args.deadline_s:
        complain(f"{args.log}: --deadline-s needs --step-time to turn seconds into steps; ignored")
    return 2 if rejected else 0


def args_with_defaults(args: argparse.Namespace) -> argparse.Namespace:
    """``read_prior_sources`` reads ``dataset`` and ``steps_per_epoch``: none here."""
    return argparse.Namespace(**{**vars(args), "dataset": None, "steps_per_epoch": None})
