"""``python -m core plan``: time and cost to target for every (p, w), as CSV on stdout.

Examples::

    python -m core plan --steps 50000 --batch 128 --ps 2,4 --workers 1:16
    python -m core plan --steps 50000 --batch 128 --calibrate-step-time 0.9@2,4
    python -m core plan --steps 50000 --batch 512 --mode allreduce \\
        --theta fit:data/pollux_traces/cifar10/scalability.csv

Columns: ``mode,p,w,steps_per_s,time_s,cost,time_h,time_unit`` (then
``time_s_low,time_s_high,cost_low,cost_high`` with ``--steps-interval``).

When the batch grows with the workers (``core.plan.goodput``), steps to target come from a
batch-scaling model ``--batch-model E_MIN,B_NOISE`` (samples to target at a small batch and
the noise scale; ``python -m core batch-scaling`` measures them) instead of ``--steps``:

    python -m core plan --batch-model 2.7e6,2100 --per-worker-batch 64 --mode allreduce \
        --theta fit:data/pollux_traces/cifar10/scalability.csv --model auto --workers 1:64

``--per-worker-batch m`` plans ``M = w·m``; ``--best-batch LO:HI`` the global batch with the
shortest time for each w within the bounds; with ``--batch M`` alone every w keeps ``M``.
With ``--batch-model`` and either rule the columns ``global_batch,steps`` follow the usual
ones (and ``steps_low,steps_high`` nothing: a typed model has no interval).

Steps to target can also come from the run library, ``--from-library [FILTER]`` instead of
``--steps``: each matching run's steps to ``--target-acc`` (measured where it got there, else
its fitted curve; ``core.plan.steps_from_run``), one run's as it is, several runs' median with
their range as the interval (the ``time_s_low,...`` columns).  When ``--batch`` is not given
and the runs share one global batch, it is used.  ``--theta fit:library:NAME`` fits θ to a
speed table stored in the library (``python -m core library add --speed FILE``)::

    python -m core plan --from-library model=resnet20,gpu=V100 --batch 128 --ps 2,4

Straight from training logs that carry their GPU count, global batch and step time (MLPerf MLLOG
results; ``core.plan.log_plan``): ``--from-logs LOG... --mode allreduce --workers LIST (--batch M |
--per-worker-batch m) [--model NAME] [--to-device NAME]``; the step time at each count comes from a speed
family fitted to the logs' configurations (``--model auto``, the default: chosen by leave-one-size-out when
the logs measured three or more GPU counts), the samples to target at the asked batch from the logs, a
batch-scaling fit of them or MLCommons' reference convergence points, the time counted as MLPerf counts it
(evaluations included). Columns: the usual ones, then ``global_batch,samples_to_target,step_time_s,time_low,
time_high,speed_model,samples_source,device,strategy,note``; stderr says what was assumed::

    python -m core plan --from-logs data/llm/mlperf_v5.1/llama31_8b/*/result_*.txt --mode allreduce \
        --workers 8,72,512 --per-worker-batch 0.125
"""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from core.batch import typed_batch_scaling
from core.cli.common import (
    add_library_arguments,
    add_option,
    add_target_arguments,
    complain,
    library_logs,
    print_csv,
)
from core.errors import InputError, LogFormatError, PlannerError
from core.plan import ScalingRule, batch_plan_grid, plan_from_logs, plan_grid, steps_from_run, typed_steps
from core.speed import MODES, SPEED_FAMILIES, FittedSpeed, build_speed_model, read_speed_csv, speed_model_names
from core.transformer import ACCELERATORS, TENSOR_PRECISIONS, load_config, parse_strategy

OUTPUT_COLUMNS = ("mode", "p", "w", "steps_per_s", "time_s", "cost", "time_h", "time_unit")
INTERVAL_OUTPUT = ("time_s_low", "time_s_high", "cost_low", "cost_high")
BATCH_OUTPUT = ("global_batch", "steps")


class _BadArgument(InputError):
    """An option value that cannot be parsed (an ``InputError``: ``cli.main`` prints it as the one stderr line)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--steps", type=float, default=None, metavar="N",
                        help="training steps to the target (steps, not epochs); or --batch-model")
    parser.add_argument("--batch", type=float, default=None, metavar="M",
                        help="global batch M, samples per step (default 128 for --theta paper)")
    parser.add_argument("--ps", default=None, metavar="LIST",
                        help="parameter-server counts, e.g. 2,4 (default; 0 for --mode allreduce)")
    parser.add_argument("--workers", default="1:64", metavar="A:B",
                        help="worker counts: A:B (inclusive), N (= 1:N) or a list 1,2,4 (default 1:64)")
    add_option(parser, "--mode", MODES, default=None,
                        help="training mode (default sync; allreduce with --from-logs, the only mode it plans)")
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
    add_option(parser, "--model", speed_model_names(), default=None,
                        help="speed family: with --theta fit:CSV optimus (default) or another; with --from-logs "
                             "auto (default: chosen by leave-one-size-out) or one of "
                             + ", ".join(SPEED_FAMILIES))
    parser.add_argument("--batch-model", default=None, metavar="E_MIN,B_NOISE",
                        help="steps to target vary with the global batch: S(M) = E_MIN·(1 + M/B_NOISE)/M")
    parser.add_argument("--per-worker-batch", type=float, default=None, metavar="m",
                        help="with --batch-model: the global batch grows with the workers, M = w·m")
    parser.add_argument("--best-batch", default=None, metavar="LO:HI",
                        help="with --batch-model: for each w the global batch in [LO, HI] with the shortest time")
    add_target_arguments(parser)
    parser.add_argument("--from-logs", nargs="+", default=None, metavar="LOG",
                        help="plan from training logs (MLLOG results): their speed and samples to target")
    parser.add_argument("--to-device", default=None, metavar="NAME",
                        help="with --from-logs: transfer the logs' measured step to this device with the transformer "
                             f"model ({', '.join(ACCELERATORS)}; aliases too)")
    parser.add_argument("--gpus-per-node", type=int, default=None, metavar="N",
                        help="with --to-device: GPUs per NVLink/xGMI domain on the target (default: the device's)")
    parser.add_argument("--parallel", default=None, metavar="dp=..,tp=..,pp=..",
                        help="with --to-device: tp, pp, cp (mb, vp, zero, recompute) kept on the source and the "
                             "target, dp from each GPU count; default: the fastest split that fits, searched")
    parser.add_argument("--config", default=None, metavar="FILE|NAME",
                        help="with --to-device: the model (a local config.json or a built-in name); default: from "
                             "the logs' benchmark (llama31_8b, llama31_405b, llama2_70b_lora)")
    add_option(parser, "--precision", TENSOR_PRECISIONS, default="bf16",
                        help="with --to-device: the tensor peak the matmuls are counted against (default bf16)")
    add_library_arguments(parser)


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


def build_model(args: argparse.Namespace) -> FittedSpeed:
    """The speed model the options describe (``core.speed.build_speed_model``)."""
    spec = args.theta.strip()
    step_time = None
    if args.calibrate_step_time:
        seconds, _, where = args.calibrate_step_time.partition("@")
        numbers = _floats(f"{seconds},{where}", "--calibrate-step-time") if where else []
        if len(numbers) != 3:
            raise _BadArgument(f"--calibrate-step-time: expected SECONDS@P,W; got "
                               f"{args.calibrate_step_time!r}. Write e.g. 0.9@2,4.")
        step_time = (numbers[0], int(numbers[1]), int(numbers[2]))
    if args.model not in (None, "optimus") and not spec.startswith("fit:"):
        raise _BadArgument(f"--model {args.model}: expected --theta fit:CSV (a family is fitted to measured speeds) "
                           f"or --from-logs; got --theta {spec!r}, which is Optimus's θ. Leave --model out.")
    if spec == "paper":
        return build_speed_model("paper", mode=args.mode, global_batch=args.batch, step_time=step_time)
    if spec.startswith("fit:library:"):
        from core.library import Library, speed_table_bytes

        path, data = speed_table_bytes(Library(args.db), spec[len("fit:library:"):])
        table = read_speed_csv(data, global_batch=args.batch, source=path)
        return build_speed_model("table", mode=args.mode, global_batch=args.batch, table=table, table_name=path,
                                 step_time=step_time, family=args.model or "optimus")
    if spec.startswith("fit:"):
        path = spec[4:]
        table = read_speed_csv(path, global_batch=args.batch, source=path)
        return build_speed_model("table", mode=args.mode, global_batch=args.batch, table=table, table_name=path,
                                 step_time=step_time, family=args.model or "optimus")
    theta = tuple(_floats(spec, "--theta"))
    try:
        return build_speed_model("typed", mode=args.mode, global_batch=args.batch, theta=theta, step_time=step_time)
    except PlannerError as err:
        if str(err).startswith("SpeedModel: "):
            raise _BadArgument(f"--theta: {str(err).removeprefix('SpeedModel: ')}") from None
        raise


def _rule(args: argparse.Namespace) -> ScalingRule | None:
    """The scaling rule the options ask for (None: the plain plan, steps fixed)."""
    if args.per_worker_batch is not None and args.best_batch is not None:
        raise _BadArgument("--per-worker-batch: expected one scaling rule; got it with --best-batch. Keep one.")
    growing = args.per_worker_batch is not None or args.best_batch is not None
    if growing and args.batch_model is None:
        raise _BadArgument(f"{'--per-worker-batch' if args.per_worker_batch is not None else '--best-batch'}: "
                           "expected --batch-model E_MIN,B_NOISE (steps to target change with the batch); got "
                           "none. Measure it with python -m core batch-scaling.")
    if args.per_worker_batch is not None:
        return ScalingRule("per-worker", per_worker_batch=args.per_worker_batch)
    if args.best_batch is not None:
        low, _, high = args.best_batch.partition(":")
        bounds = _floats(f"{low},{high}", "--best-batch") if high else []
        if len(bounds) != 2:
            raise _BadArgument(f"--best-batch: expected LO:HI; got {args.best_batch!r}. Write e.g. 64:8192.")
        return ScalingRule("best", batch_min=bounds[0], batch_max=bounds[1])
    return None


def _steps_source(args: argparse.Namespace) -> None:
    given = sum(x is not None for x in (args.steps, args.batch_model, args.from_library))
    if given != 1:
        raise _BadArgument("--steps: expected --steps N, --batch-model E_MIN,B_NOISE or --from-library [FILTER] "
                           f"(one of them); got {'several' if given else 'none'}. Give one.")


def _library_steps(args: argparse.Namespace):
    """Steps to target (a ``StepsEstimate``) from the library's runs, and the global batch they share (or None)."""
    from core.runs import analyse_run

    logs = library_logs(args)
    if not logs:
        raise _BadArgument(f"--from-library: expected runs matching {args.from_library or 'all runs'!r}; none "
                           "match. See python -m core library list.")
    analyses = [analyse_run(log, target=args.target) for log in logs]      # None: each run's own (target_for)
    estimates = []
    for run in analyses:
        try:
            estimates.append(steps_from_run(run, analyses))
        except PlannerError as exc:
            complain(f"{run.log.source}: left out: {exc}")
    if not estimates:
        targets = ", ".join(sorted({a.crossing.target.spec for a in analyses}))
        raise _BadArgument(f"--from-library: expected a run that reached {targets} or has a fitted curve "
                           "that gets there; none of the matching runs does.")
    batches = {log.meta.global_batch for log in logs}
    for e in estimates:
        complain(f"steps from {e.label}: {e.steps:,.0f} ({e.source})")
    if len(estimates) == 1:
        estimate = estimates[0]
    else:
        values = sorted(e.steps for e in estimates)
        middle = float(pd.Series(values).median())
        estimate = typed_steps(middle, low=values[0], high=values[-1], label=f"{len(values)} library runs")
    return estimate, (batches.pop() if len(batches) == 1 else None)


def _run_from_logs(args: argparse.Namespace) -> int:
    """``--from-logs``: the plan from the logs' measured speed and samples to target."""
    from core.logs import read_log_file

    logs, rejected = [], 0
    for path in args.from_logs:
        try:
            logs.append(read_log_file(path, source=path))
        except LogFormatError as exc:
            complain(str(exc))
            rejected += 1
    if args.mode not in (None, "allreduce"):
        raise _BadArgument(f"--from-logs: expected --mode allreduce (the logs' runs are data-parallel "
                           f"all-reduce); got {args.mode!r}.")
    for option in ("steps", "batch_model", "from_library", "best_batch", "ps", "steps_interval",
                   "calibrate_step_time"):
        if getattr(args, option) is not None:
            raise _BadArgument(f"--from-logs: takes the steps and speed from the logs; got "
                               f"--{option.replace('_', '-')} too. Leave it out.")
    for option, default in (("theta", "paper"), ("price_ps", 1.0)):
        if getattr(args, option) != default:
            raise _BadArgument(f"--from-logs: plans all-reduce runs from the logs' own steps (no θ, no "
                               f"parameter servers); got --{option.replace('_', '-')} too. Leave it out.")
    if args.gpus_per_node is not None and args.gpus_per_node < 1:
        raise _BadArgument(f"--gpus-per-node: expected a whole number >= 1; got {args.gpus_per_node}.")
    plan = plan_from_logs(logs, _ints(args.workers, "--workers"), global_batch=args.batch,
                          per_worker_batch=args.per_worker_batch, target=args.target,
                          price_worker=args.price_worker, model=args.model or "auto", device=args.to_device,
                          paths=[log.source for log in logs], gpus_per_node=args.gpus_per_node,
                          strategy=parse_strategy(args.parallel) if args.parallel else None,
                          config=load_config(args.config) if args.config else None, precision=args.precision)
    for flag in plan.flags:
        complain(flag)
    print_csv(plan.table)
    return 2 if rejected else 0


def run(args: argparse.Namespace) -> int:
    if args.to_device is not None and args.from_logs is None:
        raise InputError("--to-device: expected --from-logs LOG... (the measured step to transfer); got none.")
    if args.from_logs is not None:
        return _run_from_logs(args)
    args.mode = args.mode or "sync"
    _steps_source(args)
    rule = _rule(args)
    library_estimate = None
    if args.from_library is not None:
        library_estimate, shared_batch = _library_steps(args)
        if args.batch is None and shared_batch:
            args.batch = float(shared_batch)
            complain(f"--batch: the runs' global batch, {shared_batch}")
        args.steps = library_estimate.steps
        if library_estimate.interval and args.steps_interval is None:
            args.steps_interval = ",".join(f"{v:.17g}" for v in library_estimate.interval)
    model = build_model(args)
    if rule is None and model.mode != "async" and model.global_batch is None:
        raise _BadArgument(f"--batch: expected the global batch M (samples per step) for mode "
                           f"{model.mode!r}; got none. Pass --batch M.")
    interval = tuple(_floats(args.steps_interval, "--steps-interval")) if args.steps_interval else None
    batch_model = None
    if args.batch_model is not None:
        values = _floats(args.batch_model, "--batch-model")
        if len(values) != 2:
            raise _BadArgument(f"--batch-model: expected E_MIN,B_NOISE; got {args.batch_model!r}. "
                               "Write e.g. 2.7e6,2100.")
        batch_model = typed_batch_scaling(*values)
    ps = _ints(args.ps, "--ps") if args.ps else None
    workers = _ints(args.workers, "--workers")
    if rule is not None:
        grid = batch_plan_grid(model, batch_model, rule, ps=ps, workers=workers,
                               price_worker=args.price_worker, price_ps=args.price_ps)
    else:
        steps = args.steps if batch_model is None else batch_model.steps(model.global_batch or 1.0)
        grid = plan_grid(model, steps, ps=ps, workers=workers, steps_interval=interval,
                         price_worker=args.price_worker, price_ps=args.price_ps)
    columns = list(OUTPUT_COLUMNS) + (list(BATCH_OUTPUT) if rule is not None else []) \
        + (list(INTERVAL_OUTPUT) if interval and rule is None else [])
    print_csv(grid[columns])
    if model.time_unit == "paper units":
        print("note: paper θ have no published time unit; time_s is in paper units. "
              "Calibrate with --calibrate-step-time SECONDS@P,W.", file=sys.stderr)
    return 0
