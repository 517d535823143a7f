"""What the pages' target widget offers on loaded runs: its starting value (the target the runs declare), the
target it shows, the metrics a target can name, each metric's direction, and a reachable target suggested from the
runs.

Which target applies to a run is :func:`core.targets.target_for`'s decision alone; the widget only says what the
user chose (:func:`given_target`, its ``given``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from core.errors import InputError
from core.logs import RunLog
from core.runs.targets import best_value
from core.targets import DEFAULT_TARGET, LOSS_METRIC, Target, direction_of


def starting_target(logs: Iterable[RunLog]) -> Target:
    """The target widget's starting value: the one the loaded runs declare, else ``acc>=0.92``.

    Runs that declare a target (an MLLOG log's ``target_accuracy``, a speedrun log's 3.28) give
    it; when they declare several, the one most of them declare (the first of equals, in load
    order). Runs that declare none leave the default ``acc>=0.92`` (origin ``default``), unless none
    of them logs an accuracy and they log a loss: then a loss half of them reach
    (:func:`suggested_target`), since an accuracy target would say nothing of them.

    >>> from core.logs import read_log
    >>> plain = read_log(b"step,loss,acc\\n1,2.0,0.5\\n", "a.csv")
    >>> starting_target([plain]).spec, starting_target([]).origin
    ('acc>=0.92', 'default')
    >>> starting_target([read_log(b"step,loss\\n1,2.0\\n2,1.5\\n", "lm.csv")]).spec
    'loss<=1.5'
    """
    logs = list(logs)
    declared = [log.target for log in logs if isinstance(getattr(log, "target", None), Target)]
    if not declared:
        if logs and not any(log.has_acc for log in logs) and any(log.has_loss for log in logs):
            return suggested_target(logs, LOSS_METRIC)   # runs of a loss alone: a loss they reach, half of them
        return DEFAULT_TARGET.with_origin("default")
    counts: dict[Target, int] = {}
    for t in declared:
        counts[t] = counts.get(t, 0) + 1
    best = max(counts, key=lambda t: counts[t])   # max keeps the first of equals (dict order: load order)
    return next(t for t in declared if t == best).with_origin("log")


def widget_target(chosen: Target | None, logs: Iterable[RunLog]) -> Target:
    """The target the widget shows: the user's ``chosen`` one while a loaded run logs its metric (or it is the
    accuracy, always offered), else :func:`starting_target`.

    >>> from core.logs import read_log
    >>> lm = [read_log(b"step,loss\\n1,2.0\\n2,1.5\\n", "lm.csv")]
    >>> widget_target(Target("loss", "<=", 1.8), lm).spec, widget_target(Target("val_loss", "<=", 3.0), lm).spec
    ('loss<=1.8', 'loss<=1.5')
    """
    logs = list(logs)
    if isinstance(chosen, Target) and chosen.metric in ("acc", *target_metrics(logs)):
        return chosen
    return starting_target(logs)


def given_target(shown: Target) -> Target | None:
    """What a page passes on as the user's target (``core.targets.target_for``'s ``given``) for the target its
    widget shows: the target itself once the user chose it, None while it shows the runs' declared target or
    ``acc>=0.92`` (each run then gets its own declaration, else ``acc>=0.92``, from ``target_for``); a loss the
    widget starts from on runs that log only a loss and declare nothing (:func:`starting_target`) applies to
    every run as it is.

    >>> given_target(Target("val_loss", "<=", 3.28, "log")) is None, given_target(Target("acc", ">=", 0.8)).spec
    (True, 'acc>=0.8')
    >>> given_target(Target("loss", "<=", 1.5, "default")).spec
    'loss<=1.5'
    """
    if shown.origin == "user" or (shown.origin == "default" and shown != DEFAULT_TARGET):
        return shown
    return None


#: the range of the widget's slider for a target whose value is a fraction (an accuracy that climbs)
ACCURACY_SLIDER: tuple[float, float] = (0.50, 0.99)


def slider_range(target: Target) -> tuple[float, float] | None:
    """The range of the widget's slider for ``target``'s value: :data:`ACCURACY_SLIDER` for an accuracy (a
    fraction), None for any other metric (a number field takes its value as it is).

    >>> slider_range(DEFAULT_TARGET), slider_range(Target("val_loss", "<=", 3.28))
    ((0.5, 0.99), None)
    """
    return ACCURACY_SLIDER if target.is_accuracy else None


def accuracy_chart_target(target: Target) -> Target | None:
    """The target an accuracy chart draws its line at: ``target`` when it is an accuracy that climbs, None when it is
    on another metric (a page then shows no accuracy chart beside the loss chart).

    >>> accuracy_chart_target(DEFAULT_TARGET).spec, accuracy_chart_target(Target("val_loss", "<=", 3.28))
    ('acc>=0.92', None)
    """
    return target if target.is_accuracy else None


def target_metrics(logs: Iterable[RunLog]) -> list[str]:
    """The metric names a target can name on these runs: ``acc`` (where a run has accuracies), ``loss``,
    then the runs' own named metrics (``val_loss``, ``eval_accuracy``), each once, in that order.

    >>> from core.logs import read_log
    >>> target_metrics([read_log(b"step,loss,acc\\n1,2.0,0.5\\n", "a.csv")])
    ['acc', 'loss']
    """
    names: list[str] = []
    for log in logs:
        if log.has_acc:
            names.append("acc")
        if log.has_loss:
            names.append("loss")
    for log in logs:
        names += [m for m in (getattr(log, "metrics", None) or {}) if m not in ("acc", "loss")]
    ordered = [m for m in ("acc", "loss") if m in names] + [m for m in names if m not in ("acc", "loss")]
    return list(dict.fromkeys(ordered))


def metric_direction(logs: Iterable[RunLog], metric: str) -> str:
    """The direction of a target on ``metric``: the one a loaded run declares for it (MLPerf's Llama
    ``eval_accuracy`` falls: a log-perplexity), else the one its name implies, else ``>=``.

    >>> metric_direction([], "val_loss"), metric_direction([], "acc"), metric_direction([], "speed")
    ('<=', '>=', '>=')
    """
    for log in logs:
        declared = getattr(log, "target", None)
        if isinstance(declared, Target) and declared.metric == metric:
            return declared.direction
    return direction_of(metric) or ">="


def suggested_target(logs: Iterable[RunLog], metric: str) -> Target:
    """A starting target on ``metric`` for these runs (a page's metric choice starts from it).

    The target a run declares on that metric; else ``acc>=0.92`` for the accuracy; else, on a metric
    no run declares a target for, the median of the runs' best values (a target half of them reach),
    to three significant digits, in the metric's direction (:func:`metric_direction`).

    >>> from core.logs import read_log
    >>> logs = [read_log(b"step,loss,acc\\n1,2.0,0.5\\n2,1.0,0.7\\n", "a.csv"),
    ...         read_log(b"step,loss,acc\\n1,3.0,0.5\\n2,2.0,0.7\\n", "b.csv")]
    >>> suggested_target(logs, "loss").spec, suggested_target(logs, "acc").spec
    ('loss<=1.5', 'acc>=0.92')
    """
    logs = list(logs)
    for log in logs:
        declared = getattr(log, "target", None)
        if isinstance(declared, Target) and declared.metric == metric:
            return declared.with_origin("log")
    if metric == "acc":
        return DEFAULT_TARGET.with_origin("default")
    direction = metric_direction(logs, metric)
    probe = Target(metric, direction, 0.0)
    bests = [b for b in (best_value(log, probe) for log in logs) if b is not None and math.isfinite(b)]
    if not bests:
        raise InputError(f"target metric {metric!r}: expected a metric the loaded runs log; got none that has it. "
                         "Choose another metric.")
    value = float(np.median(bests))
    value = float(f"{value:.3g}")
    return Target(metric, direction, value, "default")
