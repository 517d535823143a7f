"""``python -m core backtest LOG... [--observe 0.3,0.5,0.7] [--target-acc 0.92] [--family NAME|auto]``.

For every readable log and observed fraction, predicts the epoch at the target from the
first epochs only and compares it with what the rest of the log shows (``core.prediction.backtest``).
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
    chosen_target,
    complain,
    datasets_by_source,
    fraction,
    library_logs,
    positive_int,
    print_csv,
    read_prior_sources,
    schedule_spec,
    target_spec,
)
from core.curves import FAMILIES
from core.defaults import DEFAULT_TARGET_ACC
from core.errors import InputError, LibraryError, LogFormatError
from core.logs import read_log_file
from core.prediction import (
    BACKTEST_COLUMNS,
    DEFAULT_FRACTIONS,
    DEFAULT_POSTERIOR_METHOD,
    backtest_logs,
    backtest_progress,
    backtest_summary,
    prior_for_run,
    priors_without_each_run,
    progress_backtest_summary,
    resolve_target,
    summary_line,
    summary_of,
)


def fractions(text: str) -> list[float]:
    """argparse type: comma-separated fractions in (0, 1)."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise argparse.ArgumentTypeError(f"expected fractions like 0.3,0.5,0.7; got {text!r}")
    return [fraction(p) for p in parts]


def family_name(text: str) -> str:
    """argparse type: a family of ``core.curves.FAMILIES`` or ``auto``."""
    if text != "auto" and text not in FAMILIES:
        raise argparse.ArgumentTypeError(f"expected auto or one of {', '.join(FAMILIES)}; got {text!r}")
    return text


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
    parser.add_argument("--family", type=family_name, default="auto",
                        help=f"curve family: auto (chosen inside the observed epochs) or one of "
                             f"{', '.join(FAMILIES)} (default auto)")
    parser.add_argument("--calibration", choices=("runs", "self"), default="runs",
                        help="interval width learned from the other logs (runs, leave-one-run-out) "
                             "or from each log's observed epochs alone (self); default runs")
    parser.add_argument("--loss-threshold", choices=("observed", "runs"), default="observed",
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
    parser.add_argument("--posterior-method", choices=("precision", "backtest", "correlated", "calibrated"),
                        default=DEFAULT_POSTERIOR_METHOD,
                        help="how the posterior combines prior and extrapolation: precision weighting with the two "
                             "intervals' variances (precision, default) or with the log errors of the other logs at "
                             "the same fraction (backtest), or the weight and split-conformal interval learned from "
                             "those errors counting their correlation (correlated), or the source (prior, "
                             "extrapolation or their precision weighting) that the other logs at the same fraction "
                             "calibrate to the narrowest interval, with its interval scaled on them (calibrated)")
    parser.add_argument("--dataset", default=None, choices=["cifar10", "mnist1d", "other"],
                        help="what the runs trained on (parameter counts for a calibration prior; default: the "
                             "built-in data set of a file that is a built-in log's bytes, else other)")
    add_library_arguments(parser)


def run(args: argparse.Namespace) -> int:
    if not args.logs and args.from_library is None:
        complain("backtest: expected LOG files or --from-library [FILTER]; got neither.")
        return 2
    logs, rejected = [], 0
    try:
        library = library_logs(args)
    except (InputError, LibraryError) as exc:
        complain(str(exc))
        return 2
    for path in args.logs:
        try:
            logs.append(read_log_file(path, source=path, steps_per_epoch=args.steps_per_epoch))
        except LogFormatError as exc:
            complain(str(exc))
            rejected += 1
    logs += library
    chosen = chosen_target(args)
    declared = {str(getattr(lg, "target", None)) for lg in logs if getattr(lg, "target", None) is not None}
    if (chosen is not None and not chosen.is_accuracy) or (chosen is None and args.target_rel is None and declared
                                                           and len(declared) == 1 and "acc>=" not in declared.pop()):
        return _progress_backtest(logs, chosen, args, rejected)
    args.target_acc = DEFAULT_TARGET_ACC if chosen is None else chosen.value
    if args.target_rel is not None:
        kept = []
        for log in logs:
            try:
                resolve_target(log, target_rel=args.target_rel)
                kept.append(log)
            except InputError as exc:
                complain(str(exc))
                rejected += 1
        logs = kept
    priors = priors_without = None
    if args.prior_from is not None:
        others, fits, bad = read_prior_sources(args.prior_from, args)
        rejected += bad
        datasets = datasets_by_source([*logs, *others], args.dataset)
        priors = {lg.source: prior_for_run(lg, others, target_acc=args.target_acc, fits=fits,
                                           datasets_by_file=datasets) for lg in logs}
        if args.posterior_method != "precision":       # the other runs' cases: priors that never saw the run
            priors_without = priors_without_each_run(logs, others, target_acc=args.target_acc,
                                                     datasets_by_file=datasets)
    try:
        table = backtest_logs(logs, fractions=args.observe, target_acc=args.target_acc,
                              target_rel=args.target_rel, family=args.family,
                              calibration=args.calibration, loss_threshold=args.loss_threshold,
                              correct=not args.no_correction, schedule=args.schedule, priors=priors,
                              posterior_method=args.posterior_method, priors_without=priors_without)
    except InputError as exc:
        complain(f"backtest: {exc}")
        return 2
    print_csv(table[list(BACKTEST_COLUMNS)] if args.no_extra else table)
    complain(summary_line(backtest_summary(table), family=args.family))
    if priors is not None:
        complain(_three_way_line(summary_of(table)))
    return 2 if rejected else 0


def _progress_backtest(logs, target, args, rejected: int) -> int:
    try:
        table = backtest_progress(logs, target, fractions=args.observe)
    except InputError as exc:
        complain(f"backtest: {exc}")
        return 2
    print_csv(table)
    complain(progress_backtest_summary(table))
    if args.posterior_method != DEFAULT_POSTERIOR_METHOD:
        complain(f"backtest: --posterior-method {args.posterior_method} not applied: it combines epochs to an "
                 "accuracy target; a target in progress units is scored with the progress posterior (its weights "
                 "and interval from a backtest of the other logs)")
    return 2 if rejected else 0


def _three_way_line(summary) -> str:
    """Per fraction: median |error| and coverage of the prior, the extrapolation and the posterior."""
    def part(r):
        med = "n/a" if r.n_answered == 0 else f"{r.median_abs_error_pct:.1f} %"
        cov = "" if r.n_answered == 0 else f", {100 * r.coverage:.0f} % covered"
        flagged = f", {r.n_flagged} without an answer" if r.n_flagged else ""
        return f"{r.prediction} {med}{cov}{flagged}"

    parts = []
    for f, g in summary.groupby("observed_fraction", sort=True):
        parts.append(f"f={f:g} ({int(g['n_scored'].iloc[0])} scored): " + "; ".join(part(r) for r in g.itertuples()))
    return "summary [prior, extrapolation, posterior]: " + " | ".join(parts)
