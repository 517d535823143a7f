"""``python -m core backtest LOG... [--observe 0.3,0.5,0.7] [--target-acc 0.92] [--family NAME|auto]``.

For every readable log and observed fraction, predicts the epoch at the target from the
first epochs only and compares it with what the rest of the log shows (``core.prediction.backtest_runs``,
which picks the route from the logs' targets: the epoch route below, or the progress route further down).
Prints CSV on stdout: ``file,family,observed_fraction,epoch_pred,epoch_low,epoch_high,
epoch_actual,error_pct,covered`` (accuracy route), then the extra columns of
``core.prediction.backtest_table.EXTRA_COLUMNS`` (row status, the loss route's ``*_via_loss`` columns, ...).
After the rows, a summary line goes to **stderr** (so stdout stays a clean CSV): per
fraction, the median absolute error and the interval coverage of the scored rows.

With ``--prior-from FITS_OR_LOGS...`` every row also holds the prior (from those files, never
the log itself or its architecture: other batch sizes of the same job, else a calibration over
the other architectures), the posterior and their errors (``core.prediction.combined.PRIOR_COLUMNS``),
and a second summary line compares the three per observed fraction.  ``--schedule`` declares
the learning-rate schedule (``step:30,60``, ``cosine:100``, ``poly:90``, ``exp:100``, ``none``;
``auto``, the default as in ``predict``: an lr column, else drops detected in the observed
epochs), so the backtest scores the answer ``predict`` gives.

``--from-library [FILTER]`` adds the library's runs (all, or those FILTER matches) to the
files, named ``<source> (library #<id>)``.

With ``--target SPEC`` on a metric other than the accuracy (``eval_accuracy<=3.3``), or logs that declare
such a target (MLLOG, speedrun), each finished log is cut at each ``--observe`` fraction of its
evaluations and its progress to target (samples, tokens, steps or epochs) predicted from the other logs
(``core.prediction.progress_backtest.backtest_progress``); columns ``PROGRESS_BACKTEST_COLUMNS``.

A file that cannot be read gets one ``<file>: <problem>`` line on stderr; the others are
still backtested.  Exit status 0 when every file was read, 2 when any was rejected.
"""

from __future__ import annotations

import argparse

from core.cli.common import (
    accuracy_spec,
    add_library_arguments,
    add_option,
    complain,
    datasets_by_source,
    fraction,
    library_logs,
    naming,
    positive_int,
    print_csv,
    read_prior_sources,
    schedule_spec,
    target_spec,
)
from core.curves import FAMILIES
from core.errors import InputError, LogFormatError
from core.logs import read_log_file
from core.models import DATASETS
from core.prediction import (
    DEFAULT_FRACTIONS,
    DEFAULT_POSTERIOR_METHOD,
    FORECAST_POSTERIOR_METHODS,
    INTERVAL_CALIBRATIONS,
    LOSS_THRESHOLDS,
    backtest_runs,
)


def fractions(text: str) -> list[float]:
    """argparse type: comma-separated fractions in (0, 1)."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise argparse.ArgumentTypeError(f"expected fractions like 0.3,0.5,0.7; got {text!r}")
    return [fraction(p) for p in parts]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("logs", nargs="*", metavar="LOG", help="training-log CSV files (finished runs)")
    parser.add_argument("--observe", type=fractions, default=list(DEFAULT_FRACTIONS),
                        help="observed fractions of the epochs, comma-separated (default 0.3,0.5,0.7)")
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--target", type=target_spec, default=None, metavar="SPEC",
                        help="the target: METRIC>=VALUE or METRIC<=VALUE (default: the logs' own, else acc>=0.92)")
    target.add_argument("--target-acc", dest="target", type=accuracy_spec, default=None, metavar="A",
                        help="target accuracy as a fraction: --target acc>=A (default 0.92)")
    target.add_argument("--target-rel", type=fraction, default=None,
                        help="target = this fraction of each log's final accuracy (defining the "
                             "target reads the end of the log; the prediction does not)")
    add_option(parser, "--family", ("auto", *FAMILIES), default="auto", metavar="FAMILY",
                        help=f"curve family: auto (chosen inside the observed epochs) or one of "
                             f"{', '.join(FAMILIES)} (default auto)")
    add_option(parser, "--calibration", INTERVAL_CALIBRATIONS, default="runs",
                        help="interval width learned from the other logs (runs, leave-one-run-out) "
                             "or from each log's observed epochs alone (self); default runs")
    add_option(parser, "--loss-threshold", LOSS_THRESHOLDS, default="observed",
                        help="loss route: the loss at target from the observed epochs, or the "
                             "median of the other runs (default observed)")
    parser.add_argument("--no-correction", action="store_true",
                        help="report each family's own extrapolation, without the drift correction")
    parser.add_argument("--steps-per-epoch", type=positive_int, default=None,
                        help="override the inferred steps per epoch")
    parser.add_argument("--no-extra", action="store_true", help="print only the contract columns")
    parser.add_argument("--prior-from", nargs="+", default=None, metavar="FITS_OR_LOGS",
                        help="fitted-runs tables and/or logs to make each log's prior from; adds the prior and "
                             "posterior columns")
    parser.add_argument("--schedule", type=schedule_spec, default="auto",
                        help="learning-rate schedule of the logs: step:30,60 | cosine:100 | poly:90[:2] | exp:100 | "
                             "none | auto (an lr column, else detected in the observed epochs); default: auto, "
                             "as predict's, so the backtest scores the answer predict gives")
    add_option(parser, "--posterior-method", FORECAST_POSTERIOR_METHODS,
                        default=DEFAULT_POSTERIOR_METHOD,
                        help="how the posterior combines prior and extrapolation: precision weighting with the two "
                             "intervals' variances (precision, default) or with the log errors of the other logs at "
                             "the same fraction (backtest), or the weight and split-conformal interval learned from "
                             "those errors counting their correlation (correlated), or the source (prior, "
                             "extrapolation or their precision weighting) that the other logs at the same fraction "
                             "calibrate to the narrowest interval, with its interval scaled on them (calibrated)")
    add_option(parser, "--dataset", DATASETS, default=None,
                        help="what the runs trained on (parameter counts for a calibration prior; default: the "
                             "built-in data set of a file that is a built-in log's bytes, else other)")
    add_library_arguments(parser)


def run(args: argparse.Namespace) -> int:
    if not args.logs and args.from_library is None:
        raise InputError("backtest: expected LOG files or --from-library [FILTER]; got neither.")
    logs, rejected = [], 0
    library = library_logs(args)
    for path in args.logs:
        try:
            logs.append(read_log_file(path, source=path, steps_per_epoch=args.steps_per_epoch))
        except LogFormatError as exc:
            complain(str(exc))
            rejected += 1
    logs += library
    others = fits = datasets = None
    if args.prior_from is not None:
        others, fits, bad = read_prior_sources(args.prior_from, args)
        rejected += bad
        datasets = datasets_by_source([*logs, *others], args.dataset)
    with naming("backtest"):
        answer = backtest_runs(logs, args.target, target_rel=args.target_rel, fractions=args.observe,
                               family=args.family, calibration=args.calibration, loss_threshold=args.loss_threshold,
                               correct=not args.no_correction, schedule=args.schedule, prior_from=others, fits=fits,
                               datasets_by_file=datasets, posterior_method=args.posterior_method)
    for problem in answer.left_out:
        complain(problem)
    print_csv(answer.shown(extra=not args.no_extra))
    for line in answer.lines:
        complain(line)
    for note in answer.notes:
        complain(f"backtest: {note}")
    return 2 if rejected or answer.left_out else 0
