"""Benchmark: one Paleo simulation of one net over 8 worker counts.

Usage::

    python bench/paleo.py [--net inception_v3] [--repeat 20]

Prints the median wall time of reading the spec (the baseline) and of simulating the net
for 1, 2, 4, ..., 128 workers, strong scaling (8 different per-worker batches, so 8
forward and backward passes over every layer), in the faithful and the modern mode, and
each time as a ratio to the baseline measured in the same run.  Expect milliseconds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.paleo import NETS_DIR, read_spec_file, simulate

WORKERS = (1, 2, 4, 8, 16, 32, 64, 128)


def _median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--net", default="inception_v3", help="a spec in data/paleo/nets/")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    path = NETS_DIR / f"{args.net}.json"
    net = read_spec_file(path)

    read_ms = _median_ms(lambda: read_spec_file(path), args.repeat)
    runs = {
        "simulate, faithful": lambda: simulate(net, device="K40", network="ethernet",
                                               batch_size=256, workers=WORKERS,
                                               scaling="strong", paleo_compatible=True),
        "simulate, modern": lambda: simulate(net, device="A100", network="infiniband_hdr",
                                             batch_size=256, workers=WORKERS,
                                             scaling="strong"),
    }
    print(f"net {net.name}: {len(net.layers)} layers; {len(WORKERS)} worker counts "
          f"{WORKERS[0]}..{WORKERS[-1]}, strong scaling, batch 256; median of {args.repeat}")
    print(f"{'read spec (baseline)':24s} {read_ms:9.3f} ms   x 1.00")
    for label, fn in runs.items():
        ms = _median_ms(fn, args.repeat)
        print(f"{label:24s} {ms:9.3f} ms   x {ms / read_ms:.2f} of reading the spec")


if __name__ == "__main__":
    main()
