"""``python -m core batch-scaling LOG... --target-acc T``: samples and steps to target against the global batch.

Each LOG is one run of the same job at its own global batch, read from the log (an MLLOG
``global_batch_size``), from a ``-<batch>`` file-name suffix (Pollux's
``validation-<batch>.csv``), or given with ``--batch B,...`` in file order.  The runs are
fitted to ``E(B) = E_min·(1 + B/B_noise)`` (``core.batch``; one run is enough when its
log has a gradient-noise-scale column).  Each run is assumed tuned for its batch.

Prints CSV on stdout::

    global_batch,epochs_to_target,samples_to_target,steps_to_target,steps_low,steps_high,source,region,in_fit,note,file

one row per run that reached the target (``measured``; the interval is the model's there; ``file`` the LOG),
whether in the fit or not: a run kept out of it (its learning rate capped) has ``in_fit`` False and the
reason in ``note``, with its measured values; then one per ``--predict`` batch (``predicted``, ``in_fit``
empty), with its ``region`` (``measured``,
``interpolated`` inside the fitted batches, ``extrapolated`` beyond them: the interval is
widened per e-fold of extrapolation) and a ``note`` (extrapolation, a learning-rate cap).
A Lightning ``metrics.csv`` is read as its validation rows (``val_acc``), its batch from its run folder
(``<name>-<batch>/version_0/metrics.csv``).
Warnings about the fit (runs on a line within their resolution, ``B_noise`` not determined,
a learning-rate cap) follow the summary on stderr, one line each.

``--rcp BENCHMARK[:ROUND]`` (no LOG) reads MLCommons' reference convergence points from the
installed ``mlperf-logging`` (``core.batch.rcp``; the newest round with the benchmark when
ROUND is left out; ``--rcp list`` lists them) and prints one row per batch, each predicted
from the others (interpolation inside the measured batches, McCandlish's line outside)::

    benchmark,round,global_batch,seeds,mean,seed_cv_pct,learning_rate,predicted,low,high,error_pct,mccandlish,mccandlish_error_pct,region,note

then one row per ``--predict`` batch predicted from every batch (``mean`` empty); stderr
gets McCandlish's fit to every batch and the leave-one-batch-out summary.  A summary line goes to stderr (``E_min``,
``B_noise``, their intervals, the fit's error on the measured runs), with one line per run
left out (never reached the target, aborted).  A file that cannot be read gets one
``<file>: <problem>`` line on stderr; exit status 2 when any file was rejected or nothing
could be fitted, else 0.

Examples::

    python -m core batch-scaling data/pollux_traces/cifar10/validation-{128,256,512}.csv \\
        --target-acc 0.93 --samples-per-epoch 50000 --predict 1024,2048,4096
    python -m core batch-scaling data/mlperf_v3.0_resnet50/*/*/result_*.txt --target-acc 0.759 --predict 65536
    python -m core batch-scaling runs/resnet8_CPU_val-{64,256,1024}.csv --target-acc 0.85 \\
        --samples-per-epoch 4000 --lr 0.002,0.008,0.008      # course logs carry no lr column
    python -m core batch-scaling --rcp llama2_70b_lora:5.0.0 --predict 64,256
"""

from __future__ import annotations

import argparse

import pandas as pd

from core.batch import (
    RCP_COLUMNS,
    TUNED_NOTE,
    batch_study,
    latest_round,
    load_rcps,
    parse_rcp_spec,
    predict_from_points,
    rcp_benchmarks,
    rcp_fit,
    rcp_leave_one_out,
    rcp_rounds,
)
from core.cli.common import accuracy_spec, complain, fraction, parse_number, print_csv, target_spec
from core.defaults import DEFAULT_LEVEL
from core.errors import InputError, LogFormatError
from core.logs import read_log_file, read_log_files
from core.targets import target_for

OUTPUT_COLUMNS = ("global_batch", "epochs_to_target", "samples_to_target", "steps_to_target", "steps_low",
                  "steps_high", "source", "region", "in_fit", "note", "file")
#: flags of a fit that are notes, not warnings
_QUIET_FLAGS = ("fitted on ",)


def _declared_target(paths):
    """The target every log declares (MLLOG, speedrun: ``core.targets.target_for`` of each, from the log), None
    when one does not or they differ."""

    found = set()
    for path in paths:
        try:
            target = target_for(read_log_file(path, source=path))
        except LogFormatError:
            continue                      # refused again, with its message, when the logs are read
        if target.origin == "default":      # the log declares none
            return None
        found.add(target)
    return found.pop() if len(found) == 1 else None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("logs", nargs="*", metavar="LOG", help="runs of one job at different global batches")
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--target", type=target_spec, default=None, metavar="SPEC",
                        help="the target: METRIC>=VALUE or METRIC<=VALUE (default with LOG: the logs' own, as MLLOG "
                             "and speedrun logs declare it)")
    target.add_argument("--target-acc", dest="target", type=accuracy_spec, default=None, metavar="A",
                        help="target accuracy as a fraction: --target acc>=A")
    parser.add_argument("--rcp", default=None, metavar="BENCHMARK[:ROUND]",
                        help="MLCommons reference convergence points from the installed mlperf-logging instead of "
                             "logs ('list' lists them)")
    parser.add_argument("--batch", default=None, metavar="B,...",
                        help="the global batch of each LOG, in file order (default: read from each log)")
    parser.add_argument("--lr", default=None, metavar="LR,...",
                        help="the peak learning rate of each LOG, in file order (default: read from each log's lr "
                             "column; the course format has none): a rate that stops growing with the batch marks "
                             "those runs out of the fit")
    parser.add_argument("--samples-per-epoch", default=None, metavar="N",
                        help="training samples per epoch, for the epochs column (default: from the logs)")
    parser.add_argument("--predict", default=None, metavar="M1,M2,...", help="global batches to predict")
    parser.add_argument("--level", type=fraction, default=DEFAULT_LEVEL,
                        help="coverage of the intervals (default 0.8)")
    parser.add_argument("--noise-batch", default=None, metavar="B0",
                        help="the batch a grad_var column refers to (default: inferred from progress)")


def _numbers(text: str | None, flag: str) -> list[float] | None:
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise InputError(f"{flag}: expected comma-separated numbers; got {text!r}. Write e.g. 256,1024.")
    values = [parse_number(flag, p, float, what="a number > 0", fix="Write e.g. 256,1024") for p in parts]
    if any(not v > 0 for v in values):
        what = "learning rates" if flag == "--lr" else "samples per step"
        raise InputError(f"{flag}: expected numbers > 0; got {text!r}. Give {what}.")
    return values


def _run_rcp(args: argparse.Namespace, predict: list[float]) -> int:
    if args.rcp.strip() == "list":
        rows = [dict(benchmark=b, rounds=" ".join(r for r in rcp_rounds() if b in rcp_benchmarks(r)),
                     latest=latest_round(b)) for b in rcp_benchmarks()]
        print_csv(pd.DataFrame(rows, columns=["benchmark", "rounds", "latest"]))
        return 0
    name, round_ = parse_rcp_spec(args.rcp)
    rcps = load_rcps(name, round_)
    rows = rcp_leave_one_out(rcps, level=args.level)
    b = rcps.batches
    for x in predict:
        p = predict_from_points(b, rcps.means, rcps.spreads, x, level=args.level)
        rows.append(dict(benchmark=rcps.benchmark, round=rcps.round, global_batch=x, predicted=p.samples, low=p.low,
                         high=p.high, region=p.region, note=p.note))
    print_csv(pd.DataFrame(rows, columns=list(RCP_COLUMNS)))
    loo = [r for r in rows if r.get("mean") is not None]
    err = sum(abs(r["error_pct"]) for r in loo) / len(loo)
    base = sum(abs(r["mccandlish_error_pct"]) for r in loo) / len(loo)
    covered = sum(r["low"] <= r["mean"] <= r["high"] for r in loo)
    complain(f"{rcps.benchmark} {rcps.round} RCPs ({rcps.unit}, {len(b)} global batches): "
             f"{rcp_fit(rcps, level=args.level).summary()}")
    complain(f"leave one batch out: mean |error| {err:.1f} % (McCandlish's line alone {base:.1f} %); "
             f"{args.level:.0%} intervals cover {covered} of {len(loo)} batch means. {TUNED_NOTE}")
    return 0


def run(args: argparse.Namespace) -> int:
    batches = _numbers(args.batch, "--batch")
    predict = _numbers(args.predict, "--predict") or []
    if args.rcp is not None:
        if args.logs:
            raise InputError(f"--rcp: expected either LOG files or --rcp; got both ({len(args.logs)} LOG). "
                             "Leave out the logs, or --rcp.")
        return _run_rcp(args, predict)
    if not args.logs:
        raise InputError("batch-scaling: expected LOG files (runs at different global batches) or --rcp "
                         "BENCHMARK[:ROUND]; got neither.")
    if args.target is None:
        declared = _declared_target(args.logs)
        if declared is None:
            raise InputError("--target-acc: expected the target (--target METRIC<=VALUE, or --target-acc A as a "
                             "fraction, e.g. 0.93); got none, and the logs do not declare one.")
        args.target = declared
    per_epoch = _numbers(args.samples_per_epoch, "--samples-per-epoch")
    rates = _numbers(args.lr, "--lr")
    if rates is not None and len(rates) != len(args.logs):
        raise InputError(f"--lr: expected one learning rate per LOG ({len(args.logs)}); got {len(rates)}. "
                         "Give them in file order, or leave --lr out to read them from the logs.")
    noise_batch = _numbers(args.noise_batch, "--noise-batch")
    if batches is not None and len(batches) != len(args.logs):
        raise InputError(f"--batch: expected one global batch per LOG ({len(args.logs)}); got {len(batches)}. "
                         "Give them in file order, or leave --batch out to read them from the logs.")
    files, given, given_lr, rejected = [], [], [], 0
    for i, path in enumerate(args.logs):
        try:
            with open(path, "rb") as handle:
                files.append((path, handle.read()))
            given.append(None if batches is None else batches[i])
            given_lr.append(None if rates is None else rates[i])
        except OSError as exc:
            complain(f"{path}: cannot be read: {exc.strerror or exc}.")
            rejected += 1
    read = read_log_files(files)
    for _source, message in read.errors:
        complain(message)
    rejected += len(read.errors)
    kept = {log.source for log in read.logs}
    study = batch_study(read.logs, target=args.target, noise=read.noise, level=args.level,
                        batches=None if batches is None else [b for (src, _), b in zip(files, given) if src in kept],
                        learning_rates=None if rates is None else [r for (src, _), r in zip(files, given_lr)
                                                                   if src in kept],
                        samples_per_epoch=per_epoch[0] if per_epoch else None,
                        base_batch=noise_batch[0] if noise_batch else None)
    for _source, message in study.errors:
        complain(message)
    for r in study.left_out:
        complain(f"{r.source}: {r.note}")
    if study.model is None:
        complain(study.problem)
        return 2
    table = pd.DataFrame(study.model.table(predict), columns=list(OUTPUT_COLUMNS))
    print_csv(table)
    complain(f"{study.model.summary()}. {TUNED_NOTE}")
    for flag in study.model.flags:
        if not flag.startswith(_QUIET_FLAGS):
            complain(f"batch scaling: {flag}")
    return 2 if rejected or study.errors else 0
