"""``python -m core paleo``: Paleo per-iteration time and throughput over workers, as CSV.

Examples::

    python -m core paleo --net alex_v2 --device K80 --network ethernet --batch 128 \\
        --workers 1,2,4,8 --scaling weak --ppp-comp 1 --ppp-comm 1 --paleo-compatible
    python -m core paleo --net torch:resnet50 --device A100 --network infiniband_hdr
    python -m core paleo --list

Prints one CSV row per worker count with the columns of Paleo's ``validation_sample.csv``
(then speed-ups, the naive bound and provenance).  Bad input prints one line
``<what>: <problem>`` on stderr and exits 2.
"""

from __future__ import annotations

import argparse
import sys

from core.cli.common import parse_number, print_csv
from core.errors import InputError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The issue's arguments; values are parsed in :func:`run` so errors stay one line."""
    parser.add_argument("--net", metavar="PATH_OR_NAME",
                        help="a .json spec path, a built-in spec (alex_v2) or torch:<model>")
    parser.add_argument("--device", default="V100", metavar="NAME", help="default: V100")
    parser.add_argument("--network", default="ethernet", metavar="NAME",
                        help="default: ethernet (10 Gbit/s)")
    parser.add_argument("--batch", default="128", metavar="B",
                        help="per-worker batch (weak) or global batch (strong); default 128")
    parser.add_argument("--workers", default="1,2,4,8", metavar="N,N,...",
                        help="worker counts; default 1,2,4,8")
    parser.add_argument("--scaling", default="weak", metavar="weak|strong", help="default: weak")
    parser.add_argument("--ppp-comp", default="1.0", metavar="X",
                        help="platform percent of peak of the device; default 1.0")
    parser.add_argument("--ppp-comm", default="1.0", metavar="Y",
                        help="platform percent of peak of the network; default 1.0")
    parser.add_argument("--paleo-compatible", action="store_true",
                        help="reproduce the original Paleo program exactly")
    parser.add_argument("--pipeline", action="store_true",
                        help="per layer max(compute, memory) instead of the sum")
    parser.add_argument("--list", action="store_true",
                        help="list nets, devices and networks as CSV, then exit")


def _workers(text: str) -> tuple[int, ...]:
    parts = [p.strip() for p in text.split(",") if p.strip()]
    try:
        return tuple(int(p) for p in parts)
    except ValueError:
        raise InputError(f"--workers: expected comma-separated integers such as 1,2,4,8; got "
                         f"{text!r}. Remove anything that is not a whole number.") from None


def _print_list() -> None:
    from core.models import model_info
    from core.paleo import DEVICES, NETWORKS, TORCH_PREFIX, list_nets

    print("kind,name,description")
    nets = list_nets()
    for name in nets["specs"]:
        print(f"spec,{name},data/paleo/nets/{name}.json")
    for name in nets["models"]:
        info = model_info(name.removeprefix(TORCH_PREFIX))
        print(f"model,{name},\"core.models; {info.family}; input {'x'.join(map(str, info.input_shape))}; "
              f"{info.n_params} params\"")
    for d in DEVICES.values():
        print(f"device,{d.name},\"{d.peak_gflops:g} GFLOP/s {d.precision}; "
              f"{d.mem_bandwidth_gbs:g} GB/s; {d.source}\"")
    for n in NETWORKS.values():
        print(f"network,{n.name},\"{n.gbps:g} Gbit/s; {n.source}\"")


def run(args: argparse.Namespace) -> int:
    """Simulate and print CSV; 0 on success, 2 (one line on stderr) on bad input."""
    if args.list:
        _print_list()
        return 0
    from core.paleo import load_net, simulate

    try:
        if not args.net:
            raise InputError("--net: expected a spec path or a net name; got nothing. "
                             "See python -m core paleo --list.")
        workers = _workers(args.workers)
        result = simulate(
            load_net(args.net), device=args.device, network=args.network,
            batch_size=parse_number("--batch", args.batch, int, what="an integer", fix="Give e.g. 128"),
            workers=workers, scaling=args.scaling,
            ppp_comp=parse_number("--ppp-comp", args.ppp_comp, float, fix="Give e.g. 0.62"),
            ppp_comm=parse_number("--ppp-comm", args.ppp_comm, float, fix="Give e.g. 0.62"),
            paleo_compatible=args.paleo_compatible, pipeline=args.pipeline)
    except (InputError, TypeError) as err:
        print(str(err).replace("\n", " "), file=sys.stderr)
        return 2
    print_csv(result.to_frame(), float_format=None)
    return 0
