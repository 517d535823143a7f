"""Make data/transformer/achieved_efficiency.csv: how far each GPU architecture runs from its datasheet, measured.

A transformer step transferred from one device to another on datasheet peaks alone assumes both reach the
same fraction of their peak.  MLPerf Training v5.1's Llama 3.1 8B results show they do not: at the same GPU
count, the same global batch and the same benchmark, Blackwell Ultra (B300) runs about 12 % faster than its
BF16/FP8 peaks (the same as B200's) say, and AMD's CDNA4 (MI355X) about 23 % slower than its peaks say.

For each system of that benchmark at 8 GPUs, the transformer model (``core.plan.transformer_from_logs``, the
strategy searched as the product does) is calibrated on the system's own runs; its compute factor is how much
faster than the prior fractions of peak the system ran.  An architecture's **achieved efficiency** is the median
compute factor of its systems over the median of Blackwell's (B200, GB200: the reference, 1).  Architectures
without a system here keep 1 (the datasheet alone).  ``core.transformer.achieved_efficiency`` reads the table;
a transfer from device A to B multiplies the step by ``efficiency(A) / efficiency(B)``.

Needs ../shared/reference/mlperf_v5_llm (MLCommons' results, Apache-2.0); run from the repository root:
``python data/make_achieved_efficiency.py``.
"""

from __future__ import annotations

import csv
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.reference import require_shared  # noqa: E402
from core.logs import read_log_file  # noqa: E402
from core.plan import measured_configurations, transformer_from_logs  # noqa: E402
from core.plan.to_device import log_device  # noqa: E402
from core.transformer import ARCHITECTURES  # noqa: E402

OUT = ROOT / "data" / "transformer" / "achieved_efficiency.csv"
GPUS = 8
REFERENCE = "Blackwell"


def main() -> None:
    root = require_shared("mlperf_v5_llm", "mlperf_v5.1", "llama31_8b", bench="data/make_achieved_efficiency.py")
    by_arch: dict[str, list[tuple[str, float]]] = {}
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        paths = sorted(folder.glob("result_*.txt"))
        logs = [read_log_file(p, source=str(p)) for p in paths]
        measured, _ = measured_configurations(logs)
        if measured.empty or int(measured["w"].iloc[0]) != GPUS:
            continue
        device = log_device(logs[0])
        arch = next((a for a, devices in ARCHITECTURES.items() if device in devices), None)
        if arch is None:
            continue
        model, _ = transformer_from_logs(logs, [str(p) for p in paths], measured, device)
        by_arch.setdefault(arch, []).append((folder.name, model.calibration.compute_factor))
        print(f"{folder.name}: {device} ({arch}), compute factor {model.calibration.compute_factor:.4f}")
    reference = statistics.median(k for _, k in by_arch[REFERENCE])
    with OUT.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["architecture", "efficiency", "systems", "source"])
        for arch in ARCHITECTURES:
            systems = by_arch.get(arch, [])
            value = statistics.median(k for _, k in systems) / reference if systems else 1.0
            source = (f"MLPerf Training v5.1 Llama 3.1 8B at {GPUS} GPUs: median compute factor of "
                      f"{'; '.join(n for n, _ in systems)} over {REFERENCE}'s" if systems
                      else "not measured: the datasheet alone")
            writer.writerow([arch, f"{value:.4f}", len(systems), source])
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
