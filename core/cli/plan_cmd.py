"""``python -m core plan``: time and cost to target for every (p, w), as CSV on stdout.

Examples::

    python -m core plan --steps 50000 --batch 128 --ps 2,4 --workers 1:16
    python -m core plan --steps 50000 --batch 128 --calibrate-step-time 0.9@2,4
    python -m core plan --steps 50000 --batch 512 --mode allreduce \\
        --theta fit:data/pollux_traces/cifar10/scalability.csv

Columns: ``mode,p,w,steps_per_s,time_s,cost,time_h,time_unit`` (then
``time_s_low,time_s_high,cost_low,cost_high`` with ``--steps-interval``).
"""

from __future__ import annotations

import argparse
import sys

from core.cli.common import print_csv
from core.errors import PlannerError
from core.plan import MODES, SpeedModel, build_speed_model, plan_grid, read_speed_table

OUTPUT_COLUMNS = ("mode", "p", "w", "steps_per_s", "time_s", "cost", "time_h", "time_unit")
INTERVAL_OUTPUT = ("time_s_low", "time_s_high", "cost_low", "cost_high")


class _BadArgument(Exception):
    """An option value that cannot be parsed; its text is the one stderr line."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--steps", type=float, required=True, metavar="N",
                        help="training steps to the target (steps, not epochs)")
    parser.add_argument("--batch", type=float, default=None, metavar="M",
                        help="global batch M, samples per step (default 128 for --theta paper)")
    parser.add_argument("--ps", default=None, metavar="LIST",
                        help="parameter-server counts, e.g. 2,4 (default; 0 for --mode allreduce)")
    parser.add_argument("--workers", default="1:64", metavar="A:B",
                        help="worker counts: A:B (inclusive), N (= 1:N) or a list 1,2,4 (default 1:64)")
    parser.add_argument("--mode", choices=MODES, default="sync", help="training mode (default sync)")
    parser.add_argument("--theta", default="paper", metavar="SPEC",
                        help="'paper' (default), comma-separated θ in seconds, or fit:SPEED_CSV")
    parser.add_argument("--calibrate-step-time", default=None, metavar="SECONDS@P,W",
                        help="scale θ so one step at (P, W) takes SECONDS, e.g. 0.9@2,4")
    parser.add_argument("--steps-interval", default=None, metavar="LOW,HIGH",
                        help="interval of steps to target; adds low/high columns")
    parser.add_argument("--price-worker", type=float, default=1.0, metavar="X",
                        help="price per worker-hour (default 1)")
    parser.add_argument("--price-ps", type=float, default=1.0, metavar="Y",
                        help="price per PS-hour (default 1)")


def _ints(text: str, option: str) -> list[int]:
    try:
        if ":" in text:
            a, b = (int(v) for v in text.split(":"))
            values = list(range(a, b + 1))
        elif "," in text:
            values = [int(v) for v in text.split(",") if v.strip()]
        else:
            values = list(range(1, int(text) + 1)) if option == "--workers" else [int(text)]
    except ValueError:
        values = []
    if not values:
        raise _BadArgument(f"{option}: expected A:B, N or a list like 2,4; got {text!r}. "
                           "Use integers, e.g. 1:64.")
    return values


def _floats(text: str, option: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",")]
    except ValueError:
        raise _BadArgument(f"{option}: expected comma-separated numbers; got {text!r}. "
                           "Write e.g. 1.02,2.78,4.92,0,0.02.") from None


def build_model(args: argparse.Namespace) -> SpeedModel:
    """The speed model the options describe (``core.plan.build_speed_model``)."""
    spec = args.theta.strip()
    step_time = None
    if args.calibrate_step_time:
        seconds, _, where = args.calibrate_step_time.partition("@")
        numbers = _floats(f"{seconds},{where}", "--calibrate-step-time") if where else []
        if len(numbers) != 3:
            raise _BadArgument(f"--calibrate-step-time: expected SECONDS@P,W; got "
                               f"{args.calibrate_step_time!r}. Write e.g. 0.9@2,4.")
        step_time = (numbers[0], int(numbers[1]), int(numbers[2]))
    if spec == "paper":
        return build_speed_model("paper", mode=args.mode, global_batch=args.batch, step_time=step_time)
    if spec.startswith("fit:"):
        path = spec[4:]
        table = read_speed_table(path, global_batch=args.batch, source=path)
        return build_speed_model("table", mode=args.mode, global_batch=args.batch, table=table, table_name=path,
                                 step_time=step_time)
    theta = tuple(_floats(spec, "--theta"))
    try:
        return build_speed_model("typed", mode=args.mode, global_batch=args.batch, theta=theta, step_time=step_time)
    except PlannerError as err:
        if str(err).startswith("SpeedModel: "):
            raise _BadArgument(f"--theta: {str(err).removeprefix('SpeedModel: ')}") from None
        raise


def run(args: argparse.Namespace) -> int:
    try:
        model = build_model(args)
        if model.mode != "async" and model.global_batch is None:
            raise _BadArgument(f"--batch: expected the global batch M (samples per step) for mode "
                               f"{model.mode!r}; got none. Pass --batch M.")
        interval = tuple(_floats(args.steps_interval, "--steps-interval")) if args.steps_interval else None
        grid = plan_grid(model, args.steps, ps=_ints(args.ps, "--ps") if args.ps else None,
                         workers=_ints(args.workers, "--workers"), steps_interval=interval,
                         price_worker=args.price_worker, price_ps=args.price_ps)
    except (PlannerError, _BadArgument) as err:
        print(str(err), file=sys.stderr)
        return 2
    columns = list(OUTPUT_COLUMNS) + (list(INTERVAL_OUTPUT) if interval else [])
    print_csv(grid[columns])
    if model.time_unit == "paper units":
        print("note: paper θ have no published time unit; time_s is in paper units. "
              "Calibrate with --calibrate-step-time SECONDS@P,W.", file=sys.stderr)
    return 0
