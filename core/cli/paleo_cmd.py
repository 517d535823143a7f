"""``python -m core paleo``: Paleo per-iteration time and throughput over workers, as CSV.

Examples::

    python -m core paleo --net alex_v2 --device K80 --network ethernet --batch 128 \\
        --workers 1,2,4,8 --scaling weak --ppp-comp 1 --ppp-comm 1 --paleo-compatible
    python -m core paleo --net torch:resnet50 --device A100 --network infiniband_hdr
    python -m core paleo --net torch:resnet50 --device A100_PCIE_80GB --precision fp16 --batch 408 \
        --workers 1,8 --network nvlink4 --measured-step 0.126 --to-device H100_SXM,L40S
    python -m core paleo --list

Prints one CSV row per worker count with the columns of Paleo's ``validation_sample.csv``
(then speed-ups, the naive bound and provenance).  With ``--measured-step`` the per-op
roofline (``core.paleo.transfer``) is calibrated on ``--device`` from that per-iteration time
at the first worker count, and the same table is printed for ``--device`` and then each
``--to-device``, with ``time_low``/``time_high`` (ms, the interval of ``time_comp_ms``) and
``precision`` added.  Bad input prints one line ``<what>: <problem>`` on stderr and exits 2.
"""

from __future__ import annotations

import argparse

from core.cli.common import parse_number, print_csv
from core.errors import InputError
from core.validation import check_option


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
    parser.add_argument("--measured-step", metavar="SECONDS",
                        help="a per-iteration time measured on --device at the first worker count: calibrate the "
                             "per-op roofline on it (its ring all-reduce over --network, not overlapped, is "
                             "subtracted) and print the calibrated table")
    parser.add_argument("--to-device", metavar="NAME,...",
                        help="with --measured-step: also print the table for each of these devices")
    parser.add_argument("--precision", metavar="fp32|tf32|fp16|bf16",
                        help="with --measured-step: the precision the step ran in (default fp32)")
    parser.add_argument("--list", action="store_true",
                        help="list nets, devices, training GPUs and networks as CSV, then exit")


def _workers(text: str) -> tuple[int, ...]:
    parts = [p.strip() for p in text.split(",") if p.strip()]
    try:
        return tuple(int(p) for p in parts)
    except ValueError:
        raise InputError(f"--workers: expected comma-separated integers such as 1,2,4,8; got "
                         f"{text!r}. Remove anything that is not a whole number.") from None


def _print_list() -> None:
    from core.devices import DEVICES as TABLE
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
    for g in TABLE.values():     # the one device table: every key (and its aliases) --device and --to-device take
        peaks = " / ".join(f"{p} {f.tflops:g}" for p, f in g.peaks.items())
        aka = f" (also {', '.join(g.aliases)})" if g.aliases else ""
        print(f"gpu,{g.name},\"{g.label}{aka}: {peaks} TFLOP/s dense (FLOPs: 2 per multiply-add); "
              f"{g.mem_bandwidth.value:g} GB/s; link {g.link or 'not in the table'}; "
              f"{next(iter(g.peaks.values())).source}\"")
    for n in NETWORKS.values():
        print(f"network,{n.name},\"{n.gbps:g} Gbit/s; {n.source}\"")


def _transfer_frame(args: argparse.Namespace, workers: tuple[int, ...], batch: int, ppp_comm: float):
    """The calibrated tables of ``--device`` and each ``--to-device``, one after the other."""
    import pandas as pd

    from core.paleo import SCALINGS, batch_split, calibrate_at_workers, load_workload, transfer_scaling

    if args.paleo_compatible or args.pipeline:
        raise InputError("--measured-step: expected the modern model; got --paleo-compatible or --pipeline. The "
                         "transfer is the per-op roofline; drop those flags.")
    check_option(args.scaling, "--scaling", SCALINGS, fix="Pick one")
    measured = parse_number("--measured-step", args.measured_step, float, fix="Give seconds per step, e.g. 0.126")
    precision = args.precision or "fp32"
    workload = load_workload(args.net)
    per_worker, _ = batch_split(batch, workers[0], args.scaling)
    calibration = calibrate_at_workers(workload, measured, device=args.device, precision=precision,
                                       batch_size=per_worker, workers=workers[0], network=args.network,
                                       ppp_comm=ppp_comm)
    targets = [args.device, *(d.strip() for d in (args.to_device or "").split(",") if d.strip())]
    frames = [transfer_scaling(workload, calibration, device, precision=precision, network=args.network,
                               batch_size=batch, workers=workers, scaling=args.scaling,
                               ppp_comm=ppp_comm).to_frame() for device in targets]
    return pd.concat(frames, ignore_index=True)


def run(args: argparse.Namespace) -> int:
    """Simulate (or calibrate and transfer) and print CSV; 0 on success, 2 (one line on stderr) on bad input."""
    if args.list:
        _print_list()
        return 0
    from core.paleo import load_net, simulate

    if not args.net:
        raise InputError("--net: expected a spec path or a net name; got nothing. "
                         "See python -m core paleo --list.")
    if args.measured_step is None and (args.to_device or args.precision):
        raise InputError("--to-device/--precision: expected --measured-step with them; got none. Give the "
                         "step time measured on --device.")
    workers = _workers(args.workers)
    batch = parse_number("--batch", args.batch, int, what="an integer", fix="Give e.g. 128")
    ppp_comm = parse_number("--ppp-comm", args.ppp_comm, float, fix="Give e.g. 0.62")
    if args.measured_step is not None:
        print_csv(_transfer_frame(args, workers, batch, ppp_comm), float_format=None)
        return 0
    result = simulate(
        load_net(args.net), device=args.device, network=args.network, batch_size=batch,
        workers=workers, scaling=args.scaling,
        ppp_comp=parse_number("--ppp-comp", args.ppp_comp, float, fix="Give e.g. 0.62"),
        ppp_comm=ppp_comm, paleo_compatible=args.paleo_compatible, pipeline=args.pipeline)
    print_csv(result.to_frame(), float_format=None)
    return 0
