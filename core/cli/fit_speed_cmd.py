"""``python -m core fit-speed SPEED_CSV``: fit the Optimus speed model θ by NNLS, print θ and MAPE.

Examples::

    python -m core fit-speed data/pollux_traces/cifar10/scalability.csv
    python -m core fit-speed speeds.csv --mode sync --batch 128

The table's columns are documented in ``core.plan.speed_table`` and docs/plan.md. Without
``--mode``, a table with no parameter servers (no p column, or p = 0) is fitted as
all-reduce and any other as synchronous.
"""

from __future__ import annotations

import argparse
import sys

from core.errors import PlannerError
from core.plan import MODES, default_speed_mode, fit_speed_model, read_speed_table


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("speed_csv", metavar="SPEED_CSV", help="CSV of measured speeds")
    parser.add_argument("--mode", choices=MODES, default=None,
                        help="sync, async or allreduce (default: allreduce without PS, else sync)")
    parser.add_argument("--batch", type=float, default=None, metavar="M",
                        help="global batch M for rows without one (and to plan with)")


def run(args: argparse.Namespace) -> int:
    path = args.speed_csv
    try:
        table = read_speed_table(path, global_batch=args.batch, source=path)
        mode = args.mode or default_speed_mode(table)
        model = fit_speed_model(table, mode=mode, global_batch=args.batch, source=path)
    except PlannerError as err:
        print(str(err), file=sys.stderr)
        return 2
    print(model.report())
    return 0
