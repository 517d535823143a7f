"""Predict a held-out architecture, leave-one-architecture-out errors, method choice.

Rules that keep the numbers honest:

* The loss threshold L ("target reached") is the mean loss at which the runs the method
  learns from first passed the target - never the held-out runs'.  ``threshold="curve"``
  (default) takes each run's *fitted* loss at its target step, ``l_i(k_i)``, so that every
  calibration curve passes through its own crossing; ``threshold="measured"`` averages the
  logged loss there (the course's choice: on per-step logs a single noisy batch, which
  biases L low and the predicted step high).
* The method the page recommends is the one with the lowest leave-one-architecture-out
  error on the calibration runs alone (the held-out architecture is removed first).
* Intervals come from the leave-one-architecture-out residuals ``log(actual/predicted)``
  of the same method on the calibration runs: the ``(1-level)/2`` and ``(1+level)/2``
  quantiles, applied to the prediction (``INTERVAL_METHOD``).
* A prediction that never reaches L counts as a 100 % error when methods are scored.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from core.calibrate.methods import METHODS, PARAM_TARGETS, check_method, fit_predict
from core.calibrate.table import architectures, check_holdout, excluded_rows, usable
from core.curves import optimus_loss, optimus_step_at_loss
from core.defaults import DEFAULT_LEVEL
from core.errors import InputError

INTERVAL_METHOD = ("leave-one-architecture-out residuals of the same method on the calibration "
                   "runs (quantiles of log(actual/predicted) steps)")
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
    if threshold not in THRESHOLDS:
        raise InputError(f"threshold: expected one of {', '.join(THRESHOLDS)}; got {threshold!r}.")
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


def _epochs(steps: np.ndarray, spe: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(steps), np.maximum(1, np.ceil(steps / spe)), np.nan)


def predict_holdout_rows(method: str, train: pd.DataFrame, test: pd.DataFrame, *,
                         threshold: str = "curve") -> pd.DataFrame:
    """Predicted parameters (if any), step and epoch at target for ``test`` from ``train``."""
    m = check_method(method)
    pred = fit_predict(method, train, test)
    out = test[["model", "gpu", "b0", "b1", "b2", "steps_per_epoch", "step_to_target",
                "epoch_to_target"]].copy()
    out["method"], out["route"], out["note"] = method, m.route, ""
    if m.route == "params":
        L, n = loss_threshold(train, threshold=threshold)
        for p in PARAM_TARGETS:
            out[f"{p}_hat"] = pred[f"{p}_hat"]
        steps = np.array([optimus_step_at_loss(L, *row) for row in pred[["b0_hat", "b1_hat", "b2_hat"]].to_numpy()])
        out["step_pred"] = steps
        out.loc[~np.isfinite(steps), "note"] = f"unreachable: predicted b2 at or above L = {L:.4g}"
        out["loss_threshold"] = L
    else:
        for p in PARAM_TARGETS:
            out[f"{p}_hat"] = np.nan
        out["step_pred"] = pred["step_hat"]
        out["loss_threshold"] = np.nan
    out["epoch_pred"] = _epochs(out["step_pred"].to_numpy(float), out["steps_per_epoch"].to_numpy(float))
    return out


def _error_pct(pred, actual) -> np.ndarray:
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
        "epoch_error_pct": _error_pct(out["epoch_pred"], out["epoch_to_target"]),
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
                  methods: tuple[str, ...] = tuple(METHODS), threshold: str = "curve") -> pd.DataFrame:
    """Leave-one-architecture-out MAPE of each method on the calibration runs (holdout removed)."""
    rows = []
    for method in methods:
        try:
            loao = leave_one_architecture_out(fits, split=split, method=method, exclude=holdout,
                                              threshold=threshold)
            rows.append({"method": method, "label": METHODS[method].label, "route": METHODS[method].route,
                         "loao_mape_pct": mape(loao), "n_runs": int(loao["epoch_actual"].notna().sum())})
        except InputError as exc:
            rows.append({"method": method, "label": METHODS[method].label, "route": METHODS[method].route,
                         "loao_mape_pct": math.nan, "n_runs": 0, "note": str(exc)})
    return pd.DataFrame(rows)


def recommend_method(scores: pd.DataFrame) -> str:
    """The method with the lowest leave-one-architecture-out MAPE (first listed on ties)."""
    finite = scores[np.isfinite(scores["loao_mape_pct"].to_numpy(float))]
    if finite.empty:
        return "course"
    return str(finite.sort_values("loao_mape_pct", kind="stable")["method"].iloc[0])


def companion_method(scores: pd.DataFrame, method: str) -> str | None:
    """The best-scored method of the *other* route than ``method``'s (``params`` ↔ ``direct``).

    The Calibrate page shows both routes: a method that predicts the step at target directly
    draws no curve, so the best curve-parameter method draws it (and the other way round).
    None when no method of the other route could be scored.
    """
    other = "params" if METHODS[method].route == "direct" else "direct"
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

    def table(self) -> pd.DataFrame:
        """The CLI/page table: ``PREDICTION_COLUMNS``."""
        return self.predictions[list(PREDICTION_COLUMNS)]


def calibrate(fits: pd.DataFrame, *, holdout: str = "resnet50", split: str = "train",
              method: str = "course", level: float = DEFAULT_LEVEL, threshold: str = "curve") -> Calibration:
    """Predict every run of ``holdout`` (one per GPU) from the other architectures.

    Parameters
    ----------
    fits : DataFrame
        The calibration frame (``core.calibrate.table.normalise_fits``).
    holdout : str
        Architecture to predict; its runs are never used for anything but the comparison.
    split : {"train", "val"}
    method : str
        A key of ``METHODS``.
    level : float
        Coverage of the interval (default 80 %).
    threshold : {"curve", "measured"}
        How the loss threshold L is taken from the calibration runs (``THRESHOLDS``).
    """
    check_method(method)
    check_holdout(fits, holdout)
    rows = usable(fits, split=split)
    train, test = rows[rows["model"] != holdout], rows[rows["model"] == holdout]
    if test.empty:
        raise InputError(f"holdout: {holdout!r} has no usable run in split {split!r} (excluded: "
                         f"{'; '.join(excluded_rows(fits, split=split).query('model == @holdout')['excluded'])}).")
    pred = predict_holdout_rows(method, train, test, threshold=threshold)
    notes = []
    L, n_L = (loss_threshold(train, threshold=threshold) if METHODS[method].route == "params" else (None, 0))
    residuals: tuple[float, ...] = ()
    try:
        loao = leave_one_architecture_out(fits, split=split, method=method, exclude=holdout,
                                          threshold=threshold)
        r = np.log(loao["step_actual"].to_numpy(float) / loao["step_pred"].to_numpy(float))
        residuals = tuple(float(x) for x in r[np.isfinite(r)])
    except InputError as exc:
        notes.append(f"no interval: {exc}")
    if len(residuals) >= 5:
        lo, hi = np.quantile(residuals, [(1 - level) / 2, (1 + level) / 2])
        pred["step_pred_low"] = pred["step_pred"] * math.exp(lo)
        pred["step_pred_high"] = pred["step_pred"] * math.exp(hi)
    else:
        pred["step_pred_low"] = pred["step_pred_high"] = np.nan
        if residuals:
            notes.append(f"no interval: only {len(residuals)} leave-one-out residuals")
    spe = pred["steps_per_epoch"].to_numpy(float)
    pred["epoch_pred_low"] = _epochs(pred["step_pred_low"].to_numpy(float), spe)
    pred["epoch_pred_high"] = _epochs(pred["step_pred_high"].to_numpy(float), spe)
    pred["epoch_actual"] = pred["epoch_to_target"]
    pred["step_actual"] = pred["step_to_target"]
    pred["epoch_error_pct"] = _error_pct(pred["epoch_pred"], pred["epoch_actual"])
    for p in PARAM_TARGETS:
        pred[f"{p}_error_pct"] = _error_pct(pred[f"{p}_hat"], pred[p])
    return Calibration(holdout=holdout, split=split, method=method, route=METHODS[method].route,
                       loss_threshold=L, threshold_runs=n_L, threshold=threshold, level=level,
                       predictions=pred.reset_index(drop=True),
                       excluded=excluded_rows(fits, split=split), residuals=residuals, notes=tuple(notes))


@dataclass(frozen=True)
class HardwareIndependence:
    """Is the number of epochs to target the same on every GPU? (two-way additive ANOVA)"""

    n_models: int
    n_gpus: int
    within_model_sd: float  # mean over models of the SD of epochs across GPUs
    across_model_sd: float  # SD of the per-model mean epochs
    f_gpu: float
    p_gpu: float
    sentence: str


def hardware_independence(fits: pd.DataFrame, *, split: str = "train") -> HardwareIndependence | None:
    """Compare the spread of epochs-to-target across GPUs (same model) with that across models.

    Uses the models measured on every GPU type present; returns ``None`` when fewer than two
    models or two GPU types are complete.
    """
    rows = usable(fits, split=split)
    rows = rows[rows["epoch_to_target"].notna()]
    grid = rows.pivot_table(index="model", columns="gpu_short", values="epoch_to_target", aggfunc="mean")
    grid = grid.dropna(axis=0, how="any")
    m, g = grid.shape
    if m < 2 or g < 2:
        return None
    y = grid.to_numpy(float)
    grand = y.mean()
    model_mean, gpu_mean = y.mean(axis=1), y.mean(axis=0)
    ss_gpu = m * float(((gpu_mean - grand) ** 2).sum())
    resid = y - model_mean[:, None] - gpu_mean[None, :] + grand
    ss_res = float((resid**2).sum())
    df_gpu, df_res = g - 1, (m - 1) * (g - 1)
    f_gpu = (ss_gpu / df_gpu) / (ss_res / df_res) if ss_res > 0 else math.inf
    p_gpu = float(stats.f.sf(f_gpu, df_gpu, df_res)) if math.isfinite(f_gpu) else 0.0
    within = float(np.mean(y.std(axis=1, ddof=1)))
    across = float(model_mean.std(ddof=1))
    verdict = ("so convergence looks hardware-independent" if p_gpu >= 0.05 else
               "so the GPU type does change the number of epochs here")
    sentence = (f"Across the {g} GPU types the same model needs epochs to target that differ by "
                f"{within:.1f} epochs (mean SD), against {across:.1f} epochs between the {m} models' "
                f"means; the GPU effect has F = {f_gpu:.2f}, p = {p_gpu:.2f} (two-way ANOVA), {verdict}.")
    return HardwareIndependence(m, g, within, across, float(f_gpu), p_gpu, sentence)


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
