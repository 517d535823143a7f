"""Features of a run and the regression methods that predict a held-out architecture.

Features: the network's depth, log10 of its parameter count (from the torch definitions in
``core.models``, when the architecture is known there), and the GPU type as a categorical
feature.  Methods (all scikit-learn estimators):

* ``course`` - the course's baseline, exactly: ``KernelRidge(alpha=1)`` (linear kernel) on
  ``[number of layers, GPU index]`` (RTX 8000 = 0, V100 = 1, A100 = 2) → ``[b0, b1, b2]``;
* ``ridge`` - per-parameter ``Ridge`` on standardised depth and log-parameters plus one-hot
  GPU, predicting ``log b0``, ``b1`` and ``b2``;
* ``gp`` - the same targets with a ``GaussianProcessRegressor`` (RBF + white noise);
* ``direct-ridge`` / ``direct-gp`` - predict ``log(step to target)`` directly;
* ``mean`` - the mean ``log(step to target)`` of the other architectures (a yardstick a
  method must beat to be worth anything).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.dummy import DummyRegressor
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import Ridge
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from core.errors import InputError

#: the course's GPU coding; other GPU types get the next indices in name order
GPU_INDEX: dict[str, int] = {"RTX 8000": 0, "V100": 1, "A100": 2}
PARAM_TARGETS = ("b0", "b1", "b2")


@dataclass(frozen=True)
class Method:
    """A calibration method: what it predicts and how."""

    name: str
    label: str
    route: str  # "params" (b0, b1, b2 then invert at L) or "direct" (step at target)
    description: str


METHODS: dict[str, Method] = {
    "course": Method("course", "Course baseline: KernelRidge on [layers, GPU index]", "params",
                     "KernelRidge(alpha=1.0, kernel='linear') on [depth, GPU index] → [b0, b1, b2], as the course did"),
    "ridge": Method("ridge", "Ridge per parameter (log b0)", "params",
                    "Ridge(alpha=1) on standardised [depth, log10 params] + one-hot GPU → log b0, b1, b2"),
    "gp": Method("gp", "Gaussian process per parameter (log b0)", "params",
                 "GaussianProcessRegressor(RBF + white noise) on the same features → log b0, b1, b2"),
    "direct-ridge": Method("direct-ridge", "Ridge on log(step to target)", "direct",
                           "Ridge(alpha=1) on the same features → log(step to target)"),
    "direct-gp": Method("direct-gp", "Gaussian process on log(step to target)", "direct",
                        "GaussianProcessRegressor on the same features → log(step to target)"),
    "mean": Method("mean", "Mean of the other architectures", "direct",
                   "DummyRegressor(mean) of log(step to target): the yardstick"),
}


def check_method(name: str) -> Method:
    if name not in METHODS:
        raise InputError(f"method: expected one of {', '.join(METHODS)}; got {name!r}.")
    return METHODS[name]


# --------------------------------------------------------------------------- features
@lru_cache(maxsize=None)
def architecture_parameters(model: str, dataset: str = "cifar10") -> int | None:
    """Parameter count of ``model`` as trained on ``dataset``, from ``core.models``.

    The architecture is ``core.models.registry_name(model, dataset)``.  ``None`` when
    unknown: the feature is then left out of every fit that involves that run, so one family
    of counts is never mixed with another.
    """
    try:
        from core.models import parameter_count, registry_name
    except ImportError:  # pragma: no cover - torch missing
        return None
    name = registry_name(model, dataset)
    return int(parameter_count(name)) if name else None


def feature_frame(rows: pd.DataFrame) -> pd.DataFrame:
    """``depth``, ``log10_params`` (NaN where unknown) and ``gpu`` of each row."""
    params = [architecture_parameters(str(m), str(d)) for m, d in zip(rows["model"], rows["dataset"])]
    return pd.DataFrame({
        "depth": rows["depth"].astype(float).to_numpy(),
        "log10_params": [math.log10(p) if p else math.nan for p in params],
        "gpu": rows["gpu_short"].astype(str).to_numpy(),
    }, index=rows.index)


def gpu_index(gpus, known: dict[str, int] | None = None) -> np.ndarray:
    """The course's GPU coding (RTX 8000 = 0, V100 = 1, A100 = 2; others next, by name)."""
    coding = dict(GPU_INDEX if known is None else known)
    for g in sorted(set(gpus) - set(coding)):
        coding[g] = len(coding)
    return np.array([coding[g] for g in gpus], dtype=float)


# --------------------------------------------------------------------------- estimators
def _numeric_columns(train_x: pd.DataFrame, test_x: pd.DataFrame) -> list[str]:
    cols = ["depth"]
    if train_x["log10_params"].notna().all() and test_x["log10_params"].notna().all():
        cols.append("log10_params")
    return cols


def _pipeline(regressor, numeric: list[str]) -> Pipeline:
    pre = ColumnTransformer([("num", StandardScaler(), numeric),
                             ("gpu", OneHotEncoder(handle_unknown="ignore", sparse_output=False), ["gpu"])])
    return Pipeline([("features", pre), ("model", regressor)])


def _gp() -> GaussianProcessRegressor:
    kernel = ConstantKernel(1.0, (1e-3, 1e3)) * RBF(length_scale=1.0, length_scale_bounds=(1e-1, 1e2)) \
        + WhiteKernel(noise_level=0.1, noise_level_bounds=(1e-6, 1e1))
    return GaussianProcessRegressor(kernel=kernel, normalize_y=True, n_restarts_optimizer=0, random_state=0)


def _targets(rows: pd.DataFrame, route: str) -> dict[str, np.ndarray]:
    if route == "direct":
        return {"log_step": np.log(rows["step_to_target"].to_numpy(dtype=float))}
    return {"log_b0": np.log(rows["b0"].to_numpy(dtype=float)), "b1": rows["b1"].to_numpy(dtype=float),
            "b2": rows["b2"].to_numpy(dtype=float)}


def training_rows(rows: pd.DataFrame, method: str) -> pd.DataFrame:
    """Rows a method can learn from (direct methods need a reached target)."""
    if METHODS[method].route == "direct":
        return rows[rows["step_to_target"].notna() & (rows["step_to_target"] > 0)]
    return rows


def fit_predict(method: str, train: pd.DataFrame, test: pd.DataFrame) -> pd.DataFrame:
    """Fit ``method`` on ``train`` rows and predict ``test`` rows.

    Returns a frame indexed like ``test`` with ``b0_hat, b1_hat, b2_hat`` (parameter
    methods) or ``step_hat`` (direct methods); ``b2_hat`` is clipped at 0.
    """
    m = check_method(method)
    train = training_rows(train, method)
    if len(train) < 2:
        raise InputError(f"calibration: expected at least 2 usable runs to learn from; got {len(train)}.")
    out = pd.DataFrame(index=test.index)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", UserWarning)
        if method == "course":
            known = dict(GPU_INDEX)
            all_gpus = list(train["gpu_short"]) + list(test["gpu_short"])
            idx = gpu_index(all_gpus, known)
            x_train = np.column_stack([train["depth"].to_numpy(float), idx[: len(train)]])
            x_test = np.column_stack([test["depth"].to_numpy(float), idx[len(train):]])
            y = train[list(PARAM_TARGETS)].to_numpy(float)
            pred = KernelRidge(alpha=1.0).fit(x_train, y).predict(x_test)
            out["b0_hat"], out["b1_hat"], out["b2_hat"] = pred[:, 0], pred[:, 1], np.maximum(pred[:, 2], 0.0)
            return out
        x_train, x_test = feature_frame(train), feature_frame(test)
        numeric = _numeric_columns(x_train, x_test)
        if method == "mean":
            reg = DummyRegressor(strategy="mean")
        elif method in ("ridge", "direct-ridge"):
            reg = Ridge(alpha=1.0)
        else:
            reg = _gp()
        for name, y in _targets(train, m.route).items():
            est = clone(_pipeline(reg, numeric)).fit(x_train, y)
            out[name] = est.predict(x_test)
    if m.route == "direct":
        return pd.DataFrame({"step_hat": np.exp(out["log_step"])}, index=test.index)
    return pd.DataFrame({"b0_hat": np.exp(out["log_b0"]), "b1_hat": np.maximum(out["b1"], 1e-12),
                         "b2_hat": np.maximum(out["b2"], 0.0)}, index=test.index)
