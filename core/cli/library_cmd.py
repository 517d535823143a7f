"""``python -m core library VERB ...``: the run library on the command line (``--db`` with every verb).

Verbs::

    add PATH... [--tag T]... [--dataset D] [--model M] [--gpu G] [--batch N] [--speed]
        (a PATH mlflow:TRACKING_URI[#EXPERIMENT] reads an MLflow server's runs, only what changed)
    forecast-to mlflow:TRACKING_URI[#EXPERIMENT] [--run-id ID]... [--target-acc T] [--level L] [--prior FILTER]
    refit [--engine local|dask] [--scheduler ADDRESS] [--filter FILTER] [--chunk N] [--target-acc T]
    list [--model M] [--gpu G] [--tag T] [--batch N] [--dataset D] [--split S] [--filter FILTER]
    show RUN [--series]
    rm RUN...
    restore ID...
    tag RUN... (--add T | --remove T)...
    export DIR [--filter FILTER]
    import DIR_OR_ZIP
    vacuum [--keep-days D]
    log [--limit N]

``add`` reads CSV logs, MLPerf MLLOG logs, TensorBoard event files and run folders, and whole
folders recursively; it prints one CSV row per run (``source,run_id,status,message``; status
``added``, ``present`` or ``refused``) with a progress bar on stderr when stderr is a terminal.
``list`` prints one CSV row per run (``core.library.RUN_COLUMNS`` and ``reached_target`` for
``--target-acc``; ``--removed``: the removed runs not purged yet).  ``RUN`` is a run id, a
content-hash prefix or a run's name.  ``rm`` hides runs, restorable with ``restore`` until
``vacuum`` purges them past the keeping period (``TTA_LIBRARY_KEEP_DAYS``, default 30 days).
``import`` reads an export folder or its ZIP (the Library page's Export), unpacked within bounds.
``log`` prints the audit table (every add, import, removal, restore and purge, with when and
who).  The library is ``--db PATH`` (or ``:memory:``, or a ``postgresql://`` URL), else
``$TTA_LIBRARY_DB``, else the per-user data folder.
Exit status 0 when everything given was used, 2 when anything was refused, 130 when stopped
with Ctrl-C (every run written is complete; the one being written is not in the library).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

from core.cli.common import accuracy_spec, add_db_argument, add_option, complain, fraction, positive_int, print_csv
from core.defaults import DEFAULT_LEVEL
from core.errors import InputError, LogFormatError
from core.library import (
    ENGINES,
    FILTER_KEYS,
    RUN_COLUMNS,
    Library,
    RunFilter,
    add_mlflow,
    add_paths,
    add_speed_table,
    check_tags,
    compact,
    export_library,
    forecast_to_mlflow,
    import_library,
    is_mlflow_source,
    keep_days_setting,
    parse_source,
    refit_library,
    with_reached,
)
from core.runs import CRITERIA
from core.tables import file_bytes
from core.targets import target_for

VERBS = ("add", "list", "show", "rm", "restore", "tag", "export", "import", "vacuum", "log", "forecast-to",
         "refit")
FILTER_HELP = "runs to use: key=value terms, comma-separated (keys: " + ", ".join(FILTER_KEYS) + \
    "); the same key twice means either value"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_db_argument(parser)
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    add = verbs.add_parser("add", help="add logs, TensorBoard runs or folders of them")
    add.add_argument("paths", nargs="+", metavar="PATH")
    add.add_argument("--tag", action="append", default=[], help="tag the runs added (repeatable)")
    add.add_argument("--dataset", default=None, help="what the runs trained on (cifar10, mnist1d, ...)")
    add.add_argument("--model", default=None, help="model name for every run (instead of the file name's)")
    add.add_argument("--gpu", default=None, help="device name for every run")
    add.add_argument("--batch", type=positive_int, default=None, help="global batch of every run")
    add.add_argument("--steps-per-epoch", type=positive_int, default=None, help="override the inferred steps per epoch")
    add.add_argument("--speed", action="store_true", help="the files are measured-speed tables (python -m core "
                                                           "fit-speed's input), not logs")
    listing = verbs.add_parser("list", help="one CSV row per run")
    for key in ("model", "gpu", "tag", "dataset", "split"):
        listing.add_argument(f"--{key}", action="append", default=[], help=FILTER_KEYS[key])
    listing.add_argument("--batch", action="append", default=[], type=positive_int, help=FILTER_KEYS["batch"])
    listing.add_argument("--filter", default="", metavar="FILTER", help=FILTER_HELP)
    listing.add_argument("--target-acc", dest="target", type=accuracy_spec, default=None, metavar="A",
                         help="target accuracy for the reached_target column (default 0.92)")
    listing.add_argument("--removed", action="store_true", help="list the removed runs not purged yet instead "
                                                                 "(restore them with library restore ID)")
    show = verbs.add_parser("show", help="a run's metadata (field,value), or its series with --series")
    show.add_argument("run", metavar="RUN")
    show.add_argument("--series", action="store_true", help="print the tidy per-step (or per-epoch) rows")
    rm = verbs.add_parser("rm", help="remove runs (restorable until vacuum purges them past the keeping period)")
    rm.add_argument("runs", nargs="+", metavar="RUN")
    restore = verbs.add_parser("restore", help="bring removed runs back (ids from list --removed)")
    restore.add_argument("ids", nargs="+", metavar="ID")
    tag = verbs.add_parser("tag", help="add or remove tags")
    tag.add_argument("runs", nargs="+", metavar="RUN")
    tag.add_argument("--add", action="append", default=[], metavar="T")
    tag.add_argument("--remove", action="append", default=[], metavar="T")
    export = verbs.add_parser("export", help="write runs to a new folder of Parquet files and a manifest")
    export.add_argument("directory", metavar="DIR")
    export.add_argument("--filter", default="", metavar="FILTER", help=FILTER_HELP)
    imp = verbs.add_parser("import", help="merge an export (its folder, or the ZIP the Library page downloads) into "
                                          "the library (by content hash)")
    imp.add_argument("directory", metavar="DIR_OR_ZIP")
    vacuum = verbs.add_parser("vacuum", help="purge runs removed longer ago than the keeping period, then compact")
    vacuum.add_argument("--keep-days", type=float, default=None, metavar="D",
                        help="purge runs removed more than D days ago (default TTA_LIBRARY_KEEP_DAYS or 30; 0: all)")
    log = verbs.add_parser("log", help="the audit table: adds, imports, removals, restores, purges (latest first)")
    log.add_argument("--limit", type=positive_int, default=None, metavar="N", help="the latest N events only")
    fto = verbs.add_parser("forecast-to", help="write each MLflow run's forecast back to it (tags and metrics)")
    fto.add_argument("source", metavar="mlflow:TRACKING_URI[#EXPERIMENT]")
    fto.add_argument("--run-id", action="append", default=[], metavar="ID",
                     help="the MLflow run to forecast (repeatable; default: every run of the experiment)")
    fto.add_argument("--experiment", default=None, metavar="NAME", help="the experiment (instead of #EXPERIMENT)")
    fto.add_argument("--target-acc", dest="target", type=accuracy_spec, default=None, metavar="A",
                     help="target accuracy (default 0.92)")
    fto.add_argument("--level", type=fraction, default=DEFAULT_LEVEL, help="interval coverage (default 0.8)")
    fto.add_argument("--prior", default="", metavar="FILTER", help="library runs for the prior (default: all)")
    refit = verbs.add_parser("refit", help="refit every (or every matching) run and store the fits")
    add_option(refit, "--engine", ENGINES, default="local", help="refit engine (default local)")
    refit.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="a running Dask scheduler (tcp://host:8786); default: a LocalCluster on this machine")
    refit.add_argument("--workers", type=positive_int, default=2, help="LocalCluster worker processes (default 2)")
    refit.add_argument("--filter", default="", metavar="FILTER", help=FILTER_HELP)
    refit.add_argument("--chunk", type=positive_int, default=None, help="runs per chunk (fitted, then stored)")
    refit.add_argument("--target-acc", dest="target", type=accuracy_spec, default=None, metavar="A",
                       help="target accuracy (default 0.92)")
    add_option(refit, "--criterion", CRITERIA, default="epoch", help="target crossing criterion (default epoch)")
    for sub in verbs.choices.values():
        add_db_argument(sub, default=argparse.SUPPRESS)


def _bar(total: int, what: str):
    """A tqdm bar on stderr (hidden when stderr is not a terminal) and a progress callback driving it."""
    from tqdm import tqdm

    bar = tqdm(total=total, desc=what, unit="run", disable=None, file=sys.stderr, leave=False)

    def progress(done: int, total: int, label: str) -> None:
        bar.total = total
        bar.update(done - bar.n)
        bar.set_postfix_str(label[-40:], refresh=False)

    return bar, progress


def _report_rows(report) -> pd.DataFrame:
    rows = [{"source": r.source, "run_id": r.run_id,
             "status": "restored" if r.restored else "added" if r.added else "present",
             "message": r.message} for r in report.results]
    rows += [{"source": source, "run_id": None, "status": "refused", "message": message}
             for source, message in report.errors]
    table = pd.DataFrame(rows, columns=["source", "run_id", "status", "message"])
    table["run_id"] = pd.array(table["run_id"], dtype="Int64")
    return table


def _add(lib: Library, args) -> int:
    if args.speed:
        status = 0
        rows = []
        for path in args.paths:
            name = Path(path).name
            try:
                table_id, added = add_speed_table(lib, name, file_bytes(path, source=name))
                rows.append({"source": name, "table_id": table_id, "status": "added" if added else "present"})
            except LogFormatError as exc:
                complain(str(exc))
                status = 2
        print_csv(pd.DataFrame(rows, columns=["source", "table_id", "status"]))
        return status
    sources = [p for p in args.paths if is_mlflow_source(p)]
    paths = [p for p in args.paths if not is_mlflow_source(p)]
    report = None
    for source in sources:
        bar, progress = _bar(0, "mlflow")
        try:
            done = add_mlflow(lib, source, tags=args.tag, dataset=args.dataset, progress=progress)
        finally:
            bar.close()
        complain(f"{source}: {done.n_listed} run(s) listed, {done.n_fetched} fetched"
                 + (f", replacing {len(done.replaced)} older version(s)" if done.replaced else "")
                 + (f"; {done.note}" if done.note else ""))
        report = done.report if report is None else _merged(report, done.report)
    if paths or report is None:
        bar, progress = _bar(0, "add")
        try:
            found = add_paths(lib, paths, tags=args.tag, dataset=args.dataset, model=args.model, gpu=args.gpu,
                              global_batch=args.batch, steps_per_epoch=args.steps_per_epoch, progress=progress)
        finally:
            bar.close()
        report = found if report is None else _merged(report, found)
    for source, message in report.errors:
        complain(_with_source(source, message))
    for note in report.notes:
        complain(f"note: {note}")
    print_csv(_report_rows(report))
    complain(report.summary())
    return 2 if report.errors else 0


def _merged(a, b):
    """Two import reports as one (results, refusals and notes of both, in order)."""
    from dataclasses import replace

    return replace(a, results=a.results + b.results, errors=a.errors + b.errors, notes=a.notes + b.notes,
                   cancelled=a.cancelled or b.cancelled)


def _forecast_to(lib: Library, args) -> int:
    source = parse_source(args.source)
    if args.experiment:
        source = type(source)(source.tracking_uri, args.experiment)
    table = forecast_to_mlflow(lib, source, run_ids=args.run_id, target=target_for(given=args.target),
                               level=args.level,
                               prior_filter=args.prior or None)
    print_csv(table)
    complain(f"{source.name}: forecasts written to {len(table)} run(s) (tags tta.*, metrics tta_*)")
    return 0


def _refit(lib: Library, args) -> int:
    from tqdm import tqdm

    bar = tqdm(total=0, desc="refit", unit="run", disable=None, file=sys.stderr, leave=False)

    def progress(done: int, total: int, label: str) -> None:
        bar.total = total
        bar.update(done - bar.n)

    options = {"scheduler": args.scheduler, "n_workers": args.workers} if args.engine == "dask" else {}
    try:
        summary = refit_library(lib, RunFilter.parse(args.filter), engine=args.engine, chunk=args.chunk,
                                target=target_for(given=args.target), criterion=args.criterion, progress=progress,
                                **options)
    finally:
        bar.close()
    complain(summary.describe())
    return 0


def _with_source(source: str, message: str) -> str:
    """``<file>: <problem>``: the message as it is when it names its file already, else prefixed with it."""
    return message if message.startswith(str(source)) else f"{source}: {message}"


def _filter(args) -> RunFilter:
    """``--filter`` and the per-key options together (values of one key: either)."""
    terms = {key: list(values) for key, values in RunFilter.parse(args.filter).terms}
    extra = RunFilter.of(model=args.model, gpu=args.gpu, tag=args.tag, batch=args.batch, dataset=args.dataset,
                         split=args.split)
    for key, values in extra.terms:
        terms.setdefault(key, []).extend(values)
    return RunFilter.of(**terms)


def _list(lib: Library, args) -> int:
    if args.removed:
        print_csv(lib.removed())
        return 0
    print_csv(with_reached(lib.runs(_filter(args)), target_for(given=args.target)))
    return 0


def _restore(lib: Library, refs) -> int:
    ids, bad = [], 0
    for ref in refs:
        text = str(ref).strip().lstrip("#")
        if text.isdigit():
            ids.append(int(text))
        else:
            complain(f"{ref}: expected the id of a removed run (see python -m core library list --removed); got "
                     f"{str(ref)[:40]!r}.")
            bad += 1
    restored = lib.restore(ids)
    for missing in sorted(set(ids) - set(restored)):
        complain(f"#{missing}: expected a removed run kept for restoring; there is none (never removed, or purged). "
                 "See python -m core library list --removed.")
        bad += 1
    complain(f"restored {len(restored)} run(s): {', '.join(f'#{i}' for i in restored) or 'none'}")
    return 2 if bad else 0


def _show(lib: Library, args) -> int:
    run_id = lib.resolve(args.run)
    if args.series:
        log = lib.get(run_id)
        print_csv(log.frame)
        return 0
    row = lib.runs(RunFilter.of(id=run_id)).iloc[0]
    log = lib.get(run_id)
    fields = {c: row[c] for c in RUN_COLUMNS}
    fields.update(roles=log.roles.to_dict(), columns=list(log.columns), flags="; ".join(log.flags))
    values = [json.dumps(v) if isinstance(v, (list, dict)) else "" if pd.isna(v) else str(v) for v in fields.values()]
    print_csv(pd.DataFrame({"field": list(fields), "value": values}))
    return 0


def _resolve_all(lib: Library, refs) -> tuple[list[int], int]:
    ids, bad = [], 0
    for ref in refs:
        try:
            ids.append(lib.resolve(ref))
        except InputError as exc:
            complain(str(exc))
            bad += 1
    return ids, bad


def run(args: argparse.Namespace) -> int:
    lib = Library(args.db)          # an InputError or LibraryError (e.g. a malformed TTA_LIBRARY_TIMEOUT) goes to main
    try:
        if args.verb == "add":
            return _add(lib, args)
        if args.verb == "list":
            return _list(lib, args)
        if args.verb == "show":
            return _show(lib, args)
        if args.verb == "restore":
            return _restore(lib, args.ids)
        if args.verb == "log":
            print_csv(lib.history(args.limit))
            return 0
        if args.verb in ("rm", "tag"):
            ids, bad = _resolve_all(lib, args.runs)
            if args.verb == "rm":
                removed = lib.remove(ids)
                complain(f"removed {len(removed)} run(s): {', '.join(f'#{i}' for i in removed) or 'none'}"
                         + (f" (restorable for {keep_days_setting():g} days: python -m core library restore "
                            f"{' '.join(map(str, removed))})" if removed else ""))
            else:
                if not args.add and not args.remove:
                    raise InputError("tag: expected --add T or --remove T; got neither.")
                n = lib.tag(ids, check_tags(args.add)) if args.add else 0
                n = lib.tag(ids, check_tags(args.remove), remove=True) if args.remove else n
                complain(f"tagged {n} run(s)")
            return 2 if bad else 0
        if args.verb == "export":
            summary = export_library(lib, args.directory, RunFilter.parse(args.filter))
            complain(f"exported {summary.n_runs} run(s) to {summary.directory}: "
                     + ", ".join(f"{t} {n} rows" for t, n in summary.rows.items()))
            return 0
        if args.verb == "import":
            bar, progress = _bar(0, "import")
            try:
                report = import_library(lib, args.directory, progress=progress)
            finally:
                bar.close()
            for source, message in report.errors:
                complain(_with_source(source, message))
            print_csv(_report_rows(report))
            complain(report.summary())
            return 2 if report.errors else 0
        if args.verb == "forecast-to":
            return _forecast_to(lib, args)
        if args.verb == "refit":
            return _refit(lib, args)
        if args.keep_days is not None and not args.keep_days >= 0:
            raise InputError(f"--keep-days: expected a number of days >= 0; got {args.keep_days:g}.")
        summary = compact(lib, keep_days=args.keep_days)   # vacuum
        if summary.purged:
            complain(f"purged {len(summary.purged)} removed run(s) for good: "
                     + ", ".join(f"#{i}" for i in summary.purged))
        complain(f"{summary.path}: {summary.bytes_before:,} bytes before, {summary.bytes_after:,} after")
        return 0
    except KeyboardInterrupt:
        complain("interrupted: every run written is complete; the one being written was not added.")
        return 130
    finally:
        lib.store.close()
