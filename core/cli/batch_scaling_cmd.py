"""``python -m core batch-scaling LOG... --target-acc T``: samples and steps to target against the global batch.

Each LOG is one run of the same job at its own global batch, read from the log (an MLLOG
``global_batch_size``), from a ``-<batch>`` file-name suffix (Pollux's
``validation-<batch>.csv``), or given with ``--batch B,...`` in file order.  The runs are
fitted to ``E(B) = E_min·(1 + B/B_noise)`` (``core.batch``; one run is enough when its
log has a gradient-noise-scale column).  Each run is assumed tuned for its batch.

Prints CSV on stdout::

    global_batch,epochs_to_target,samples_to_target,steps_to_target,steps_low,steps_high,source

one row per run that reached the target (``measured``; the interval is the model's there),
then one per ``--predict`` batch (``predicted``).  A summary line goes to stderr (``E_min``,
``B_noise``, their intervals, the fit's error on the measured runs), with one line per run
left out (never reached the target, aborted).  A file that cannot be read gets one
``<file>: <problem>`` line on stderr; exit status 2 when any file was rejected or nothing
could be fitted, else 0.

Examples::

    python -m core batch-scaling data/pollux_traces/cifar10/validation-{128,256,512}.csv \\
        --target-acc 0.93 --samples-per-epoch 50000 --predict 1024,2048,4096
    python -m core batch-scaling data/mlperf_v3.0_resnet50/*/*/result_*.txt --target-acc 0.759 --predict 65536
"""

from __future__ import annotations

import argparse

import pandas as pd

from core.batch import TUNED_NOTE, batch_study
from core.cli.common import complain, fraction, parse_number, print_csv
from core.defaults import DEFAULT_LEVEL
from core.errors import InputError
from core.logs import read_log_files

OUTPUT_COLUMNS = ("global_batch", "epochs_to_target", "samples_to_target", "steps_to_target", "steps_low",
                  "steps_high", "source")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("logs", nargs="+", metavar="LOG", help="runs of one job at different global batches")
    parser.add_argument("--target-acc", type=fraction, required=True, help="target accuracy as a fraction")
    parser.add_argument("--batch", default=None, metavar="B,...",
                        help="the global batch of each LOG, in file order (default: read from each log)")
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
        raise InputError(f"{flag}: expected numbers > 0; got {text!r}. Give samples per step.")
    return values


def run(args: argparse.Namespace) -> int:
    try:
        batches = _numbers(args.batch, "--batch")
        predict = _numbers(args.predict, "--predict") or []
        per_epoch = _numbers(args.samples_per_epoch, "--samples-per-epoch")
        noise_batch = _numbers(args.noise_batch, "--noise-batch")
        if batches is not None and len(batches) != len(args.logs):
            raise InputError(f"--batch: expected one global batch per LOG ({len(args.logs)}); got {len(batches)}. "
                             "Give them in file order, or leave --batch out to read them from the logs.")
    except InputError as exc:
        complain(str(exc))
        return 2
    files, given, rejected = [], [], 0
    for i, path in enumerate(args.logs):
        try:
            with open(path, "rb") as handle:
                files.append((path, handle.read()))
            given.append(None if batches is None else batches[i])
        except OSError as exc:
            complain(f"{path}: cannot be read: {exc.strerror or exc}.")
            rejected += 1
    read = read_log_files(files)
    for _source, message in read.errors:
        complain(message)
    rejected += len(read.errors)
    kept = {log.source for log in read.logs}
    study = batch_study(read.logs, target_acc=args.target_acc, noise=read.noise, level=args.level,
                        batches=None if batches is None else [b for (src, _), b in zip(files, given) if src in kept],
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
    return 2 if rejected or study.errors else 0
