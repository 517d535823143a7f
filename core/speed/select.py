"""Choose a speed model per table, by leave-one-out error, and build the speed model a plan uses.

The chooser sits above every speed family: it knows them only through the registry
(:mod:`core.speed.registry`).  Each family asked for is fitted to the same table of measured
speeds (``SpeedFamily.fit``), then refitted once per point with that point left out and asked
for its speed (``SpeedFamily.loo``).  The **leave-one-out MAPE** ``100 · mean |f̂₋ᵢ − fᵢ| / fᵢ``
scores each family on points it did not see; ``auto`` fits every family that can fit the
table's mode and takes the smallest.  The same misses give the chosen model's **time band**:
the ``(1 ∓ level)/2`` quantiles of ``fᵢ / f̂₋ᵢ``, the factor by which a real step took longer
than predicted (a plan multiplies its time by them for an interval that carries the speed
fit's error).  :func:`build_speed_model` is the one home of "which speed model does a plan
use": the paper's θ, a table's fit, or typed θ, scaled to a measured step if given.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.defaults import DEFAULT_LEVEL
from core.errors import FitWarning, InputError, PlannerError
from core.speed.family import FittedSpeed, scale_to_step_time
from core.speed.optimus import PAPER_GLOBAL_BATCH, THETA_NAMES, SpeedModel, paper_speed_model
from core.speed.registry import SPEED_FAMILIES, get_speed_family
from core.speed.table import default_speed_mode, normalise_speed_table
from core.validation import check_option, check_scalar


def speed_model_names() -> tuple[str, ...]:
    """What ``--model`` accepts: every registered speed family (read at each call, so a family registered later
    is offered too), then ``auto`` (all of them, the smallest leave-one-out error kept).

    >>> speed_model_names() == (*SPEED_FAMILIES, "auto")
    True
    """
    return (*SPEED_FAMILIES, "auto")


@dataclass(frozen=True)
class SpeedFit:
    """The speed families asked for, fitted to one table, each with its leave-one-out error, and the one chosen.

    Attributes
    ----------
    model : FittedSpeed
        The chosen model, with ``loo_mape_pct`` and ``time_band`` set when it was scored.
    chosen : str
        Its family's name (a key of ``SPEED_FAMILIES``).
    requested : str
        A family's name, or ``"auto"``.
    models : tuple
        Every family that could be fitted (the chosen one among them).
    problems : tuple of (family, message)
        Families that could not be fitted to this table, and why.
    scored : bool
        Whether the models were scored by leave-one-out (False: the family's plain fit, reported alone).
    """

    model: FittedSpeed
    chosen: str
    requested: str
    models: tuple[FittedSpeed, ...]
    problems: tuple[tuple[str, str], ...] = ()
    scored: bool = True

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
        """Each model's report, then the comparison (when they were scored)."""
        parts = [m.report() for m in self.models]
        if not self.scored:
            return "\n".join(parts)
        parts.append("[[Choice]]\n" + "\n".join(
            f"    {r.family}: MAPE {r.mape_pct:.2f} %, leave-one-out {r.loo_mape_pct:.2f} %"
            + ("  <- chosen" if r.chosen else "") for r in self.table().itertuples() if r.mape_pct is not None)
            + "".join(f"\n    {f}: not fitted ({msg})" for f, msg in self.problems))
        return "\n".join(parts)


def _band(ratio: np.ndarray, level: float) -> tuple[float, float]:
    lo, hi = np.quantile(ratio, [(1 - level) / 2, (1 + level) / 2])
    return float(min(lo, 1.0)), float(max(hi, 1.0))


def _scored(model: FittedSpeed, pred: np.ndarray, measured: np.ndarray, level: float) -> FittedSpeed:
    rel = np.abs(pred - measured) / measured
    return dataclasses.replace(model, loo_mape_pct=float(np.mean(rel) * 100),
                               time_band=_band(measured / pred, level), level=level)


def speed_model_choices(has_ps: bool) -> tuple[str, ...]:
    """The speed families that can fit a table with (or without) parameter servers, and ``auto`` when several of
    those ``auto`` fits can (``SpeedFamily.in_auto``).

    >>> "pollux" in speed_model_choices(True), "pollux" in speed_model_choices(False)  # no parameter servers
    (False, True)
    >>> speed_model_choices(False)[-1]
    'auto'
    """
    fitting = [f for f in SPEED_FAMILIES.values() if any(f.fits_mode(m) for m in _modes(has_ps))]
    names = tuple(f.name for f in fitting)
    return names + ("auto",) if sum(f.in_auto for f in fitting) > 1 else names


def _modes(has_ps: bool) -> tuple[str, ...]:
    return ("sync", "async") if has_ps else ("allreduce",)


def fit_speed(table: pd.DataFrame, *, family: str = "auto", mode: str | None = None,
              global_batch: float | None = None, gpus_per_node: int | None = None, level: float = DEFAULT_LEVEL,
              source: str = "table", score: bool | None = True) -> SpeedFit:
    """Fit the requested speed family (or every one, ``auto``) and score them by leave-one-out error.

    Parameters
    ----------
    table : DataFrame
        Measured speeds (:mod:`core.speed.table`).
    family : str, default="auto"
        A key of ``SPEED_FAMILIES``, or ``auto``: every family that can fit the table's mode
        (Pollux only all-reduce tables: it has no parameter servers), the one with the smallest
        leave-one-out MAPE kept.
    mode : {"sync", "async", "allreduce"} or None
        The training mode; None: ``allreduce`` without parameter servers, else ``sync``.
    global_batch : float or None
        ``M`` for rows without one, and the planning batch.
    gpus_per_node : int or None
        The node count when planning, for families with a node term (Pollux).
    level : float, default=0.8
        Coverage of the time band.
    source : str
    score : bool or None, default=True
        Score by leave-one-out; None: as the family says when it is asked for alone
        (``SpeedFamily.scored_alone``), always under ``auto``; an unscored fit is the
        family's plain fit, with its warnings.

    Returns
    -------
    SpeedFit

    Raises
    ------
    InputError
        Unknown ``family``; or no family can be fitted (the message of the one asked for).

    Examples
    --------
    Points made by the Optimus all-reduce equation: Optimus fits them exactly, and it is chosen.

    >>> w = [1, 2, 4, 8, 16]
    >>> t = [0.001 * 256 / k + 0.05 + 0.002 * k for k in w]
    >>> tab = pd.DataFrame({"w": w, "global_batch": 256, "step_time_s": t})
    >>> fit = fit_speed(tab)
    >>> fit.chosen, round(fit.model.loo_mape_pct, 6), [round(b, 9) for b in fit.model.time_band]
    ('optimus', 0.0, [1.0, 1.0])
    >>> "pollux" in fit.table()["family"].tolist()      # Pollux's model fitted beside it
    True
    """
    check_option(family, "speed model", speed_model_names(), fix="Pick a registered speed family or auto")
    level = check_scalar(level, "level", float, min_val=0, max_val=1, include_boundaries="neither")
    tab = normalise_speed_table(table, global_batch=global_batch, source=source)
    measured = tab["steps_per_s"].to_numpy(dtype=float)
    mode = mode or default_speed_mode(table)
    wanted = tuple(f for f in SPEED_FAMILIES.values() if f.in_auto) if family == "auto" else (get_speed_family(family),)
    if score is None:
        score = family == "auto" or wanted[0].scored_alone
    options = dict(mode=mode, global_batch=global_batch, gpus_per_node=gpus_per_node, source=source)
    models, problems = [], []
    for fam in wanted:
        try:
            if not score:
                models.append(fam.fit(table, **options))
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FitWarning)
                fitted = fam.fit(table, **options)
                pred = fam.loo(table, fitted, **options)
        except PlannerError as err:
            if family != "auto":
                raise
            problems.append((fam.name, str(err)))
            continue
        models.append(_scored(fitted, pred, measured, level) if pred is not None else fitted)
    if not models:
        raise InputError(f"{source}: expected a table one speed family can fit; got none ("
                         + "; ".join(f"{f}: {msg}" for f, msg in problems) + ").")
    best = min(models, key=lambda m: np.inf if m.loo_mape_pct is None else m.loo_mape_pct)
    return SpeedFit(best, best.family, family, tuple(models), tuple(problems), scored=bool(score))


#: where a plan's θ come from
THETA_SOURCES: dict[str, str] = {
    "paper": "the Optimus paper's θ as the course used them (no published time unit)",
    "table": "θ fitted by NNLS on a table of measured speeds",
    "typed": "θ typed in, in seconds",
}


def build_speed_model(source: str, *, mode: str, global_batch: float | None = None,
                      theta: tuple[float, ...] | None = None, table: pd.DataFrame | None = None,
                      table_name: str = "table", step_time: tuple[float, int, int] | None = None,
                      family: str = "optimus") -> FittedSpeed:
    """The speed model a plan uses, from one of ``THETA_SOURCES``, scaled to a measured step if given.

    The one home of "choose a speed model": the Plan page and ``python -m core plan`` both
    call it.

    Parameters
    ----------
    source : {"paper", "table", "typed"}
    mode : {"sync", "async", "allreduce"}
    global_batch : float, optional
        ``M``; the paper's θ default to the course's batch 128.
    theta : tuple of float, optional
        The typed θ (``source="typed"``), in seconds.
    table : DataFrame, optional
        Measured speeds (``source="table"``), fitted by :func:`fit_speed` (the family's plain
        fit when it is not scored alone, ``SpeedFamily.scored_alone``).
    family : str, default="optimus"
        The speed family fitted to a table (a key of ``SPEED_FAMILIES``, or ``auto``: the best by
        leave-one-out error); the paper's and typed θ are Optimus's.
    table_name : str
        The table's name, in messages and provenance.
    step_time : (seconds, p, w), optional
        A measured step time: θ are scaled so the model takes that long at ``(p, w)``
        (:func:`scale_to_step_time`), which also turns paper units into seconds.

    Examples
    --------
    >>> m = build_speed_model("paper", mode="sync", step_time=(0.906, 2, 4))
    >>> m.time_unit, round(m.step_time_s(2, 4), 9)
    ('s', 0.906)
    """
    check_option(source, "θ source", THETA_SOURCES)
    if source == "paper":
        model = paper_speed_model(mode, global_batch=PAPER_GLOBAL_BATCH if global_batch is None else global_batch)
    elif source == "table":
        if table is None:
            raise InputError(f"{table_name}: expected a table of measured speeds; got none. Upload or choose one.")
        model = fit_speed(table, family=family, mode=mode, global_batch=global_batch, source=table_name,
                          score=None).model
    else:
        if theta is None:
            raise InputError(f"θ: expected {len(THETA_NAMES.get(mode, ()))} values for mode {mode!r}; got none.")
        model = SpeedModel(mode, tuple(theta), global_batch=global_batch, time_unit="s", source="typed in")
    if step_time is not None:
        seconds, p, w = step_time
        model = scale_to_step_time(model, seconds, int(p), int(w))
    return model
