"""Steps to target for a plan: from a logged run, from a calibration, or typed in.

A plan needs one number, the training steps to reach the target (steps, never epochs),
and where possible an interval around it.  Each source gives a :class:`StepsEstimate`:

* a **logged run** (:func:`~core.plan.run_steps.steps_from_run`, in :mod:`core.plan.run_steps`):
  measured, fitted, extrapolated by a curve family, or the posterior of a prior from other runs;
* a **calibration** (:func:`steps_from_calibration`): the Calibrate page's prediction of a
  held-out architecture on one GPU, with its interval;
* a **number typed in** (:func:`typed_steps`), with an optional low/high.

A source that cannot give a number raises ``InputError`` with the reason (the page shows it
and plans nothing).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from core.calibrate import Calibration
from core.errors import InputError
from core.validation import check_scalar

#: what each ``StepsEstimate.source`` means
SOURCES: dict[str, str] = {
    "measured": "the step where a logged run passed the target",
    "fitted": "a run's fitted loss curve inverted at a loss threshold",
    "predicted": "the epoch at target extrapolated from a run's log by a curve family",
    "posterior": "a partial run's epochs combined with the prior from other runs (core.prediction.posterior)",
    "calibrate": "a held-out architecture predicted from the other architectures (Calibrate page)",
    "typed": "typed in",
    "batch": "a batch-scaling fit of runs at several global batches, at the planned global batch",
}


@dataclass(frozen=True)
class StepsEstimate:
    """Steps to target and, when known, an interval around them.

    Attributes
    ----------
    steps : float
        Training steps to the target (> 0), at the batch size of the source.
    steps_low, steps_high : float or None
        A finite interval ``0 < low <= steps <= high``, or None when there is none.
    level : float or None
        Coverage of the interval (0.8 for a fitted curve), None when unknown or absent.
    source : {"measured", "fitted", "predicted", "calibrate", "typed", "batch"}
        ``SOURCES`` says what each means.
    label : str
        What the number is for (a run's file, the calibrated model and device).
    note : str
        One sentence a page can show as it is.
    loss_threshold : float or None
        The loss the fitted curve was inverted at ("fitted" only).
    threshold_runs : tuple of str
        The runs whose mean loss at target made the default threshold.
    flags : tuple of str
        Caveats (e.g. "the 80 % interval is open above: no band").
    """

    steps: float
    source: str
    label: str
    note: str
    steps_low: float | None = None
    steps_high: float | None = None
    level: float | None = None
    loss_threshold: float | None = None
    threshold_runs: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()

    @property
    def interval(self) -> tuple[float, float] | None:
        """``(steps_low, steps_high)`` when both exist, else None (``plan_grid``'s ``steps_interval``)."""
        if self.steps_low is None or self.steps_high is None:
            return None
        return (self.steps_low, self.steps_high)

    def to_dict(self) -> dict:
        """Plain Python types only."""
        out = asdict(self)
        out["threshold_runs"] = list(self.threshold_runs)
        out["flags"] = list(self.flags)
        return out


def _positive(value, name: str, where: str, *, allow_none: bool = False) -> float | None:
    if value is None and allow_none:
        return None
    return check_scalar(value, f"{where}: {name}", float, min_val=0, include_boundaries="neither",
                        fix="Give steps (not epochs) to the target")


def _checked_interval(steps: float, low, high, where: str) -> tuple[float | None, float | None]:
    low = _positive(low, "steps_low", where, allow_none=True)
    high = _positive(high, "steps_high", where, allow_none=True)
    if (low is None) != (high is None):
        raise InputError(f"{where}: expected both steps_low and steps_high, or neither; got "
                         f"low = {low!r}, high = {high!r}. Give the whole interval.")
    if low is not None and not low <= steps <= high:
        raise InputError(f"{where}: expected steps_low <= steps <= steps_high; got {low:g} <= "
                         f"{steps:g} <= {high:g}. Give an interval around the estimate.")
    return low, high


def typed_steps(steps: float, *, low: float | None = None, high: float | None = None,
                label: str = "typed in") -> StepsEstimate:
    """Steps to target typed in by the user, with an optional interval.

    Examples
    --------
    >>> typed_steps(50_000, low=40_000, high=65_000).interval
    (40000.0, 65000.0)
    >>> typed_steps(50_000, low=60_000, high=65_000)
    Traceback (most recent call last):
    ...
    core.errors.InputError: typed steps: expected steps_low <= steps <= steps_high; got 60000 <= 50000 <= 65000...
    """
    where = "typed steps"
    value = _positive(steps, "steps", where)
    lo, hi = _checked_interval(value, low, high, where)
    span = f" (interval {lo:,.0f} to {hi:,.0f})" if lo is not None else ""
    return StepsEstimate(value, "typed", label, f"{value:,.0f} steps typed in{span}.",
                         steps_low=lo, steps_high=hi)


def steps_from_calibration(calibration: Calibration, gpu: str) -> StepsEstimate:
    """Steps to target of the held-out architecture on ``gpu``, as the calibration predicts them.

    The hand-over from the Calibrate page to the Plan page: a typed result, built here from
    the :class:`core.calibrate.Calibration` (its ``step_pred`` and interval for that GPU).

    Raises
    ------
    InputError
        ``gpu`` is not among the calibration's predictions, or its prediction is not
        reachable (the predicted curve never falls to the loss threshold).
    """
    rows = calibration.predictions[calibration.predictions["gpu"] == gpu]
    where = f"{calibration.holdout} on {gpu}"
    if rows.empty:
        raise InputError(f"{where}: expected one of the calibrated GPUs "
                         f"({', '.join(map(str, calibration.predictions['gpu']))}); got {gpu!r}.")
    row = rows.iloc[0]
    steps = float(row["step_pred"])
    if not (math.isfinite(steps) and steps > 0):
        raise InputError(f"{where}: expected a reachable prediction; the predicted curve never reaches the "
                         "target. Pick another GPU or method.")
    low, high = (float(row[c]) if np.isfinite(row[c]) else None for c in ("step_pred_low", "step_pred_high"))
    if low is None or high is None or not low <= steps <= high:
        low = high = None
    label = f"{calibration.holdout} on {gpu} ({calibration.method})"
    span = f" ({calibration.level * 100:.0f} % interval {low:,.0f} to {high:,.0f})" if low is not None else ""
    note = (f"Calibrate prediction for {label}: {steps:,.0f} steps{span}, from the other architectures; "
            f"interval: {calibration.interval_method}.")
    return StepsEstimate(steps, "calibrate", label, note, steps_low=low, steps_high=high,
                         level=calibration.level if low is not None else None)


#: where the Plan view takes steps to target from, in the order offered
STEPS_SOURCES: tuple[str, ...] = ("run", "calibrate", "typed", "batch")


def steps_sources(*, has_runs: bool, has_calibration: bool) -> tuple[str, ...]:
    """The :data:`STEPS_SOURCES` that can give steps now: "run" needs loaded runs, "calibrate" a
    prediction handed over from a calibration; a typed number and a batch-scaling fit always can.

    Examples
    --------
    >>> steps_sources(has_runs=True, has_calibration=False)
    ('run', 'typed', 'batch')
    """
    return tuple(s for s in STEPS_SOURCES
                 if (s != "run" or has_runs) and (s != "calibrate" or has_calibration))


def steps_from_batch_scaling(model, global_batch: float, *, label: str) -> StepsEstimate:
    """Steps to target at ``global_batch`` from a batch-scaling model (:mod:`core.batch`).

    ``S(M) = E_min·(1 + M/B_noise)/M`` with the model's interval at ``M`` when it has one.

    Examples
    --------
    >>> from core.batch import typed_batch_scaling
    >>> steps_from_batch_scaling(typed_batch_scaling(1e6, 1000), 1000, label="job").steps   # 2e6 / 1000
    2000.0
    """
    m = check_scalar(global_batch, "global batch", float, min_val=0, include_boundaries="neither",
                     fix="Give samples per step")
    steps = float(model.steps(m))
    band = model.steps_interval(m)
    low, high = (float(band[0]), float(band[1])) if band is not None else (None, None)
    if low is not None and not (0 < low <= steps <= high):
        low = high = None
    span = f" ({model.level:.0%} interval {low:,.0f} to {high:,.0f})" if low is not None and model.level else ""
    note = (f"{label}: S({m:,.0f}) = {steps:,.0f} steps{span} from E_min = {model.e_min:,.4g} samples and "
            f"B_noise = {model.b_noise:,.4g} ({model.method}); each run assumed tuned for its batch.")
    return StepsEstimate(steps, "batch", label, note, steps_low=low, steps_high=high,
                         level=model.level if low is not None else None, flags=tuple(model.flags))
