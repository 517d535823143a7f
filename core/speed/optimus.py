"""Optimus resource-speed model: training steps per second from p parameter servers and w workers.

Three variants share one linear structure, ``1/f = x(p, w, M) · θ`` with ``θ >= 0``
(Peng et al., EuroSys 2018):

- ``sync``, Eq. 4: ``f = 1/(θ0·M/w + θ1 + θ2·w/p + θ3·w + θ4·p)``; θ stored as
  ``(θ0, θ1, θ2, θ3, θ4)``; a fit needs >= 5 points.
- ``async``, Eq. 3: ``f = w/(θ0 + θ1·w/p + θ2·w + θ3·p)``; ``(θ0, θ1, θ2, θ3)``; >= 4 points.
- ``allreduce`` (no parameter server), Eq. 4 without the PS terms:
  ``f = 1/(θ0·M/w + θ1 + θ3·w)``; ``(θ0, θ1, θ3)``; >= 3 points.

``f`` is in training steps per second (per "paper unit" for the paper's θ, which have no
published time unit), ``M`` is the batch of one step (the global batch of a synchronous
or all-reduce step; the batch of one worker's update in asynchronous training), ``p`` the
number of parameter servers and ``w`` the number of workers.  The all-reduce θ keep the
indices of Eq. 4 (``theta0, theta1, theta3``) so that each one can be read against the
synchronous θ term by term; ``p`` is ignored in that mode.

The measured-speed table and its reader live in :mod:`core.speed.table`; this module
holds the model and the paper presets; :mod:`core.speed.optimus_fit` the NNLS fit, its
leave-one-out refits and the family's record ``OPTIMUS_SPEED`` (registered in
:mod:`core.speed.registry`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.errors import InputError
from core.speed.family import FittedSpeed
from core.validation import check_option

MODES: tuple[str, ...] = ("sync", "async", "allreduce")
THETA_NAMES: dict[str, tuple[str, ...]] = {
    "sync": ("theta0", "theta1", "theta2", "theta3", "theta4"),
    "async": ("theta0", "theta1", "theta2", "theta3"),
    "allreduce": ("theta0", "theta1", "theta3"),
}
#: fewest measured points a fit accepts: one per θ (Optimus measures a handful more)
MIN_POINTS: dict[str, int] = {mode: len(names) for mode, names in THETA_NAMES.items()}
FORMULAS: dict[str, str] = {
    "sync": "f = 1 / (θ0·M/w + θ1 + θ2·w/p + θ3·w + θ4·p)",
    "async": "f = w / (θ0 + θ1·w/p + θ2·w + θ3·p)",
    "allreduce": "f = 1 / (θ0·M/w + θ1 + θ3·w)",
}
#: the same equations in LaTeX, for pages
FORMULAS_LATEX: dict[str, str] = {
    "sync": r"f(p, w) = \frac{1}{\theta_0 \frac{M}{w} + \theta_1 + \theta_2 \frac{w}{p} + \theta_3 w + \theta_4 p}",
    "async": r"f(p, w) = \frac{w}{\theta_0 + \theta_1 \frac{w}{p} + \theta_2 w + \theta_3 p}",
    "allreduce": r"f(w) = \frac{1}{\theta_0 \frac{M}{w} + \theta_1 + \theta_3 w}",
}
TIME_UNITS: tuple[str, ...] = ("s", "paper units")
PAPER_THETA: dict[str, tuple[float, ...]] = {
    "sync": (1.02, 2.78, 4.92, 0.00, 0.02),
    "async": (2.83, 3.92, 0.00, 0.11),
}
PAPER_GLOBAL_BATCH = 128
PAPER_SOURCE = ("Optimus paper coefficients as used by the course (Peng et al., EuroSys 2018); "
                "no published time unit")


def check_mode(mode: Any, where: str) -> str:
    """``mode`` if it is one of :data:`MODES`, else ``InputError`` naming ``where``."""
    return check_option(mode, f"{where}: mode", MODES, fix="Pick the training mode of the measured job")


def speed_features(mode: str, p, w, global_batch) -> np.ndarray:
    """The feature row ``x(p, w, M)`` of each point, with ``1/f = x · θ``: the one home of the equations.

    ``sync``: ``(M/w, 1, w/p, w, p)``; ``async``: ``(1/w, 1/p, 1, p/w)`` (Eq. 3 divided by
    ``w``); ``allreduce``: ``(M/w, 1, w)``.  Every speed (and the NNLS fit) is computed from it.

    >>> speed_features("sync", 2, 4, 128).tolist()
    [[32.0, 1.0, 2.0, 4.0, 2.0]]
    """
    p, w, m = (np.asarray(v, dtype=float) for v in np.broadcast_arrays(p, w, global_batch))
    if mode == "sync":
        cols = [m / w, np.ones_like(w), w / p, w, p]
    elif mode == "async":
        cols = [1.0 / w, 1.0 / p, np.ones_like(w), p / w]
    else:
        cols = [m / w, np.ones_like(w), w]
    return np.column_stack([c.ravel() for c in cols])


def optimus_speed(mode: str, p, w, *, theta, global_batch=1.0):
    """Training steps per second ``f(p, w) = 1 / (x(p, w, M) · θ)`` (see :func:`speed_features`).

    Parameters
    ----------
    mode : {"sync", "async", "allreduce"}
    p, w : float or array-like
        Parameter servers (ignored by "allreduce") and workers; broadcast against each other.
    theta : sequence of float
        In the order of ``THETA_NAMES[mode]``.
    global_batch : float, default 1.0
        ``M``, samples in one step (not used by "async").

    Returns
    -------
    float or ndarray
        A float for scalar ``p`` and ``w``, else an array of their broadcast shape.

    Examples
    --------
    Sync, the paper's θ with M = 128 at p = 2, w = 4 (Eq. 4):
    ``1/(1.02·128/4 + 2.78 + 4.92·4/2 + 0·4 + 0.02·2) = 1/45.30``.

    >>> round(1 / optimus_speed("sync", 2, 4, theta=(1.02, 2.78, 4.92, 0.0, 0.02), global_batch=128), 6)
    45.3

    Async, the paper's θ at p = 2, w = 4 (Eq. 3): ``4 / (2.83 + 3.92·4/2 + 0·4 + 0.11·2) = 4/10.89``.

    >>> round(4 / optimus_speed("async", 2, 4, theta=(2.83, 3.92, 0.0, 0.11)), 6)
    10.89

    All-reduce: ``1 / (0.001·256/8 + 0.05 + 0.002·8) = 1/0.098``.

    >>> round(1 / optimus_speed("allreduce", 0, 8, theta=(0.001, 0.05, 0.002), global_batch=256), 9)
    0.098
    """
    shape = np.broadcast_shapes(np.shape(p), np.shape(w), np.shape(global_batch))
    f = 1.0 / (speed_features(mode, p, w, global_batch) @ np.asarray(theta, dtype=float))
    return _scalar(f.reshape(shape))


def _scalar(x):
    x = np.asarray(x, dtype=float)
    return float(x) if x.ndim == 0 else x


@dataclass(frozen=True)
class SpeedModel(FittedSpeed):
    """An Optimus speed model with its θ, batch, time unit and provenance.

    Parameters
    ----------
    mode : {"sync", "async", "allreduce"}
        Which equation ``f`` follows (see the module table).
    theta : tuple of float
        Non-negative coefficients in the order of ``THETA_NAMES[mode]``, not all zero.
    time_unit : {"s", "paper units"}, default="s"
        The unit of ``1/f``. The paper's θ are in "paper units" (unpublished unit).
    global_batch, source, mape_pct, n_points, flags, loo_mape_pct, time_band, level :
        Keyword only, as on :class:`core.speed.family.FittedSpeed`; ``global_batch`` (``M``)
        is needed by "sync" and "allreduce" (and by ``samples_per_s``).

    Examples
    --------
    >>> m = SpeedModel("allreduce", (0.001, 0.05, 0.002), global_batch=256)
    >>> round(m.step_time_s(0, 8), 9)         # 0.001·256/8 + 0.05 + 0.002·8
    0.098
    >>> SpeedModel("sync", (1.0, 2.0), global_batch=128)
    Traceback (most recent call last):
    ...
    core.errors.InputError: SpeedModel: expected 5 theta values (theta0, ...) for mode 'sync'; got 2...
    """

    mode: str
    theta: tuple[float, ...]
    time_unit: str = "s"

    family = "optimus"

    def __post_init__(self) -> None:
        check_mode(self.mode, "SpeedModel")
        names = THETA_NAMES[self.mode]
        try:
            theta = tuple(float(t) for t in self.theta)
        except (TypeError, ValueError):
            raise InputError(f"SpeedModel: expected theta as numbers; got {self.theta!r}. "
                             "Give one float per term.") from None
        if len(theta) != len(names):
            raise InputError(f"SpeedModel: expected {len(names)} theta values ({', '.join(names)}) "
                             f"for mode {self.mode!r}; got {len(theta)}. "
                             "Give one value per term of the equation.")
        if not all(np.isfinite(theta)) or min(theta) < 0 or max(theta) == 0:
            raise InputError(f"SpeedModel: expected finite theta >= 0, not all zero; got {theta}. "
                             "Optimus θ are non-negative times per term.")
        if self.global_batch is not None and not (np.isfinite(self.global_batch)
                                                  and self.global_batch > 0):
            raise InputError(f"SpeedModel: expected global_batch M > 0 samples per step; "
                             f"got {self.global_batch!r}. Give the batch of one step.")
        check_option(self.time_unit, "SpeedModel: time_unit", TIME_UNITS, fix="Use 's' for measured θ")
        object.__setattr__(self, "theta", theta)
        if self.global_batch is not None:
            object.__setattr__(self, "global_batch", float(self.global_batch))
        object.__setattr__(self, "flags", tuple(self.flags))

    @property
    def theta_names(self) -> tuple[str, ...]:
        """Names of the stored θ, in order (``THETA_NAMES[mode]``)."""
        return THETA_NAMES[self.mode]

    @property
    def formula(self) -> str:
        """The equation in use, as text."""
        return FORMULAS[self.mode]

    @property
    def formula_latex(self) -> str:
        """The equation in use, in LaTeX."""
        return FORMULAS_LATEX[self.mode]

    @property
    def named_params(self) -> dict[str, float]:
        """``params``, under the name both speed families share."""
        return self.params

    def steps_per_s_at(self, p, w, global_batch):
        """Steps per second at ``(p, w)`` with global batch ``M`` per point (broadcast), not the model's own.

        >>> m = SpeedModel("allreduce", (0.001, 0.05, 0.002))
        >>> [round(float(1 / f), 9) for f in m.steps_per_s_at(0, [8, 16], [256, 512])]   # M/w = 32 both times
        [0.098, 0.114]
        """
        return self.with_global_batch(1.0).steps_per_s(p, w) if self.mode == "async" else \
            optimus_speed(self.mode, *self._checked(p, w), theta=self.theta, global_batch=global_batch)

    def _checked(self, p, w) -> tuple[np.ndarray, np.ndarray]:
        p_arr, w_arr = np.asarray(p, dtype=float), np.asarray(w, dtype=float)
        if not np.all(np.isfinite(w_arr)) or np.any(w_arr < 1):
            raise InputError(f"SpeedModel.steps_per_s: expected w >= 1 workers; got {w!r}. "
                             "Count workers from 1.")
        p_min = 0 if self.mode == "allreduce" else 1
        if not np.all(np.isfinite(p_arr)) or np.any(p_arr < p_min):
            raise InputError(f"SpeedModel.steps_per_s: expected p >= {p_min} parameter servers "
                             f"for mode {self.mode!r}; got {p!r}. "
                             + ("Use mode 'allreduce' for training without a PS."
                                if p_min else "Use p = 0."))
        return p_arr, w_arr

    @property
    def params(self) -> dict[str, float]:
        """``{"theta0": …, …}`` in the stored order."""
        return dict(zip(self.theta_names, self.theta))

    def steps_per_s(self, p, w):
        """Training steps per time unit (seconds unless ``time_unit == "paper units"``).

        Parameters
        ----------
        p : int or array-like
            Parameter servers, >= 1 for "sync"/"async"; ignored (any value >= 0) for "allreduce".
        w : int or array-like
            Workers, >= 1.

        Raises
        ------
        InputError
            On ``w < 1``, ``p < 1`` in a PS mode, or no ``global_batch`` where M is needed.
        """
        p_arr, w_arr = self._checked(p, w)
        m = 1.0 if self.mode == "async" else self._batch("steps_per_s")
        return optimus_speed(self.mode, p_arr, w_arr, theta=self.theta, global_batch=m)

    def samples_per_s(self, p, w):
        """Throughput ``M·f(p, w)`` in samples per time unit (needs ``global_batch``)."""
        return _scalar(self._batch("samples_per_s") * np.asarray(self.steps_per_s(p, w)))

    def scaled(self, factor: float) -> SpeedModel:
        """Every θ times ``factor`` (``1/f`` is linear in θ), in seconds."""
        return dataclasses.replace(self, theta=tuple(t * factor for t in self.theta), time_unit="s")

    def _batch(self, where: str) -> float:
        if self.global_batch is None:
            raise InputError(f"SpeedModel.{where}: expected a global batch M for mode "
                             f"{self.mode!r}; got None (the fit saw several batches). "
                             "Call model.with_global_batch(M) first.")
        return self.global_batch

    def to_dict(self) -> dict[str, Any]:
        """Plain Python types only (JSON-ready), θ under their names."""
        return {"family": self.family, "mode": self.mode, "formula": self.formula, **self.params,
                "global_batch": self.global_batch, "time_unit": self.time_unit,
                "source": self.source, "mape_pct": self.mape_pct, "n_points": self.n_points,
                "loo_mape_pct": self.loo_mape_pct, "time_band": list(self.time_band) if self.time_band else None,
                "level": self.level, "flags": list(self.flags)}

    def report(self) -> str:
        """Fixed sections: model, θ, fit statistics, flags (lmfit ``fit_report`` layout)."""
        unit = "s" if self.time_unit == "s" else "paper units"
        lines = ["[[Model]]", f"    mode: {self.mode}", f"    {self.formula}",
                 f"    global batch M: {'not set' if self.global_batch is None else f'{self.global_batch:g}'}",
                 f"    time unit: {unit}", f"    source: {self.source or 'typed in'}",
                 "[[Theta]]"]
        lines += [f"    {name} = {value:.6g}" for name, value in self.params.items()]
        return "\n".join(lines + self.report_tail())


def paper_speed_model(mode: str = "sync", *, global_batch: float = PAPER_GLOBAL_BATCH) -> SpeedModel:
    """The course's θ from the Optimus paper, in "paper units" (no published time unit).

    Parameters
    ----------
    mode : {"sync", "async"}, default="sync"
    global_batch : float, default=128
        ``M``; the course trained with batch 128.

    Raises
    ------
    InputError
        For ``mode="allreduce"``: the paper has no all-reduce θ.

    Examples
    --------
    >>> m = paper_speed_model("sync")
    >>> m.theta, m.time_unit
    ((1.02, 2.78, 4.92, 0.0, 0.02), 'paper units')
    >>> round(m.step_time_s(2, 4), 6)            # 1.02·32 + 2.78 + 4.92·2 + 0 + 0.04
    45.3
    """
    check_mode(mode, "paper_speed_model")
    if mode not in PAPER_THETA:
        raise InputError(f"paper_speed_model: expected mode 'sync' or 'async'; got {mode!r}. "
                         "The paper gives no all-reduce θ: fit them from a speed table.")
    return SpeedModel(mode, PAPER_THETA[mode], global_batch=global_batch,
                      time_unit="paper units", source=PAPER_SOURCE,
                      flags=("paper θ: time unit unknown; calibrate with one measured step time",))
