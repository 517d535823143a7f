"""Small helpers shared by the command modules (argument parsing, reading the inputs, CSV printing)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator

import pandas as pd

from core.errors import InputError, LogFormatError, PlannerError
from core.targets import accuracy_target, parse_target
from core.untrusted import spreadsheet_safe
from core.validation import check_option


def fraction(text: str) -> float:
    """argparse type: a float in (0, 1) (``92`` is refused with a hint)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number; got {text!r}") from None
    if not 0 < value < 1:
        hint = f" (did you mean {value / 100:g}?)" if 1 < value <= 100 else ""
        raise argparse.ArgumentTypeError(f"expected a fraction in (0, 1); got {text}{hint}")
    return value


def target_spec(text: str):
    """argparse type: ``METRIC>=VALUE`` or ``METRIC<=VALUE`` (``core.targets.parse_target``)."""
    try:
        return parse_target(text)
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--target: ")) from None


def accuracy_spec(text: str):
    """argparse type of ``--target-acc A``: the ``Target`` ``acc>=A`` (a fraction; ``92`` is refused with a hint)."""
    return accuracy_target(fraction(text))


def add_target_arguments(parser: argparse.ArgumentParser) -> None:
    """``--target METRIC>=VALUE|METRIC<=VALUE`` and ``--target-acc A`` (which means ``acc>=A``), exclusive.

    Both land in ``args.target`` as a ``Target`` (None when neither is given): the float never travels.
    Which target then applies to a run is ``core.targets.target_for``'s decision alone: the user's, else
    the log's own (MLLOG, speedrun), else ``acc>=0.92``.
    """
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--target", type=target_spec, default=None, metavar="SPEC",
                       help="the target: METRIC>=VALUE or METRIC<=VALUE (e.g. val_loss<=3.28, acc>=0.92); "
                            "default: the log's own (MLLOG, speedrun), else acc>=0.92")
    group.add_argument("--target-acc", dest="target", type=accuracy_spec, default=None, metavar="A",
                       help="target accuracy as a fraction: the same as --target acc>=A")


def option(options, *, what: str = "value", fix: str = ""):
    """argparse ``type=``: a value among ``options`` (a registry: its keys, in its order), checked by
    :func:`core.validation.check_option`, so that every option's refusal is worded alike and names the
    valid choices from the registry itself, never from a list typed again here.

    The returned function carries ``options`` (the contract test reads them) and shows them in the usage
    line as ``{a,b,c}``.

    >>> family = option({"optimus": 1, "pow3": 2}, what="family")
    >>> family("pow3"), family.options
    ('pow3', ('optimus', 'pow3'))
    >>> family("pow5")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected one of optimus, pow3; got 'pow5'.
    """
    choices = tuple(options)

    def parse(text: str) -> str:
        try:
            return check_option(text, what, choices, fix=fix)
        except InputError as exc:
            raise argparse.ArgumentTypeError(str(exc).removeprefix(f"{what}: ")) from None

    parse.options = choices
    parse.__name__ = what
    return parse


def add_option(parser, flag: str, options, *, fix: str = "", **kwargs) -> argparse.Action:
    """``parser.add_argument(flag, type=option(options))``, with ``{a,b,c}`` as its metavar: the one way a
    command declares a choice option."""
    kwargs.setdefault("metavar", "{" + ",".join(map(str, options)) + "}")
    return parser.add_argument(flag, type=option(options, what=flag, fix=fix), **kwargs)


def positive_float(text: str) -> float:
    """argparse type: a number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0; got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0; got {text}")
    return value


def positive_int(text: str) -> int:
    """argparse type: an int >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer; got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1; got {value}")
    return value


def parse_number(flag: str, text: str, kind: type, *, what: str | None = None,
                 fix: str = "Fix the value") -> int | float:
    """``kind(text)``, or an :class:`~core.errors.InputError` (a ``ValueError``) worded for the
    command line: ``<flag>: expected <what>; got <text>. <fix>.``

    Examples
    --------
    >>> parse_number("--batch", "128", int)
    128
    >>> parse_number("--batch", "12.5", int, what="an integer", fix="Give e.g. 128")
    Traceback (most recent call last):
    ...
    core.errors.InputError: --batch: expected an integer; got '12.5'. Give e.g. 128.
    """
    try:
        return kind(text)
    except ValueError:
        what = what or ("a whole number" if kind is int else "a number")
        raise InputError(f"{flag}: expected {what}; got {text!r}. {fix.rstrip('.')}.") from None


def print_csv(table: pd.DataFrame, *, float_format: str | None = "%.6g", **to_csv) -> None:
    """Write ``table`` as CSV to stdout, the one output path of every command.

    Missing values are empty cells; ``float_format=None`` writes floats in full (Paleo's table,
    compared digit for digit with the original program's); text cells that a spreadsheet would
    run as a formula are neutralised (``core.untrusted.spreadsheet_safe``).
    """
    spreadsheet_safe(table).to_csv(sys.stdout, index=False, float_format=float_format, na_rep="",
                                   lineterminator="\n", **to_csv)


def complain(message: str) -> None:
    """One line on stderr."""
    print(message, file=sys.stderr)


def about(path: str, error: Exception) -> str:
    """``<path>: <problem>``, once: the product's errors about a log already start with its name.

    >>> about("a.csv", ValueError("a.csv: expected a loss column"))
    'a.csv: expected a loss column'
    >>> about("a.csv", ValueError("expected a loss column"))
    'a.csv: expected a loss column'
    """
    text = str(error)
    return text if text.startswith(f"{path}:") else f"{path}: {text}"


@contextlib.contextmanager
def naming(where: str) -> Iterator[None]:
    """Let a :class:`~core.errors.PlannerError` raised inside go up to ``cli.main`` (one stderr line, exit 2)
    with ``<where>: `` in front of its message, once (:func:`about`): what a command says about the file
    or step it was working on, without catching the error to print it itself.

    >>> try:
    ...     with naming("a.csv"):
    ...         raise InputError("--params: expected a whole number; got 'ten'.")
    ... except InputError as exc:
    ...     print(exc)
    a.csv: --params: expected a whole number; got 'ten'.
    """
    try:
        yield
    except PlannerError as exc:
        exc.args = (about(where, exc), *exc.args[1:])
        raise


def schedule_spec(text: str) -> str:
    """argparse type: a schedule in epochs (``step:30,60``, ``cosine:100``, ``poly:90[:2]``, ``exp:100``,
    ``none``), a planned schedule in optimiser steps (``wsd:total=24000,warmup=2160,decay=0.2``; see
    ``core.schedules``), or auto."""
    if text == "auto":
        return text
    from core.prediction import parse_schedule
    from core.schedules import is_schedule_spec, parse_schedule_spec

    try:
        (parse_schedule_spec if is_schedule_spec(text) else parse_schedule)(text)
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc).split(": ", 1)[1]) from None
    return text


def planned_schedule_file(path: str):
    """argparse type: a CSV of ``step, lr`` rows (a log with an ``lr`` column will do), read as a planned schedule."""
    from core.schedules import read_schedule_file

    try:
        return read_schedule_file(path)
    except (InputError, LogFormatError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def read_prior_sources(paths, args) -> tuple[list, pd.DataFrame | None, int]:
    """Logs and fitted-runs tables of ``--prior-from`` (a table is tried first, then a log).

    ``args`` gives ``dataset`` and ``steps_per_epoch``.  Returns ``(logs, tables or None, number
    rejected)``; each refused file gets its ``<file>: <problem>`` line on stderr.
    """
    from core.calibrate import read_fits_table
    from core.logs import read_log_file

    logs, tables, rejected = [], [], 0
    for path in paths:
        try:
            tables.append(read_fits_table(path, source=path, dataset=args.dataset))
            continue
        except LogFormatError:
            pass
        try:
            logs.append(read_log_file(path, source=path, steps_per_epoch=args.steps_per_epoch))
        except LogFormatError as exc:
            complain(str(exc))
            rejected += 1
    return logs, (pd.concat(tables, ignore_index=True) if tables else None), rejected


def datasets_by_source(logs, dataset: str | None) -> dict[str, str]:
    """What each log trained on, for a calibration prior's parameter counts: ``--dataset`` for every log
    when given, else the built-in data set of each log whose file is a built-in log's bytes
    (``core.datasets.builtin_dataset_of``: the pages know them by name); a log left out is ``other``.
    """
    from core.datasets import builtin_dataset_of

    if dataset:
        return {log.source: dataset for log in logs}
    return {log.source: ds for log in logs if (ds := builtin_dataset_of(log.source)) is not None}


def add_db_argument(parser: argparse.ArgumentParser, *, default=None) -> None:
    """``--db PATH``: the library file (or ``:memory:``, or a ``postgresql://`` URL); default ``$TTA_LIBRARY_DB`` or
    the user data folder."""
    parser.add_argument("--db", default=default, metavar="PATH",
                        help="run library: a DuckDB file, :memory: or postgresql://USER@HOST:PORT/DB (default: "
                             "$TTA_LIBRARY_DB, else the per-user data folder)")


def add_library_arguments(parser: argparse.ArgumentParser) -> None:
    """``--from-library [FILTER]`` and ``--db``: runs of the library as a source (see ``core.library.filters``)."""
    parser.add_argument("--from-library", nargs="?", const="", default=None, metavar="FILTER",
                        help="use the library's runs too: all, or those FILTER matches (model=resnet20,gpu=V100,"
                             "tag=T,batch=N,dataset=D,split=S,source=TEXT,id=N; the same key twice: either)")
    add_db_argument(parser)


def library_logs(args) -> list:
    """The runs ``--from-library`` asks for (named ``source (library #id)``); none without the option.

    Raises ``InputError`` for a malformed filter, ``LibraryError`` when the library cannot be used.
    """
    if getattr(args, "from_library", None) is None:
        return []
    from core.library import Library, RunFilter

    library = Library(args.db)
    run_filter = RunFilter.parse(args.from_library)
    logs = library.load(run_filter)
    if not logs:
        complain(f"{library.path}: no run matches {run_filter.describe()}.")
    return logs
