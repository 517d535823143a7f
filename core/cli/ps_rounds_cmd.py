"""``python -m core ps-rounds``: rounds, total time and crossover of a parameter-server job.

Example::

    python -m core ps-rounds --samples 1000 --batch 32 --epochs 2 --machines 3 \\
        --broadcast 1 --compute 5 --gather 1 --aggregate 0.5

``--rounds continuous`` lets the minibatches of the whole run flow across epochs instead of
starting a new round at each epoch (the default, ``per-epoch``); the last line of the text
output (``round counting: ...``) and the JSON key ``rounds`` say which was used.
"""

from __future__ import annotations

import argparse
import json

from core.cli.common import add_option, naming, parse_number
from core.scaling import BATCH_KINDS, ROUND_MODE_TEXT, ROUND_MODES, PSJob, local_then_send, ps_rounds

_NUMBERS = (("samples", int, "training samples per epoch"),
            ("batch", int, "minibatch size (per worker unless --batch-kind global)"),
            ("epochs", int, "passes over the data"),
            ("machines", int, "worker machines m (the server not counted)"),
            ("broadcast", float, "seconds to broadcast the model to the workers"),
            ("compute", float, "seconds to compute one minibatch"),
            ("gather", float, "seconds for a worker to send its update back"),
            ("aggregate", float, "seconds for the server to aggregate one update"))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    for name, kind, help_text in _NUMBERS:
        parser.add_argument(f"--{name}", required=True, metavar="N" if kind is int else "S",
                            help=help_text)
    add_option(parser, "--batch-kind", BATCH_KINDS, default="per_worker",
                        help="whether --batch is per worker (default) or per round (global)")
    add_option(parser, "--rounds", ROUND_MODES, default="per-epoch",
                        help="; ".join(f"{mode}: {text}" for mode, text in ROUND_MODE_TEXT.items())
                             + " (default: per-epoch)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def run(args: argparse.Namespace) -> int:
    with naming("ps-rounds"):
        values = {name: parse_number(f"--{name}", getattr(args, name), kind,
                                      what="a whole number" if kind is int else "a number of seconds")
                  for name, kind, _ in _NUMBERS}
        job = PSJob(values["samples"], batch=values["batch"], epochs=values["epochs"],
                    machines=values["machines"], broadcast_s=values["broadcast"],
                    compute_s=values["compute"], gather_s=values["gather"],
                    aggregate_s=values["aggregate"], batch_kind=args.batch_kind, rounds=args.rounds)
    result, local = ps_rounds(job), local_then_send(job)
    if args.json:
        print(json.dumps(dict(result.to_dict(), local_then_send=local.to_dict()), indent=2))
        return 0
    cross = result.crossover_machines
    if result.rounds == "continuous":    # the run's last round; an epoch's rounds on average
        per_epoch, last_round = f"{result.rounds_per_epoch:.6g} on average", "last round of the run"
        last_workers = f"last round of the run: {result.last_round_workers}"
    else:
        per_epoch, last_round = f"{result.rounds_per_epoch}", "last round of an epoch"
        last_workers = f"last round: {result.last_round_workers}"
    lines = [
        f"minibatches per epoch: {result.minibatches_per_epoch}",
        f"rounds per epoch: {per_epoch} ({last_workers} of {job.machines} workers)",
        f"total rounds: {result.total_rounds} ({job.epochs} epoch"
        f"{'' if job.epochs == 1 else 's'})",
        f"round time: {result.round_time_s:g} s ({last_round} {result.last_round_time_s:g} s)",
        f"total time: {result.total_time_s:g} s (compute {result.compute_time_s:g}, "
        f"communication {result.communication_time_s:g}, aggregation "
        f"{result.aggregation_time_s:g})",
        "crossover workers: " + (f"{cross} (from m = {cross}, broadcast + gather + "
                                 "m x aggregate exceeds compute in a round)"
                                 if cross is not None else
                                 "none (communication + aggregation never exceed compute)"),
        f"train locally, send once: {local.total_time_s:g} s",
        f"round counting: {result.rounds} ({ROUND_MODE_TEXT[result.rounds]})",
    ]
    lines += [f"note: {flag}" for flag in result.flags]
    print("\n".join(lines))
    return 0
