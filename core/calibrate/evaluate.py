"""Leave-one-architecture-out errors, method scores and choice, and the ``Calibration`` result.

``core.calibrate.holdout`` makes a ``Calibration`` (the prediction of a held-out or unseen
architecture); ``core.calibrate.nested`` scores the whole procedure, method choice included.

Rules that keep the numbers honest:

* The loss threshold L ("target reached") is the mean loss at which the runs the method
  learns from first passed the target - never the held-out runs'.  ``threshold="curve"``
  (default) takes each run's *fitted* loss at its target step, ``l_i(k_i)``, so that every
  calibration curve passes through its own crossing; ``threshold="measured"`` averages the
  logged loss there (the course's choice: on per-step logs a single noisy batch, which
  biases L low and the predicted step high).
* The method the page recommends (``method="auto"``) is the one of ``AUTO_METHODS`` with the
  lowest leave-one-architecture-out error on the calibration runs alone (the held-out
  architecture is removed first).  When the held-out architecture lies **outside** the
  calibration set (``core.calibrate.limits.outside_reasons``), only methods that do not
  follow a trend beyond the data compete: a trend that held between the calibration
  architectures is exactly what cannot be checked where none of them is.
* Intervals come from the leave-one-architecture-out residuals ``log(actual/predicted)``
  of the same method on the calibration runs, weighted by the distance from the
  calibration set (``core.calibrate.limits``, ``INTERVAL_METHOD``).
* A prediction that never reaches L counts as a 100 % error when methods are scored.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core.calibrate.limits import INTERVAL_METHOD
from core.calibrate.methods import AUTO_METHODS, CALIBRATION_METHODS, PARAM_TARGETS, check_method, fit_predict
from core.calibrate.table import architectures, usable
from core.curves import optimus_loss, optimus_step_at_loss
from core.defaults import DEFAULT_LEVEL
from core.errors import InputError
from core.validation import check_option

#: error counted for a prediction that never reaches the loss threshold
UNREACHABLE_ERROR_PCT = 100.0
PREDICTION_COLUMNS = ("model", "gpu", "method", "route", "b0", "b1", "b2", "b0_hat", "b1_hat", "b2_hat",
                      "b0_error_pct", "b1_error_pct", "b2_error_pct", "epoch_actual", "epoch_pred",
                      "epoch_pred_low", "epoch_pred_high", "epoch_error_pct", "step_actual", "step_pred",
                      "step_pred_low", "step_pred_high", "steps_per_epoch", "note")


THRESHOLDS = {"curve": "mean of each calibration run's fitted loss at the step where it passed the target",
              "measured": "mean of the logged loss where each calibration run passed the target (course)"}


def loss_threshold(rows: pd.DataFrame, *, threshold: str = "curve") -> tuple[float, int]:
    """Mean loss at which ``rows`` first passed the target, and how many runs it averages.

    >>> rows = pd.DataFrame({"b0": [0.001], "b1": [1.0], "b2": [0.1], "step_to_target": [1000.0],
    ...                      "loss_at_target": [0.55]})
    >>> loss_threshold(rows)            # 1/(0.001*1000 + 1) + 0.1 = 0.6
    (0.6, 1)
    >>> loss_threshold(rows, threshold="measured")
    (0.55, 1)
    """
    check_option(threshold, "threshold", THRESHOLDS)
    if threshold == "curve":
        k = rows["step_to_target"].to_numpy(dtype=float)
        values = optimus_loss(k, rows["b0"].to_numpy(float), rows["b1"].to_numpy(float), rows["b2"].to_numpy(float))
    else:
        values = rows["loss_at_target"].to_numpy(dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        raise InputError("calibration: expected runs that reached the target (to set the loss "
                         "threshold); none of the calibration runs did.")
    return float(values.mean()), int(values.size)


def epochs_from_steps(steps: np.ndarray, spe: np.ndarray) -> np.ndarray:
    """Whole epochs (at least 1) that ``steps`` take at ``spe`` steps per epoch; NaN where a step is not finite."""
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(steps), np.maximum(1, np.ceil(steps / spe)), np.nan)


def predict_holdout_rows(method: str, train: pd.DataFrame, test: pd.DataFrame, *,
                         threshold: str = "curve") -> pd.DataFrame:
    """Predicted parameters (if any), step and epoch at target for ``test`` from ``train``."""
    m = check_method(method)
    pred = fit_predict(method, train, test)
    cols = {c: test[c].to_numpy() for c in ("model", "gpu", "b0", "b1", "b2", "steps_per_epoch", "step_to_target",
                                            "epoch_to_target")}
    cols.update(method=method, route=m.route, note="")
    if m.route == "params":
        L, n = loss_threshold(train, threshold=threshold)
        hats = pred[["b0_hat", "b1_hat", "b2_hat"]].to_numpy(float)
        for i, p in enumerate(PARAM_TARGETS):
            cols[f"{p}_hat"] = hats[:, i]
        steps = np.array([optimus_step_at_loss(L, *row) for row in hats], dtype=float).reshape(len(hats))
        cols["note"] = np.where(np.isfinite(steps), "", f"unreachable: predicted b2 at or above L = {L:.4g}")
        cols["step_pred"], cols["loss_threshold"] = steps, L
    else:
        for p in PARAM_TARGETS:
            cols[f"{p}_hat"] = np.nan
        cols["step_pred"], cols["loss_threshold"] = pred["step_hat"].to_numpy(float), np.nan
    cols["epoch_pred"] = epochs_from_steps(cols["step_pred"], cols["steps_per_epoch"].astype(float))
    # one frame built at once (a column set at a time cost most of a leave-one-architecture-out)
    return pd.DataFrame(cols, index=test.index)


def error_pct(pred, actual) -> np.ndarray:
    """Signed relative error ``(pred − actual)/actual`` in percent."""
    pred, actual = np.asarray(pred, float), np.asarray(actual, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (pred - actual) / actual * 100.0


def leave_one_architecture_out(fits: pd.DataFrame, *, split: str = "train", method: str = "course",
                               exclude: str | None = None, threshold: str = "curve") -> pd.DataFrame:
    """Hold out each architecture in turn, predict it from the others.

    ``exclude`` removes one architecture entirely first (the page's held-out model), so
    this can score methods on the calibration runs alone.

    Returns columns ``model, gpu, method, epoch_actual, epoch_pred, epoch_error_pct,
    step_actual, step_pred, note``.
    """
    rows = usable(fits, split=split)
    if exclude is not None:
        rows = rows[rows["model"] != exclude]
    archs = architectures(rows)
    if len(archs) < 3:
        raise InputError(f"leave-one-architecture-out: expected at least 3 architectures in split "
                         f"{split!r}; got {len(archs)} ({', '.join(archs)}).")
    parts = []
    for arch in archs:
        train, test = rows[rows["model"] != arch], rows[rows["model"] == arch]
        parts.append(predict_holdout_rows(method, train, test, threshold=threshold))
    out = pd.concat(parts, ignore_index=True)
    return pd.DataFrame({
        "model": out["model"], "gpu": out["gpu"], "method": method,
        "epoch_actual": out["epoch_to_target"], "epoch_pred": out["epoch_pred"],
        "epoch_error_pct": error_pct(out["epoch_pred"], out["epoch_to_target"]),
        "step_actual": out["step_to_target"], "step_pred": out["step_pred"], "note": out["note"],
    })


def mape(loao: pd.DataFrame) -> float:
    """Mean absolute percentage error of the epochs, unreachable predictions counted as 100 %."""
    rows = loao[loao["epoch_actual"].notna()]
    if rows.empty:
        return math.nan
    err = np.abs(rows["epoch_error_pct"].to_numpy(float))
    err = np.where(np.isfinite(err), err, UNREACHABLE_ERROR_PCT)
    return float(err.mean())


def loao_summary(loao: pd.DataFrame) -> pd.DataFrame:
    """MAPE of the epochs per architecture and overall (last row ``all``)."""
    rows = []
    for model, part in loao.groupby("model", sort=False):
        rows.append({"model": model, "method": part["method"].iloc[0], "mape_pct": mape(part),
                     "n_runs": int(part["epoch_actual"].notna().sum())})
    rows.append({"model": "all", "method": loao["method"].iloc[0] if len(loao) else "", "mape_pct": mape(loao),
                 "n_runs": int(loao["epoch_actual"].notna().sum())})
    return pd.DataFrame(rows)


def method_scores(fits: pd.DataFrame, *, split: str = "train", holdout: str | None = None,
                  methods: tuple[str, ...] = tuple(CALIBRATION_METHODS), threshold: str = "curve") -> pd.DataFrame:
    """Leave-one-architecture-out MAPE of each method on the calibration runs (holdout removed)."""
    rows = []
    for method in methods:
        m = CALIBRATION_METHODS[method]
        try:
            loao = leave_one_architecture_out(fits, split=split, method=method, exclude=holdout,
                                              threshold=threshold)
            rows.append({"method": method, "label": m.label, "route": m.route,
                         "loao_mape_pct": mape(loao), "n_runs": int(loao["epoch_actual"].notna().sum())})
        except InputError as exc:
            rows.append({"method": method, "label": m.label, "route": m.route,
                         "loao_mape_pct": math.nan, "n_runs": 0, "note": str(exc)})
    return pd.DataFrame(rows)


#: what "auto" means, in the words the views show beside the method scores (their chart highlights
#: the recommended bar and hatches the methods that do not compete: the two always agree)
RECOMMENDED_LABEL = "Recommended (lowest error of the competing methods: the highlighted bar)"


def competing_methods(scores: pd.DataFrame, *, outside: bool = False) -> list[str]:
    """The scored methods ``recommend_method`` chooses among, in the order of ``scores``.

    The methods of ``AUTO_METHODS`` with a finite leave-one-architecture-out MAPE; with ``outside=True``
    (the held-out architecture lies outside the calibration set) only those that do not follow a trend
    beyond the data (``Method.trend``).  When none is left, every scored method competes.

    >>> s = pd.DataFrame({"method": ["arch-ridge", "arch-kernel", "course"], "loao_mape_pct": [9.0, 12.0, 5.0]})
    >>> competing_methods(s), competing_methods(s, outside=True)
    (['arch-ridge', 'arch-kernel'], ['arch-kernel'])
    """
    finite = scores[np.isfinite(scores["loao_mape_pct"].to_numpy(float))]
    pool = finite[finite["method"].isin(AUTO_METHODS)]
    if outside:
        pool = pool[[not CALIBRATION_METHODS[m].trend for m in pool["method"]]]
    pool = pool if len(pool) else finite
    return [str(m) for m in pool["method"]]


def recommendation_rule(*, outside: bool) -> str:
    """How ``recommend_method`` chose, in one sentence (the views print it under the chart)."""
    return ("The recommended method has the lowest leave-one-architecture-out error among the methods on the "
            "architecture's features (no GPU)" + (", leaving out those that extrapolate a trend: the held-out "
                                                  "architecture lies outside the calibration set" if outside else "")
            + "; hatched bars do not compete.")


def recommend_method(scores: pd.DataFrame, *, outside: bool = False) -> str:
    """The method of ``competing_methods`` with the lowest leave-one-architecture-out MAPE (first listed
    on ties); ``"course"`` when no method could be scored.

    >>> s = pd.DataFrame({"method": ["arch-ridge", "arch-kernel", "course"], "loao_mape_pct": [9.0, 12.0, 5.0]})
    >>> recommend_method(s), recommend_method(s, outside=True)
    ('arch-ridge', 'arch-kernel')
    """
    pool = scores[scores["method"].isin(competing_methods(scores, outside=outside))]
    if pool.empty:
        return "course"
    return str(pool.sort_values("loao_mape_pct", kind="stable")["method"].iloc[0])


def companion_method(scores: pd.DataFrame, method: str) -> str | None:
    """The best-scored method of the *other* route than ``method``'s (``params`` ↔ ``direct``).

    The Calibrate page shows both routes: a method that predicts the step at target directly
    draws no curve, so the best curve-parameter method draws it (and the other way round).
    None when no method of the other route could be scored.
    """
    other = "params" if CALIBRATION_METHODS[method].route == "direct" else "direct"
    rows = scores[(scores["route"] == other) & np.isfinite(scores["loao_mape_pct"].to_numpy(float))]
    return str(rows.sort_values("loao_mape_pct", kind="stable")["method"].iloc[0]) if len(rows) else None


@dataclass(frozen=True, eq=False)
class Calibration:
    """The prediction of a held-out architecture, with its interval and provenance."""

    holdout: str
    split: str
    method: str
    route: str
    loss_threshold: float | None
    threshold_runs: int
    threshold: str
    level: float
    predictions: pd.DataFrame
    excluded: pd.DataFrame
    residuals: tuple[float, ...]
    interval_method: str = INTERVAL_METHOD
    notes: tuple[str, ...] = field(default=())
    outside: tuple[str, ...] = field(default=())
    distance: float = math.nan
    mean_distance: float = math.nan
    interval_q: float = math.nan
    chosen_by: str = ""
    architectures: tuple[str, ...] = field(default=())

    @property
    def inside(self) -> bool:
        """The held-out architecture lies inside the calibration set (no reason in ``outside``)."""
        return not self.outside

    @property
    def difficulty(self) -> float:
        """``1 + d/d̄``: how much wider than a typical calibration architecture's its interval is."""
        if not (math.isfinite(self.distance) and math.isfinite(self.mean_distance) and self.mean_distance > 0):
            return 1.0
        return 1.0 + self.distance / self.mean_distance

    def where(self) -> str:
        """One sentence: inside the calibration set, or outside and why."""
        if self.inside:
            return (f"{self.holdout} lies inside the calibration set ({len(self.architectures)} architectures): "
                    "every feature within their range, a block type they have.")
        return f"{self.holdout} lies outside the calibration set: " + "; ".join(self.outside) + "."

    def table(self) -> pd.DataFrame:
        """The CLI/page table: ``PREDICTION_COLUMNS``."""
        return self.predictions[list(PREDICTION_COLUMNS)]


def parameter_predictions(fits: pd.DataFrame, *, holdout: str, split: str = "train", method: str = "course",
                          level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """Each architecture's predicted b0, b1, b2 per GPU, with a band, for the depth chart.

    The method learns from the calibration runs (all but ``holdout``) and predicts every
    architecture/GPU present.  The band applies the ``level`` quantiles of the
    leave-one-architecture-out residuals of each parameter (log b0; b1 and b2 as they
    are) to the prediction.  Empty for direct methods.

    Returns columns ``model, depth, gpu, param, value, predicted, low, high, holdout``.
    """
    if check_method(method).route != "params":
        return pd.DataFrame(columns=["model", "depth", "gpu", "param", "value", "predicted", "low", "high", "holdout"])
    rows = usable(fits, split=split)
    train = rows[rows["model"] != holdout]
    pred = fit_predict(method, train, rows)
    # residuals of each parameter when its architecture is left out
    resid: dict[str, list[float]] = {p: [] for p in PARAM_TARGETS}
    for arch in architectures(train):
        part = fit_predict(method, train[train["model"] != arch], train[train["model"] == arch])
        truth = train[train["model"] == arch]
        with np.errstate(invalid="ignore", divide="ignore"):
            resid["b0"] += list(np.log(truth["b0"].to_numpy(float) / part["b0_hat"].to_numpy(float)))
        for p in ("b1", "b2"):
            resid[p] += list(truth[p].to_numpy(float) - part[f"{p}_hat"].to_numpy(float))
    out = []
    q = ((1 - level) / 2, (1 + level) / 2)
    for p in PARAM_TARGETS:
        r = np.asarray(resid[p], dtype=float)
        r = r[np.isfinite(r)]
        lo, hi = np.quantile(r, q) if r.size >= 5 else (math.nan, math.nan)
        hat = pred[f"{p}_hat"].to_numpy(float)
        if p == "b0":
            low, high = hat * math.exp(lo), hat * math.exp(hi)
        else:
            low, high = np.maximum(hat + lo, 0.0), np.maximum(hat + hi, 0.0)
        out.append(pd.DataFrame({"model": rows["model"], "depth": rows["depth"], "gpu": rows["gpu_short"],
                                 "param": p, "value": rows[p].to_numpy(float), "predicted": hat,
                                 "low": low, "high": high, "holdout": rows["model"] == holdout}))
    return pd.concat(out, ignore_index=True)


def predicted_loss_errors(cal: Calibration, steps: np.ndarray) -> pd.DataFrame:
    """The held-out runs' fitted and predicted loss over ``steps`` and the error between them.

    Columns ``gpu, step, fitted, predicted, abs_error`` (``predicted − fitted``) and
    ``rel_error_pct`` (``100·(predicted − fitted)/fitted``), one row per GPU and step; empty
    for direct methods (no predicted curve).

    >>> rows = pd.DataFrame({"gpu": ["V100"], "b0": [0.001], "b1": [1.0], "b2": [0.1],
    ...                      "b0_hat": [0.002], "b1_hat": [1.0], "b2_hat": [0.1]})
    >>> cal = Calibration("m", "train", "course", "params", 0.3, 1, "curve", 0.8, rows, rows[[]], ())
    >>> e = predicted_loss_errors(cal, np.array([1000.0]))
    >>> float(e["fitted"][0]), round(float(e["predicted"][0]), 4), round(float(e["rel_error_pct"][0]), 2)
    (0.6, 0.4333, -27.78)
    """
    columns = ["gpu", "step", "fitted", "predicted", "abs_error", "rel_error_pct"]
    if cal.route != "params":
        return pd.DataFrame(columns=columns)
    k = np.asarray(steps, dtype=float)
    parts = []
    for _, row in cal.predictions.iterrows():
        fitted = optimus_loss(k, row["b0"], row["b1"], row["b2"])
        predicted = optimus_loss(k, row["b0_hat"], row["b1_hat"], row["b2_hat"])
        parts.append(pd.DataFrame({"gpu": row["gpu"], "step": k, "fitted": fitted, "predicted": predicted,
                                   "abs_error": predicted - fitted,
                                   "rel_error_pct": (predicted - fitted) / fitted * 100.0}))
    return pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)
