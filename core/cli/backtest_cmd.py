"""``python -m core backtest LOG... [--observe 0.3,0.5,0.7] [--target-acc 0.92] [--family NAME|auto]``.

For every readable log and observed fraction, predicts the epoch at the target from the
first epochs only and compares it with what the rest of the log shows (``core.prediction.backtest``).
Prints CSV on stdout: ``file,family,observed_fraction,epoch_pred,epoch_low,epoch_high,
epoch_actual,error_pct,covered`` (accuracy route), then the extra columns of
``core.prediction.backtest.EXTRA_COLUMNS`` (row status, the loss route's ``*_via_loss`` columns, ...).
After the rows, a summary line goes to **stderr** (so stdout stays a clean CSV): per
fraction, the median absolute error and the interval coverage of the scored rows.

A file that cannot be read gets one ``<file>: <problem>`` line on stderr; the others are
still backtested.  Exit status 0 when every file was read, 2 when any was rejected.
"""

from __future__ import annotations

import argparse

from core.cli.common import complain, fraction, positive_int, print_csv
from core.curves import FAMILIES
from core.defaults import DEFAULT_TARGET_ACC
from core.errors import InputError, LogFormatError
from core.logs import read_log_file
from core.prediction import (
    BACKTEST_COLUMNS,
    DEFAULT_FRACTIONS,
    backtest_logs,
    backtest_summary,
    resolve_target,
    summary_line,
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
    parser.add_argument("logs", nargs="+", metavar="LOG", help="training-log CSV files (finished runs)")
    parser.add_argument("--observe", type=fractions, default=list(DEFAULT_FRACTIONS),
                        help="observed fractions of the epochs, comma-separated (default 0.3,0.5,0.7)")
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--target-acc", type=fraction, default=DEFAULT_TARGET_ACC,
                        help="target accuracy as a fraction (default 0.92)")
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


def run(args: argparse.Namespace) -> int:
    logs, rejected = [], 0
    for path in args.logs:
        try:
            logs.append(read_log_file(path, source=path, steps_per_epoch=args.steps_per_epoch))
        except LogFormatError as exc:
            complain(str(exc))
            rejected += 1
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
    try:
        table = backtest_logs(logs, fractions=args.observe, target_acc=args.target_acc,
                              target_rel=args.target_rel, family=args.family,
                              calibration=args.calibration, loss_threshold=args.loss_threshold,
                              correct=not args.no_correction)
    except InputError as exc:
        complain(f"backtest: {exc}")
        return 2
    print_csv(table[list(BACKTEST_COLUMNS)] if args.no_extra else table)
    complain(summary_line(backtest_summary(table), family=args.family))
    return 2 if rejected else 0
