"""Features of a run and the regression methods that predict a held-out architecture.

Features: the network's depth, log10 of its parameter count and of its forward FLOPs per
sample, log2 of its first-stage width and its block type (``core.models.architecture_features``,
when the architecture is known there), and the GPU type as a categorical feature.  Methods
(all scikit-learn estimators but the kernel smoother):

* ``course`` - the course's baseline, exactly: ``KernelRidge(alpha=1)`` (linear kernel) on
  ``[number of layers, GPU index]`` (RTX 8000 = 0, V100 = 1, A100 = 2) → ``[b0, b1, b2]``;
* ``ridge`` - per-parameter ``Ridge`` on standardised depth and log-parameters plus one-hot
  GPU, predicting ``log b0``, ``b1`` and ``b2``;
* ``gp`` - the same targets with a ``GaussianProcessRegressor`` (RBF + white noise);
* ``direct-ridge`` / ``direct-gp`` - predict ``log(step to target)`` directly;
* ``arch-kernel``, ``arch-gp``, ``arch-ridge`` - ``log(step to target)`` from the
  architecture alone (depth, parameters, FLOPs, width, block type; no GPU: epochs to target
  do not depend on it, ``hardware_independence``): a Gaussian-kernel smoother over the
  nearest architectures, a Gaussian process, a ridge regression;
* ``mean`` - the mean ``log(step to target)`` of the other architectures (a yardstick a
  method must beat to be worth anything).

``AUTO_METHODS`` are the ones ``--method auto`` chooses from; a method with ``trend=True``
follows a fitted trend beyond the data (it extrapolates), the others fall back towards the
nearest known architectures or the mean (see ``core.calibrate.evaluate``).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.dummy import DummyRegressor
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import Ridge

from core.errors import InputError
from core.validation import check_option

#: the course's GPU coding; other GPU types get the next indices in name order
GPU_INDEX: dict[str, int] = {"RTX 8000": 0, "V100": 1, "A100": 2}
PARAM_TARGETS = ("b0", "b1", "b2")


@dataclass(frozen=True)
class Method:
    """A calibration method: what it predicts and how.

    ``trend``: the method follows a fitted trend beyond the calibration data (linear models);
    ``features``: ``"depth"`` (depth, log-parameters, GPU) or ``"architecture"``
    (``ARCH_NUMERIC`` and the block type, no GPU).
    """

    name: str
    label: str
    route: str  # "params" (b0, b1, b2 then invert at L) or "direct" (step at target)
    description: str
    trend: bool = False
    features: str = "depth"


CALIBRATION_METHODS: dict[str, Method] = {
    "course": Method("course", "Course baseline: KernelRidge on [layers, GPU index]", "params",
                     "KernelRidge(alpha=1.0, kernel='linear') on [depth, GPU index] → [b0, b1, b2], as the course did",
                     trend=True),
    "ridge": Method("ridge", "Ridge per parameter (log b0)", "params",
                    "Ridge(alpha=1) on standardised [depth, log10 params] + one-hot GPU → log b0, b1, b2", trend=True),
    "gp": Method("gp", "Gaussian process per parameter (log b0)", "params",
                 "GaussianProcessRegressor(RBF + white noise) on the same features → log b0, b1, b2"),
    "direct-ridge": Method("direct-ridge", "Ridge on log(step to target)", "direct",
                           "Ridge(alpha=1) on the same features → log(step to target)", trend=True),
    "direct-gp": Method("direct-gp", "Gaussian process on log(step to target)", "direct",
                        "GaussianProcessRegressor on the same features → log(step to target)"),
    "arch-kernel": Method("arch-kernel", "Nearest architectures (kernel smoother)", "direct",
                          "Gaussian-kernel weighted mean of log(step to target), bandwidth 1 standardised unit, "
                          "over [depth, log10 params, log10 FLOPs, log2 width] + one-hot block type",
                          features="architecture"),
    "arch-gp": Method("arch-gp", "Gaussian process on the architecture", "direct",
                      "GaussianProcessRegressor(RBF + white noise) on [depth, log10 params, log10 FLOPs, "
                      "log2 width] + one-hot block type → log(step to target)", features="architecture"),
    "arch-ridge": Method("arch-ridge", "Ridge on the architecture", "direct",
                         "Ridge(alpha=1) on [depth, log10 params, log10 FLOPs, log2 width] + one-hot block type "
                         "→ log(step to target)", trend=True, features="architecture"),
    "mean": Method("mean", "Mean of the other architectures", "direct",
                   "DummyRegressor(mean) of log(step to target): the yardstick", features="architecture"),
}
#: the methods ``--method auto`` chooses from (architecture features; the GPU is left out because
#: epochs to target do not depend on it on the course data, see ``hardware_independence``)
AUTO_METHODS: tuple[str, ...] = ("arch-kernel", "arch-gp", "arch-ridge", "mean")
#: numeric architecture features (``core.models.architecture_features``) and the categorical one
ARCH_NUMERIC: tuple[str, ...] = ("depth", "log10_params", "log10_flops", "log2_width")
ARCH_CATEGORICAL = "block"
#: bandwidth of the ``arch-kernel`` smoother, in standardised feature units
KERNEL_BANDWIDTH = 1.0


def check_method(name: str) -> Method:
    return CALIBRATION_METHODS[check_option(name, "method", CALIBRATION_METHODS)]


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


@lru_cache(maxsize=None)
def _arch(model: str, dataset: str):
    try:
        from core.models import architecture_features, registry_name
    except ImportError:  # pragma: no cover - torch missing
        return None
    name = registry_name(model, dataset)
    return architecture_features(name) if name else None


def feature_frame(rows: pd.DataFrame) -> pd.DataFrame:
    """Features of each row: ``depth``, ``log10_params``, ``log10_flops``, ``log2_width``,
    ``block`` (NaN / None where the architecture is unknown to ``core.models``) and ``gpu``.

    >>> rows = pd.DataFrame({"model": ["resnet20"], "dataset": ["cifar10"], "depth": [20], "gpu_short": ["V100"]})
    >>> f = feature_frame(rows).iloc[0]
    >>> round(float(f.log10_params), 3), float(f.log2_width), f.block     # 269,722 parameters, 16 channels
    (5.431, 4.0, 'basic')
    """
    archs = [_arch(str(m), str(d)) for m, d in zip(rows["model"], rows["dataset"])]
    return pd.DataFrame({
        "depth": rows["depth"].astype(float).to_numpy(),
        "log10_params": [math.log10(a.n_params) if a else math.nan for a in archs],
        "log10_flops": [math.log10(a.flops_per_sample) if a else math.nan for a in archs],
        "log2_width": [math.log2(a.width) if a else math.nan for a in archs],
        "block": [a.block if a else None for a in archs],
        "gpu": rows["gpu_short"].astype(str).to_numpy(),
    }, index=rows.index)


def architecture_columns(train_x: pd.DataFrame, test_x: pd.DataFrame) -> tuple[list[str], list[str]]:
    """(numeric, categorical) architecture features known for every row of both frames."""
    both = pd.concat([train_x, test_x])
    numeric = [c for c in ARCH_NUMERIC if both[c].notna().all()]
    categorical = [ARCH_CATEGORICAL] if both[ARCH_CATEGORICAL].notna().all() else []
    return numeric, categorical


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


def design_matrices(train_x: pd.DataFrame, test_x: pd.DataFrame, numeric: list[str],
                    categorical: tuple[str, ...] = ("gpu",)) -> tuple[np.ndarray, np.ndarray]:
    """The regression inputs of both frames: the ``numeric`` columns standardised on ``train_x`` and
    the ``categorical`` ones one-hot encoded on ``train_x``'s categories (sorted; a category the
    training rows lack is all zeros).

    What ``ColumnTransformer([StandardScaler(), OneHotEncoder(handle_unknown="ignore")])`` gives,
    without its per-call overhead (a leave-one-architecture-out makes dozens of these fits).

    >>> tr = pd.DataFrame({"depth": [20.0, 56.0], "gpu": ["V100", "A100"]})
    >>> te = pd.DataFrame({"depth": [38.0], "gpu": ["T4"]})
    >>> [m.tolist() for m in design_matrices(tr, te, ["depth"])]
    [[[-1.0, 0.0, 1.0], [1.0, 1.0, 0.0]], [[0.0, 0.0, 0.0]]]
    """
    tr = train_x[list(numeric)].to_numpy(dtype=float).reshape(len(train_x), len(numeric))
    te = test_x[list(numeric)].to_numpy(dtype=float).reshape(len(test_x), len(numeric))
    n = tr.shape[0]
    mean, var = tr.mean(axis=0), tr.var(axis=0)
    eps = np.finfo(float).eps
    constant = var <= n * eps * var + (n * mean * eps) ** 2       # as scikit-learn's StandardScaler decides
    scale = np.where(constant, 1.0, np.sqrt(var))
    parts_tr, parts_te = [(tr - mean) / scale], [(te - mean) / scale]
    for col in categorical:
        train_values = train_x[col].astype(str).to_numpy()
        categories = np.array(sorted(set(train_values)))
        parts_tr.append((train_values[:, None] == categories[None, :]).astype(float))
        parts_te.append((test_x[col].astype(str).to_numpy()[:, None] == categories[None, :]).astype(float))
    return np.hstack(parts_tr), np.hstack(parts_te)


class KernelSmoother(RegressorMixin, BaseEstimator):
    """Nadaraya-Watson regression: a Gaussian-kernel weighted mean of the training targets.

    Far from every training point the weights flatten and the prediction falls back to the
    mean of the nearest ones (it never follows a trend beyond the data).

    >>> KernelSmoother(bandwidth=1.0).fit([[0.0], [2.0]], [1.0, 3.0]).predict([[1.0], [0.0]]).round(3)
    array([2.   , 1.238])
    """

    def __init__(self, bandwidth: float = KERNEL_BANDWIDTH) -> None:
        self.bandwidth = bandwidth

    def fit(self, X, y):
        self.X_fit_, self.y_fit_ = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
        return self

    def predict(self, X):
        X = np.asarray(X, dtype=float)
        d2 = ((X[:, None, :] - self.X_fit_[None, :, :]) ** 2).sum(axis=-1)
        logw = -0.5 * d2 / self.bandwidth**2
        w = np.exp(logw - logw.max(axis=1, keepdims=True))   # the nearest point always has weight 1
        return (w @ self.y_fit_) / w.sum(axis=1)


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
    if CALIBRATION_METHODS[method].route == "direct":
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
        if m.features == "architecture":
            numeric, categorical = architecture_columns(x_train, x_test)
        else:
            numeric, categorical = _numeric_columns(x_train, x_test), ["gpu"]
        if method == "mean":
            reg = DummyRegressor(strategy="mean")
        elif method in ("ridge", "direct-ridge", "arch-ridge"):
            reg = Ridge(alpha=1.0)
        elif method == "arch-kernel":
            reg = KernelSmoother()
        else:
            reg = _gp()
        design_train, design_test = design_matrices(x_train, x_test, numeric, tuple(categorical))
        for name, y in _targets(train, m.route).items():
            out[name] = clone(reg).fit(design_train, y).predict(design_test)
    if m.route == "direct":
        return pd.DataFrame({"step_hat": np.exp(out["log_step"])}, index=test.index)
    return pd.DataFrame({"b0_hat": np.exp(out["log_b0"]), "b1_hat": np.maximum(out["b1"], 1e-12),
                         "b2_hat": np.maximum(out["b2"], 0.0)}, index=test.index)
