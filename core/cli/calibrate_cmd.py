"""``python -m core calibrate FITS_CSV [--holdout resnet50] [--target-acc 0.92] [--split train]
[--method NAME|auto] [--loao]``.

Prints one CSV row per held-out run (``model,gpu,method,b0,b1,b2,b0_hat,b1_hat,b2_hat,
epoch_actual,epoch_pred,epoch_pred_low,epoch_pred_high,epoch_error_pct`` then extra columns),
or with ``--loao`` the leave-one-architecture-out table (``model,gpu,method,epoch_actual,
epoch_pred,epoch_error_pct``).  A summary (method choice, loss threshold, interval source,
MAPEs) goes to stderr.  FITS_CSV is the course table or the output of ``python -m core fit``.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import pandas as pd

from core.calibrate import (
    INTERVAL_METHOD,
    METHODS,
    PREDICTION_COLUMNS,
    THRESHOLDS,
    calibrate,
    leave_one_architecture_out,
    loao_summary,
    method_scores,
    read_fits_table,
    recommend_method,
    unnamed_runs,
)
from core.cli.common import complain, fraction, print_csv
from core.errors import InputError, LogFormatError

LOAO_COLUMNS = ["model", "gpu", "method", "epoch_actual", "epoch_pred", "epoch_error_pct"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("fits", metavar="FITS_CSV", help="course table or `python -m core fit` output")
    parser.add_argument("--holdout", default="resnet50", help="architecture to predict (default resnet50)")
    parser.add_argument("--target-acc", type=fraction, default=0.92, help="target the fits were made for")
    parser.add_argument("--split", default="train", choices=["train", "val"])
    parser.add_argument("--method", default="course", choices=["auto", *METHODS],
                        help="regression method; auto = lowest leave-one-architecture-out error "
                             "on the calibration runs (default: course)")
    parser.add_argument("--threshold", default="curve", choices=sorted(THRESHOLDS),
                        help="how the loss threshold is taken from the calibration runs (default curve)")
    parser.add_argument("--level", type=fraction, default=0.8, help="interval coverage (default 0.8)")
    parser.add_argument("--loao", action="store_true", help="print the leave-one-architecture-out table")
    parser.add_argument("--dataset", default=None, choices=["cifar10", "mnist1d", "other"],
                        help="what the runs trained on, for parameter counts from core.models "
                             "(default: cifar10 for the course table, other for fit tables)")


def _check_target(fits: pd.DataFrame, target: float, source: str) -> None:
    recorded = pd.to_numeric(fits["target_acc"], errors="coerce").dropna().unique()
    if len(recorded) and not np.allclose(recorded, target):
        raise InputError(f"{source}: expected fits made for target {target:g}; the table records "
                         f"{', '.join(f'{t:g}' for t in recorded)}. Refit with `python -m core fit "
                         f"--target-acc {target:g}` (the course table only has 0.92).")


def run(args: argparse.Namespace) -> int:
    try:
        fits = read_fits_table(args.fits, source=args.fits, dataset=args.dataset)
        _check_target(fits, args.target_acc, args.fits)
        unnamed = unnamed_runs(fits)
        if unnamed:   # named and left out: the rest is calibrated, the exit status says input was rejected
            rows = ", ".join(str(i + 2) for i in unnamed[:10]) + (", ..." if len(unnamed) > 10 else "")
            complain(f"{args.fits}: {len(unnamed)} run(s) have no model name (line {rows}); left out. Name the "
                     "architecture (e.g. resnet20) in the model column.")
        if args.loao:
            methods = list(METHODS) if args.method == "auto" else [args.method]
            tables = [leave_one_architecture_out(fits, split=args.split, method=m, threshold=args.threshold)
                      for m in methods]
            for table in tables:
                s = loao_summary(table)
                complain(f"{table['method'].iloc[0]}: LOAO MAPE {s['mape_pct'].iloc[-1]:.1f} % over "
                         f"{s['n_runs'].iloc[-1]} runs; per architecture: "
                         + ", ".join(f"{m} {v:.1f} %" for m, v in zip(s["model"][:-1], s["mape_pct"][:-1])))
            print_csv(pd.concat(tables, ignore_index=True)[LOAO_COLUMNS])
            return 2 if unnamed else 0
        scores = method_scores(fits, split=args.split, holdout=args.holdout, threshold=args.threshold)
        method = recommend_method(scores) if args.method == "auto" else args.method
        cal = calibrate(fits, holdout=args.holdout, split=args.split, method=method, level=args.level,
                        threshold=args.threshold)
    except (InputError, LogFormatError) as exc:
        complain(str(exc))
        return 2
    best = recommend_method(scores)
    mape_of = dict(zip(scores["method"], scores["loao_mape_pct"]))
    complain(f"method: {method} ({METHODS[method].description}); recommended by leave-one-architecture-out "
             f"on the calibration runs: {best} ({mape_of[best]:.1f} %), course baseline "
             f"{mape_of.get('course', math.nan):.1f} %")
    if cal.loss_threshold is not None:
        complain(f"loss threshold L = {cal.loss_threshold:.4f} (mean over {cal.threshold_runs} calibration runs: "
                 f"{THRESHOLDS[cal.threshold]})")
    complain(f"{int(cal.level * 100)} % interval: {INTERVAL_METHOD}" + "".join(f"; {n}" for n in cal.notes))
    table = cal.predictions
    extra = [c for c in PREDICTION_COLUMNS if c not in {"model", "gpu", "method", "b0", "b1", "b2", "b0_hat",
                                                        "b1_hat", "b2_hat", "epoch_actual", "epoch_pred",
                                                        "epoch_pred_low", "epoch_pred_high", "epoch_error_pct"}]
    columns = ["model", "gpu", "method", "b0", "b1", "b2", "b0_hat", "b1_hat", "b2_hat", "epoch_actual",
               "epoch_pred", "epoch_pred_low", "epoch_pred_high", "epoch_error_pct", *extra]
    print_csv(table[columns])
    return 2 if unnamed else 0
