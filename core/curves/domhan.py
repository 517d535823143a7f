"""More learning-curve families for ``core.curves.fit_curve``: power laws, exponential, MMF, Weibull.

Every family here is written as a **decreasing** curve that falls from ``a + b`` (or from
infinity, for the power law) to a floor ``b >= 0``::

    pow3     y = a·k^(−c) + b                 power law with offset    (Domhan et al. 2015 "pow3")
    exp3     y = a·exp(−k/s) + b              exponential saturation   (Domhan's "exp3" family)
    pow4     y = a·(1 + k/s)^(−c) + b         shifted power law        (Domhan "pow4"; c = 1 is Optimus)
    mmf      y = a / (1 + (k/s)^c) + b        Morgan-Mercer-Flodin     (Domhan "MMF"; "log power" if b = 0)
    weibull  y = a·exp(−(k/s)^c) + b          Weibull                  (Domhan "Weibull"; also Janoschek)

The same families fit a loss curve and an **accuracy** curve: accuracy is fitted as the
error ``1 − acc`` with the decreasing form (``core.predict`` does this), so a target
accuracy ``t`` becomes the level ``1 − t`` and "never reaches the target" is "the error
floor ``b`` is at or above ``1 − t``".

Each family has an analytic Jacobian, an initial guess that does not depend on luck (a grid
over the shape parameters ``s, c`` with the linear ones ``a, b`` solved by weighted least
squares at every grid point, the best grid point kept) and a closed-form inverse: the first
``k`` where the curve is at or below ``y`` (0 when it starts there, NaN when it never gets
there).  Inverses and curves broadcast over arrays of parameters, so parameter draws are
inverted in one call.

``core.curves.registry`` lists them, with Optimus, in ``FAMILIES``: there is one registry.

References
----------
T. Domhan, J. T. Springenberg, F. Hutter. Speeding up automatic hyperparameter optimization
of deep neural networks by extrapolation of learning curves. IJCAI 2015 (Table 1).
"""

from __future__ import annotations

import numpy as np

from core.curves.family import CurveFamily

_INF = np.inf


def _arr(k) -> np.ndarray:
    return np.asarray(k, dtype=float)


def _finish(out: np.ndarray) -> np.ndarray | float:
    return float(out) if np.ndim(out) == 0 else out


# --------------------------------------------------------------------------- the curves
def pow3_curve(k, a, c, b):
    """``a·k^(−c) + b`` (power law with offset; needs ``k > 0``).

    >>> float(pow3_curve(4.0, 2.0, 0.5, 0.1))   # 2·4^(−0.5) + 0.1 = 1 + 0.1
    1.1
    """
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        return a * _arr(k) ** (-c) + b


def exp3_curve(k, a, s, b):
    """``a·exp(−k/s) + b`` (exponential saturation).

    >>> round(float(exp3_curve(100.0, 2.0, 100.0, 0.1)), 6)   # 2·e^(−1) + 0.1
    0.835759
    """
    with np.errstate(over="ignore", under="ignore"):
        return a * np.exp(-_arr(k) / s) + b


def pow4_curve(k, a, s, c, b):
    """``a·(1 + k/s)^(−c) + b`` (shifted power law).

    >>> float(pow4_curve(300.0, 2.0, 100.0, 0.5, 0.1))   # 2·(1 + 3)^(−0.5) + 0.1
    1.1
    """
    with np.errstate(over="ignore", under="ignore"):
        return a * (1.0 + _arr(k) / s) ** (-c) + b


def mmf_curve(k, a, s, c, b):
    """``a / (1 + (k/s)^c) + b`` (Morgan-Mercer-Flodin).

    >>> float(mmf_curve(200.0, 2.0, 100.0, 2.0, 0.1))   # 2/(1 + 2²) + 0.1
    0.5
    """
    with np.errstate(over="ignore", under="ignore"):
        return a / (1.0 + (_arr(k) / s) ** c) + b


def weibull_curve(k, a, s, c, b):
    """``a·exp(−(k/s)^c) + b`` (Weibull).

    >>> round(float(weibull_curve(200.0, 2.0, 100.0, 2.0, 0.1)), 6)   # 2·e^(−4) + 0.1
    0.136631
    """
    with np.errstate(over="ignore", under="ignore"):
        return a * np.exp(-((_arr(k) / s) ** c)) + b


# --------------------------------------------------------------------------- Jacobians
def _pow3_jac(k, a, c, b):
    k = _arr(k)
    g = k ** (-c)
    return np.column_stack([g, -a * g * np.log(k), np.ones_like(k)])


def _exp3_jac(k, a, s, b):
    k = _arr(k)
    e = np.exp(-k / s)
    return np.column_stack([e, a * e * k / s**2, np.ones_like(k)])


def _pow4_jac(k, a, s, c, b):
    k = _arr(k)
    u = 1.0 + k / s
    g = u ** (-c)
    return np.column_stack([g, a * c * g / u * k / s**2, -a * g * np.log(u), np.ones_like(k)])


def _mmf_jac(k, a, s, c, b):
    k = _arr(k)
    ks = np.maximum(k / s, 1e-300)
    r = ks**c
    d = 1.0 / (1.0 + r) ** 2
    return np.column_stack([1.0 / (1.0 + r), a * c * r / s * d, -a * r * np.log(ks) * d, np.ones_like(k)])


def _weibull_jac(k, a, s, c, b):
    k = _arr(k)
    ks = np.maximum(k / s, 1e-300)
    r = ks**c
    e = np.exp(-r)
    return np.column_stack([e, a * e * c * r / s, -a * e * r * np.log(ks), np.ones_like(k)])


# --------------------------------------------------------------------------- inverses
def _excess_ratio(y, a, b):
    """``(y − b)/a`` and the cases every inverse shares: (ratio, never, at_start).

    With ``a <= 0`` the curve is flat at ``b``: reached at once when ``y >= b``, else never.
    With ``a > 0`` the curve only approaches ``b``: never when ``y <= b``.
    """
    y, a, b = np.broadcast_arrays(_arr(y), _arr(a), _arr(b))
    flat = ~(a > 0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = np.where(flat, np.nan, (y - b) / np.where(flat, 1.0, a))
    never = np.where(flat, ~(y >= b), ~(y > b)) | ~np.isfinite(y)
    at_start = flat & (y >= b)
    return ratio, never, at_start


def pow3_step_at(y, a, c, b):
    """First ``k`` with ``a·k^(−c) + b <= y``: ``(a/(y − b))^(1/c)``; NaN when ``y <= b``.

    >>> pow3_step_at(1.1, 2.0, 0.5, 0.1)   # (2/1)^(1/0.5) = 4
    4.0
    >>> pow3_step_at(0.1, 2.0, 0.5, 0.1)   # at the floor: never
    nan
    """
    ratio, never, at_start = _excess_ratio(y, a, b)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        k = ratio ** (-1.0 / _arr(c))
    k = np.where(at_start | (_arr(c) <= 0) & (ratio >= 1), 0.0, k)
    return _finish(np.where(never | (_arr(c) <= 0) & (ratio < 1), np.nan, k))


def exp3_step_at(y, a, s, b):
    """First ``k`` with ``a·exp(−k/s) + b <= y``: ``s·ln(a/(y − b))``, 0 if the curve starts below.

    >>> round(exp3_step_at(float(exp3_curve(100.0, 2.0, 100.0, 0.1)), 2.0, 100.0, 0.1), 9)
    100.0
    """
    ratio, never, at_start = _excess_ratio(y, a, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        k = -_arr(s) * np.log(ratio)
    k = np.where(at_start | (ratio >= 1), 0.0, k)
    return _finish(np.where(never, np.nan, k))


def pow4_step_at(y, a, s, c, b):
    """First ``k`` with ``a·(1 + k/s)^(−c) + b <= y``: ``s·((a/(y − b))^(1/c) − 1)``.

    >>> pow4_step_at(1.1, 2.0, 100.0, 0.5, 0.1)   # 100·((2/1)^2 − 1)
    300.0
    """
    ratio, never, at_start = _excess_ratio(y, a, b)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        k = _arr(s) * (ratio ** (-1.0 / _arr(c)) - 1.0)
    k = np.where(at_start | (ratio >= 1), 0.0, k)
    return _finish(np.where(never, np.nan, k))


def mmf_step_at(y, a, s, c, b):
    """First ``k`` with ``a/(1 + (k/s)^c) + b <= y``: ``s·(a/(y − b) − 1)^(1/c)``.

    >>> mmf_step_at(0.5, 2.0, 100.0, 2.0, 0.1)   # 100·(2/0.4 − 1)^(1/2)
    200.0
    """
    ratio, never, at_start = _excess_ratio(y, a, b)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        k = _arr(s) * (1.0 / ratio - 1.0) ** (1.0 / _arr(c))
    k = np.where(at_start | (ratio >= 1), 0.0, k)
    return _finish(np.where(never, np.nan, k))


def weibull_step_at(y, a, s, c, b):
    """First ``k`` with ``a·exp(−(k/s)^c) + b <= y``: ``s·ln(a/(y − b))^(1/c)``.

    >>> round(weibull_step_at(float(weibull_curve(200.0, 2.0, 100.0, 2.0, 0.1)), 2.0, 100.0, 2.0, 0.1), 9)
    200.0
    """
    ratio, never, at_start = _excess_ratio(y, a, b)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        k = _arr(s) * (-np.log(ratio)) ** (1.0 / _arr(c))
    k = np.where(at_start | (ratio >= 1), 0.0, k)
    return _finish(np.where(never, np.nan, k))


# --------------------------------------------------------------------------- initial guesses
#: grid sizes of the initial-guess search (shape parameters)
N_SCALE_GRID = 24
N_EXPONENT_GRID = 12


def _scale_grid(k: np.ndarray) -> np.ndarray:
    lo = max(float(np.min(k)), 1e-9)
    hi = max(float(np.max(k)), lo * 10)
    return np.geomspace(lo / 10, hi * 10, N_SCALE_GRID)


def _best_linear(G: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[int, float, float]:
    """Row ``i`` of ``G`` (m, n) and ``a >= 0, b >= 0`` minimising ``Σ w (y − a·G[i] − b)²``."""
    sw = w.sum()
    gm = G @ w / sw
    ym = float(w @ y / sw)
    gc = G - gm[:, None]
    var = (gc**2) @ w
    cov = gc @ (w * (y - ym))
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(var > 0, cov / var, 0.0)
    b = ym - a * gm
    # b < 0 is not allowed: refit a with b = 0 on those rows; a < 0: a flat line at the mean
    g2 = (G**2) @ w
    a0 = np.where(g2 > 0, (G @ (w * y)) / np.where(g2 > 0, g2, 1.0), 0.0)
    a = np.where(b < 0, a0, a)
    b = np.where(b < 0, 0.0, b)
    neg = a < 0
    a = np.where(neg, 0.0, a)
    b = np.where(neg, max(ym, 0.0), b)
    sse = ((y[None, :] - a[:, None] * G - b[:, None]) ** 2) @ w
    sse = np.where(np.isfinite(sse), sse, np.inf)
    i = int(np.argmin(sse))
    return i, float(a[i]), float(b[i])


def _grid_initial(k, y, w, shape_grid: list[tuple[float, ...]], basis) -> list[float]:
    """Best (shape params, a, b) over ``shape_grid``; ``basis(k, *shape)`` is the unit-amplitude curve."""
    k, y = _arr(k), _arr(y)
    w = np.ones_like(y) if w is None else _arr(w)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        G = np.array([basis(k, *shape) for shape in shape_grid])
    G = np.where(np.isfinite(G), G, 0.0)
    i, a, b = _best_linear(G, y, w)
    return [a, *shape_grid[i], b]


def _pow3_initial(k, y, w=None):
    grid = [(c,) for c in np.geomspace(0.02, 4.0, 3 * N_EXPONENT_GRID)]
    return _grid_initial(np.maximum(k, 1e-12), y, w, grid, lambda k, c: k ** (-c))


def _exp3_initial(k, y, w=None):
    grid = [(s,) for s in _scale_grid(k)]
    return _grid_initial(k, y, w, grid, lambda k, s: np.exp(-k / s))


def _pow4_initial(k, y, w=None):
    exponents = np.geomspace(0.1, 5.0, N_EXPONENT_GRID)
    grid = [(s, c) for s in _scale_grid(k) for c in exponents]
    a, s, c, b = _grid_initial(k, y, w, grid, lambda k, s, c: (1 + k / s) ** (-c))
    return [a, s, c, b]


def _mmf_initial(k, y, w=None):
    exponents = np.geomspace(0.2, 6.0, N_EXPONENT_GRID)
    grid = [(s, c) for s in _scale_grid(k) for c in exponents]
    return _grid_initial(k, y, w, grid, lambda k, s, c: 1.0 / (1.0 + (k / s) ** c))


def _weibull_initial(k, y, w=None):
    exponents = np.geomspace(0.15, 4.0, N_EXPONENT_GRID)
    grid = [(s, c) for s in _scale_grid(k) for c in exponents]
    return _grid_initial(k, y, w, grid, lambda k, s, c: np.exp(-((k / s) ** c)))


# --------------------------------------------------------------------------- registry
#: upper bound of the exponents ``c`` (steeper shapes are step functions, not learning curves)
MAX_EXPONENT = 8.0

POW3 = CurveFamily(
    name="pow3", label="Power law a·k^(−c)+b", formula="y(k) = a·k^(−c) + b",
    param_names=("a", "c", "b"), func=pow3_curve, jac=_pow3_jac, initial=_pow3_initial,
    inverse=pow3_step_at, lower=(0.0, 0.0, 0.0), upper=(_INF, MAX_EXPONENT, _INF),
    k_positive=True, example=(3.0, 0.4, 0.2))
EXP3 = CurveFamily(
    name="exp3", label="Exponential a·exp(−k/s)+b", formula="y(k) = a·exp(−k/s) + b",
    param_names=("a", "s", "b"), func=exp3_curve, jac=_exp3_jac, initial=_exp3_initial,
    inverse=exp3_step_at, lower=(0.0, 1e-12, 0.0), upper=(_INF, _INF, _INF), example=(2.0, 3000.0, 0.3))
POW4 = CurveFamily(
    name="pow4", label="Shifted power law a·(1+k/s)^(−c)+b", formula="y(k) = a·(1 + k/s)^(−c) + b",
    param_names=("a", "s", "c", "b"), func=pow4_curve, jac=_pow4_jac, initial=_pow4_initial,
    inverse=pow4_step_at, lower=(0.0, 1e-12, 0.0, 0.0), upper=(_INF, _INF, MAX_EXPONENT, _INF),
    example=(2.0, 500.0, 1.5, 0.2))
MMF = CurveFamily(
    name="mmf", label="MMF a/(1+(k/s)^c)+b", formula="y(k) = a / (1 + (k/s)^c) + b",
    param_names=("a", "s", "c", "b"), func=mmf_curve, jac=_mmf_jac, initial=_mmf_initial,
    inverse=mmf_step_at, lower=(0.0, 1e-12, 0.0, 0.0), upper=(_INF, _INF, MAX_EXPONENT, _INF),
    example=(2.0, 2000.0, 1.5, 0.2))
WEIBULL = CurveFamily(
    name="weibull", label="Weibull a·exp(−(k/s)^c)+b", formula="y(k) = a·exp(−(k/s)^c) + b",
    param_names=("a", "s", "c", "b"), func=weibull_curve, jac=_weibull_jac, initial=_weibull_initial,
    inverse=weibull_step_at, lower=(0.0, 1e-12, 0.0, 0.0), upper=(_INF, _INF, MAX_EXPONENT, _INF),
    example=(2.0, 3000.0, 0.8, 0.2))

#: the families this module adds, in the order selectors list them
EXTRA_FAMILIES: tuple[CurveFamily, ...] = (POW3, EXP3, POW4, MMF, WEIBULL)
