"""Print the calibration figures quoted in docs/calibrate.md (course table, train split).

Usage: ``python bench/calibration_report.py [--holdout resnet50] [--threshold curve]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.calibrate import (
    CALIBRATION_METHODS,
    calibrate,
    hardware_independence,
    leave_one_architecture_out,
    mape,
    method_scores,
    read_fits_table,
    recommend_method,
)
from core.datasets import course_fits_path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--holdout", default="resnet50")
    ap.add_argument("--threshold", default="curve")
    args = ap.parse_args()
    fits = read_fits_table(course_fits_path())
    scores = method_scores(fits, holdout=args.holdout, threshold=args.threshold).set_index("method")
    best = recommend_method(scores.reset_index())
    print(f"holdout {args.holdout}, threshold {args.threshold}; recommended: {best}")
    print("| method | LOAO MAPE (calibration runs) | LOAO MAPE (all) | held-out error per GPU |")
    for m in CALIBRATION_METHODS:
        all_loao = mape(leave_one_architecture_out(fits, method=m, threshold=args.threshold))
        cal = calibrate(fits, holdout=args.holdout, method=m, threshold=args.threshold)
        errs = " / ".join(f"{e:+.0f} %" for e in cal.predictions["epoch_error_pct"])
        gpus = " / ".join(cal.predictions["gpu"])
        print(f"| {m} | {scores.loc[m, 'loao_mape_pct']:.1f} % | {all_loao:.1f} % | {errs} |")
    print("GPUs:", gpus)
    hw = hardware_independence(fits)
    print(hw.sentence)


if __name__ == "__main__":
    main()
