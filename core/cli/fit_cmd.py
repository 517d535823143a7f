"""``python -m core fit LOG... [--target SPEC | --target-acc 0.92] [--steps-per-epoch N] [--from-library [FILTER]]``.

Prints one CSV row per run with the columns of ``core.runs.analysis.FIT_TABLE_COLUMNS`` (then a few
extra ones): the fitted curve, where the run met its target (``metric,direction,target`` and the
progress there in steps, epochs, samples, tokens and seconds, empty where the log cannot say); a file
that cannot be read gets one ``<file>: <problem>`` line on stderr and the
others are still fitted. Exit status 0 when every file was read, 2 when any was rejected.
With ``--from-library`` the library's runs (all, or those FILTER matches) follow the files,
named ``<source> (library #<id>)``; their fits are stored in the library and reused.
"""

from __future__ import annotations

import argparse

import pandas as pd

from core.cli.common import (
    add_library_arguments,
    add_option,
    add_target_arguments,
    complain,
    positive_int,
    print_csv,
)
from core.curves import FAMILIES
from core.errors import InputError
from core.runs import CRITERIA, fit_files
from core.targets import target_for


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("logs", nargs="*", metavar="LOG", help="training-log CSV files")
    add_target_arguments(parser)
    parser.add_argument("--steps-per-epoch", type=positive_int, default=None,
                        help="override the inferred steps per epoch")
    add_option(parser, "--criterion", CRITERIA, default="epoch",
                        help="when the target counts as reached (default: epoch-level)")
    add_option(parser, "--family", FAMILIES, default="optimus",
                        help="loss-curve family (default optimus)")
    parser.add_argument("--no-extra", action="store_true", help="print only the contract columns")
    parser.add_argument("--jobs", type=positive_int, default=1,
                        help="processes to spread the files over (default 1; same numbers)")
    add_library_arguments(parser)


def run(args: argparse.Namespace) -> int:
    if not args.logs and args.from_library is None:
        raise InputError("fit: expected LOG files or --from-library [FILTER]; got neither.")
    table, errors = fit_files(args.logs, target=args.target, criterion=args.criterion,
                              family=args.family, steps_per_epoch=args.steps_per_epoch, jobs=args.jobs,
                              extra=not args.no_extra)
    for message in errors:
        complain(message)
    for file, flags in zip(table["file"], table["flags"].fillna("")):   # read, but no curve: said on stderr too
        problem = next((f for f in str(flags).split("; ") if f.startswith("not fitted")), None)
        if problem:
            complain(f"{file}: {problem}")
    if args.from_library is not None:
        from core.library import Library, fit_library

        library = fit_library(Library(args.db), args.from_library, target=target_for(given=args.target),
                              criterion=args.criterion, family=args.family, extra=not args.no_extra)
        if not len(library.table):                  # as library_logs says it for backtest, calibrate and plan
            from core.library import RunFilter

            complain(f"{Library(args.db).path}: no run matches {RunFilter.parse(args.from_library).describe()}.")
        complain(f"library: {len(library.table)} run(s), {library.n_fitted} fitted now, {library.n_stored} "
                 "fitted before")
        table = pd.concat([t for t in (table, library.table) if len(t)], ignore_index=True) \
            if len(library.table) else table
    print_csv(table)
    return 2 if errors else 0
