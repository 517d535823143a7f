"""``python -m core calibrate FITS_CSV [--holdout resnet50] [--target-acc 0.92] [--split train]
[--method NAME|auto] [--loao]``.

Prints one CSV row per held-out run (``model,gpu,method,b0,b1,b2,b0_hat,b1_hat,b2_hat,
epoch_actual,epoch_pred,epoch_pred_low,epoch_pred_high,epoch_error_pct`` then extra columns),
or with ``--loao`` the nested leave-one-architecture-out table (``model,gpu,method,epoch_actual,
epoch_pred,epoch_error_pct`` then ``epoch_pred_low,epoch_pred_high,covered,
inside_calibration_set,outside_reason``): every architecture held out in turn, the method
(``--method auto``) and the interval chosen on the others alone.  A summary (method choice,
loss threshold, interval source, inside/outside the calibration set, MAPEs and coverage) goes
to stderr.  FITS_CSV is the course table or the output of ``python -m core fit``;
``--from-library [FILTER]`` calibrates on the library's runs (all, or those FILTER matches),
fitted for ``--target-acc`` (fits stored in the library and reused), with or instead of it.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import pandas as pd

from core.calibrate import (
    CALIBRATION_METHODS,
    INTERVAL_METHOD,
    NESTED_COLUMNS,
    PREDICTION_COLUMNS,
    SPLITS,
    THRESHOLDS,
    calibrate,
    check_fits_target,
    holdout_outside,
    method_scores,
    nested_loao,
    nested_summary,
    normalise_fits,
    read_fits_table,
    recommend_method,
    unnamed_runs,
)
from core.cli.common import add_library_arguments, add_option, add_target_arguments, complain, fraction, print_csv
from core.errors import InputError
from core.models import DATASETS
from core.targets import target_for


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("fits", nargs="?", default=None, metavar="FITS_CSV",
                        help="course table or `python -m core fit` output (or --from-library)")
    parser.add_argument("--holdout", default="resnet50", help="architecture to predict (default resnet50)")
    add_target_arguments(parser)
    add_option(parser, "--split", SPLITS, default="train", help="the split whose fits are used (default train)")
    add_option(parser, "--method", ("auto", *CALIBRATION_METHODS), default="course", metavar="METHOD",
                        help="regression method; auto = lowest leave-one-architecture-out error "
                             "on the calibration runs among the architecture methods, trend-following "
                             "ones left out when the held-out model lies outside the calibration set "
                             "(default: course)")
    add_option(parser, "--threshold", THRESHOLDS, default="curve",
                        help="how the loss threshold is taken from the calibration runs (default curve)")
    parser.add_argument("--level", type=fraction, default=0.8, help="interval coverage (default 0.8)")
    parser.add_argument("--loao", action="store_true",
                        help="print the nested leave-one-architecture-out table (method and interval chosen "
                             "on the other architectures), with coverage")
    add_option(parser, "--dataset", DATASETS, default=None,
                        help="what the runs trained on, for parameter counts from core.models "
                             "(default: cifar10 for the course table, other for fit tables)")
    add_library_arguments(parser)


def _fits(args: argparse.Namespace) -> pd.DataFrame:
    """The table to calibrate on: FITS_CSV, the library's runs, or both (``InputError`` for neither)."""
    target = target_for(given=args.target)
    frames = []
    if args.fits is not None:
        fits = read_fits_table(args.fits, source=args.fits, dataset=args.dataset)
        check_fits_target(fits, target, args.fits)
        frames.append(fits)
    if args.from_library is not None:
        from core.library import Library, fit_library

        library = fit_library(Library(args.db), args.from_library, target=target)
        complain(f"library: {len(library.table)} run(s), {library.n_fitted} fitted now, {library.n_stored} fitted "
                 "before")
        if len(library.table):
            frames.append(normalise_fits(library.table, source="library", dataset=args.dataset,
                                         target=target, datasets_by_file=library.datasets))
    if not frames:
        raise InputError("calibrate: expected FITS_CSV or --from-library [FILTER]; got neither (or no library run "
                         "matched). Give a fits table or add runs to the library.")
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def run(args: argparse.Namespace) -> int:
    where = args.fits or "library"
    fits = _fits(args)
    unnamed = unnamed_runs(fits)
    if unnamed:   # named and left out: the rest is calibrated, the exit status says input was rejected
        rows = ", ".join(str(i + 2) for i in unnamed[:10]) + (", ..." if len(unnamed) > 10 else "")
        complain(f"{where}: {len(unnamed)} run(s) have no model name (line {rows}); left out. Name the "
                 "architecture (e.g. resnet20) in the model column.")
    if args.loao:
        table = nested_loao(fits, split=args.split, method=args.method, level=args.level,
                            threshold=args.threshold)
        _loao_summary(table, args.method, args.level)
        print_csv(table[list(NESTED_COLUMNS)])
        return 2 if unnamed else 0
    scores = method_scores(fits, split=args.split, holdout=args.holdout, threshold=args.threshold)
    cal = calibrate(fits, holdout=args.holdout, split=args.split, method=args.method, level=args.level,
                    threshold=args.threshold)
    method = cal.method
    best = recommend_method(scores, outside=bool(holdout_outside(fits, args.holdout, split=args.split)))
    mape_of = dict(zip(scores["method"], scores["loao_mape_pct"]))
    complain(f"method: {method} ({CALIBRATION_METHODS[method].description}); recommended by leave-one-architecture-out "
             f"on the calibration runs: {best} ({mape_of[best]:.1f} %), course baseline "
             f"{mape_of.get('course', math.nan):.1f} %" + (f"; {cal.chosen_by}" if cal.chosen_by else ""))
    complain(cal.where())
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


def _loao_summary(table: pd.DataFrame, method: str, level: float) -> None:
    s = nested_summary(table).set_index("model")
    per = ", ".join(f"{m} {r.mape_pct:.1f} % ({r.method}, {_pct(r.coverage)} covered)"
                    for m, r in s.drop(index="all").iterrows())
    total = s.loc["all"]
    complain(f"nested leave-one-architecture-out [{method}]: MAPE {total.mape_pct:.1f} % over {total.n_runs} runs, "
             f"{level:.0%} interval coverage {_pct(total.coverage)}; per architecture: {per}")


def _pct(v: float) -> str:
    return "n/a" if not np.isfinite(v) else f"{100 * v:.0f} %"
