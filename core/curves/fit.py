"""The fit of a learning-curve family to a log, ``fit_curve``, and its result, ``FitResult``.

The default family is the Optimus loss model (``core.curves.optimus``). Long logs are fitted on
log-spaced bins of the steps, each bin weighted by its number of points, which reaches the
parameters of the fit on every point (within 0.1 % on smooth data) in a few milliseconds; R²,
the residual variance and hence the standard errors are computed on every point.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import OptimizeWarning, curve_fit

from core.curves.family import CurveFamily, min_fit_points
from core.curves.registry import get_family
from core.errors import FitError, FitWarning, InputError

#: fits on more points than this use log-spaced bins (see ``bin_log_spaced``)
DEFAULT_MAX_POINTS = 2000


# --------------------------------------------------------------------------- result
@dataclass(frozen=True)
class FitResult:
    """A fitted curve with its statistics and honest flags.

    Attributes
    ----------
    family : str
    params, stderr : dict of str to float
        Fitted values and standard errors (``inf`` when not estimable, never 0).
        The errors assume independent residuals; per-step losses are autocorrelated, so
        treat them as a lower bound on the real uncertainty.
    cov : tuple of tuples
        Parameter covariance (scaled by the residual variance of all points).
    n_points : int
        Points in the data; ``n_fitted`` is how many (binned) points the optimiser saw.
    rss, redchi, r2 : float
        Residual sum of squares, ``rss/(n_points - n_params)`` and ``1 - rss/SS_tot``, on
        every point.
    k_min, k_max : float
        Step range of the data.
    converged : bool
        The optimiser finished (an optimistic view, like lmfit's ``success``).
    errorbars : bool
        Standard errors could be estimated.
    flags : tuple of str
        Short sentences: "degenerate fit: ...", "b2 at its lower bound 0", ...
    """

    family: str
    params: dict[str, float]
    stderr: dict[str, float]
    cov: tuple[tuple[float, ...], ...]
    n_points: int
    n_fitted: int
    rss: float
    redchi: float
    r2: float
    k_min: float
    k_max: float
    converged: bool
    errorbars: bool
    flags: tuple[str, ...] = field(default=())

    @property
    def curve(self) -> CurveFamily:
        return get_family(self.family)

    @property
    def values(self) -> tuple[float, ...]:
        return tuple(self.params[n] for n in self.curve.param_names)

    @property
    def degenerate(self) -> bool:
        return any(f.startswith("degenerate") for f in self.flags)

    def predict(self, k: np.ndarray | float) -> np.ndarray:
        """The fitted curve at steps ``k``."""
        return self.curve.func(np.asarray(k, dtype=float), *self.values)

    def step_at(self, y: float) -> float:
        """First step where the curve reaches ``y`` (NaN if it never does)."""
        return float(self.curve.inverse(y, *self.values))

    def step_at_many(self, y) -> np.ndarray:
        """``step_at`` for an array of values."""
        return np.asarray(self.curve.inverse(np.asarray(y, dtype=float), *self.values), dtype=float)

    @property
    def floor(self) -> float:
        """The value the curve falls to (its family's floor parameter: ``b2`` or ``b``)."""
        return float(self.params[self.curve.floor])

    def to_dict(self) -> dict:
        out: dict = {"family": self.family}
        for n in self.curve.param_names:
            out[n] = self.params[n]
        for n in self.curve.param_names:
            out[f"{n}_se"] = self.stderr[n]
        out.update(n_points=self.n_points, rss=self.rss, redchi=self.redchi, r2=self.r2,
                   converged=self.converged, errorbars=self.errorbars, flags="; ".join(self.flags))
        return out

    def report(self) -> str:
        """A fixed-section text report (lmfit ``fit_report`` layout)."""
        lines = ["[[Fit Statistics]]", f"    family   = {self.curve.formula}",
                 f"    points   = {self.n_points} (fitted on {self.n_fitted})",
                 f"    R²       = {self.r2:.5f}", f"    redchi   = {self.redchi:.4g}",
                 "[[Variables]]"]
        for n, lo in zip(self.curve.param_names, self.curve.lower):
            v, se = self.params[n], self.stderr[n]
            lines.append(f"    {n:<4} = {v:.6g} +/- {se:.3g} {relative_error_text(v, se, lo)}".rstrip())
        if not self.errorbars:
            lines.append("    uncertainties could not be estimated")
        if self.flags:
            lines.append("[[Flags]]")
            lines += [f"    {f}" for f in self.flags]
        return "\n".join(lines)


# --------------------------------------------------------------------------- fitting
def bin_log_spaced(k: np.ndarray, y: np.ndarray, *, max_points: int = DEFAULT_MAX_POINTS
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Means of ``k`` and ``y`` in at most ``max_points`` log-spaced bins of ``k``, with counts.

    The least-squares objective on the bin means weighted by their counts equals the one on
    every point up to terms that vanish where the curve is straight within a bin, so the
    two fits agree; the bins are narrow where the curve bends (early steps).

    >>> k = np.arange(1, 11.0); bk, by, n = bin_log_spaced(k, 2 * k, max_points=20)
    >>> bool(np.allclose(by, 2 * bk)), int(n.sum())
    (True, 10)
    """
    k = np.asarray(k, dtype=float)
    y = np.asarray(y, dtype=float)
    if k.size <= max_points:
        return k, y, np.ones_like(k)
    if np.any(np.diff(k) < 0):  # bins need sorted steps; logs come sorted, other callers may not
        order = np.argsort(k, kind="stable")
        k, y = k[order], y[order]
    lo = max(float(k[0]), 0.0)
    shift = 1.0 - lo  # log bins on k + shift >= 1, so k = 0 is fine
    edges = np.geomspace(lo + shift, float(k[-1]) + shift, max_points + 1)
    # positions of the bin edges in the sorted steps: O(bins · log n), no pass per point
    cut = np.searchsorted(k + shift, edges[1:-1], side="left")
    starts = np.concatenate([[0], cut])
    ends = np.concatenate([cut, [k.size]])
    counts = (ends - starts).astype(float)
    nz = counts > 0
    csum_k = np.concatenate([[0.0], np.cumsum(k)])
    csum_y = np.concatenate([[0.0], np.cumsum(y)])
    sum_k = csum_k[ends] - csum_k[starts]
    sum_y = csum_y[ends] - csum_y[starts]
    return sum_k[nz] / counts[nz], sum_y[nz] / counts[nz], counts[nz]


def validate_xy(k, y, name: str, n_params: int = 3) -> tuple[np.ndarray, np.ndarray]:
    k = np.asarray(k, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if k.shape != y.shape:
        raise InputError(f"{name}: expected steps and values of the same length; got {k.size} and {y.size}.")
    ok = np.isfinite(k) & np.isfinite(y)
    k, y = k[ok], y[ok]
    if k.size < min_fit_points(n_params):
        raise InputError(f"{name}: expected at least {min_fit_points(n_params)} finite points to fit {n_params} "
                         f"parameters; got {k.size}.")
    if np.ptp(k) == 0:
        raise InputError(f"{name}: expected points at several steps; every point is at step {k[0]:g}.")
    return k, y


def fit_curve(k, y, *, family: str = "optimus", max_points: int = DEFAULT_MAX_POINTS,
              name: str = "curve", tol: float = 1e-12) -> FitResult:
    """Fit a learning-curve family to values ``y`` at steps ``k`` by bounded least squares.

    Parameters
    ----------
    k, y : array-like of shape (n,)
        Global steps and the observed loss (or accuracy for rising families).
    family : str, default "optimus"
        A key of ``FAMILIES``.
    max_points : int, default 2000
        Logs longer than this are fitted on ``max_points`` log-spaced bins (weights =
        counts); statistics are still computed on every point.
    name : str
        Used in messages (the file name).
    tol : float, default 1e-12
        ``ftol``, ``xtol`` and ``gtol`` of the optimiser (backtests, which refit hundreds of
        times, use 1e-8).

    Returns
    -------
    FitResult

    Raises
    ------
    InputError
        Fewer finite points than parameters + 1, all at one step, or ``k <= 0`` for a family
        defined only for ``k > 0``.
    FitError
        The optimiser failed.

    Examples
    --------
    >>> from core.curves.optimus import optimus_loss
    >>> k = np.arange(1, 2001.0)
    >>> fit = fit_curve(k, optimus_loss(k, 2e-4, 0.8, 0.3))
    >>> [round(fit.params[p], 6) for p in ("b0", "b1", "b2")]
    [0.0002, 0.8, 0.3]
    """
    curve = get_family(family)
    k, y = validate_xy(k, y, name, len(curve.param_names))
    if curve.k_positive and k.min() <= 0:
        raise InputError(f"{name}: the {curve.name} curve {curve.formula} needs steps k > 0; got "
                         f"k = {k.min():g}. Count steps from 1 or choose another family.")
    bk, by, counts = bin_log_spaced(k, y, max_points=max_points)
    p0 = _initial(curve, bk, by, counts)
    sigma = 1.0 / np.sqrt(counts)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OptimizeWarning)
            warnings.simplefilter("ignore", RuntimeWarning)
            popt, pcov_unit = curve_fit(curve.func, bk, by, p0=p0, sigma=sigma, absolute_sigma=True,
                                        bounds=(curve.lower, curve.upper), jac=curve.jac,
                                        method="trf", x_scale="jac", max_nfev=2000,
                                        ftol=tol, xtol=tol, gtol=tol)
        converged = True
    except (RuntimeError, ValueError) as exc:
        raise FitError(f"{name}: the {curve.name} fit did not converge ({exc}).") from None
    result = fit_result(curve, popt, pcov_unit, k, y, n_fitted=int(bk.size), converged=converged)
    flags = result.flags
    if result.degenerate:
        warnings.warn(f"{name}: {next(f for f in flags if f.startswith('degenerate'))}", FitWarning,
                      stacklevel=2)
    return result


def fit_result(curve: CurveFamily, popt, pcov_unit, k: np.ndarray, y: np.ndarray, *, n_fitted: int,
               converged: bool = True) -> FitResult:
    """The ``FitResult`` of parameters ``popt`` on points ``(k, y)``: residuals, R², the covariance scaled by
    the reduced chi-square (all-inf, no error bars, when it cannot be estimated) and the flags. One home for
    these statistics: ``fit_curve`` and the batched refit (``core.library.refit``) both build their results here."""
    resid = y - curve.func(k, *popt)
    rss = float(np.sum(resid**2))
    n_params = len(curve.param_names)
    redchi = rss / max(k.size - n_params, 1)
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - rss / ss_tot if ss_tot > 0 else (1.0 if rss == 0 else 0.0)
    pcov = np.asarray(pcov_unit, dtype=float) * redchi
    errorbars = bool(np.all(np.isfinite(pcov)) and np.all(np.diag(pcov) > 0))
    stderr = np.sqrt(np.diag(pcov)) if errorbars else np.full(n_params, np.inf)
    if not errorbars:
        pcov = np.full((n_params, n_params), np.inf)
    params = {n: float(v) for n, v in zip(curve.param_names, popt)}
    flags = tuple(fit_flags(curve, params, dict(zip(curve.param_names, map(float, stderr))), k, r2, errorbars))
    return FitResult(family=curve.name, params=params, stderr={n: float(s) for n, s in zip(curve.param_names, stderr)},
                     cov=tuple(tuple(map(float, row)) for row in pcov), n_points=int(k.size), n_fitted=n_fitted,
                     rss=rss, redchi=redchi, r2=float(r2), k_min=float(k.min()), k_max=float(k.max()),
                     converged=converged, errorbars=errorbars, flags=flags)


def _initial(curve: CurveFamily, k: np.ndarray, y: np.ndarray, w: np.ndarray) -> list[float]:
    p0 = curve.initial(k, y, w)
    lo, hi = np.asarray(curve.lower, dtype=float), np.asarray(curve.upper, dtype=float)
    p0 = np.asarray(p0, dtype=float)
    span = np.where(np.isfinite(hi - lo), (hi - lo) * 1e-9, np.maximum(np.abs(p0), 1.0) * 1e-9)
    return list(np.clip(p0, lo + span, np.where(np.isfinite(hi), hi - span, np.inf)))


#: relative standard error above which a parameter is flagged "poorly determined (±N %)" (100 %)
POORLY_DETERMINED = 1.0
#: relative standard error above which no percentage is printed: the parameter is "undetermined" (1000 %)
UNDETERMINED = 10.0
#: fits on at most this many points whose decay parameters are all poorly determined say so in one sentence
FEW_POINTS = 10


def at_lower_bound(value: float, lower: float) -> bool:
    """``value`` sits on its lower bound (within 1e-9): its relative error says nothing (the floor at 0, b1 at 0)."""
    return math.isfinite(lower) and value - lower <= 1e-9


def relative_error_text(value: float, se: float, lower: float = -math.inf) -> str:
    """The relative standard error of a parameter as a report prints it, never unbounded: ``(12.3 %)``, ``(at its
    bound)`` for a value on its lower bound, ``(undetermined)`` above ``UNDETERMINED`` (1000 %) or for a value of
    0, nothing without a finite error.

    >>> relative_error_text(2.0, 0.5), relative_error_text(1e-27, 10.0, 0.0), relative_error_text(0.05, 12.0)
    ('(25.0 %)', '(at its bound)', '(undetermined)')
    """
    if not math.isfinite(se):
        return ""
    if at_lower_bound(value, lower):
        return "(at its bound)"
    if value == 0 or se > UNDETERMINED * abs(value):
        return "(undetermined)"
    return f"({se / abs(value) * 100:.1f} %)"


def fit_flags(curve: CurveFamily, params: dict[str, float], stderr: dict[str, float], k: np.ndarray,
              r2: float, errorbars: bool) -> list[str]:
    """The flags of a fit: each one something that changes what to do with it (docs/logs.md, Fitting).

    A degenerate fit says only that (its parameters' errors add nothing). A relative error is never printed
    unbounded: above ``UNDETERMINED`` a parameter is "undetermined (the data do not constrain it)", and a
    parameter on its lower bound (b1 or the floor at 0) has none. A fit on at most ``FEW_POINTS`` points whose
    floor is determined but whose decay is not (a fine-tune's handful of evaluations) says so once:
    "5 points: the curve is fitted to its floor only (b0 not determined by so few points)".
    """
    flags: list[str] = []
    reason = curve.degenerate_reason(params, float(k.min()), float(k.max()))
    if reason:
        flags.append(reason)
    if params[curve.floor] <= 1e-9:
        flags.append(f"{curve.floor} at its lower bound 0 (no {curve.floor_label})")
    for n, hi in zip(curve.param_names, curve.upper):
        if math.isfinite(hi) and params[n] >= hi * (1 - 1e-6):
            flags.append(f"{n} at its upper bound {hi:g}")
    if not errorbars:
        flags.append("uncertainties could not be estimated")
    elif not reason:
        flags += _determination_flags(curve, params, stderr, int(k.size))
    if r2 < 0.5:
        flags.append(f"poor fit: R² = {r2:.2f}")
    return flags


def _determination_flags(curve: CurveFamily, params: dict[str, float], stderr: dict[str, float],
                         n_points: int) -> list[str]:
    """"poorly determined (±N %)" up to ``UNDETERMINED``, "undetermined" above, or the one few-points sentence."""
    rel = {n: stderr[n] / abs(params[n]) if params[n] else math.inf
           for n, lo in zip(curve.param_names, curve.lower) if not at_lower_bound(params[n], lo)}
    poor = [n for n, r in rel.items() if r > POORLY_DETERMINED]
    decay = [n for n in rel if n != curve.floor]
    if n_points <= FEW_POINTS and decay and set(decay) <= set(poor) and curve.floor in rel \
            and curve.floor not in poor:
        return [f"{n_points} points: the curve is fitted to its floor only ({', '.join(decay)} not determined by "
                f"so few points)"]
    return [f"{n} undetermined (the data do not constrain it)" if rel[n] > UNDETERMINED else
            f"{n} poorly determined (±{rel[n] * 100:.0f} %)" for n in poor]
