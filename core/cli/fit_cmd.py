"""``python -m core fit LOG... [--target-acc 0.92] [--steps-per-epoch N]``.

Prints one CSV row per run with the columns of ``core.runs.analysis.FIT_TABLE_COLUMNS`` (then a few
extra ones); a file that cannot be read gets one ``<file>: <problem>`` line on stderr and the
others are still fitted. Exit status 0 when every file was read, 2 when any was rejected.
"""

from __future__ import annotations

import argparse

from core.cli.common import complain, fraction, positive_int, print_csv
from core.curves import FAMILIES
from core.defaults import DEFAULT_TARGET_ACC
from core.runs import CRITERIA, fit_files


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("logs", nargs="+", metavar="LOG", help="training-log CSV files")
    parser.add_argument("--target-acc", type=fraction, default=DEFAULT_TARGET_ACC,
                        help="target accuracy as a fraction (default 0.92)")
    parser.add_argument("--steps-per-epoch", type=positive_int, default=None,
                        help="override the inferred steps per epoch")
    parser.add_argument("--criterion", choices=sorted(CRITERIA), default="epoch",
                        help="when the target counts as reached (default: epoch-level)")
    parser.add_argument("--family", choices=sorted(FAMILIES), default="optimus",
                        help="loss-curve family (default optimus)")
    parser.add_argument("--no-extra", action="store_true", help="print only the contract columns")
    parser.add_argument("--jobs", type=positive_int, default=1,
                        help="processes to spread the files over (default 1; same numbers)")


def run(args: argparse.Namespace) -> int:
    table, errors = fit_files(args.logs, target_acc=args.target_acc, criterion=args.criterion,
                              family=args.family, steps_per_epoch=args.steps_per_epoch, jobs=args.jobs,
                              extra=not args.no_extra)
    for message in errors:
        complain(message)
    print_csv(table)
    return 2 if errors else 0
