"""Learning-curve families and the fit of a curve to a log, ``fit_curve``.

The default family is the Optimus loss model (Peng et al., EuroSys 2018)::

    l(k) = 1 / (b0·k + b1) + b2,    b0, b1, b2 >= 0

with k the global optimiser step.  Long logs are fitted on log-spaced bins of the steps,
each bin weighted by its number of points, which reaches the parameters of the fit on every
point (within 0.1 % on smooth data) in a few milliseconds; R², the residual variance and
hence the standard errors are computed on every point.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import OptimizeWarning, curve_fit

from core.errors import FitError, FitWarning, InputError

#: fits on more points than this use log-spaced bins (see ``bin_log_spaced``)
DEFAULT_MAX_POINTS = 2000


@dataclass(frozen=True)
class CurveFamily:
    """A parametric learning curve y(k) that can be fitted and inverted.

    Attributes
    ----------
    name : str
        Key used everywhere (``"optimus"``).
    label : str
        Human name for selectors.
    formula : str
        The formula, in the notation the page prints.
    param_names : tuple of str
    func : callable
        ``func(k, *params) -> y``, vectorised over ``k``.
    jac : callable or None
        ``jac(k, *params) -> (n, n_params)`` array, or ``None`` for finite differences.
    initial : callable
        ``initial(k, y, w) -> list of starting values``; ``w`` are the point weights (bin
        counts of a binned fit), ``None`` for equal weights.
    inverse : callable
        ``inverse(y, *params) -> k`` where the curve first reaches ``y``; NaN if never.
        Broadcasts over arrays of ``y`` and of parameters (parameter draws).
    lower, upper : tuple of float
        Bounds of the parameters.
    decreasing : bool
        True for loss-like curves (falling to a floor), False for accuracy-like (rising).
        Every registered family is decreasing; accuracy is fitted as the error ``1 − acc``.
    k_positive : bool
        The curve is only defined for ``k > 0`` (``a·k^(−c)``): ``fit_curve`` refuses ``k <= 0``.
    """

    name: str
    label: str
    formula: str
    param_names: tuple[str, ...]
    func: Callable[..., np.ndarray]
    jac: Callable[..., np.ndarray] | None
    initial: Callable[..., list[float]]
    inverse: Callable[..., float]
    lower: tuple[float, ...]
    upper: tuple[float, ...]
    decreasing: bool = True
    k_positive: bool = False


# --------------------------------------------------------------------------- Optimus
def optimus_loss(k: np.ndarray, b0: float, b1: float, b2: float) -> np.ndarray:
    """The Optimus loss model ``1/(b0·k + b1) + b2``.

    >>> float(optimus_loss(1000.0, 0.001, 1.0, 0.1))   # 1/(1 + 1) + 0.1
    0.6
    """
    return 1.0 / (b0 * np.asarray(k, dtype=float) + b1) + b2


def _optimus_jac(k: np.ndarray, b0: float, b1: float, b2: float) -> np.ndarray:
    k = np.asarray(k, dtype=float)
    d = -1.0 / (b0 * k + b1) ** 2
    return np.column_stack([d * k, d, np.ones_like(k)])


def optimus_step_at_loss(loss: float, b0: float, b1: float, b2: float) -> float:
    """The step where the Optimus curve reaches ``loss``: ``(1/(loss - b2) - b1)/b0``.

    NaN when the curve never gets there (``loss <= b2``, or ``b0 == 0``); 0 when the curve
    starts below ``loss``.  Broadcasts over arrays (a float for scalar input).

    >>> optimus_step_at_loss(0.6, 0.001, 1.0, 0.1)   # (1/(0.6-0.1) - 1)/0.001
    1000.0
    """
    loss, b0, b1, b2 = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (loss, b0, b1, b2)))
    ok = (loss > b2) & (b0 > 0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        k = np.maximum(0.0, (1.0 / np.where(ok, loss - b2, 1.0) - b1) / np.where(ok, b0, 1.0))
    out = np.where(ok, k, np.nan)
    return float(out) if out.ndim == 0 else out


def _optimus_initial(k: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> list[float]:
    """Start from the best straight line through 1/(y - b2) = b0·k + b1 over a few floors b2."""
    w = np.ones_like(y) if w is None else w
    best: tuple[float, list[float]] | None = None
    y_min = float(np.min(y))
    for frac in (0.0, 0.3, 0.6, 0.8, 0.9, 0.97):
        b2 = frac * y_min
        z = 1.0 / np.maximum(y - b2, 1e-12)
        A = np.column_stack([k, np.ones_like(k)]) * np.sqrt(w)[:, None]
        (b0, b1), *_ = np.linalg.lstsq(A, z * np.sqrt(w), rcond=None)
        b0 = max(float(b0), 1e-12)
        b1 = max(float(b1), 1e-12)
        sse = float(np.sum(w * (optimus_loss(k, b0, b1, b2) - y) ** 2))
        if math.isfinite(sse) and (best is None or sse < best[0]):
            best = (sse, [b0, b1, b2])
    assert best is not None
    return best[1]


OPTIMUS = CurveFamily(
    name="optimus",
    label="Optimus 1/(b0·k+b1)+b2",
    formula="l(k) = 1 / (b0·k + b1) + b2",
    param_names=("b0", "b1", "b2"),
    func=optimus_loss,
    jac=_optimus_jac,
    initial=_optimus_initial,
    inverse=optimus_step_at_loss,
    lower=(0.0, 0.0, 0.0),
    upper=(np.inf, np.inf, np.inf),
)

#: every family by name; ``core.families`` adds more
FAMILIES: dict[str, CurveFamily] = {"optimus": OPTIMUS}


def get_family(name: str) -> CurveFamily:
    """The family called ``name`` (see ``FAMILIES``)."""
    try:
        return FAMILIES[name]
    except KeyError:
        raise InputError(f"family: expected one of {', '.join(FAMILIES)}; got {name!r}.") from None


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
        """The value the curve falls to (``b2`` or ``b``)."""
        return float(self.params.get("b2", self.params.get("b", math.nan)))

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
        for n in self.curve.param_names:
            v, se = self.params[n], self.stderr[n]
            rel = f"({abs(se / v) * 100:.1f} %)" if v and math.isfinite(se) else ""
            lines.append(f"    {n:<4} = {v:.6g} +/- {se:.3g} {rel}".rstrip())
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


def _validate_xy(k, y, name: str, n_params: int = 3) -> tuple[np.ndarray, np.ndarray]:
    k = np.asarray(k, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if k.shape != y.shape:
        raise InputError(f"{name}: expected steps and values of the same length; got {k.size} and {y.size}.")
    ok = np.isfinite(k) & np.isfinite(y)
    k, y = k[ok], y[ok]
    if k.size < n_params + 1:
        raise InputError(f"{name}: expected at least {n_params + 1} finite points to fit {n_params} "
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
    >>> k = np.arange(1, 2001.0)
    >>> fit = fit_curve(k, optimus_loss(k, 2e-4, 0.8, 0.3))
    >>> [round(fit.params[p], 6) for p in ("b0", "b1", "b2")]
    [0.0002, 0.8, 0.3]
    """
    curve = get_family(family)
    k, y = _validate_xy(k, y, name, len(curve.param_names))
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
    resid = y - curve.func(k, *popt)
    rss = float(np.sum(resid**2))
    n_params = len(curve.param_names)
    dof = max(k.size - n_params, 1)
    redchi = rss / dof
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - rss / ss_tot if ss_tot > 0 else (1.0 if rss == 0 else 0.0)
    pcov = np.asarray(pcov_unit, dtype=float) * redchi
    errorbars = bool(np.all(np.isfinite(pcov)) and np.all(np.diag(pcov) > 0))
    stderr = np.sqrt(np.diag(pcov)) if errorbars else np.full(n_params, np.inf)
    if not errorbars:
        pcov = np.full((n_params, n_params), np.inf)
    params = {n: float(v) for n, v in zip(curve.param_names, popt)}
    flags = tuple(_flags(curve, params, dict(zip(curve.param_names, map(float, stderr))), k, r2, errorbars))
    result = FitResult(family=curve.name, params=params,
                       stderr={n: float(s) for n, s in zip(curve.param_names, stderr)},
                       cov=tuple(tuple(map(float, row)) for row in pcov), n_points=int(k.size),
                       n_fitted=int(bk.size), rss=rss, redchi=redchi, r2=float(r2),
                       k_min=float(k.min()), k_max=float(k.max()), converged=converged,
                       errorbars=errorbars, flags=flags)
    if result.degenerate:
        warnings.warn(f"{name}: {next(f for f in flags if f.startswith('degenerate'))}", FitWarning,
                      stacklevel=2)
    return result


def _initial(curve: CurveFamily, k: np.ndarray, y: np.ndarray, w: np.ndarray) -> list[float]:
    p0 = curve.initial(k, y, w)
    lo, hi = np.asarray(curve.lower, dtype=float), np.asarray(curve.upper, dtype=float)
    p0 = np.asarray(p0, dtype=float)
    span = np.where(np.isfinite(hi - lo), (hi - lo) * 1e-9, np.maximum(np.abs(p0), 1.0) * 1e-9)
    return list(np.clip(p0, lo + span, np.where(np.isfinite(hi), hi - span, np.inf)))


def degenerate_reason(b0: float, b1: float, b2: float, *, first_step: float = 1.0,
                      last_step: float | None = None) -> str | None:
    """Why Optimus parameters describe no real decay, or ``None`` when they look sound.

    A fit is degenerate when ``b0 = 0`` (no decay at all), or when the excess loss
    ``1/(b0·k + b1)`` halves within the first logged step (``b1/b0 < first_step``): the curve
    is then a flat line at ``b2`` over the whole log, as in the course's ``val`` fits of
    ResNet-18/50 (b0 ≈ 15,000).  With ``last_step`` known, a curve whose excess loss falls
    by less than 5 % between the first and the last logged step is degenerate too (no decay
    visible in the data: nothing to extrapolate from).

    >>> degenerate_reason(15074.45, 4.8e-15, 1.489) is not None
    True
    >>> degenerate_reason(0.000237, 0.4595, 0.0) is None
    True
    """
    if not (math.isfinite(b0) and math.isfinite(b1) and math.isfinite(b2)):
        return "degenerate fit: a parameter is not finite"
    if b0 <= 0:
        return "degenerate fit: b0 = 0, the curve does not decay"
    half = b1 / b0
    if half < max(first_step, 1.0):
        return (f"degenerate fit: the curve drops to b2 within {half:.3g} steps, before the "
                f"first logged step; it is flat over the data")
    if last_step is not None and b0 * (last_step - first_step) < 0.05 * (b0 * first_step + b1):
        return "degenerate fit: the curve falls by less than 5 % over the data; no decay is visible"
    return None


def _generic_degenerate_reason(curve: CurveFamily, params: dict[str, float], k: np.ndarray) -> str | None:
    """Degenerate when the fitted curve barely moves over the data (nothing to extrapolate)."""
    values = list(params.values())
    if not all(math.isfinite(v) for v in values):
        return "degenerate fit: a parameter is not finite"
    if params.get("a", 1.0) <= 0:
        return "degenerate fit: a = 0, the curve is flat"
    y0, y1 = curve.func(np.array([k.min(), k.max()]), *values)
    floor = params.get("b", 0.0)
    if not y0 - y1 > 0.05 * max(y0 - floor, 1e-300):
        return "degenerate fit: the curve falls by less than 5 % over the data; no decay is visible"
    if not y0 - y1 > 1e-3 * abs(y0):
        return "degenerate fit: the curve falls by less than 0.1 % of its level over the data; it is flat"
    return None


def _flags(curve: CurveFamily, params: dict[str, float], stderr: dict[str, float], k: np.ndarray,
           r2: float, errorbars: bool) -> list[str]:
    flags: list[str] = []
    if curve is OPTIMUS:
        reason = degenerate_reason(params["b0"], params["b1"], params["b2"], first_step=float(k.min()),
                                   last_step=float(k.max()))
        if reason:
            flags.append(reason)
        if params["b2"] <= 1e-9:
            flags.append("b2 at its lower bound 0 (no loss floor)")
    else:
        reason = _generic_degenerate_reason(curve, params, k)
        if reason:
            flags.append(reason)
        if "b" in params and params["b"] <= 1e-9:
            flags.append("b at its lower bound 0 (no floor)")
        for n, hi in zip(curve.param_names, curve.upper):
            if math.isfinite(hi) and params[n] >= hi * (1 - 1e-6):
                flags.append(f"{n} at its upper bound {hi:g}")
    if not errorbars:
        flags.append("uncertainties could not be estimated")
    else:
        for n, v in params.items():
            if v > 0 and stderr[n] > abs(v) and not (n in ("b2", "b") and v <= 1e-9):
                flags.append(f"{n} poorly determined (±{stderr[n] / abs(v) * 100:.0f} %)")
    if r2 < 0.5:
        flags.append(f"poor fit: R² = {r2:.2f}")
    return flags


# The other families register themselves into FAMILIES (one registry); imported last because
# core.families imports CurveFamily and FAMILIES from this module.
import core.families  # noqa: E402,F401  (registration on import)
