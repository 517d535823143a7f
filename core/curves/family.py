"""``CurveFamily``: a parametric learning curve that can be fitted, inverted and judged.

A family carries everything that is specific to it (lmfit's models carry their own
``guess()`` the same way): the curve, its Jacobian, its initial guess, its inverse, its
bounds, the name of its floor parameter and its own test of a degenerate fit.  The fitter
(``core.curves.fit``) knows no family by name.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np


def min_fit_points(n_params: int) -> int:
    """The fewest finite points a curve of ``n_params`` parameters is fitted to: one more than its parameters,
    so that the fit keeps a residual degree of freedom (``core.curves.fit.validate_xy`` refuses fewer).

    >>> min_fit_points(3)
    4
    """
    return n_params + 1


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
    floor : str
        The parameter the curve falls to (``"b2"`` for Optimus, ``"b"`` for the others).
    floor_label : str
        What the floor is, in flags ("loss floor" for Optimus, a loss model; "floor" otherwise).
    degeneracy : callable
        ``degeneracy(family, params, first_step, last_step) -> str | None``: why a fit
        describes no usable decay over the data, or ``None``; see
        :meth:`degenerate_reason`.  Defaults to :func:`flat_over_data`.
    decreasing : bool
        True for loss-like curves (falling to a floor), False for accuracy-like (rising).
        Every registered family is decreasing; accuracy is fitted as the error ``1 − acc``.
    k_positive : bool
        The curve is only defined for ``k > 0`` (``a·k^(−c)``): ``fit_curve`` refuses ``k <= 0``.
    in_auto : bool, default=True
        Whether ``family="auto"`` (a prediction's backtest choice, ``core.prediction``) tries this family;
        :func:`core.curves.registry.auto_families` reads it.
    example : tuple of float, default=()
        Parameters of a realistic loss-like curve over ``k = 1..20000`` (in the order of ``param_names``):
        the curve the contract tests (tests/contracts) make with ``func`` and fit back, so that a new family is
        checked without a test naming it.
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
    floor: str = "b"
    floor_label: str = "floor"
    degeneracy: Callable[..., str | None] | None = None
    decreasing: bool = True
    k_positive: bool = False
    in_auto: bool = True
    example: tuple[float, ...] = ()

    @property
    def min_points(self) -> int:
        """The fewest finite points at different steps this family is fitted to (:func:`min_fit_points`)."""
        return min_fit_points(len(self.param_names))

    def degenerate_reason(self, params: Mapping[str, float], first_step: float,
                          last_step: float) -> str | None:
        """Why fitted ``params`` describe no decay over ``[first_step, last_step]``, or ``None``."""
        test = self.degeneracy or flat_over_data
        return test(self, params, first_step, last_step)


def flat_over_data(family: CurveFamily, params: Mapping[str, float], first_step: float,
                   last_step: float) -> str | None:
    """Degenerate when the fitted curve barely moves over the data (nothing to extrapolate).

    The default test of every family without one of its own: a parameter that is not
    finite, a zero amplitude ``a``, or a fall of less than 5 % of the excess over the floor
    (or 0.1 % of the level) between the first and the last step.
    """
    values = [params[n] for n in family.param_names]
    if not all(math.isfinite(v) for v in values):
        return "degenerate fit: a parameter is not finite"
    if params.get("a", 1.0) <= 0:
        return "degenerate fit: a = 0, the curve is flat"
    y0, y1 = family.func(np.array([first_step, last_step], dtype=float), *values)
    floor = params.get(family.floor, 0.0)
    if not y0 - y1 > 0.05 * max(y0 - floor, 1e-300):
        return "degenerate fit: the curve falls by less than 5 % over the data; no decay is visible"
    if not y0 - y1 > 1e-3 * abs(y0):
        return "degenerate fit: the curve falls by less than 0.1 % of its level over the data; it is flat"
    return None
