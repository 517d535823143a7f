"""``python -m core fit-speed SPEED_CSV``: fit a speed model to measured speeds, print its parameters and MAPE.

Examples::

    python -m core fit-speed data/pollux_traces/cifar10/scalability.csv
    python -m core fit-speed speeds.csv --mode sync --batch 128
    python -m core fit-speed data/pollux_traces/ncf/scalability.csv --model auto

``--model`` names a registered speed family (``core.speed.SPEED_FAMILIES``; ``--help`` lists them): ``optimus``
(default) fits the Optimus θ by NNLS; ``auto`` fits every family, prints their reports and keeps the one with
the smallest leave-one-out MAPE (``core.speed.select``). The table's columns are documented in
``core.speed.table`` and docs/plan.md. Without ``--mode``, a table with no parameter
servers (no p column, or p = 0) is fitted as all-reduce and any other as synchronous.
"""

from __future__ import annotations

import argparse

from core.cli.common import add_option, positive_int
from core.speed import MODES, SPEED_FAMILIES, default_speed_mode, fit_speed, read_speed_csv, speed_model_names


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("speed_csv", metavar="SPEED_CSV", help="CSV of measured speeds")
    add_option(parser, "--mode", MODES, default=None,
                        help="sync, async or allreduce (default: allreduce without PS, else sync)")
    parser.add_argument("--batch", type=float, default=None, metavar="M",
                        help="global batch M for rows without one (and to plan with)")
    add_option(parser, "--model", speed_model_names(), default="optimus",
                        help=f"speed family: {', '.join(SPEED_FAMILIES)} (default optimus), or auto (every one, "
                             "the smallest leave-one-out error wins)")
    parser.add_argument("--gpus-per-node", type=positive_int, default=None, metavar="G",
                        help="Pollux: GPUs per node, for tables without a num_nodes column")


def run(args: argparse.Namespace) -> int:
    path = args.speed_csv
    table = read_speed_csv(path, global_batch=args.batch, source=path)
    mode = args.mode or default_speed_mode(table)
    report = fit_speed(table, family=args.model, mode=mode, global_batch=args.batch,
                       gpus_per_node=args.gpus_per_node, source=path, score=None).report()
    print(report)
    return 0
