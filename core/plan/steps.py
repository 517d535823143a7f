"""Steps to target for a plan: from a logged run, from the Calibrate page's prediction, or typed in.

A plan needs one number, the training steps to reach the target (steps, never epochs),
and where possible an interval around it.  Three sources give it:

* a **logged run** (:func:`steps_from_run`): the step where the run measurably passed
  the target, or the step where its fitted loss curve falls to a loss threshold
  (``core.runs.targets.predict_step_at_loss``, which carries an 80 % interval).  The default
  threshold is the mean loss at target of the *other* loaded runs that reached it
  (:func:`loss_threshold_from_runs`): never the chosen run's own, so the curve is asked a
  held-out question, as in the course's step 4;
* the **Calibrate page's prediction** (:func:`steps_from_prediction`), a plain dict kept in
  the session (contract: ``PREDICTION_KEYS``);
* a **number typed in** (:func:`typed_steps`), with an optional low/high.

Each returns a :class:`StepsEstimate`; a source that cannot give a number raises
``InputError`` with the reason (the page shows it and plans nothing).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from core.curves import FitResult
from core.defaults import DEFAULT_LEVEL
from core.errors import InputError
from core.runs.targets import predict_step_at_loss

#: how steps are taken from a logged run
RUN_METHODS: dict[str, str] = {
    "auto": "the measured step where the run passed the target; the fitted curve when it never did",
    "fitted": "the fitted loss curve, inverted at a loss threshold",
}
#: a run that has not reached the target yet can also be extrapolated by a learning-curve
#: family (``core.prediction.predict``; :func:`steps_from_target_prediction`)
FAMILY_METHOD = ("family", "the epoch at target extrapolated from the whole log by the curve family chosen on "
                 "the Logs page, with its backtest interval")
#: the Calibrate page's prediction: key -> (types, required)
PREDICTION_KEYS: dict[str, tuple[tuple[type, ...], bool]] = {
    "label": ((str,), True),
    "steps": ((int, float), True),
    "steps_low": ((int, float, type(None)), False),
    "steps_high": ((int, float, type(None)), False),
    "note": ((str,), False),
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
    source : {"measured", "fitted", "predicted", "calibrate", "typed"}
    label : str
        What the number is for (a run's file, the Calibrate prediction's label).
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


@dataclass(frozen=True)
class LossThreshold:
    """The default loss threshold: mean loss at target of other runs that reached it.

    ``runs`` are the files averaged; ``split`` the split they share ("train", "val") or
    None when runs of every split were used.
    """

    value: float
    runs: tuple[str, ...]
    split: str | None

    @property
    def note(self) -> str:
        which = f"{self.split} " if self.split else ""
        return (f"mean loss at target of {len(self.runs)} other {which}run(s) that reached it: "
                f"L = {self.value:.4g}")


def _number(value, name: str, where: str, *, allow_none: bool = False) -> float | None:
    if value is None and allow_none:
        return None
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or value <= 0:
        raise InputError(f"{where}: expected {name} a finite number > 0; got {value!r}. "
                         "Give steps (not epochs) to the target.")
    return float(value)


def _checked_interval(steps: float, low, high, where: str) -> tuple[float | None, float | None]:
    low = _number(low, "steps_low", where, allow_none=True)
    high = _number(high, "steps_high", where, allow_none=True)
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
    core.errors.InputError: typed steps: expected steps_low <= steps <= steps_high; got 60000 <= 50000 <= 65000. Give an interval around the estimate.
    """
    where = "typed steps"
    value = _number(steps, "steps", where)
    lo, hi = _checked_interval(value, low, high, where)
    span = f" (interval {lo:,.0f} to {hi:,.0f})" if lo is not None else ""
    return StepsEstimate(value, "typed", label, f"{value:,.0f} steps typed in{span}.",
                         steps_low=lo, steps_high=hi)


def steps_from_prediction(prediction: Mapping) -> StepsEstimate:
    """Steps from the Calibrate page's prediction (the session's ``calibrate_prediction``).

    Parameters
    ----------
    prediction : mapping
        ``{"label": str, "steps": float, "steps_low": float | None,
        "steps_high": float | None, "note": str}``; ``steps_low``/``steps_high``/``note``
        may be left out.

    Raises
    ------
    InputError
        A key missing or of the wrong type, steps not > 0, or an interval not around steps.

    Examples
    --------
    >>> p = steps_from_prediction({"label": "ResNet-50 on V100", "steps": 60_000.0,
    ...                            "steps_low": 45_000.0, "steps_high": 80_000.0, "note": "KRR"})
    >>> p.source, p.steps, p.interval
    ('calibrate', 60000.0, (45000.0, 80000.0))
    >>> steps_from_prediction({"steps": 1.0})
    Traceback (most recent call last):
    ...
    core.errors.InputError: calibrate_prediction: expected key 'label' (str); got keys steps. The Calibrate page writes label, steps, steps_low, steps_high, note.
    """
    where = "calibrate_prediction"
    if not isinstance(prediction, Mapping):
        raise InputError(f"{where}: expected a dict; got {type(prediction).__name__}. "
                         f"The Calibrate page writes {', '.join(PREDICTION_KEYS)}.")
    for key, (types, required) in PREDICTION_KEYS.items():
        if key not in prediction:
            if required:
                raise InputError(f"{where}: expected key {key!r} ({types[0].__name__}); got keys "
                                 f"{', '.join(map(str, prediction)) or 'none'}. The Calibrate page "
                                 f"writes {', '.join(PREDICTION_KEYS)}.")
            continue
        value = prediction[key]
        if isinstance(value, bool) or not isinstance(value, types + (np.integer, np.floating)):
            raise InputError(f"{where}: expected {key!r} of type "
                             f"{' or '.join(t.__name__ for t in types)}; got {value!r}.")
    steps = _number(prediction["steps"], "steps", where)
    low, high = _checked_interval(steps, prediction.get("steps_low"), prediction.get("steps_high"), where)
    note = str(prediction.get("note") or "")
    span = f" (interval {low:,.0f} to {high:,.0f})" if low is not None else ""
    text = f"Calibrate prediction for {prediction['label']}: {steps:,.0f} steps{span}."
    return StepsEstimate(steps, "calibrate", str(prediction["label"]),
                         text + (f" {note}" if note else ""), steps_low=low, steps_high=high)


def loss_threshold_from_runs(table: pd.DataFrame, *, exclude: str,
                             split: str | None = None) -> LossThreshold:
    """Mean loss at target of the runs in ``table`` that reached it, leaving ``exclude`` out.

    Parameters
    ----------
    table : DataFrame
        A fits table (``core.runs.analysis.fits_table``): columns ``file``, ``split``,
        ``loss_at_target`` (NaN for runs that never reached the target).
    exclude : str
        The file of the run being predicted: its own loss is never used.
    split : str or None, default=None
        Prefer runs of this split (train losses and validation losses are averaged
        differently); when none of that split reached the target, every split is used.

    Raises
    ------
    InputError
        When no other run reached the target with a loss.

    Examples
    --------
    >>> t = pd.DataFrame({"file": ["a", "b", "c", "d"], "split": ["train", "train", "train", "val"],
    ...                   "loss_at_target": [0.3, 0.5, float("nan"), 0.9]})
    >>> th = loss_threshold_from_runs(t, exclude="a", split="train")   # only b: 0.5
    >>> th.value, th.runs
    (0.5, ('b',))
    >>> round(loss_threshold_from_runs(t, exclude="c").value, 9)       # (0.3 + 0.5 + 0.9) / 3
    0.566666667
    """
    loss = pd.to_numeric(table["loss_at_target"], errors="coerce")
    others = table[np.isfinite(loss.to_numpy(dtype=float)) & (table["file"] != exclude)]
    if others.empty:
        raise InputError(f"{exclude}: expected other loaded runs that reached the target to set the "
                         "loss threshold; got none. Load more runs, lower the target, or type a "
                         "threshold.")
    used_split = None
    if split is not None and (others["split"] == split).any():
        others, used_split = others[others["split"] == split], split
    value = float(pd.to_numeric(others["loss_at_target"]).mean())
    return LossThreshold(value, tuple(others["file"]), used_split)


def steps_from_run(table: pd.DataFrame, fit: FitResult | None, *, run: str, method: str = "auto",
                   loss_threshold: float | None = None, level: float = DEFAULT_LEVEL,
                   seed: int = 0) -> StepsEstimate:
    """Steps to target from one logged run: measured where it reached the target, else fitted.

    Parameters
    ----------
    table : DataFrame
        The fits table of the loaded runs (``core.runs.analysis.fits_table``), ``run`` among them.
    fit : FitResult or None
        The run's fitted loss curve (None when it could not be fitted).
    run : str
        The run's file name (``table["file"]``).
    method : {"auto", "fitted"}, default="auto"
        "auto": the measured ``step_to_target`` when the run reached the target, otherwise
        the fitted curve; "fitted": always the fitted curve (``RUN_METHODS``).
    loss_threshold : float or None, default=None
        Where to invert the curve; None uses :func:`loss_threshold_from_runs` (other
        runs of the same split, never this run's own loss).
    level : float, default=0.8
        Coverage of the interval from the fit's parameter covariance.
    seed : int, default=0

    Returns
    -------
    StepsEstimate
        ``source="measured"`` (no interval: a measurement) or ``"fitted"`` (interval
        when it is finite and > 0; otherwise a flag says why there is no band).

    Raises
    ------
    InputError
        Unknown run or method; no fit to invert; no threshold; the curve never reaches it.

    Examples
    --------
    >>> from core.curves import fit_curve, optimus_loss
    >>> k = np.arange(1, 3001.0); fit = fit_curve(k, optimus_loss(k, 0.001, 1.0, 0.1))
    >>> t = pd.DataFrame({"file": ["a", "b"], "split": ["train", "train"],
    ...                   "step_to_target": [float("nan"), 800.0], "loss_at_target": [float("nan"), 0.6]})
    >>> round(steps_from_run(t, fit, run="a").steps)        # (1/(0.6 - 0.1) - 1)/0.001
    1000
    >>> steps_from_run(t, None, run="b").steps              # measured
    800.0
    """
    if method not in RUN_METHODS:
        raise InputError(f"steps_from_run: expected method one of {', '.join(RUN_METHODS)}; "
                         f"got {method!r}.")
    rows = table[table["file"] == run]
    if rows.empty:
        raise InputError(f"{run}: expected a loaded run; got no such file in the fits table. "
                         "Pick one of the loaded runs.")
    row = rows.iloc[0]
    measured = pd.to_numeric(pd.Series([row["step_to_target"]]), errors="coerce").iloc[0]
    if method == "auto" and np.isfinite(measured) and measured > 0:
        epoch = row.get("epoch_to_target")
        at = f" (epoch {int(epoch)})" if epoch is not None and not pd.isna(epoch) else ""
        return StepsEstimate(float(measured), "measured", run,
                             f"{run} passed the target at step {measured:,.0f}{at} (measured).")
    return _fitted_steps(table, fit, row, run=run, loss_threshold=loss_threshold, level=level, seed=seed)


def _fitted_steps(table, fit, row, *, run, loss_threshold, level, seed) -> StepsEstimate:
    if fit is None:
        raise InputError(f"{run}: expected a fitted loss curve to invert; got none "
                         f"({row.get('flags') or 'no loss column'}). Pick a run with a loss curve.")
    runs: tuple[str, ...] = ()
    if loss_threshold is None:
        split = row.get("split")
        threshold = loss_threshold_from_runs(table, exclude=run, split=split if isinstance(split, str) else None)
        loss_threshold, runs, why = threshold.value, threshold.runs, threshold.note
    else:
        why = f"threshold typed in: L = {loss_threshold:.4g}"
    spe = row.get("steps_per_epoch")
    spe = int(spe) if spe is not None and not pd.isna(spe) else None
    pred = predict_step_at_loss(fit, float(loss_threshold), spe, level=level, seed=seed)
    if not pred.reachable:
        raise InputError(f"{run}: expected the fitted curve to reach the loss threshold; got "
                         f"{pred.reason}. Lower the target or type a higher threshold.")
    if not pred.step > 0:
        raise InputError(f"{run}: expected the threshold L = {loss_threshold:.4g} below the curve's "
                         f"start; got a step of {pred.step:.3g}. Type a lower threshold.")
    low, high, flags = pred.step_low, pred.step_high, []
    pct = f"{level:.0%}"
    if low is None or high is None:
        flags.append("no interval: the fit's uncertainties could not be estimated")
        low = high = None
    elif not (math.isfinite(high) and low > 0):
        flags.append(f"the {pct} interval is open (within it the curve may never reach L): no band")
        low = high = None
    elif not low <= pred.step <= high:
        # a parameter at its bound (b2 = 0) makes the clipped draws one-sided
        flags.append(f"the {pct} interval ({low:,.0f} to {high:,.0f}) lay beside the estimate "
                     "(a parameter at its bound makes the draws one-sided); widened to include it")
        low, high = min(low, pred.step), max(high, pred.step)
    span = f", {pct} interval {low:,.0f} to {high:,.0f}" if low is not None else ""
    note = (f"{run}: the fitted curve reaches L = {loss_threshold:.4g} at step {pred.step:,.0f}"
            f"{span} ({why}).")
    return StepsEstimate(float(pred.step), "fitted", run, note, steps_low=low, steps_high=high,
                         level=level if low is not None else None, loss_threshold=float(loss_threshold),
                         threshold_runs=runs, flags=tuple(flags))


def steps_from_target_prediction(prediction, *, steps_per_epoch: int | None, label: str) -> StepsEstimate:
    """Steps from a ``core.prediction.predict.TargetPrediction`` (the epoch at target from the first epochs).

    The epoch-level criterion counts an epoch as reached at its last step, so
    ``steps = epoch × steps_per_epoch`` and the same for the interval's ends; an interval
    open above (the run may never get there) is dropped, with a flag.

    Raises
    ------
    InputError
        When the prediction has no epoch (reached already, unreachable, not fitted) or the
        steps per epoch are unknown.
    """
    if prediction.status != "predicted" or prediction.epoch is None:
        why = prediction.reason or prediction.status
        raise InputError(f"{label}: expected a predicted epoch at target; got {prediction.status} ({why}).")
    if not steps_per_epoch:
        raise InputError(f"{label}: expected steps per epoch to turn epochs into steps; the log does not say. "
                         "Set it on the Logs page.")
    spe = float(steps_per_epoch)
    low, high = prediction.epoch_low, prediction.epoch_high
    flags = []
    if low is None or high is None or not math.isfinite(high):
        flags.append(f"the {int(prediction.level * 100)} % interval is open above (the run may never get there): no band")
        low = high = None
    level = prediction.level if low is not None else None
    note = (f"epoch {prediction.epoch:.0f} predicted from the first {prediction.n_epochs_observed} epochs "
            f"({prediction.family}, {prediction.route} route) × {steps_per_epoch} steps per epoch")
    return StepsEstimate(steps=float(prediction.epoch) * spe, source="predicted", label=label, note=note,
                         steps_low=None if low is None else float(low) * spe,
                         steps_high=None if high is None else float(high) * spe, level=level, flags=tuple(flags))
