"""The command-line registry checked by contract (issue 34, "one way to fail").

Parametrised over ``core.cli.COMMANDS`` itself and over what each command's argparse parser declares; no
command and no option is named here, so a command added to the registry is checked without touching this
file.  What every command must do:

* ``--help`` (of the command, and of each of its sub-verbs) prints the whole text of every option and exits 0;
* every choice option is declared through ``core.cli.common.add_option`` (``check_option`` with the registry's
  choices), and a bad value for it is exactly one line on stderr naming every valid choice, exit 2;
* run with its stdout a closed pipe (``python -m core ... | head -1`` where ``head`` left early), it exits 0
  with no traceback and no "Exception ignored" from Python's flush at exit.

Plus ``cli.main``'s own contract on throwaway commands added to the registry here: a ``PlannerError`` is one
line and exit 2, a ``BrokenPipeError`` a quiet exit 0, any other exception a bug that keeps its traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
import types

import pytest

from core.cli import COMMANDS, CommandParser, main
from core.errors import InputError, LogFormatError
from tests.conftest import DATA, ROOT

BAD = "no-such-choice-xyz"


def _parser(name: str) -> argparse.ArgumentParser:
    module_name, help_text = COMMANDS[name]
    parser = CommandParser(prog=f"python -m core {name}", description=help_text)
    importlib.import_module(module_name).add_arguments(parser)
    return parser


def _parsers() -> list[tuple[str, tuple[str, ...], argparse.ArgumentParser]]:
    """``(command, sub-verb path, parser)`` of every command and of each of its sub-verbs (argparse subparsers)."""
    out = []

    def walk(name: str, path: tuple[str, ...], parser: argparse.ArgumentParser) -> None:
        out.append((name, path, parser))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for verb, sub in action.choices.items():
                    walk(name, (*path, verb), sub)

    for name in COMMANDS:
        walk(name, (), _parser(name))
    return out


PARSERS = _parsers()


def _choice_options() -> list[tuple[str, tuple[str, ...], str, tuple[str, ...]]]:
    """``(command, path, option string, valid choices)`` of every option that takes one of a list of values."""
    found = []
    for name, path, parser in PARSERS:
        for action in parser._actions:
            options = getattr(action.type, "options", None) or (
                tuple(action.choices) if action.choices is not None and action.option_strings else None)
            if options and action.option_strings:
                found.append((name, path, action.option_strings[-1], tuple(map(str, options))))
    return found


CHOICE_OPTIONS = _choice_options()


def _status(argv: list[str]) -> int:
    """``main(argv)``'s exit status, whether it returns it or argparse exits with it."""
    try:
        return main(argv)
    except SystemExit as done:
        return done.code


def _ids(cases) -> list[str]:
    return [" ".join((c[0], *c[1], *(c[2:3] if isinstance(c[2], str) else ()))) for c in cases]


def test_the_registry_has_commands_and_their_options_have_choices():
    assert len(COMMANDS) >= 2 and all(len(entry) == 2 and entry[1] for entry in COMMANDS.values())
    assert len(CHOICE_OPTIONS) >= len(COMMANDS) // 2      # the contract below is not vacuous


@pytest.mark.parametrize("name, path, parser", PARSERS, ids=_ids(PARSERS))
def test_help_prints_every_option_whole_and_exits_0(name, path, parser, capsys):
    assert _status([name, *path, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: python -m core {name}")
    squeezed = "".join(out.split())                         # argparse wraps lines, at spaces and hyphens
    for action in parser._actions:
        if action.help in (None, argparse.SUPPRESS) or "%(" in action.help:
            continue
        assert "".join(action.help.replace("%%", "%").split()) in squeezed, (action.option_strings, action.help)
        for option in action.option_strings:
            assert option in out


@pytest.mark.parametrize("name, path, parser", PARSERS, ids=_ids(PARSERS))
def test_no_option_lists_its_choices_by_hand(name, path, parser):
    """A choice option goes through ``add_option`` (``check_option`` with a registry's keys), never ``choices=``."""
    plain = [a.option_strings for a in parser._actions if a.option_strings and a.choices is not None]
    assert plain == [], f"python -m core {name} {' '.join(path)}: use core.cli.common.add_option for {plain}"


@pytest.mark.parametrize("name, path, option, choices", CHOICE_OPTIONS, ids=_ids(CHOICE_OPTIONS))
def test_a_bad_choice_is_one_line_naming_the_valid_ones_and_exit_2(name, path, option, choices, capsys):
    assert _status([name, *path, option, BAD]) == 2
    out = capsys.readouterr()
    lines = out.err.splitlines()
    assert out.out == "" and len(lines) == 1, out.err
    line = lines[0]
    assert line.startswith(f"python -m core {name}") and option in line and repr(BAD) in line, line
    listed = line.split("expected one of ", 1)[1].split("; got")[0].split(", ")
    assert listed == list(choices), line
    assert "Traceback" not in out.err


def test_a_bad_choice_in_a_real_process_is_one_line_and_exit_2():
    name, path, option, choices = CHOICE_OPTIONS[0]
    done = subprocess.run([sys.executable, "-m", "core", name, *path, option, BAD], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert len(done.stderr.splitlines()) == 1 and f"expected one of {', '.join(choices)}; got {BAD!r}" in done.stderr


def test_an_unknown_command_is_one_line_naming_the_registry_and_exit_2(capsys):
    assert main([BAD]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and all(name in err[0] for name in COMMANDS)


# ---------------------------------------------------------------- a closed pipe
LOG = str(DATA / "logs" / "resnet20_Intel Xeon Processor.csv")
POLLUX = DATA / "pollux_traces"
#: a cheap invocation of each command that prints a table (or text) on stdout and exits 0; a command missing
#: here is run with --help, so that a new command is still checked (add it here to check its table too)
INVOCATIONS: dict[str, list[str]] = {
    "fit": [LOG, "--no-extra"],
    "calibrate": [str(DATA / "cifar10_resnet_optimus_fits.csv")],
    "plan": ["--steps", "1000", "--ps", "2", "--workers", "4:4"],
    "fit-speed": [str(POLLUX / "cifar10" / "scalability.csv")],
    "paleo": ["--list"],
    "profile": ["--net", "torch:resnet8_1d", "--batch", "2", "--steps", "1", "--warmup", "0"],
    "ps-rounds": ["--samples", "1000", "--batch", "32", "--epochs", "2", "--machines", "3", "--broadcast", "1",
                  "--compute", "5", "--gather", "1", "--aggregate", "0.5"],
    "scaling": [str(POLLUX / "cifar10"), "--params", "11173962"],
    "backtest": [LOG],
    "batch-scaling": [*(str(POLLUX / "cifar10" / f"validation-{b}.csv") for b in (128, 256, 512)),
                      "--target-acc", "0.93", "--samples-per-epoch", "50000"],
    "predict": [LOG, "--target-acc", "0.9"],
    "schedule": [str(DATA / "llm" / "lr_schedule_loss_curves" / "csv_25" / "wsd_20000_24000.csv"), "--target",
                 "loss<=3.4", "--observe", "0.5", "--shapes", "linear", "--decay-fraction", "0.2"],
    "transformer": ["--config", "llama31_8b", "--seq-len", "8192", "--global-batch", "16", "--device", "H100",
                    "--gpus", "8"],
    "library": ["list", "--db", ":memory:"],
}


def _run_into_a_closed_pipe(argv: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    """Run ``python -m core argv`` with stdout a pipe whose reading end is closed before the process starts:
    its first write to stdout fails, as under ``| head -1`` once head has gone."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run([sys.executable, "-m", "core", *argv], cwd=ROOT, stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=600, env=env)
    finally:
        os.close(write_end)
    return done


def _quiet(done: subprocess.CompletedProcess) -> None:
    assert done.returncode == 0, done.stderr
    for noise in ("Traceback", "BrokenPipeError", "Exception ignored", "Errno 32"):
        assert noise not in done.stderr, done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_closed_pipe_ends_every_command_quietly(name):
    argv = [name, *INVOCATIONS[name]] if name in INVOCATIONS else [name, "--help"]
    _quiet(_run_into_a_closed_pipe(argv))


def test_a_closed_pipe_ends_the_help_of_the_cli_quietly():
    _quiet(_run_into_a_closed_pipe(["--help"]))


def test_a_reader_that_leaves_after_the_first_line_of_a_long_table_ends_the_command_quietly():
    """``python -m core plan ... | head -1`` on a table of 24,000 rows (about 1 MB, past the pipe's buffer): the write
    fails in the middle of the table, not at the flush."""
    argv = ["plan", "--steps", "1000", "--ps", "1,2,3,4,5,6,7,8", "--workers", "1:3000"]
    with subprocess.Popen([sys.executable, "-m", "core", *argv], cwd=ROOT, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as proc:
        first = proc.stdout.readline()
        proc.stdout.close()
        err = proc.stderr.read()
        status = proc.wait(timeout=600)
    assert first.startswith("mode,p,w,")
    _quiet(subprocess.CompletedProcess(argv, status, None, err))


def test_every_invocation_names_a_registered_command():
    assert set(INVOCATIONS) <= set(COMMANDS)


# ---------------------------------------------------------------- cli.main's contract, on throwaway commands
def _throwaway(monkeypatch, run, add_arguments=lambda parser: None) -> str:
    """Register a command ``throwaway`` whose module's ``run`` is ``run``; return its name."""
    module = types.ModuleType("tests_cli_throwaway_command")
    module.add_arguments, module.run = add_arguments, run
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(COMMANDS, "throwaway", (module.__name__, "a command added by the contract test"))
    return "throwaway"


def test_a_planner_error_from_any_command_is_one_line_and_exit_2(monkeypatch, capsys):
    def run(args):
        print("file,value")                       # printed before the error: still comes first, on stdout
        raise LogFormatError("a.csv", "expected a loss column;\n  got step, acc")

    assert main([_throwaway(monkeypatch, run)]) == 2
    out = capsys.readouterr()
    assert out.out == "file,value\n"
    assert out.err == "a.csv: expected a loss column; got step, acc\n"


def test_a_bad_option_of_a_throwaway_command_is_one_line_and_exit_2(monkeypatch, capsys):
    from core.cli.common import add_option

    name = _throwaway(monkeypatch, lambda args: 0,
                      lambda parser: add_option(parser, "--colour", {"red": 1, "blue": 2}, default="red"))
    assert _status([name, "--colour", "green"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "python -m core throwaway: error: argument --colour: expected one of red, blue; got 'green'. "
        "See python -m core throwaway --help."]
    assert main([name, "--colour", "blue"]) == 0


def test_a_broken_pipe_from_any_command_is_a_quiet_exit_0(monkeypatch, capsys):
    def run(args):
        print("file,value")
        raise BrokenPipeError(32, "Broken pipe")

    assert main([_throwaway(monkeypatch, run)]) == 0
    assert capsys.readouterr().err == ""


def test_another_exception_is_a_bug_and_keeps_its_traceback(monkeypatch):
    def run(args):
        raise ZeroDivisionError("a bug")

    with pytest.raises(ZeroDivisionError):
        main([_throwaway(monkeypatch, run)])


def test_an_input_error_is_also_a_value_error_for_callers_of_core():
    assert issubclass(InputError, ValueError) and issubclass(LogFormatError, ValueError)
