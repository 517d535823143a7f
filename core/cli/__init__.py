"""``python -m core <command>``: the headless interface, one module per command.

Each command module defines ``add_arguments(parser)`` and ``run(args) -> int`` and holds
nothing but argument parsing and printing around ``core`` functions.  Modules are imported
lazily, so ``python -m core fit`` does not pay for importing torch.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys

#: command name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "fit": ("core.cli.fit_cmd", "fit the Optimus loss curve to training logs"),
    "calibrate": ("core.cli.calibrate_cmd", "predict a held-out model's curve from fitted runs"),
    "plan": ("core.cli.plan_cmd", "time and cost to target over parameter servers and workers"),
    "fit-speed": ("core.cli.fit_speed_cmd", "fit the Optimus speed model θ to measured speeds"),
    "paleo": ("core.cli.paleo_cmd", "Paleo per-iteration time and throughput over workers"),
    "profile": ("core.cli.profile_cmd", "a torch model's measured per-layer times beside Paleo's estimate"),
    "ps-rounds": ("core.cli.ps_rounds_cmd", "parameter-server round model: rounds, time, crossover"),
    "scaling": ("core.cli.scaling_cmd", "speed-up, efficiency and all-reduce bandwidth from measured times"),
    "backtest": ("core.cli.backtest_cmd", "predict the epoch at target from the first part of logs"),
    "batch-scaling": ("core.cli.batch_scaling_cmd", "samples and steps to target against the global batch"),
    "predict": ("core.cli.predict_cmd", "epoch at target: prior, extrapolation of the first epochs, posterior"),
    "schedule": ("core.cli.schedule_cmd", "which cool-down reaches a loss target soonest: candidate WSD plans "
                 "forecast through the schedule"),
    "transformer": ("core.cli.transformer_cmd", "a language model's step time per GPU count: FLOPs, parallelism, "
                    "calibrated fractions of peak"),
    "library": ("core.cli.library_cmd", "the run library: add, list, show, rm, tag, export, import, vacuum"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m core", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_module, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; return its exit status (0 ok, 2 bad input)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in {"-h", "--help"} or argv[0] not in COMMANDS:
        parser = build_parser()
        if argv and argv[0] not in {"-h", "--help"}:
            parser.print_usage(sys.stderr)
            print(f"python -m core: unknown command {argv[0]!r}; choose from {', '.join(COMMANDS)}",
                  file=sys.stderr)
            return 2
        parser.print_help()
        return 0
    name, rest = argv[0], argv[1:]
    module_name, help_text = COMMANDS[name]
    module = importlib.import_module(module_name)
    parser = argparse.ArgumentParser(prog=f"python -m core {name}", description=help_text)
    module.add_arguments(parser)
    args = parser.parse_args(rest)
    try:
        status = int(module.run(args) or 0)
        # Collect what still holds native (Arrow) resources while their libraries are alive, and flush
        # the output, before the interpreter's own teardown (apache/arrow#34314: a native thread torn
        # down at exit can abort the process after its work is done).
        gc.collect()
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:      # the reader went away (`... | head -1`): what it wanted was printed; leave quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    return status
