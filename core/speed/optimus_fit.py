"""Fitting the Optimus speed model to measured speeds: non-negative least squares on the linear form,
its flags, the leave-one-out refits, and the family's record OPTIMUS_SPEED (registered in
core.speed.registry).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy.optimize import nnls

from core.errors import FitError, FitWarning, InputError
from core.speed.family import SpeedFamily
from core.speed.optimus import FORMULAS, FORMULAS_LATEX, MIN_POINTS, THETA_NAMES, SpeedModel, check_mode, speed_features
from core.speed.table import normalise_speed_table


def fit_speed_model(table: pd.DataFrame, *, mode: str, global_batch: float | None = None,
                    source: str = "table") -> SpeedModel:
    """Fit θ by non-negative least squares on measured speeds, as Optimus does.

    Each point gives one linear equation ``1/f_measured = x(p, w, M) · θ`` (the
    linearisation of Eq. 3/4); ``scipy.optimize.nnls`` solves for ``θ >= 0`` minimising
    the squared error of the step times.  The MAPE is taken on the speeds
    ``100 · mean(|f_fit − f_measured| / f_measured)``.

    Parameters
    ----------
    table : DataFrame
        Measured points; any table :func:`core.speed.table.normalise_speed_table` accepts
        (columns ``p, w`` and one of ``steps_per_s``, ``samples_per_s``, ``step_time_s``,
        optional ``global_batch``; or a Pollux ``scalability.csv``).
    mode : {"sync", "async", "allreduce"}
    global_batch : float or None, default=None
        ``M`` for rows without a ``global_batch`` of their own, and the planning batch of
        the returned model.  When None the model keeps the table's M if there is exactly
        one, else None (see ``SpeedModel.with_global_batch``).
    source : str, default="table"
        Name used in messages and in the model's provenance.

    Returns
    -------
    SpeedModel
        ``time_unit="s"``, with ``mape_pct``, ``n_points`` and flags (θ at the zero bound,
        θ not identifiable from the measured configurations, several batches).

    Raises
    ------
    InputError
        Fewer points than θ (5 sync, 4 async, 3 all-reduce), no ``p >= 1`` in a PS mode,
        no M where the mode needs it.
    FitError
        When NNLS fails.

    Warns
    -----
    FitWarning
        When θ is not identifiable (the design matrix is rank deficient).

    Examples
    --------
    Noise-free points from θ = (0.001, 0.05, 0.002), M = 256 are recovered:

    >>> w = [1, 2, 4, 8]
    >>> t = [0.001 * 256 / k + 0.05 + 0.002 * k for k in w]
    >>> tab = pd.DataFrame({"w": w, "global_batch": 256, "step_time_s": t})
    >>> m = fit_speed_model(tab, mode="allreduce")
    >>> [round(x, 9) for x in m.theta], round(m.mape_pct, 6)
    ([0.001, 0.05, 0.002], 0.0)
    >>> fit_speed_model(tab.head(2), mode="allreduce")
    Traceback (most recent call last):
    ...
    core.errors.InputError: table: expected at least 3 measured points for mode 'allreduce' (one per θ); got 2...
    """
    check_mode(mode, "fit_speed_model")
    tab = normalise_speed_table(table, global_batch=global_batch, source=source)
    _check_fit_input(tab, mode, source)
    X = speed_features(mode, tab["p"], tab["w"], tab["global_batch"].fillna(1.0))
    y = 1.0 / tab["steps_per_s"].to_numpy(dtype=float)
    try:
        theta, _ = nnls(X, y)
    except (RuntimeError, ValueError) as err:
        raise FitError(f"{source}: NNLS did not converge ({err}). Check the table for outliers.") from err
    fitted = 1.0 / (X @ theta)
    measured = tab["steps_per_s"].to_numpy(dtype=float)
    mape = float(np.mean(np.abs(fitted - measured) / measured) * 100.0)
    batches = sorted(set(tab["global_batch"].dropna()))
    model_batch = global_batch if global_batch is not None else (batches[0] if len(batches) == 1 else None)
    flags = _fit_flags(mode, tab, X, theta, batches, model_batch)
    for flag in flags:
        if flag.startswith("θ not identifiable"):
            warnings.warn(f"{source}: {flag}", FitWarning, stacklevel=2)
    if max(theta) == 0:
        raise FitError(f"{source}: expected a positive θ from NNLS; got all zeros. "
                       "Check that speeds are positive and vary with (p, w).")
    return SpeedModel(mode, tuple(float(t) for t in theta), global_batch=model_batch,
                      time_unit="s", source=f"NNLS fit on {source} ({len(tab)} points)",
                      mape_pct=mape, n_points=len(tab), flags=flags)


def _check_fit_input(tab: pd.DataFrame, mode: str, source: str) -> None:
    if mode != "allreduce" and (tab["p"] < 1).any():
        raise InputError(f"{source}: expected p >= 1 parameter servers on every row for mode "
                         f"{mode!r}; got p = 0 on {int((tab['p'] < 1).sum())} rows. "
                         "Use mode 'allreduce' for traces without parameter servers.")
    need = MIN_POINTS[mode]
    if len(tab) < need:
        raise InputError(f"{source}: expected at least {need} measured points for mode {mode!r} "
                         f"(one per θ); got {len(tab)}. Measure more (p, w) configurations.")
    if mode != "async" and tab["global_batch"].isna().any():
        raise InputError(f"{source}: expected the global batch M for mode {mode!r}; got none. "
                         "Add a global_batch column or pass global_batch=M (--batch M).")


def _fit_flags(mode, tab, X, theta, batches, model_batch) -> tuple[str, ...]:
    flags = []
    rank = int(np.linalg.matrix_rank(X))
    if rank < X.shape[1]:
        flags.append(f"θ not identifiable: the measured configurations give rank {rank} of "
                     f"{X.shape[1]}; measure more varied (p, w)")
    flags += [f"{name} = 0 (at the non-negativity bound)"
              for name, t in zip(THETA_NAMES[mode], theta) if t == 0]
    if mode == "allreduce" and (tab["p"] > 0).any():
        flags.append("p ignored: the all-reduce model has no parameter-server terms")
    if len(batches) > 1 and model_batch is None:
        flags.append(f"fitted on {len(batches)} global batches ({batches[0]:g} to {batches[-1]:g}); "
                     "set the planning batch with with_global_batch(M)")
    return tuple(flags)


def optimus_loo(table: pd.DataFrame, model: SpeedModel, *, mode: str, global_batch: float | None = None,
                gpus_per_node: int | None = None, source: str = "table") -> np.ndarray | None:
    """Leave-one-out predicted speeds of the NNLS fit (None with no more points than θ).

    ``gpus_per_node`` is not used (Optimus has no node term).
    """
    tab = normalise_speed_table(table, global_batch=global_batch, source=source)
    if len(tab) <= len(model.theta):
        return None
    X = speed_features(mode, tab["p"], tab["w"], tab["global_batch"].fillna(1.0))
    y = 1.0 / tab["steps_per_s"].to_numpy(dtype=float)
    pred = np.empty(len(y))
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        theta, _ = nnls(X[keep], y[keep])
        pred[i] = 1.0 / (X[i] @ theta) if X[i] @ theta > 0 else np.inf
    return pred


def _fit(table: pd.DataFrame, *, mode: str, global_batch: float | None = None, gpus_per_node: int | None = None,
         source: str = "table") -> SpeedModel:
    return fit_speed_model(table, mode=mode, global_batch=global_batch, source=source)


#: the Optimus speed family, as registered (:mod:`core.speed.registry`)
OPTIMUS_SPEED = SpeedFamily(
    name="optimus", label="Optimus",
    description="Optimus (Peng et al., EuroSys 2018): 1/f linear in θ, NNLS",
    formulas=FORMULAS, formulas_latex=FORMULAS_LATEX, fit=_fit, loo=optimus_loo, scored_alone=False)
