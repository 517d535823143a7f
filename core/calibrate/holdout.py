"""Predict an architecture from the others: a held-out one of the table, or one the table lacks.

:func:`calibrate` predicts every run of ``holdout`` (one per GPU) from the other
architectures; with ``query`` rows (:func:`query_rows`) it predicts an architecture that has no
row in the table at all (a new model: the Logs page's prior, ``python -m core predict``).  Either
way the held-out architecture's own rows are removed first and never read: not for the fit,
the loss threshold, the method choice, the interval or the "outside" flags.

``method="auto"`` chooses among ``AUTO_METHODS`` by leave-one-architecture-out MAPE on the
calibration runs (``core.calibrate.evaluate.recommend_method``), without trend-following
methods when the architecture lies outside the calibration set; ``Calibration.chosen_by``
says so.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from core.calibrate.evaluate import (
    PREDICTION_COLUMNS,
    Calibration,
    epochs_from_steps,
    error_pct,
    leave_one_architecture_out,
    loss_threshold,
    method_scores,
    predict_holdout_rows,
    recommend_method,
)
from core.calibrate.limits import FeatureSpace, conformal_interval, outside_reasons
from core.calibrate.methods import AUTO_METHODS, CALIBRATION_METHODS, PARAM_TARGETS, check_method
from core.calibrate.table import CALIBRATION_COLUMNS, architectures, check_holdout, excluded_rows, usable
from core.defaults import DEFAULT_LEVEL
from core.errors import InputError
from core.logs import depth_of, gpu_short_name


def query_rows(model: str, *, gpus: tuple[str, ...] = ("unknown",), dataset: str = "other",
               steps_per_epoch: float = math.nan, split: str = "train") -> pd.DataFrame:
    """Calibration-frame rows for an architecture that has none (nothing measured: actuals NaN).

    >>> q = query_rows("resnet50", gpus=("V100",), dataset="cifar10", steps_per_epoch=391)
    >>> q[["model", "depth", "gpu_short", "steps_per_epoch"]].values.tolist()
    [['resnet50', 50.0, 'V100', 391.0]]
    """
    rows = pd.DataFrame({"model": model, "gpu": list(gpus), "split": split, "steps_per_epoch": float(steps_per_epoch),
                         "dataset": dataset, "source": "query", "excluded": ""})
    for col in ("b0", "b1", "b2", "step_to_target", "epoch_to_target", "loss_at_target", "target_acc"):
        rows[col] = math.nan
    rows["target_spec"] = None
    depth = depth_of(model)
    rows["depth"] = float(depth) if depth is not None else math.nan
    rows["gpu_short"] = [gpu_short_name(g) for g in rows["gpu"]]
    return rows[list(CALIBRATION_COLUMNS)]


def holdout_outside(fits: pd.DataFrame, holdout: str, *, split: str = "train",
                    query: pd.DataFrame | None = None) -> tuple[str, ...]:
    """Why ``holdout`` (or ``query``) lies outside the calibration set of ``fits`` (empty: inside)."""
    rows = usable(fits, split=split)
    test = query if query is not None else rows[rows["model"] == holdout]
    if test.empty:
        return ()
    return outside_reasons(rows[rows["model"] != holdout], test)


def calibrate(fits: pd.DataFrame, *, holdout: str = "resnet50", split: str = "train",
              method: str = "course", level: float = DEFAULT_LEVEL, threshold: str = "curve",
              query: pd.DataFrame | None = None) -> Calibration:
    """Predict every run of ``holdout`` (one per GPU) from the other architectures.

    Parameters
    ----------
    fits : DataFrame
        The calibration frame (``core.calibrate.table.normalise_fits``).
    holdout : str
        Architecture to predict; its runs are never used for anything but the comparison.
    split : {"train", "val"}
    method : str
        A key of ``CALIBRATION_METHODS``, or ``"auto"`` (module docstring).
    level : float
        Coverage of the interval (default 80 %).
    threshold : {"curve", "measured"}
        How the loss threshold L is taken from the calibration runs (``THRESHOLDS``).
    query : DataFrame, optional
        Rows to predict instead of the table's rows of ``holdout`` (:func:`query_rows`): an
        architecture the table lacks (its actuals are NaN).  Rows of ``holdout`` in the table
        are still removed first.

    Examples
    --------
    >>> from core.calibrate.table import read_fits_table
    >>> from core.datasets import course_fits_path
    >>> cal = calibrate(read_fits_table(course_fits_path()), holdout="resnet50", method="auto")
    >>> cal.method, cal.inside, cal.predictions["epoch_pred"].tolist()
    ('arch-kernel', False, [28.0, 28.0, 28.0])
    >>> cal.outside[-1]
    'block type bottleneck not among the calibration architectures (basic)'
    """
    if method != "auto":
        check_method(method)
    rows = usable(fits, split=split)
    if query is None:
        check_holdout(fits, holdout)
        test = rows[rows["model"] == holdout]
        if test.empty:
            raise InputError(f"holdout: {holdout!r} has no usable run in split {split!r} (excluded: "
                             f"{'; '.join(excluded_rows(fits, split=split).query('model == @holdout')['excluded'])}).")
    else:
        test = query.reset_index(drop=True)
    train = rows[rows["model"] != holdout]
    outside = outside_reasons(train, test) if len(train) else ()
    chosen_by = ""
    if method == "auto":
        scores = method_scores(fits, split=split, holdout=holdout, methods=AUTO_METHODS, threshold=threshold)
        method = recommend_method(scores, outside=bool(outside))
        mape_of = dict(zip(scores["method"], scores["loao_mape_pct"]))
        pool = [m for m in AUTO_METHODS if not (outside and CALIBRATION_METHODS[m].trend)]
        chosen_by = (f"auto: the lowest leave-one-architecture-out error on the calibration runs among "
                     f"{', '.join(pool)} ({mape_of.get(method, math.nan):.1f} %)"
                     + ("; trend-following methods left out because the architecture lies outside the "
                        "calibration set" if outside else ""))
    pred = predict_holdout_rows(method, train, test, threshold=threshold)
    notes: list[str] = []
    L, n_L = (loss_threshold(train, threshold=threshold) if CALIBRATION_METHODS[method].route == "params"
              else (None, 0))
    residuals, difficulty, distance, mean_distance = _residuals(fits, holdout, train, test, split, method,
                                                                 threshold, notes)
    q = conformal_interval(np.array(residuals), np.array(difficulty), level) if residuals else math.inf
    scale = 1.0 + distance / mean_distance if mean_distance > 0 and math.isfinite(distance) else 1.0
    if math.isfinite(q):
        pred["step_pred_low"] = pred["step_pred"] * math.exp(-q * scale)
        pred["step_pred_high"] = pred["step_pred"] * math.exp(q * scale)
    else:
        pred["step_pred_low"] = pred["step_pred_high"] = np.nan
        if residuals:
            notes.append(f"no interval: only {len(residuals)} leave-one-architecture-out residuals (a "
                         f"{level:.0%} interval needs at least {math.ceil(level / (1 - level))})")
    _finish(pred)
    return Calibration(holdout=holdout, split=split, method=method, route=CALIBRATION_METHODS[method].route,
                       loss_threshold=L, threshold_runs=n_L, threshold=threshold, level=level,
                       predictions=pred.reset_index(drop=True), excluded=excluded_rows(fits, split=split),
                       residuals=tuple(residuals), notes=tuple(notes), outside=outside, distance=distance,
                       mean_distance=mean_distance, interval_q=q, chosen_by=chosen_by,
                       architectures=tuple(architectures(train)))


def _residuals(fits, holdout, train, test, split, method, threshold, notes):
    """LOAO residuals ``ln(actual/pred)`` of ``method`` on the calibration runs, each run's difficulty
    ``1 + d_i/d̄``, the held-out distance ``d`` and ``d̄``."""
    try:
        loao = leave_one_architecture_out(fits, split=split, method=method, exclude=holdout, threshold=threshold)
    except InputError as exc:
        notes.append(f"no interval: {exc}")
        return [], [], math.nan, math.nan
    space = FeatureSpace.of(train)
    distance = float(space.nearest_distance(test.iloc[:1], train)[0])
    inner = space.distances_to_other_architectures(train)
    r = np.log(loao["step_actual"].to_numpy(float) / loao["step_pred"].to_numpy(float))
    d = np.array([inner.get(m, math.nan) for m in loao["model"]])
    ok = np.isfinite(r) & np.isfinite(d)
    r, d = r[ok], d[ok]
    mean_d = float(d.mean()) if d.size else math.nan
    difficulty = 1.0 + d / mean_d if d.size and mean_d > 0 else np.ones(d.size)
    return [float(x) for x in r], [float(x) for x in difficulty], distance, mean_d


def _finish(pred: pd.DataFrame) -> None:
    spe = pred["steps_per_epoch"].to_numpy(float)
    pred["epoch_pred_low"] = epochs_from_steps(pred["step_pred_low"].to_numpy(float), spe)
    pred["epoch_pred_high"] = epochs_from_steps(pred["step_pred_high"].to_numpy(float), spe)
    pred["epoch_actual"] = pred["epoch_to_target"]
    pred["step_actual"] = pred["step_to_target"]
    pred["epoch_error_pct"] = error_pct(pred["epoch_pred"], pred["epoch_actual"])
    for p in PARAM_TARGETS:
        pred[f"{p}_error_pct"] = error_pct(pred[f"{p}_hat"], pred[p])
    for col in PREDICTION_COLUMNS:
        if col not in pred:
            pred[col] = np.nan
