"""``python -m core profile``: a torch model's measured per-layer times beside Paleo's and the roofline's.

Example::

    python -m core profile --net torch:resnet20 --batch 32 --device cpu --steps 5

Trains the model for a few steps on random data, times every layer with ``torch.profiler``
(``core.paleo.torch_profile``) and prints one CSV row per layer: the run's metadata (device,
threads, step time, the measured FP32 matrix-product rate and copy bandwidth), the measured
forward and backward milliseconds, and the estimates of the per-op roofline and of Paleo
(modern mode), each calibrated so that its step equals the measured one
(``core.paleo.profile``).  The output reads back with ``core.paleo.read_profile``.  Bad
input prints one line ``<what>: <problem>`` on stderr and exits 2.
"""

from __future__ import annotations

import argparse

from core.cli.common import parse_number, print_csv
from core.errors import InputError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The issue's arguments; values are parsed in :func:`run` so errors stay one line."""
    parser.add_argument("--net", metavar="torch:MODEL", help="a core.models architecture, e.g. torch:resnet20")
    parser.add_argument("--batch", default="32", metavar="B", help="batch per step; default 32")
    parser.add_argument("--device", default="cpu", metavar="cpu|cuda", help="default: cpu")
    parser.add_argument("--steps", default="5", metavar="N", help="profiled (and timed) steps; default 5")
    parser.add_argument("--warmup", default="2", metavar="N", help="steps run first, not counted; default 2")
    parser.add_argument("--threads", default="1", metavar="N", help="torch intra-op threads; default 1")


def run(args: argparse.Namespace) -> int:
    """Measure, compare and print CSV; 0 on success, 2 (one line on stderr) on bad input."""
    from core.models import MODEL_NAMES
    from core.paleo import TORCH_PREFIX, compare_profile, load_net, load_workload, measure_profile, profile_report

    model = (args.net or "").removeprefix(TORCH_PREFIX)
    if model not in MODEL_NAMES:
        raise InputError(f"--net: expected torch:<model> with a model of core.models ({', '.join(MODEL_NAMES)}); "
                         f"got {args.net!r}. Only torch models can be run and timed.")
    counts = {flag: parse_number(flag, text, int, what="an integer", fix="Give e.g. 5")
              for flag, text in (("--batch", args.batch), ("--steps", args.steps), ("--warmup", args.warmup),
                                 ("--threads", args.threads))}
    profile = measure_profile(model, batch_size=counts["--batch"], device=args.device, steps=counts["--steps"],
                              warmup=counts["--warmup"], threads=counts["--threads"])
    net = f"{TORCH_PREFIX}{model}"
    comparison = compare_profile(profile, load_workload(net), load_net(net))
    print_csv(profile_report(profile, comparison))
    return 0
