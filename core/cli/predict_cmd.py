"""``python -m core predict LOG... --prior-from FITS_OR_LOGS... [--target-acc T] [--observe N|FRACTION]
[--schedule SPEC] [--level 0.8]``.

For every readable LOG (a run that may not have finished), three answers to "at which epoch will
it pass the target?": the **prior** from the other runs given with ``--prior-from`` (other batch
sizes of the same job when there are two or more that reached the target, else a calibration
over the other architectures: fitted-runs tables such as the course's, and/or logs), the
**extrapolation** of the LOG's first epochs (``--observe``: a number of epochs, or a fraction of
the log; all of it by default), and the **posterior** that combines them
(``core.prediction.forecast_epoch_at_target``).  CSV on stdout, one row per LOG:
``file,observed_epochs,prior_epoch,prior_low,prior_high,extrapolated_epoch,extrap_low,
extrap_high,posterior_epoch,posterior_low,posterior_high,method,flags`` (empty cells where a
part is not available; epochs are whole epochs, ``inf`` = may never get there).  A sentence per
LOG on stderr says where each part came from.

With ``--target SPEC`` for a metric other than the accuracy (``eval_accuracy<=3.3``, ``val_loss<=3.28``), or
with a log that declares such a target (MLLOG, speedrun), the answers are in the run's progress unit:
``prior_samples,extrapolation_samples,posterior_samples,posterior_samples_low,posterior_samples_high``
(samples where the log counts them, else tokens, else optimiser steps, epochs for a course ``_val`` log:
``unit`` says which; ``core.prediction.progress``),
``--observe`` a fraction of the log's evaluations or a number of them; with no ``--observe`` the whole log is
the observed part (a run in progress, never assumed to end at its target).

**Through the schedule.** With a falling target and a planned learning-rate schedule that goes past the
observed part (the log's lr column, the schedule a speedrun or MLLOG log declares, ``--planned-schedule
FILE.csv`` of ``step,lr`` rows, or ``--schedule KIND:total=N,...`` such as
``wsd:total=24000,warmup=2160,decay=0.2,shape=1-sqrt``), ``posterior_progress``, ``posterior_progress_low``
and ``posterior_progress_high`` are the forecast through that schedule (``core.prediction.forecast_progress``:
the LR-annealing law, ``--family multi-power`` for the multi-power law; ``--observe F`` is then the fraction of
the log's steps seen, a count of evaluations the fraction of the steps they reach), and ``metric_at_end``,
``metric_at_end_low``, ``metric_at_end_high`` are the forecast of the target's metric at the plan's last step;
``schedule`` says where the plan came from, ``route`` which route answered. A forecast past the plan's last step
is never made: a target not reached by then leaves ``posterior_progress`` at ``inf``. A declared plan replaces
the log's own after the observed part.

A file that cannot be read gets one ``<file>: <problem>`` line on stderr; the others are still
predicted.  Exit status 0 when every file was read, 2 when any was rejected.
"""

from __future__ import annotations

import argparse

from core.cli.common import (
    about,
    add_option,
    add_target_arguments,
    complain,
    datasets_by_source,
    fraction,
    planned_schedule_file,
    positive_int,
    print_csv,
    read_prior_sources,
    schedule_spec,
)
from core.curves import DEFAULT_SCHEDULE_FAMILY, FAMILIES, SCHEDULE_FAMILIES
from core.defaults import DEFAULT_LEVEL
from core.errors import LogFormatError, PlannerError
from core.logs import MIN_FIT_POINTS, read_log_file
from core.models import DATASETS
from core.prediction import (
    DEFAULT_POSTERIOR_METHOD,
    FORECAST_POSTERIOR_METHODS,
    ProgressCache,
    ScheduleFitCache,
    forecast_run,
    forecast_table,
)
from core.schedules import SCHEDULE_KINDS


def observe(text: str) -> float:
    """argparse type: a number of epochs (an integer >= 1) or a fraction in (0, 1)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of epochs or a fraction; got {text!r}") from None
    if 0 < value < 1 or (value >= 1 and value.is_integer()):
        return value
    raise argparse.ArgumentTypeError(f"expected a whole number of epochs >= 1 or a fraction in (0, 1); got {text}")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("logs", nargs="+", metavar="LOG", help="training-log CSV files to predict")
    parser.add_argument("--prior-from", nargs="+", default=[], metavar="FITS_OR_LOGS",
                        help="fitted-runs tables (course table, `python -m core fit` output) and/or logs of other "
                             "runs: other architectures, or the same job at other batch sizes")
    add_target_arguments(parser)
    parser.add_argument("--observe", type=observe, default=None, metavar="N_EPOCHS|FRACTION",
                        help="predict from the first N epochs, or this fraction of each log (default: all of it)")
    plan = parser.add_mutually_exclusive_group()
    plan.add_argument("--schedule", type=schedule_spec, default="auto",
                      help="learning-rate schedule: in epochs for an accuracy target (step:30,60 | cosine:100 | "
                           "poly:90[:2] | exp:100 | none), or a planned schedule in optimiser steps for a falling "
                           f"target ({' | '.join(SCHEDULE_KINDS)}:total=N[,warmup=N][,peak=LR][,final=LR|P%%]"
                           "[,decay=F|decay_start=N][,shape=1-sqrt|linear|exp|cosine]); auto (default): the "
                           "log's lr column or declared schedule, else drops detected in the observed curve")
    plan.add_argument("--planned-schedule", type=planned_schedule_file, default=None, metavar="FILE.csv",
                      help="a CSV of step,lr rows (a log with an lr column will do): the planned schedule after "
                           "the observed part, forecast through with a falling target")
    parser.add_argument("--level", type=fraction, default=DEFAULT_LEVEL, help="interval coverage (default 0.8)")
    add_option(parser, "--posterior-method", FORECAST_POSTERIOR_METHODS, default=DEFAULT_POSTERIOR_METHOD,
                        help="how prior and extrapolation combine: precision weighting of the two intervals; "
                             "(backtest) precision weighting with each source's variance from its log errors on the "
                             "other loaded runs cut at the same fraction; (correlated) the weight and split-conformal "
                             "interval learned from the other loaded runs' errors at the same fraction, their "
                             "correlation counted; (calibrated) the prior, "
                             "the extrapolation or their precision weighting, whichever the other loaded runs cut "
                             "at the same fraction calibrate to the narrowest interval, its interval scaled on "
                             f"them; default {DEFAULT_POSTERIOR_METHOD}")
    add_option(parser, "--family", ("auto", *FAMILIES, *SCHEDULE_FAMILIES), default="auto", metavar="FAMILY",
                        help="curve family of the extrapolation (default auto); through a schedule: "
                             f"{', '.join(SCHEDULE_FAMILIES)} (auto: {DEFAULT_SCHEDULE_FAMILY})")
    add_option(parser, "--dataset", DATASETS, default=None,
                        help="what the runs trained on (parameter counts for the calibration; default: cifar10 "
                             "for the course table; for logs, the built-in data set of a file that is a built-in "
                             "log's bytes, else other)")
    parser.add_argument("--steps-per-epoch", type=positive_int, default=None,
                        help="override the inferred steps per epoch of every log")


def run(args: argparse.Namespace) -> int:
    others, fits, rejected = read_prior_sources(args.prior_from, args)
    datasets = datasets_by_source(others, args.dataset)
    forecasts = []
    progress_cache, schedule_cache = ProgressCache(), ScheduleFitCache()
    for path in args.logs:
        try:
            log = read_log_file(path, source=path, steps_per_epoch=args.steps_per_epoch, min_points=MIN_FIT_POINTS)
        except LogFormatError as exc:
            complain(str(exc))
            rejected += 1
            continue
        datasets.update(datasets_by_source([log], args.dataset))
        try:
            f = forecast_run(log, others, args.target, observe=args.observe, schedule=_schedule(args),
                             family=args.family, level=args.level, fits=fits, datasets_by_file=datasets,
                             posterior_method=args.posterior_method, progress_cache=progress_cache,
                             schedule_cache=schedule_cache)
        except PlannerError as exc:
            complain(about(path, exc))
            rejected += 1
            continue
        forecasts.append(f)
        for line in f.lines():
            complain(f"{path}: {line}")
    print_csv(forecast_table(forecasts))
    return 2 if rejected else 0


def _schedule(args):
    """The schedule the user declared: ``--planned-schedule``'s, else ``--schedule``'s (``auto`` by default)."""
    return args.planned_schedule if args.planned_schedule is not None else args.schedule
