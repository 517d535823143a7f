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
from typing import NoReturn

from core.errors import PlannerError

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
    "library": ("core.cli.library_cmd", "the run library: add runs and work on them (its --help lists the "
                "verbs)"),
}


class CommandParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose refusal is one line on stderr and exit 2 (no usage block above it):
    ``python -m core fit: error: argument --family: expected one of ...; got 'x'.``"""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {one_line(message).rstrip('.')}. See {self.prog} --help.\n")


def one_line(text: object) -> str:
    """``text`` on one line: a message that spans lines (a table's problem, a traceback-free
    database error) is joined with spaces, so that every refusal is exactly one stderr line.

    >>> one_line("a.csv: expected a loss column\\n  got: step, acc")
    'a.csv: expected a loss column got: step, acc'
    """
    return " ".join(part.strip() for part in str(text).splitlines() if part.strip())


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(prog="python -m core", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_module, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; return its exit status (0 ok, 2 bad input).

    The one error path of the command line: a :class:`~core.errors.PlannerError` raised by a command
    becomes one line on stderr and exit status 2; a bad option is argparse's one line and exit 2
    (:class:`CommandParser`); a reader that goes away (``python -m core fit ... | head -1``) ends the
    command quietly with status 0, however far its output had got, as the Python docs advise for
    ``SIGPIPE`` (``signal`` module, "Note on SIGPIPE"): stdout is pointed at ``os.devnull`` so that
    the interpreter's own flush at exit has nowhere to fail.  Any other exception is a bug and keeps
    its traceback.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return _run(argv)
    except BrokenPipeError:
        _quiet_stdout()
        return 0
    except SystemExit as done:              # --help, or argparse's refusal: flush what was printed first
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _quiet_stdout()
        raise done from None
    except PlannerError as err:
        _flush_quietly()
        print(one_line(err), file=sys.stderr)
        return 2


def _run(argv: list[str]) -> int:
    if not argv or argv[0] in {"-h", "--help"} or argv[0] not in COMMANDS:
        parser = build_parser()
        if argv and argv[0] not in {"-h", "--help"}:
            print(f"python -m core: unknown command {argv[0]!r}; choose from {', '.join(COMMANDS)} "
                  "(see python -m core --help)", file=sys.stderr)
            return 2
        parser.print_help()
        sys.stdout.flush()
        return 0
    name, rest = argv[0], argv[1:]
    module_name, help_text = COMMANDS[name]
    module = importlib.import_module(module_name)
    parser = CommandParser(prog=f"python -m core {name}", description=help_text)
    module.add_arguments(parser)
    args = parser.parse_args(rest)
    status = int(module.run(args) or 0)
    # Collect what still holds native (Arrow) resources while their libraries are alive, and flush
    # the output, before the interpreter's own teardown (apache/arrow#34314: a native thread torn
    # down at exit can abort the process after its work is done).
    gc.collect()
    sys.stdout.flush()
    sys.stderr.flush()
    return status


def _flush_quietly() -> None:
    """Flush stdout before an error line, so the table printed so far comes first; a closed pipe is no error."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()


def _quiet_stdout() -> None:
    """Point stdout at ``os.devnull``: the reader went away, and what it wanted was printed."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):          # no real file descriptor (an in-process capture): nothing to point
        pass
