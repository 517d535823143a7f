"""The speed family of a plan from logs: every candidate fitted with one GPU count left out, the best kept.

:func:`choose_log_speed` is ``--model auto`` of ``plan --from-logs`` (and the Plan page's default): when the logs
measured three or more GPU counts, each family that can be fitted with one count left out predicts that count's
step time, and the smallest mean miss (in ``ln t``) wins; with fewer counts nothing can be left out and
:data:`DEFAULT_LOG_SPEED` is used.  A family asked for by name is fitted as asked, or refused with the reason.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.errors import InputError, PlannerError
from core.speed import SPEED_FAMILIES, FittedSpeed, get_speed_family
from core.validation import check_option

#: the family a plan from logs uses when fewer than three GPU counts leave nothing to leave out
DEFAULT_LOG_SPEED = "bracket"
#: GPU counts the logs must have measured before ``auto`` chooses by leave-one-size-out
MIN_SIZES_TO_CHOOSE = 3
#: the columns of :attr:`LogPlan.scores`
SCORE_COLUMNS: tuple[str, ...] = ("family", "held_w", "global_batch", "predicted_s", "measured_s", "error_pct")


def log_speed_choices(device: str | None = None) -> tuple[str, ...]:
    """Speed models a plan from logs takes: ``auto``, every registered all-reduce family that needs nothing beside
    the speeds (``SpeedFamily.context``), and the transformer model (whose context the logs give: their benchmark's
    model, their device and sequence length). On another ``device`` only the transformer model, the one family
    that knows devices (``auto`` there means it too).

    >>> log_speed_choices()[0], "transformer" in log_speed_choices(), "paleo" in log_speed_choices()
    ('auto', True, False)
    >>> log_speed_choices("B200")
    ('transformer',)
    """
    if device:
        return ("transformer",)
    return ("auto", *(name for name, fam in SPEED_FAMILIES.items()
                      if fam.fits_mode("allreduce") and (not fam.context or name == "transformer")))


def measured_speed_table(measured: pd.DataFrame) -> pd.DataFrame:
    """The measured configurations as a speed table (``w``, ``nodes``, ``global_batch``, ``step_time_s``), one row per
    configuration (the median step of its runs).

    >>> t = pd.DataFrame({"w": [8, 8, 72], "nodes": [2, 2, 18], "global_batch": [16.0, 16.0, 36.0],
    ...                   "step_time_s": [0.40, 0.42, 0.17]})
    >>> measured_speed_table(t)["step_time_s"].round(6).tolist()
    [0.41, 0.17]
    """
    frame = measured.assign(nodes=measured["nodes"].fillna(measured["w"]))
    return frame.groupby(["w", "nodes", "global_batch"], as_index=False)["step_time_s"].median()


#: a fitter: the measured configurations kept -> the fitted speed model
Fitter = Callable[[pd.DataFrame], FittedSpeed]


def registry_fitter(name: str) -> Fitter:
    family = get_speed_family(name)

    def fit(measured: pd.DataFrame) -> FittedSpeed:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return family.fit(measured_speed_table(measured), mode="allreduce", global_batch=None,
                              gpus_per_node=None, source="the logs")

    return fit


def step_time_of(model: FittedSpeed, w, global_batch) -> np.ndarray:
    """Seconds per step of ``model`` at ``w`` GPUs and global batch ``M`` (NaN where it plans none)."""
    return 1.0 / np.asarray(model.steps_per_s_at(0, np.asarray(w, dtype=float), np.asarray(global_batch, dtype=float)),
                            dtype=float)


def leave_one_size_out(measured: pd.DataFrame, name: str, fitter: Fitter) -> pd.DataFrame:
    """Each GPU count's median step time predicted by ``fitter`` fitted on the other counts (``SCORE_COLUMNS``).

    Raises the fitter's ``PlannerError`` when it cannot be fitted with a size left out.
    """
    table = measured_speed_table(measured)
    rows = []
    for held in sorted(table["w"].unique()):
        model = fitter(measured[measured["w"] != held])
        part = table[table["w"] == held]
        pred = step_time_of(model, part["w"], part["global_batch"])
        for (_, row), p in zip(part.iterrows(), np.atleast_1d(pred)):
            rows.append({"family": name, "held_w": int(held), "global_batch": float(row["global_batch"]),
                         "predicted_s": float(p), "measured_s": float(row["step_time_s"]),
                         "error_pct": 100.0 * (float(p) / float(row["step_time_s"]) - 1.0)})
    return pd.DataFrame(rows, columns=list(SCORE_COLUMNS))


@dataclass(frozen=True)
class LogSpeedChoice:
    """The speed model a plan from logs uses, the family asked for, and the leave-one-size-out scores behind it."""

    model: FittedSpeed
    chosen: str
    asked: str
    scores: pd.DataFrame
    notes: tuple[str, ...]

    def log_errors(self) -> np.ndarray:
        """The chosen family's leave-one-size-out misses, as ``ln(predicted/measured)`` (empty when not scored)."""
        mine = self.scores[self.scores["family"] == self.chosen]
        return np.log(mine["predicted_s"].to_numpy(dtype=float) / mine["measured_s"].to_numpy(dtype=float))


def _mean_miss(scores: pd.DataFrame) -> float:
    err = np.log(scores["predicted_s"].to_numpy(dtype=float) / scores["measured_s"].to_numpy(dtype=float))
    return float(np.mean(np.abs(err))) if err.size and np.all(np.isfinite(err)) else math.inf


def choose_log_speed(measured: pd.DataFrame, fitters: dict[str, Fitter], *, model: str = "auto") -> LogSpeedChoice:
    """Fit the family asked for, or choose one by leave-one-size-out (``auto``; module text).

    Parameters
    ----------
    measured : DataFrame
        :func:`core.plan.from_logs.measured_configurations`.
    fitters : dict of str to callable
        The candidate families by name, each fitting the measured configurations it is given.
    model : str, default="auto"
        ``auto`` or one of ``fitters``.

    Examples
    --------
    Steps of the overhead form ``t = 0.2·M/w + 0.05``, measured at four sizes: it is chosen, and misses nothing.

    >>> w = [8, 16, 32, 64]
    >>> t = pd.DataFrame({"source": list("abcd"), "w": w, "nodes": [1, 2, 4, 8], "global_batch": 32.0,
    ...                   "step_time_s": [0.2 * 32 / k + 0.05 for k in w]})
    >>> fitters = {n: registry_fitter(n) for n in ("overhead", "elastic", "bracket")}
    >>> c = choose_log_speed(t, fitters)
    >>> c.chosen, round(float(np.abs(c.log_errors()).max()), 9)
    ('overhead', 0.0)
    """
    sizes = measured["w"].nunique()
    if model != "auto":
        check_option(model, "speed model", ("auto", *fitters), fix="Pick one for a plan from logs")
        try:
            fitted = fitters[model](measured)
        except PlannerError as err:
            raise InputError(f"speed model {model}: cannot be fitted to these logs ({err}). Pick auto.") from None
        try:
            scores = leave_one_size_out(measured, model, fitters[model]) if sizes >= MIN_SIZES_TO_CHOOSE else None
        except PlannerError:
            scores = None
        return LogSpeedChoice(fitted, model, model, scores if scores is not None
                              else pd.DataFrame(columns=list(SCORE_COLUMNS)), (f"step time: {model}, as asked",))
    if sizes < MIN_SIZES_TO_CHOOSE:
        fitted = fitters[DEFAULT_LOG_SPEED](measured)
        return LogSpeedChoice(fitted, DEFAULT_LOG_SPEED, "auto", pd.DataFrame(columns=list(SCORE_COLUMNS)),
                              (f"step time: {DEFAULT_LOG_SPEED} (the default: the logs measured {sizes} GPU "
                               f"count(s), too few to leave one out and compare the families)",))
    tables, left = [], []
    for name, fitter in fitters.items():
        try:
            tables.append(leave_one_size_out(measured, name, fitter))
        except PlannerError as err:
            left.append(f"{name}: not scored (fitted with one of the {sizes} GPU counts left out: {err})")
    scores = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=list(SCORE_COLUMNS))
    misses = {name: _mean_miss(scores[scores["family"] == name]) for name in fitters}
    best = min(misses, key=lambda n: misses[n])
    if not math.isfinite(misses[best]):
        best = DEFAULT_LOG_SPEED
    ranked = ", ".join(f"{n} {100 * (math.exp(v) - 1):.1f} %" for n, v in sorted(misses.items(), key=lambda kv: kv[1])
                       if math.isfinite(v))
    notes = [f"step time: {best}, chosen by leave-one-size-out over {sizes} GPU counts (mean miss of the step time: "
             f"{ranked})"] + [f"step time: {msg}" for msg in left]
    return LogSpeedChoice(fitters[best](measured), best, "auto", scores, tuple(notes))
