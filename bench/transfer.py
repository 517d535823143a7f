"""The GPU transfer checked against real runs, and the per-layer model against this machine's CPU.

Usage::

    python bench/transfer.py [--mlperf DIR] [--steps 10] [--skip-profile]

Prints, from numbers measured in this one run:

1. MLPerf Training v3.0 ResNet-50 (``../shared/reference/mlperf_v3.0_resnet50``): the steady
   per-GPU throughput of the Dell R750xa (4 x A100 PCIe 80GB) and NVIDIA DGX H100 (8 x H100
   SXM5) runs; calibrated on one system, the other's predicted throughput, the error of the
   predicted ratio (goal: within 15 %) and the interval; beside it what the datasheet's tensor
   peaks alone, the memory bandwidths alone, and Paleo's one-PPP model say;
2. how that error moves with the roofline's prior efficiencies (the calibration fixes their
   scale, not their ratio) and with the ``sum`` form;
3. a ResNet-20 training step (batch 32, FP32, one thread) profiled layer by layer on this
   machine's CPU with torch.profiler, beside the calibrated roofline and Paleo: the share of
   the step each puts on the wrong layers, per kind of layer.

No GPU was lent to the session that wrote this: step 3 runs on the CPU only (``--device
cuda`` of ``python -m core profile`` is the GPU path, untested).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.reference import SHARED
from core.paleo import (
    DEFAULT_EFFICIENCIES,
    Efficiencies,
    check_transfer,
    compare_profile,
    load_net,
    load_workload,
    measure_profile,
    read_mlperf_throughput,
    workload_from_net,
)

ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = {"A100_PCIE_80GB": "Dell/R750xax4A100-PCIE-80GB", "H100_SXM": "NVIDIA/dgxh100_ngc23.04_mxnet"}


def _runs(folder: Path):
    return [read_mlperf_throughput(p.read_bytes(), f"{folder.name}/{p.name}")
            for p in sorted(folder.glob("result_*.txt"))]


def mlperf_section(logs: Path, workload, paleo_workload) -> None:
    print("== MLPerf Training v3.0, ResNet-50, FP16 (steady = median of the epochs after the first)")
    runs = {gpu: _runs(logs / folder) for gpu, folder in SYSTEMS.items()}
    for gpu, rs in runs.items():
        for r in rs:
            with_first = statistics.fmean(r.epochs_img_s) / r.n_accelerators
            print(f"{r.source:45s} {gpu:15s} {r.n_accelerators} GPUs x batch {r.local_batch}: steady "
                  f"{r.per_accelerator_img_s:8.1f} img/s per GPU (mean with the first epoch {with_first:7.1f}); "
                  f"step {r.step_time_s * 1e3:6.1f} ms")
    print()
    print(f"{'calibrated on':15s} {'predict':15s} {'measured':>9s} {'predicted':>9s} {'interval':>19s} "
          f"{'ratio':>6s} {'pred.':>6s} {'error':>7s} | {'peaks':>7s} {'bandw.':>7s} {'Paleo':>7s}")
    checks = {}
    for source, target in (("A100_PCIE_80GB", "H100_SXM"), ("H100_SXM", "A100_PCIE_80GB")):
        c = check_transfer(runs[source], runs[target], workload, paleo_workload, source=source, target=target)
        checks[(source, target)] = c
        inside = "in" if c.predicted_low <= c.target_img_s <= c.predicted_high else "OUT"
        print(f"{source:15s} {target:15s} {c.target_img_s:9.1f} {c.predicted_img_s:9.1f} "
              f"[{c.predicted_low:7.1f}, {c.predicted_high:7.1f}]{inside:>3s} {c.measured_ratio:6.3f} "
              f"{c.predicted_ratio:6.3f} {c.error(c.predicted_ratio):+7.1%} | {c.error(c.peak_ratio):+7.1%} "
              f"{c.error(c.bandwidth_ratio):+7.1%} {c.error(c.paleo_ratio):+7.1%}")
    c = checks[("A100_PCIE_80GB", "H100_SXM")]
    eff = c.calibration.efficiencies.to_dict()
    print(f"calibrated on the A100 PCIe: common factor {c.calibration.factors[0][1]:.3f} on the prior; conv at "
          f"{eff['compute']['conv']:.1%} of 312 TFLOP/s, streaming ops at {eff['memory']['norm']:.1%} of 1935 GB/s; "
          f"{c.calibration.measurements[0].compute_bound_share:.0%} of the A100 step compute-bound")
    print("(peaks: ratio of dense FP16 tensor peaks; bandw.: ratio of memory bandwidths; Paleo: its layer list, "
          "compute + memory per layer, one PPP, FP16 peaks and bytes)")
    return runs


def sensitivity_section(runs, workload, paleo_workload) -> None:
    print()
    print("== error of the A100 -> H100 ratio against the prior efficiencies (rows: conv compute; columns: memory)")
    memories = (0.6, 0.7, 0.8, 0.9)
    print("conv \\ memory " + " ".join(f"{m:>7.1f}" for m in memories))
    errors = []
    for conv in (0.4, 0.5, 0.6, 0.7, 0.8):
        row = []
        for mem in memories:
            prior = Efficiencies((conv, min(1.0, conv + 0.1), 0.5, 0.5, 0.5), (mem,) * 5)
            c = _check(runs, workload, paleo_workload, prior=prior)
            row.append(c.error(c.predicted_ratio))
        errors += row
        print(f"{conv:>14.1f} " + " ".join(f"{e:+7.1%}" for e in row))
    print(f"over this grid: {min(errors):+.1%} to {max(errors):+.1%}; within 15 % in "
          f"{sum(abs(e) <= 0.15 for e in errors)} of {len(errors)}")
    c = _check(runs, workload, paleo_workload, form="sum")
    print(f"form 'sum' (compute + memory per op) at the default prior: {c.error(c.predicted_ratio):+.1%}")


def _check(runs, workload, paleo_workload, *, prior: Efficiencies = DEFAULT_EFFICIENCIES, form: str = "max"):
    return check_transfer(runs["A100_PCIE_80GB"], runs["H100_SXM"], workload, paleo_workload,
                          source="A100_PCIE_80GB", target="H100_SXM", prior=prior, form=form)


def profile_section(steps: int) -> None:
    print()
    print(f"== ResNet-20, batch 32, FP32, 1 thread: torch.profiler on this CPU ({steps} steps) vs the estimates")
    start = time.perf_counter()
    profile = measure_profile("torch:resnet20", batch_size=32, steps=steps, warmup=3, threads=1)
    measured_s = time.perf_counter() - start
    cmp = compare_profile(profile, load_workload(profile.net), load_net(profile.net))
    print(f"{profile.device_label}: step {profile.step_time_s * 1e3:.1f} ms (median, no profiler), profiled step "
          f"{profile.profiled_step_s * 1e3:.1f} ms, {profile.attributed_s * 1e3:.1f} ms of it in layers; "
          f"{profile.roof.source}; measured in {measured_s:.1f} s")
    print(f"time put on the wrong layers: roofline {cmp.misplaced_share['roofline']:.1%}, "
          f"Paleo {cmp.misplaced_share['paleo']:.1%} (both calibrated on the measured layers' total; "
          f"Paleo PPP {cmp.ppp_comp:.3f}, roofline factor {cmp.calibration.factors[0][1]:.3f})")
    kinds = cmp.by_kind()
    total = kinds.measured_ms.sum()
    print(f"{'kind':12s} {'measured':>9s} {'roofline':>9s} {'Paleo':>9s}   (ms per step; share of the measured)")
    for r in kinds.itertuples():
        print(f"{r.kind:12s} {r.measured_ms:9.2f} {r.roofline_ms:9.2f} {r.paleo_ms:9.2f}   "
              f"{r.measured_ms / total:6.1%} {r.roofline_ms / total:6.1%} {r.paleo_ms / total:6.1%}")
    frame = cmp.to_frame()
    frame = frame[frame.layer != "(not attributed)"].nlargest(5, "measured_ms")
    print("slowest layers:        measured  roofline     Paleo (ms)")
    for r in frame.itertuples():
        print(f"  {r.layer:20s} {r.measured_ms:9.2f} {r.roofline_ms:9.2f} {r.paleo_ms:9.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mlperf", type=Path, default=SHARED / "mlperf_v3.0_resnet50",
                        help="the MLPerf v3.0 ResNet-50 logs (default: ../shared/reference)")
    parser.add_argument("--steps", type=int, default=10, help="profiled steps on the CPU")
    parser.add_argument("--skip-profile", action="store_true")
    args = parser.parse_args()
    if not args.mlperf.is_dir():
        raise SystemExit(f"bench/transfer.py needs the MLPerf v3.0 ResNet-50 logs (../shared/reference/"
                         f"mlperf_v3.0_resnet50, not part of a clone, or --mlperf DIR); not found at {args.mlperf}. "
                         "Nothing measured.")
    start = time.perf_counter()
    workload = load_workload("torch:resnet50")
    paleo_workload = workload_from_net(load_net("torch:resnet50"), free_layers=False)
    print(f"torch:resnet50 traced: {len(workload.ops)} aten ops per training step, "
          f"{workload.flops(1) / 1e9:.2f} GFLOP per image (2 per multiply-add), in "
          f"{time.perf_counter() - start:.1f} s")
    runs = mlperf_section(args.mlperf, workload, paleo_workload)
    sensitivity_section(runs, workload, paleo_workload)
    if not args.skip_profile:
        profile_section(args.steps)


if __name__ == "__main__":
    main()
