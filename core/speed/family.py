"""What every speed model is: the record a speed family registers, and the base its fitted models share.

A **speed family** (Optimus, Pollux, …) turns a table of measured speeds into a model of the
steps per second ``f(p, w)`` of ``p`` parameter servers and ``w`` workers at a global batch
``M``.  Like a curve family (:class:`core.curves.family.CurveFamily`) it is one record, built in
its own module and listed in :mod:`core.speed.registry`; the chooser
(:mod:`core.speed.select`), the CLI and the pages know no family by name.

- :class:`SpeedFamily`: name, label, description, the formula of each mode it supports (text
  and LaTeX, for pages and docs), ``fit`` and ``loo`` (leave-one-out predicted speeds).
- :class:`FittedSpeed`: the fields every fitted model carries (batch, provenance, fit and
  leave-one-out statistics, flags) and what it must answer (``steps_per_s_at``, ``scaled``,
  ``named_params``, ``report``); ``steps_per_s``, ``step_time_s``, ``samples_per_s`` and the report's tail
  are shared.
- :func:`scale_to_step_time`: any model scaled so that one measured step takes as long as measured.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from core.validation import check_scalar


@dataclass(frozen=True, kw_only=True)
class FittedSpeed:
    """The fields and behaviour every speed model shares (subclassed by each family's model).

    Parameters
    ----------
    global_batch : float or None, default=None
        ``M``, samples per step, to plan with; None when a fit saw several batches and none was chosen.
    source : str, default=""
        Where the parameters came from (preset, typed, fitted on which table, calibrated how).
    mape_pct : float or None, default=None
        Mean absolute percentage error of the fitted speeds (fitted models only).
    n_points : int or None, default=None
        Number of measured points the fit used.
    flags : tuple of str, default=()
        Caveats a page can show as they are.
    loo_mape_pct : float or None, default=None
        Leave-one-out MAPE of the speeds (:func:`core.speed.select.fit_speed`).
    time_band : (float, float) or None, default=None
        Factors on a step's time that cover the leave-one-out misses at ``level``.
    level : float or None, default=None
    """

    global_batch: float | None = None
    source: str = ""
    mape_pct: float | None = None
    n_points: int | None = None
    flags: tuple[str, ...] = ()
    loo_mape_pct: float | None = None
    time_band: tuple[float, float] | None = None
    level: float | None = None

    #: the registered family's name (``SpeedFamily.name``)
    family: ClassVar[str] = ""

    # ---- what each family's model answers
    def steps_per_s_at(self, p, w, global_batch):  # pragma: no cover - every model overrides it
        """Steps per second at ``(p, w)`` with global batch ``M`` per point (broadcast)."""
        raise NotImplementedError

    def scaled(self, factor: float) -> FittedSpeed:  # pragma: no cover - every model overrides it
        """A copy whose step time is ``factor`` times this one's at every configuration, in seconds."""
        raise NotImplementedError

    @property
    def named_params(self) -> dict[str, float]:  # pragma: no cover - every model overrides it
        """The parameters by name, in order."""
        raise NotImplementedError

    # ---- shared
    def step_time_s(self, p, w):
        """Time of one step, ``1/f(p, w)``, in the model's time unit."""
        return _scalar(1.0 / np.asarray(self.steps_per_s(p, w)))

    def with_global_batch(self, global_batch: float) -> FittedSpeed:
        """A copy planning with batch ``M = global_batch`` (parameters unchanged)."""
        return dataclasses.replace(self, global_batch=float(global_batch))

    def report_tail(self) -> list[str]:
        """The ``[[Fit Statistics]]`` and ``[[Flags]]`` sections every speed model's report ends with."""
        lines = ["[[Fit Statistics]]"]
        if self.mape_pct is None:
            lines.append("    not fitted")
        else:
            lines += [f"    points: {self.n_points}", f"    MAPE of speeds: {self.mape_pct:.2f} %"]
            if self.loo_mape_pct is not None:
                lines.append(f"    leave-one-out MAPE of speeds: {self.loo_mape_pct:.2f} %")
        lines.append("[[Flags]]")
        lines += [f"    {flag}" for flag in self.flags] or ["    none"]
        return lines


def _scalar(x):
    x = np.asarray(x, dtype=float)
    return float(x) if x.ndim == 0 else x


@dataclass(frozen=True)
class SpeedFamily:
    """A speed model that can be fitted to a table of measured speeds and judged by leave-one-out.

    Attributes
    ----------
    name : str
        Key used everywhere (``"optimus"``), and ``FittedSpeed.family`` of its models.
    label : str
        Human name for selectors (``"Optimus"``).
    description : str
        One line: the source and the model's idea, for help texts.
    formulas, formulas_latex : mapping of mode to str
        The equation of each training mode the family models (``"sync"``, ``"async"``,
        ``"allreduce"``), as text and in LaTeX; its keys are the modes it can fit.
    fit : callable
        ``fit(table, *, mode, global_batch, gpus_per_node, source) -> FittedSpeed``; raises
        ``core.errors.PlannerError`` subclasses when the table does not suit it.
    loo : callable
        ``loo(table, model, *, mode, global_batch, gpus_per_node, source) -> ndarray or None``:
        each point's speed predicted by a refit without it, in the order of the normalised
        table; None when the table has too few points to leave one out.
    scored_alone : bool, default=True
        Whether a fit of this family asked for alone (not ``auto``) is scored by leave-one-out
        too (its time band then widens plans); Optimus's plain NNLS fit is not, as the course
        reported it.
    in_auto : bool, default=True
        Whether ``auto`` fits it to every table; False for a family a speed table alone cannot
        describe (the transformer model needs the model, device and sequence length named).
    context : tuple of str, default=()
        Columns a speed table must have beside the speeds for this family (the transformer model's
        ``config, device, seq_len``; Paleo's ``net, device``); a plan from logs offers such a family
        only where it can supply them.
    """

    name: str
    label: str
    description: str
    formulas: Mapping[str, str]
    formulas_latex: Mapping[str, str]
    fit: Callable[..., FittedSpeed]
    loo: Callable[..., np.ndarray | None]
    scored_alone: bool = True
    in_auto: bool = True
    context: tuple[str, ...] = ()

    @property
    def modes(self) -> tuple[str, ...]:
        """The training modes the family can fit."""
        return tuple(self.formulas)

    def fits_mode(self, mode: str) -> bool:
        """Whether a table in ``mode`` (``"sync"``, ``"async"``, ``"allreduce"``) can be fitted."""
        return mode in self.formulas

    def to_dict(self) -> dict[str, Any]:
        """Name, label, description and the text formulas (for docs and tables)."""
        return {"name": self.name, "label": self.label, "description": self.description,
                "formulas": dict(self.formulas)}


def scale_to_step_time(model: FittedSpeed, step_time_s: float, p: int, w: int) -> FittedSpeed:
    """Scale a speed model so that its step time at (p, w) equals a measured one; unit becomes s.

    Every registered model's step time is homogeneous of degree 1 in its time terms (Optimus:
    ``1/f`` linear in θ; Pollux: the p-norm of two times), so multiplying them all by
    ``c = step_time_s · f(p, w)`` (``model.scaled(c)``) makes ``1/f(p, w) = step_time_s``
    exactly and keeps the shape of the curve (the best w, ratios between configurations, the
    fit's MAPE).

    Parameters
    ----------
    model : FittedSpeed
    step_time_s : float
        Measured seconds per step at ``(p, w)``, > 0.
    p, w : int
        The configuration it was measured on.

    Examples
    --------
    The paper's sync model takes 45.3 paper units per step at p = 2, w = 4; if a real step
    there takes 0.906 s, one paper unit is 0.02 s and every θ is multiplied by 0.02:

    >>> from core.speed.optimus import paper_speed_model
    >>> cal = scale_to_step_time(paper_speed_model("sync"), 0.906, 2, 4)
    >>> cal.time_unit, [round(t, 6) for t in cal.theta]
    ('s', [0.0204, 0.0556, 0.0984, 0.0, 0.0004])
    >>> round(cal.step_time_s(2, 4), 9)
    0.906
    """
    step_time_s = check_scalar(step_time_s, "scale_to_step_time: step_time_s", float, min_val=0,
                               include_boundaries="neither", fix="Give the measured seconds per step")
    factor = float(step_time_s) * float(model.steps_per_s(p, w))
    flags = tuple(f for f in model.flags if not f.startswith("paper θ: time unit unknown"))
    source = (f"{model.source}; " if model.source else "") + (
        f"calibrated to {step_time_s:g} s per step at p = {p}, w = {w}")
    return dataclasses.replace(model.scaled(factor), source=source, flags=flags)

