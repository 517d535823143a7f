"""``plan --from-logs`` against measured MLPerf times: strong scaling leave one size out, and across GPU types.

1. **Strong scaling** (issue 33, measure 1), every shared series with three or more GPU counts: Llama 3.1 8B on
   GB200 (MLPerf Training v5.1, NVIDIA tyche: 8, 72, 512) and Llama 3.1 405B on H100 (v5.0, NVIDIA eos-dfw: 512,
   2,048, 8,192).  Each size is planned at its own global batch from the logs of the other two, by
   ``core.plan.plan_from_logs`` with ``model="auto"`` (what the CLI prints), and compared with the measured time
   to train (``run_stop − run_start``, median of the size's runs); the 80 % interval is checked to cover it.
   Baseline in the same run: the ``overhead`` family (``t = θ0·M/w + θ1``, what the fit of two sizes was before),
   same samples source.
2. **Across GPU types at the same count** (measure 2), every pair of systems of the same round and benchmark at
   the same GPU count: the target's time planned from the source's logs with the transformer model on the
   target device (``--to-device``), at the target's own batch; with the achieved-efficiency table
   (``data/transformer/achieved_efficiency.csv``, fitted on these same runs: in sample), with its factors refitted
   without the pair's two systems (out of sample), with the datasheet alone, and the baseline: the ratio of
   datasheet peaks (BF16 dense, the one device table) applied to the source's measured step.

Reads ``../shared/reference/mlperf_v5_llm`` (a benchmark may; the product and its tests never do); stops with a
message where it is absent.  Usage: ``python bench/plan_from_logs.py``.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
from itertools import permutations
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.reference import SHARED, require_shared
from core.errors import PlannerError
from core.logs import read_log_file
from core.plan import measured_configurations, plan_from_logs, transformer_from_logs
from core.plan.to_device import systems_json_for
from core.speed import transformer as speed_transformer
from core.transformer import ARCHITECTURES, accelerator_from_text, achieved, get_accelerator, read_log_step

LLM = SHARED / "mlperf_v5_llm"


def _logs(folders: list[Path]):
    return [read_log_file(p, source=str(p)) for f in folders for p in sorted(f.glob("result_*.txt"))]


def strong_scaling(label: str, folders: list[Path]) -> list[tuple[float, bool, float]]:
    logs = _logs(folders)
    sizes = sorted({lg.meta.n_devices for lg in logs})
    print(f"\n{label}: GPU counts {sizes}")
    print("| planned | fitted on | global batch | speed model | samples from | planned (80 % interval) | measured "
          "(median) | error | covered | overhead family (baseline) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    out = []
    for held in sizes:
        train = [lg for lg in logs if lg.meta.n_devices != held]
        test = [lg for lg in logs if lg.meta.n_devices == held]
        batch = float(test[0].meta.global_batch)
        paths = [lg.source for lg in train]
        row = plan_from_logs(train, [held], global_batch=batch, paths=paths).table.iloc[0]
        base = plan_from_logs(train, [held], global_batch=batch, paths=paths, model="overhead").table.iloc[0]
        measured = float(np.median([lg.meta.run_time_s for lg in test]))
        err, base_err = row["time_s"] / measured - 1, base["time_s"] / measured - 1
        covered = bool(row["time_low"] <= measured <= row["time_high"])
        out.append((err, covered, base_err))
        others = ", ".join(f"{s:,}" for s in sorted({lg.meta.n_devices for lg in train}))
        print(f"| {held:,} | {others} | {batch:,.0f} | {row['speed_model']} | {row['samples_source']} | "
              f"{row['time_s'] / 60:.1f} min ({row['time_low'] / 60:.1f}–{row['time_high'] / 60:.1f}) | "
              f"{measured / 60:.1f} min | {100 * err:+.1f} % | {'yes' if covered else 'no'} | "
              f"{100 * base_err:+.1f} % |")
    return out


def _device_and_peak(log):
    step = read_log_step(log.source, systems_json_for(log.source))
    device = step.device or accelerator_from_text(log.meta.accelerator or "")
    return device


def _compute_factors(systems) -> dict[str, tuple[str, float]]:
    """Each system's calibrated compute factor on its own device, by folder name (what
    data/make_achieved_efficiency.py takes the medians of)."""
    out = {}
    for (gpus, device), entries in systems.items():
        if gpus != 8:                  # the table compares systems at 8 GPUs, as its maker does
            continue
        for name, logs in entries:
            measured, _ = measured_configurations(logs)
            model, _ = transformer_from_logs(logs, [lg.source for lg in logs], measured, device)
            out[name] = (device, model.calibration.compute_factor)
    return out


def _refitted(factors: dict[str, tuple[str, float]], leave: set[str]) -> dict[str, float]:
    """Each architecture's achieved efficiency from the systems not in ``leave``, as
    data/make_achieved_efficiency.py computes it (median over Blackwell's); an architecture with none left is
    absent (the datasheet alone)."""
    def arch(d):
        return next((a for a, devices in ARCHITECTURES.items() if d in devices), None)

    kept = [(arch(d), k) for n, (d, k) in factors.items() if n not in leave and arch(d)]
    ref = [k for a, k in kept if a == "Blackwell"]
    return {a: float(np.median([k for b, k in kept if b == a]) / np.median(ref)) for a in dict.fromkeys(
        a for a, _ in kept)} if ref else {}


@contextlib.contextmanager
def efficiency_table(values: dict[str, float]):
    """Plan with these achieved efficiencies (architecture -> factor; others 1) instead of the stored table."""
    saved = achieved.TABLE
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "achieved_efficiency.csv"
        rows = "".join(f"{a},{v:.6f},0,refitted for this check\n" for a, v in values.items())
        path.write_text("architecture,efficiency,systems,source\n" + rows, encoding="utf-8")
        achieved.TABLE = path
        achieved._table.cache_clear()
        speed_transformer._predict.cache_clear()
        try:
            yield
        finally:
            achieved.TABLE = saved
            achieved._table.cache_clear()
            speed_transformer._predict.cache_clear()


def across_types(root: Path, benchmark: str) -> list[tuple[float, float, float, float]]:
    systems: dict[tuple[int, str], list] = {}
    for folder in sorted((root / benchmark).iterdir()):
        logs = _logs([folder])
        measured, _ = measured_configurations(logs)
        if measured.empty:
            continue
        device = _device_and_peak(logs[0])
        if device is None:
            continue
        systems.setdefault((int(logs[0].meta.n_devices), device.name), []).append((folder.name, logs))
    factors = _compute_factors(systems)
    print(f"\n{root.name} {benchmark}: pairs of systems at the same GPU count, different GPU types; the planned time "
          "(transformer model, --to-device) with the achieved-efficiency table (in sample: its factors come from "
          "these runs), with the factors refitted without the pair's two systems (out of sample), and with the "
          "datasheet alone")
    print("| GPUs | from | to | measured | in sample | out of sample | datasheet alone | peak ratio (baseline) |")
    print("|---|---|---|---|---|---|---|---|")
    out = []
    for (n_a, dev_a), (n_b, dev_b) in permutations(systems, 2):
        if n_a != n_b or dev_a == dev_b:
            continue
        src_name, src = systems[(n_a, dev_a)][0]
        dst_name, dst = systems[(n_b, dev_b)][0]
        batch = float(dst[0].meta.global_batch)
        paths = [lg.source for lg in src]
        try:
            row = plan_from_logs(src, [n_b], global_batch=batch, device=dev_b, paths=paths).table.iloc[0]
        except PlannerError as err:
            print(f"| {n_a} | {dev_a} | {dev_b} | refused: {err} | | | | |")
            continue
        measured = float(np.median([lg.meta.run_time_s for lg in dst]))
        with efficiency_table(_refitted(factors, {src_name, dst_name})):
            oos = plan_from_logs(src, [n_b], global_batch=batch, device=dev_b, paths=paths).table["time_s"].iloc[0]
        with efficiency_table({}):
            sheet = plan_from_logs(src, [n_b], global_batch=batch, device=dev_b, paths=paths).table["time_s"].iloc[0]
        src_meas, _ = measured_configurations(src)
        peak = get_accelerator(dev_a).peak_flops("bf16") / get_accelerator(dev_b).peak_flops("bf16")
        # the source's step, its per-GPU work scaled to the target's batch, on the target's datasheet peak
        base_step = float(np.median(src_meas["step_time_s"] / src_meas["global_batch"])) * batch * peak
        base = row["time_s"] / row["step_time_s"] * base_step
        errs = (row["time_s"] / measured - 1, oos / measured - 1, sheet / measured - 1, base / measured - 1)
        out.append(errs)
        print(f"| {n_a} | {dev_a} ({src_name}) | {dev_b} ({dst_name}) | {measured / 60:.1f} min | "
              + " | ".join(f"{100 * e:+.1f} %" for e in errs) + " |")
    return out


def main() -> None:
    require_shared("mlperf_v5_llm", bench="bench/plan_from_logs.py")
    root8 = LLM / "mlperf_v5.1" / "llama31_8b"
    root405 = LLM / "mlperf_v5.0" / "llama31_405b"
    strong = strong_scaling("Llama 3.1 8B, GB200 (v5.1)",
                            [root8 / f"NVIDIA__tyche_ngpu{n}_ngc25.09_nemo" for n in (8, 72, 512)])
    strong += strong_scaling("Llama 3.1 405B, H100 (v5.0)",
                             [root405 / f"NVIDIA__eos-dfw_n{n}_ngc25.01_nemo" for n in (64, 256, 1024)])
    errs = np.abs([e for e, _, _ in strong])
    base = np.abs([b for _, _, b in strong])
    print(f"\nstrong scaling, leave one size out ({len(strong)} cases): median |error| {100 * np.median(errs):.1f} %, "
          f"max {100 * errs.max():.1f} %, within 10 %: {int(np.sum(errs <= 0.10))} of {len(errs)}, 80 % intervals "
          f"covering: {sum(c for _, c, _ in strong)} of {len(strong)}; overhead family (baseline): median "
          f"{100 * np.median(base):.1f} %, max {100 * base.max():.1f} % (ratio of medians "
          f"{np.median(errs) / np.median(base):.2f})")
    pairs = across_types(LLM / "mlperf_v5.1", "llama31_8b")
    if pairs:
        for i, label in enumerate(("in sample (the table's factors come from these runs: not a validation)",
                                   "out of sample (factors refitted without the pair's two systems)",
                                   "datasheet alone (before issue 33's table)", "peak ratio (baseline)")):
            e = np.abs([p[i] for p in pairs])
            print(f"across GPU types, {label}: {len(e)} directed pairs, median |error| {100 * np.median(e):.1f} %, "
                  f"max {100 * e.max():.1f} %, within 20 %: {int(np.sum(e <= 0.20))} of {len(e)}")


if __name__ == "__main__":
    main()
