"""``python -m core scaling``: speed-up, efficiency, compute/communication and bandwidth.

Prints one CSV row per comparison (strong or weak scaling) on stdout and the notes on
stderr (prefixed ``note:``). TABLE is a CSV in one of the formats of
``core.scaling.table.parse_scaling_table``, or a Pollux trace folder (``placements.csv`` +
``scalability.csv``). Example::

    python -m core scaling data/pollux_traces/cifar10 --params 11173962 --link-gbps 25
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.cli.common import naming, parse_number, print_csv
from core.scaling import read_pollux_trace, read_scaling_table, scaling_analysis

#: columns printed, in order
CSV_COLUMNS: tuple[str, ...] = (
    "scaling", "config", "gpus", "nodes", "batch_per_gpu", "global_batch", "baseline_gpus",
    "basis", "speedup", "efficiency", "step_time_s", "compute_est_s", "communication_est_s",
    "epoch_time_s", "compute_est_epoch_s", "communication_est_epoch_s",
    "allreduce_bytes_per_step", "allreduce_bytes_per_epoch", "achieved_GB_per_s",
    "link_GB_per_s", "link_utilisation", "flags",
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("table", metavar="TABLE_CSV",
                        help="measured times (CSV) or a Pollux trace folder")
    parser.add_argument("--params", required=True, metavar="X",
                        help="parameters in the model (items in each all-reduce)")
    parser.add_argument("--itemsize", default="4", metavar="BYTES",
                        help="bytes per parameter (default 4, float32)")
    parser.add_argument("--link-gbps", default=None, metavar="G",
                        help="nominal link bandwidth in gigabits per second (shown as G/8 GB/s)")
    parser.add_argument("--samples", default=None, metavar="N",
                        help="samples per epoch, to convert step times to epoch times")


def run(args: argparse.Namespace) -> int:
    source = Path(args.table).name or args.table
    with naming(source):
        n_params = parse_number("--params", args.params, int)
        itemsize = parse_number("--itemsize", args.itemsize, int)
        link = None if args.link_gbps is None else parse_number("--link-gbps", args.link_gbps, float)
        samples = None if args.samples is None else parse_number("--samples", args.samples, int)
        path = Path(args.table)
        table = (read_pollux_trace(path, n_samples=samples) if path.is_dir()
                 else read_scaling_table(path, n_samples=samples))
        result = scaling_analysis(table, n_params=n_params, itemsize=itemsize, link_gbps=link)
    print_csv(result.rows.loc[:, list(CSV_COLUMNS)])
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    return 0
