"""Choose a speed family per table: Optimus or Pollux, by leave-one-out error.

Both families are fitted to the same table of measured speeds
(:func:`core.plan.speed.fit_speed_model`, :func:`core.plan.pollux_speed.fit_pollux_speed`);
each is then refitted once per point with that point left out and asked for its speed
(the Pollux refits start from the full fit's parameters).  The **leave-one-out MAPE**
``100 · mean |f̂₋ᵢ − fᵢ| / fᵢ`` scores each family on points it did not see; ``auto`` takes
the smaller.  The same misses give the chosen model's **time band**: the ``(1 ∓ level)/2``
quantiles of ``fᵢ / f̂₋ᵢ``, the factor by which a real step took longer than predicted
(a plan multiplies its time by them for an interval that carries the speed fit's error).
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from typing import Union

import numpy as np
import pandas as pd
from scipy.optimize import nnls

from core.defaults import DEFAULT_LEVEL
from core.errors import FitWarning, InputError, PlannerError
from core.plan.pollux_speed import PolluxSpeedModel, fit_pollux_params, fit_pollux_speed, pollux_data, pollux_speeds
from core.plan.speed import SpeedModel, default_speed_mode, fit_speed_model, speed_features
from core.plan.speed_table import normalise_speed_table
from core.validation import check_scalar

#: the speed families and what ``--model`` accepts
FAMILIES: dict[str, str] = {
    "optimus": "Optimus (Peng et al., EuroSys 2018): 1/f linear in θ, NNLS",
    "pollux": "Pollux (Qiao et al., OSDI 2021): compute linear in the local batch, overlapped all-reduce",
}
MODEL_CHOICES: tuple[str, ...] = ("optimus", "pollux", "auto")
AnySpeedModel = Union[SpeedModel, PolluxSpeedModel]


@dataclass(frozen=True)
class SpeedFit:
    """Both speed families fitted to one table, each with its leave-one-out error, and the one chosen.

    Attributes
    ----------
    model : SpeedModel or PolluxSpeedModel
        The chosen model, with ``loo_mape_pct`` and ``time_band`` set.
    chosen : {"optimus", "pollux"}
    requested : {"optimus", "pollux", "auto"}
    models : tuple
        Every family that could be fitted (the chosen one among them).
    problems : tuple of (family, message)
        Families that could not be fitted to this table, and why.
    """

    model: AnySpeedModel
    chosen: str
    requested: str
    models: tuple[AnySpeedModel, ...]
    problems: tuple[tuple[str, str], ...] = ()

    def table(self) -> pd.DataFrame:
        """One row per family: ``family, mode, n_points, mape_pct, loo_mape_pct, chosen``."""
        rows = [{"family": m.family, "mode": m.mode, "n_points": m.n_points, "mape_pct": m.mape_pct,
                 "loo_mape_pct": m.loo_mape_pct, "chosen": m.family == self.chosen} for m in self.models]
        rows += [{"family": f, "mode": None, "n_points": None, "mape_pct": None, "loo_mape_pct": None,
                  "chosen": False} for f, _ in self.problems]
        return pd.DataFrame(rows, columns=["family", "mode", "n_points", "mape_pct", "loo_mape_pct", "chosen"])

    @property
    def note(self) -> str:
        """One sentence: which family, and why."""
        scores = ", ".join(f"{m.family} {m.loo_mape_pct:.2f} %" for m in self.models if m.loo_mape_pct is not None)
        why = "lower leave-one-out MAPE" if self.requested == "auto" and len(self.models) > 1 else "as asked"
        more = "".join(f" {f} not fitted: {msg}" for f, msg in self.problems)
        return f"Speed model: {self.chosen} ({why}; leave-one-out MAPE {scores}).{more}"

    def report(self) -> str:
        """Each model's report, then the comparison."""
        parts = [m.report() for m in self.models]
        parts.append("[[Choice]]\n" + "\n".join(
            f"    {r.family}: MAPE {r.mape_pct:.2f} %, leave-one-out {r.loo_mape_pct:.2f} %"
            + ("  <- chosen" if r.chosen else "") for r in self.table().itertuples() if r.mape_pct is not None)
            + "".join(f"\n    {f}: not fitted ({msg})" for f, msg in self.problems))
        return "\n".join(parts)


def _band(ratio: np.ndarray, level: float) -> tuple[float, float]:
    lo, hi = np.quantile(ratio, [(1 - level) / 2, (1 + level) / 2])
    return float(min(lo, 1.0)), float(max(hi, 1.0))


def _optimus_loo(tab: pd.DataFrame, mode: str) -> np.ndarray:
    """Leave-one-out predicted speeds of the Optimus NNLS fit."""
    X = speed_features(mode, tab["p"], tab["w"], tab["global_batch"].fillna(1.0))
    y = 1.0 / tab["steps_per_s"].to_numpy(dtype=float)
    pred = np.empty(len(y))
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        theta, _ = nnls(X[keep], y[keep])
        pred[i] = 1.0 / (X[i] @ theta) if X[i] @ theta > 0 else np.inf
    return pred


def _pollux_loo(table: pd.DataFrame, model: PolluxSpeedModel, global_batch, gpus_per_node, source) -> np.ndarray:
    d, _ = pollux_data(table, global_batch=global_batch, gpus_per_node=gpus_per_node, source=source)
    pred = np.empty(len(d))
    start = (model.params,)
    for i in range(len(d)):
        keep = np.arange(len(d)) != i
        x, _ = fit_pollux_params(d.subset(keep), starts=start)
        pred[i] = pollux_speeds(x, d.subset(~keep))[0]
    return pred


def _scored(model: AnySpeedModel, pred: np.ndarray, measured: np.ndarray, level: float) -> AnySpeedModel:
    rel = np.abs(pred - measured) / measured
    return dataclasses.replace(model, loo_mape_pct=float(np.mean(rel) * 100),
                               time_band=_band(measured / pred, level), level=level)


def fit_speed(table: pd.DataFrame, *, model: str = "auto", mode: str | None = None,
              global_batch: float | None = None, gpus_per_node: int | None = None, level: float = DEFAULT_LEVEL,
              source: str = "table") -> SpeedFit:
    """Fit the requested speed family (or both, ``auto``) and score them by leave-one-out error.

    Parameters
    ----------
    table : DataFrame
        Measured speeds (:mod:`core.plan.speed_table`).
    model : {"optimus", "pollux", "auto"}, default="auto"
        ``auto`` fits both and keeps the one with the smaller leave-one-out MAPE (Pollux
        only for all-reduce tables: it has no parameter servers).
    mode : {"sync", "async", "allreduce"} or None
        The Optimus equation; None: ``allreduce`` without parameter servers, else ``sync``.
    global_batch : float or None
        ``M`` for rows without one, and the planning batch.
    gpus_per_node : int or None
        Pollux's node count when planning (:func:`core.plan.pollux_speed.fit_pollux_speed`).
    level : float, default=0.8
        Coverage of the time band.
    source : str

    Returns
    -------
    SpeedFit

    Raises
    ------
    InputError
        Unknown ``model``; or no family can be fitted (the message of the one asked for).

    Examples
    --------
    Points made by the Optimus all-reduce equation: Optimus fits them exactly, and it is chosen.

    >>> w = [1, 2, 4, 8, 16]
    >>> t = [0.001 * 256 / k + 0.05 + 0.002 * k for k in w]
    >>> tab = pd.DataFrame({"w": w, "global_batch": 256, "step_time_s": t})
    >>> fit = fit_speed(tab)
    >>> fit.chosen, round(fit.model.loo_mape_pct, 6), [round(b, 9) for b in fit.model.time_band]
    ('optimus', 0.0, [1.0, 1.0])
    >>> fit.table()["family"].tolist()      # Pollux's model fitted beside it
    ['optimus', 'pollux']
    """
    if model not in MODEL_CHOICES:
        raise InputError(f"speed model: expected one of {', '.join(MODEL_CHOICES)}; got {model!r}. "
                         "Pick optimus, pollux or auto.")
    level = check_scalar(level, "level", float, min_val=0, max_val=1, include_boundaries="neither")
    tab = normalise_speed_table(table, global_batch=global_batch, source=source)
    measured = tab["steps_per_s"].to_numpy(dtype=float)
    mode = mode or default_speed_mode(table)
    wanted = ("optimus", "pollux") if model == "auto" else (model,)
    models, problems = [], []
    for family in wanted:
        try:
            if family == "optimus":
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", FitWarning)
                    fitted = fit_speed_model(table, mode=mode, global_batch=global_batch, source=source)
                    pred = _optimus_loo(tab, mode) if len(tab) > len(fitted.theta) else None
            else:
                if mode != "allreduce":
                    raise InputError(f"{source}: Pollux's model has no parameter servers; the table is fitted in "
                                     f"mode {mode!r}.")
                fitted = fit_pollux_speed(table, global_batch=global_batch, gpus_per_node=gpus_per_node,
                                          source=source)
                pred = _pollux_loo(table, fitted, global_batch, gpus_per_node, source) if len(tab) > 3 else None
        except PlannerError as err:
            if model != "auto":
                raise
            problems.append((family, str(err)))
            continue
        models.append(_scored(fitted, pred, measured, level) if pred is not None else fitted)
    if not models:
        raise InputError(f"{source}: expected a table one speed family can fit; got none ("
                         + "; ".join(f"{f}: {msg}" for f, msg in problems) + ").")
    best = min(models, key=lambda m: np.inf if m.loo_mape_pct is None else m.loo_mape_pct)
    return SpeedFit(best, best.family, model, tuple(models), tuple(problems))
