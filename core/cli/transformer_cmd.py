"""``python -m core transformer``: a language model's step time per GPU count, calibrated, with intervals.

Examples::

    python -m core transformer --config llama31_405b --seq-len 8192 --global-batch 1152 --device H100 \\
        --gpus 512,2048,8192 --parallel tp=8,pp=8,cp=2,vp=8 --precision fp8 --measured-step 55.1@H100,512
    python -m core transformer --config llama31_8b --seq-len 8192 --global-batch 36 --device GB200 --gpus 72 \
        --precision fp8 --measured-log result_0.txt@systems/NVIDIA__tyche_ngpu8_ngc25.09_nemo.json
    python -m core transformer --config path/to/config.json --seq-len 4096 --global-batch 256 \\
        --device B200 --gpus 8,64 --lora-rank 16

Prints one CSV row per GPU count: the strategy (given with ``--parallel``, its dp set by the GPU
count, or the fastest that fits in memory), the step time with its interval, tokens/s, utilisation
(MFU: model FLOPs over the dense peak at ``--precision``), the memory per GPU and what the step
spends in compute, exposed communication and the pipeline bubble.  The lines starting with ``#``
on stderr name where every number comes from (datasheet, measured, assumed).  With
``--measured-step S@DEVICE,GPUS`` (repeatable) the fractions of peak are calibrated on those steps
(same model, sequence length and global batch) first; ``--measured-log`` reads such a step, its batch and
sequence length (and device and GPUs) from an MLPerf MLLOG file or a speedrun log.  Bad input prints
one line on stderr, exit 2.
"""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from core.cli.common import add_option, parse_number, print_csv
from core.devices import DEVICES
from core.errors import InputError
from core.transformer import (
    TENSOR_PRECISIONS,
    Efficiency,
    Measurement,
    calibrate,
    get_accelerator,
    load_config,
    parse_strategy,
    read_log_step,
    step_table,
    with_dp,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", required=True, metavar="FILE|NAME",
                        help="a local Hugging Face config.json (or its folder), or llama31_405b, llama31_8b, "
                             "llama2_70b, nanogpt_speedrun")
    parser.add_argument("--seq-len", required=True, metavar="N", help="tokens per sequence")
    parser.add_argument("--global-batch", required=True, metavar="B", help="sequences per optimizer step")
    parser.add_argument("--device", required=True, metavar="NAME",
                        help=f"a device of the table (core.devices), by key or alias: {', '.join(DEVICES)}")
    parser.add_argument("--gpus", required=True, metavar="N,N,...", help="GPU counts")
    parser.add_argument("--parallel", metavar="dp=..,tp=..,pp=..", help="tp, pp, cp (and mb, vp, zero, recompute) "
                        "kept for every count, dp from the count; default: the fastest strategy that fits")
    parser.add_argument("--gpus-per-node", metavar="N", help="GPUs on one NVLink/xGMI domain (default: the "
                        "device's: 8, or 72 for GB200/GB300)")
    parser.add_argument("--measured-step", action="append", metavar="S@DEVICE,GPUS",
                        help="a measured step time in seconds on GPUS × DEVICE (repeatable)")
    parser.add_argument("--measured-log", action="append", metavar="LOG[@SYSTEM_JSON]",
                        help="calibrate on a log's step time (MLPerf MLLOG: median tracked train_step_time, or run "
                             "time less evaluations per step; speedrun: step_avg), its batch, sequence, device and "
                             "GPUs read from it or from the MLPerf systems JSON given after @ (repeatable)")
    add_option(parser, "--precision", TENSOR_PRECISIONS, default="bf16", help="the peak utilisation is "
                        "counted against; default bf16")
    parser.add_argument("--lora-rank", metavar="R", help="freeze the model, train rank-R adapters")
    parser.add_argument("--lora-targets", default="q,k,v,o", metavar="q,k,v,o,...", help="default: q,k,v,o")


def _ints(flag: str, text: str) -> list[int]:
    values = [parse_number(flag, t.strip(), int, what="whole numbers separated by commas", fix="Give e.g. 8,64")
              for t in text.split(",") if t.strip()]
    if not values or min(values) < 1:
        raise InputError(f"{flag}: expected whole numbers >= 1 separated by commas; got {text!r}. Give e.g. 8,64.")
    return values


def _measurement(text: str, *, cfg, strategy, global_batch: int, seq_len: int, domain):
    seconds, sep, rest = text.partition("@")
    device, sep2, gpus = rest.partition(",")
    if not sep or not sep2:
        raise InputError(f"--measured-step: expected S@DEVICE,GPUS (e.g. 55.1@H100,512); got {text!r}.")
    t = parse_number("--measured-step", seconds, float, fix="Give seconds, e.g. 55.1@H100,512")
    n = parse_number("--measured-step", gpus, int, what="a whole GPU count", fix="Give e.g. 55.1@H100,512")
    if t <= 0 or n < 1:
        raise InputError(f"--measured-step: expected a positive time and GPU count; got {text!r}.")
    acc = get_accelerator(device.strip())
    return Measurement(t, acc, n, global_batch, seq_len, with_dp(strategy, n) if strategy else None,
                       domain, source=f"measured, given on the command line ({text})")


def _log_measurement(text: str, *, strategy, domain):
    log, _, system = text.partition("@")
    step = read_log_step(log, system or None)
    if step.device is None or step.gpus is None:
        raise InputError(f"--measured-log {log}: expected the device and GPU count in the log or a systems JSON; "
                         f"got {'no device' if step.device is None else 'no GPU count'}. Give LOG@SYSTEM_JSON, or "
                         "--measured-step S@DEVICE,GPUS.")
    return Measurement(step.step_time, step.device, step.gpus, step.global_batch, step.seq_len,
                       with_dp(strategy, step.gpus) if strategy else None, domain or step.domain,
                       source=f"measured: {log}, {step.how}")


def run(args: argparse.Namespace) -> int:
    cfg = load_config(args.config)
    if args.lora_rank is not None:
        rank = parse_number("--lora-rank", args.lora_rank, int, what="a whole number", fix="Give e.g. 16")
        cfg = cfg.with_lora(rank, tuple(t.strip() for t in args.lora_targets.split(",") if t.strip()))
    seq_len = _ints("--seq-len", args.seq_len)[0]
    global_batch = _ints("--global-batch", args.global_batch)[0]
    device = get_accelerator(args.device)
    gpus = _ints("--gpus", args.gpus)
    domain = _ints("--gpus-per-node", args.gpus_per_node)[0] if args.gpus_per_node else None
    strategy = parse_strategy(args.parallel) if args.parallel else None
    prior = Efficiency(precision=args.precision)
    calibration = None
    ms = [_measurement(t, cfg=cfg, strategy=strategy, global_batch=global_batch, seq_len=seq_len,
                       domain=domain) for t in args.measured_step or ()]
    ms += [_log_measurement(t, strategy=strategy, domain=domain) for t in args.measured_log or ()]
    if ms:
        calibration = calibrate(cfg, ms, prior=prior)
    rows, notes = step_table(cfg, device, gpus, global_batch=global_batch, seq_len=seq_len, strategy=strategy,
                             domain=domain, calibration=calibration, prior=prior)
    print_csv(pd.DataFrame(rows))
    for note in notes:
        print(f"# {note}", file=sys.stderr)
    return 0
