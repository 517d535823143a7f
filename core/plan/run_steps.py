"""Steps to target from a logged run (one source of :class:`~core.plan.steps.StepsEstimate`).

From a run's :class:`core.runs.RunAnalysis` (:func:`steps_from_run`): the step where the run
measurably passed the target; or the step where its fitted loss curve falls to a loss threshold
(``core.runs.predict_step_at_loss``, with an 80 % interval), the threshold being the mean loss at
target of the *other* loaded runs that reached it (:func:`loss_threshold_from_runs`: never the run's
own, so the curve is asked a held-out question, as in the course's step 4); or the epoch at target
extrapolated by a learning-curve family, widened as the other runs teach
(:func:`core.prediction.forecast_epoch_at_target`); or, for a run short of the target when other
runs give a prior (other batch sizes of the same job, or three or more other architectures), the
**posterior** of that prior and the run's epochs, with its interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.defaults import DEFAULT_LEVEL
from core.errors import InputError
from core.plan.steps import StepsEstimate
from core.prediction import FitCache, Forecast, TargetPrediction, forecast_epoch_at_target, prior_source
from core.runs import RunAnalysis, predict_step_at_loss
from core.targets import accuracy_value, require_accuracy
from core.validation import check_option

#: how steps are taken from a logged run
RUN_METHODS: dict[str, str] = {
    "auto": "the measured step where the run passed the target; the fitted curve when it never did",
    "fitted": "the fitted loss curve, inverted at a loss threshold",
    "family": "the epoch at target extrapolated from the whole log by a learning-curve family, with its "
              "backtest interval widened as the other loaded runs teach",
    "posterior": "the prior from the other loaded runs (other batch sizes of the same job, or a calibration over "
                 "the other architectures) combined with the whole log's extrapolation, with its interval",
}


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


def loss_threshold_from_runs(runs: Sequence[RunAnalysis], *, exclude: str,
                             split: str | None = None) -> LossThreshold:
    """Mean loss at target of the runs that reached it, leaving the run ``exclude`` out.

    Parameters
    ----------
    runs : sequence of RunAnalysis
        The loaded runs (their ``crossing.loss`` where they passed the target).
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
    Three runs whose accuracy passes 0.92 where their loss is 0.3, 0.5 and 0.9:

    >>> from core.logs import read_log
    >>> from core.runs import analyse_run
    >>> def run(name, loss):
    ...     csv = f"epoch,step,loss,acc\\n1,1,2.0,0.5\\n2,2,{loss},0.95\\n".encode()
    ...     return analyse_run(read_log(csv, name))
    >>> runs = [run("a.csv", 0.3), run("b.csv", 0.5), run("c_val.csv", 0.9)]
    >>> th = loss_threshold_from_runs(runs, exclude="a.csv", split="train")   # only b: 0.5
    >>> th.value, th.runs
    (0.5, ('b.csv',))
    >>> round(loss_threshold_from_runs(runs, exclude="x.csv").value, 9)        # (0.3 + 0.5 + 0.9) / 3
    0.566666667
    """
    others = [r for r in runs if r.log.source != exclude and r.crossing.reached
              and r.crossing.loss is not None and math.isfinite(r.crossing.loss)]
    if not others:
        raise InputError(f"{exclude}: expected other loaded runs that reached the target to set the "
                         "loss threshold; got none. Load more runs, lower the target, or type a "
                         "threshold.")
    used_split = None
    if split is not None and any(r.log.meta.split == split for r in others):
        others, used_split = [r for r in others if r.log.meta.split == split], split
    value = float(np.mean([r.crossing.loss for r in others]))
    return LossThreshold(value, tuple(r.log.source for r in others), used_split)


def default_run(runs: Sequence[RunAnalysis]) -> str | None:
    """The run a plan opens on: the first that passed its target (its steps are measured, the plan
    answers the question), else the first run; None without runs."""
    first = next((r for r in runs if r.crossing.reached), next(iter(runs), None))
    return None if first is None else first.log.source


def run_methods(run: RunAnalysis, others: Sequence[RunAnalysis] = ()) -> dict[str, str]:
    """The :data:`RUN_METHODS` that apply to ``run``: "family" only for a run short of an accuracy target
    (the learning-curve families extrapolate an accuracy); "posterior" (listed first: the default) when,
    besides, the ``others`` give a prior."""
    methods = {k: v for k, v in RUN_METHODS.items() if k not in ("family", "posterior")}
    if not run.crossing.reached and run.log.has_acc and accuracy_value(run.crossing.target) is not None:
        methods["family"] = RUN_METHODS["family"]
        if prior_source(run.log, [o.log for o in others], target=run.crossing.target) is not None:
            methods = {"posterior": RUN_METHODS["posterior"], **methods}
    return methods


def steps_from_run(run: RunAnalysis, others: Sequence[RunAnalysis], *, method: str = "auto",
                   loss_threshold: float | None = None, family: str = "auto", route: str = "accuracy",
                   level: float = DEFAULT_LEVEL, seed: int = 0, cache: FitCache | None = None) -> StepsEstimate:
    """Steps to target from one logged run: measured where it reached the target, else fitted or extrapolated.

    Parameters
    ----------
    run : RunAnalysis
        The run, with its fitted loss curve and target crossing.
    others : sequence of RunAnalysis
        The loaded runs (``run`` may be among them; it is never used for its own threshold
        or widening).
    method : {"auto", "fitted", "family", "posterior"}, default="auto"
        "auto": the measured step when the run reached the target, otherwise the fitted
        curve; "fitted": always the fitted curve; "family": the epoch at target
        extrapolated by ``family``; "posterior": that extrapolation combined with the prior
        from the other runs (``RUN_METHODS``).
    loss_threshold : float or None, default=None
        Where to invert the curve; None uses :func:`loss_threshold_from_runs` (other runs of
        the same split, never this run's own loss).
    family, route : str
        The learning-curve family and route of the "family" method.
    level : float, default=0.8
        Coverage of the interval.
    seed : int, default=0
    cache : FitCache, optional
        Fits to reuse for the "family" method (a page shares one between its predictions).

    Returns
    -------
    StepsEstimate
        ``source="measured"`` (no interval: a measurement), ``"fitted"`` (interval when it is
        finite and > 0; otherwise a flag says why there is no band) or ``"predicted"``.

    Raises
    ------
    InputError
        Unknown method; no fit to invert; no threshold; the curve never reaches it.

    Examples
    --------
    >>> from core.curves import optimus_loss
    >>> from core.logs import read_log
    >>> from core.runs import analyse_run
    >>> k = np.arange(1, 3001)
    >>> rows = "".join(f"{(i - 1) // 100 + 1},{(i - 1) % 100 + 1},{optimus_loss(i, 0.001, 1.0, 0.1):.6f},0.5\\n"
    ...                for i in k)
    >>> a = analyse_run(read_log(("epoch,step,loss,acc\\n" + rows).encode(), "a.csv"))
    >>> b = analyse_run(read_log(b"epoch,step,loss,acc\\n1,1,2.0,0.5\\n8,800,0.6,0.95\\n", "b.csv"))
    >>> round(steps_from_run(a, [a, b]).steps)        # fitted: (1/(0.6 - 0.1) - 1)/0.001
    1000
    >>> steps_from_run(b, [a, b]).steps               # measured
    800.0
    """
    check_option(method, "steps_from_run: method", RUN_METHODS)
    name = run.log.source
    if method in ("posterior", "family"):     # the curve families extrapolate an accuracy: this step refuses
        require_accuracy(run.crossing.target, f"the plan's {method!r} method (steps from a run)")
    if method == "posterior":
        forecast = forecast_epoch_at_target(run.log, [r.log for r in others if r.log.has_acc],
                                            target=run.crossing.target, family=family, route=route,
                                            level=level, prior="auto", schedule="auto", cache=cache)
        return steps_from_posterior(forecast, steps_per_epoch=run.log.steps_per_epoch, label=name)
    if method == "family":
        forecast = forecast_epoch_at_target(run.log, [r.log for r in others if r.log.has_acc],
                                            target=run.crossing.target, family=family, route=route,
                                            level=level, cache=cache)
        return steps_from_target_prediction(forecast.prediction, steps_per_epoch=run.log.steps_per_epoch,
                                            label=name)
    c = run.crossing
    if method == "auto" and c.reached and c.step is not None and c.step > 0:
        at = f" (epoch {c.epoch})" if c.epoch is not None else ""
        return StepsEstimate(float(c.step), "measured", name,
                             f"{name} passed the target at step {c.step:,.0f}{at} (measured).")
    return _fitted_steps(run, others, loss_threshold=loss_threshold, level=level, seed=seed)


def _fitted_steps(run: RunAnalysis, others, *, loss_threshold, level, seed) -> StepsEstimate:
    name = run.log.source
    if run.fit is None:
        raise InputError(f"{name}: expected a fitted loss curve to invert; got none "
                         f"({'; '.join(run.flags) or 'no loss column'}). Pick a run with a loss curve.")
    runs: tuple[str, ...] = ()
    if loss_threshold is None:
        threshold = loss_threshold_from_runs(others, exclude=name, split=run.log.meta.split)
        loss_threshold, runs, why = threshold.value, threshold.runs, threshold.note
    else:
        why = f"threshold typed in: L = {loss_threshold:.4g}"
    pred = predict_step_at_loss(run.fit, float(loss_threshold), run.log.steps_per_epoch, level=level, seed=seed)
    if not pred.reachable:
        raise InputError(f"{name}: expected the fitted curve to reach the loss threshold; got "
                         f"{pred.reason}. Lower the target or type a higher threshold.")
    if not pred.step > 0:
        raise InputError(f"{name}: expected the threshold L = {loss_threshold:.4g} below the curve's "
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
    note = (f"{name}: the fitted curve reaches L = {loss_threshold:.4g} at step {pred.step:,.0f}"
            f"{span} ({why}).")
    return StepsEstimate(float(pred.step), "fitted", name, note, steps_low=low, steps_high=high,
                         level=level if low is not None else None, loss_threshold=float(loss_threshold),
                         threshold_runs=runs, flags=tuple(flags))


def steps_from_posterior(forecast: Forecast, *, steps_per_epoch: int | None, label: str) -> StepsEstimate:
    """Steps from a forecast's posterior (prior × the run's epochs): ``epoch × steps_per_epoch``, and its interval.

    Raises
    ------
    InputError
        Without a posterior epoch (no prior and no usable extrapolation) or steps per epoch.
    """
    post = forecast.posterior
    if post is None or not post.available:
        why = post.description if post is not None else "no prior was computed"
        raise InputError(f"{label}: expected a posterior epoch at target; got none ({why}). Pick another method.")
    if not steps_per_epoch:
        raise InputError(f"{label}: expected steps per epoch to turn epochs into steps; the log does not say. "
                         "Set it on the Logs page.")
    spe = float(steps_per_epoch)
    low, high = post.epoch_low, post.epoch_high
    flags = list(dict.fromkeys((*forecast.prediction.flags, *post.flags)))
    if low is None or high is None or not math.isfinite(high):
        flags.append(f"the {post.level * 100:.0f} % interval is open above (the run may never get there): no band")
        low = high = None
    note = (f"epoch {post.epoch:.0f} ({post.method}: {post.description}) from the first "
            f"{post.n_epochs_observed} epochs and the prior ({forecast.prior.description}) × {steps_per_epoch} "
            "steps per epoch")
    return StepsEstimate(steps=float(post.epoch) * spe, source="posterior", label=label, note=note,
                         steps_low=None if low is None else float(low) * spe,
                         steps_high=None if high is None else float(high) * spe,
                         level=post.level if low is not None else None, flags=tuple(flags))


def steps_from_target_prediction(prediction: TargetPrediction, *, steps_per_epoch: int | None,
                                 label: str) -> StepsEstimate:
    """Steps from a ``TargetPrediction`` (the epoch at target from the first epochs).

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
        flags.append(f"the {prediction.level * 100:.0f} % interval is open above (the run may never get there): "
                     "no band")
        low = high = None
    level = prediction.level if low is not None else None
    note = (f"epoch {prediction.epoch:.0f} predicted from the first {prediction.n_epochs_observed} epochs "
            f"({prediction.family}, {prediction.route} route) × {steps_per_epoch} steps per epoch")
    return StepsEstimate(steps=float(prediction.epoch) * spe, source="predicted", label=label, note=note,
                         steps_low=None if low is None else float(low) * spe,
                         steps_high=None if high is None else float(high) * spe, level=level,
                         flags=tuple(flags))
