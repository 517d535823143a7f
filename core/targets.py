"""A training target: a metric, a direction and a value (``acc>=0.92``, ``val_loss<=3.28``).

One small type used wherever a target is used (fit, crossing, prediction, calibration, batch
scaling, plan, library filters, pages, figures), so that "reached" never silently means
"accuracy above 0.92". The direction comes from the user, or from a log that says so (an
MLLOG log's ``target_accuracy`` with its benchmark's direction; a NanoGPT speedrun log's 3.28).

The percent rule lives here too, once: a metric is divided by 100 **only** when it is an
accuracy (a metric that climbs, ``>=``) whose values lie in (1, 100]. A metric that falls is a
loss and is never rescaled.

>>> t = parse_target("val_loss<=3.28")
>>> t.metric, t.direction, t.value, str(t)
('val_loss', '<=', 3.28, 'val_loss<=3.28')
>>> t.met([3.5, 3.28, 3.1]).tolist()
[False, True, True]
>>> parse_target("acc>=0.92") == accuracy_target(0.92)
True
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from core.defaults import DEFAULT_TARGET_ACC
from core.errors import InputError
from core.validation import check_scalar

#: the two directions a target can have: the metric must climb to (``>=``) or fall to (``<=``) the value
DIRECTIONS: tuple[str, str] = (">=", "<=")
#: the name of the accuracy role of a RunLog (a fraction in [0, 1])
ACCURACY_METRIC = "acc"
#: the name of the loss role of a RunLog
LOSS_METRIC = "loss"

# names of metrics that climb (accuracies, scores) and that fall (losses, perplexities, error rates)
_CLIMBING = re.compile(r"(^|[^a-z])(acc|accuracy|top-?[15]|acc[15]|map|bleu|rouge\w*|f1|auc|dice|iou|"
                       r"score|exact_match|em)($|[^a-z])", re.IGNORECASE)
_FALLING = re.compile(r"(loss|perplexity|ppl|log_ppl|logppl|nll|error|err|wer|cer|mse|mae|rmse|bpb|bpc)",
                      re.IGNORECASE)
_SPEC = re.compile(r"^\s*(?P<metric>[^<>=\s][^<>=]*?)\s*(?P<op>>=|<=|=>|=<|>|<|==|=)\s*(?P<value>\S+)\s*$")


@dataclass(frozen=True)
class Target:
    """A metric, a direction and a value: the run is at target where ``metric direction value`` holds.

    Parameters
    ----------
    metric : str
        The metric's name as the log calls it (``acc``, ``loss``, ``val_loss``, ``eval_accuracy``).
    direction : {">=", "<="}
        ``>=`` for a metric that climbs (an accuracy), ``<=`` for one that falls (a loss).
    value : float
        The threshold, in the metric's own unit (a fraction for ``acc``).
    origin : str, default "user"
        Where the target came from: ``user``, ``default`` or ``log`` (the log declared it).
        Not part of equality.
    """

    metric: str
    direction: str
    value: float
    origin: str = "user"

    def __post_init__(self) -> None:
        if not isinstance(self.metric, str) or not self.metric.strip():
            raise InputError(f"target: expected a metric name; got {self.metric!r}.")
        if self.direction not in DIRECTIONS:
            raise InputError(f"target {self.metric}: expected a direction among >=, <=; got {self.direction!r}.")
        object.__setattr__(self, "metric", self.metric.strip())
        object.__setattr__(self, "value", float(check_scalar(self.value, f"target {self.metric}")))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Target):
            return NotImplemented
        return (self.metric, self.direction, self.value) == (other.metric, other.direction, other.value)

    def __hash__(self) -> int:
        return hash((self.metric, self.direction, self.value))

    def __str__(self) -> str:
        return self.spec

    @property
    def spec(self) -> str:
        """``METRIC>=VALUE`` or ``METRIC<=VALUE``, as ``--target`` takes it."""
        return f"{self.metric}{self.direction}{self.value:g}"

    @property
    def climbs(self) -> bool:
        """True when the metric must climb to the value (``>=``)."""
        return self.direction == ">="

    @property
    def is_accuracy(self) -> bool:
        """True for the accuracy role (``acc >= value``, a fraction)."""
        return self.metric == ACCURACY_METRIC and self.climbs

    def met(self, values) -> np.ndarray:
        """Where the target holds (NaN never holds).

        >>> Target("acc", ">=", 0.92).met([0.5, 0.92, float("nan"), 0.95]).tolist()
        [False, True, False, True]
        """
        v = np.asarray(values, dtype=float)
        with np.errstate(invalid="ignore"):
            hit = v >= self.value if self.climbs else v <= self.value
        return hit & np.isfinite(v)

    def first_met(self, values) -> int | None:
        """Index of the first value at target, or None.

        >>> Target("loss", "<=", 3.28).first_met([4.0, 3.3, 3.27, 3.2])
        2
        """
        hits = np.flatnonzero(self.met(values))
        return int(hits[0]) if hits.size else None

    def signed(self, values) -> np.ndarray:
        """The values with the sign that makes "higher is better" (a falling metric negated)."""
        v = np.asarray(values, dtype=float)
        return v if self.climbs else -v

    def flipped(self) -> "Target":
        """The same target on the negated metric (``loss<=3`` → ``-loss>=-3``); for tests and symmetry."""
        name = self.metric[1:] if self.metric.startswith("-") else "-" + self.metric
        return Target(name, "<=" if self.climbs else ">=", -self.value, self.origin)

    def with_origin(self, origin: str) -> "Target":
        return Target(self.metric, self.direction, self.value, origin)

    def to_dict(self) -> dict:
        return {"metric": self.metric, "direction": self.direction, "target": self.value}


def accuracy_target(value: float = DEFAULT_TARGET_ACC, *, origin: str = "user") -> Target:
    """``acc >= value`` for an accuracy given as a fraction (``--target-acc``).

    >>> accuracy_target(0.92).spec
    'acc>=0.92'
    >>> accuracy_target(92)
    Traceback (most recent call last):
    ...
    core.errors.InputError: target_acc: expected a finite number in (0, 1); got 92. Did you mean 0.92?.
    """
    hint = ""
    if isinstance(value, (int, float, np.floating)) and not isinstance(value, bool) and 1 < value <= 100:
        hint = f"Did you mean {value / 100:g}?"
    value = check_scalar(value, "target_acc", float, min_val=0, max_val=1, include_boundaries="neither", fix=hint)
    return Target(ACCURACY_METRIC, ">=", value, origin)


#: the target used when neither the user nor the log says one (the course's 92 % accuracy)
DEFAULT_TARGET = Target(ACCURACY_METRIC, ">=", DEFAULT_TARGET_ACC, "default")


def direction_of(metric: str) -> str | None:
    """The direction a metric's name implies: ``<=`` for losses, ``>=`` for accuracies, None if unknown.

    >>> direction_of("val_loss"), direction_of("eval_accuracy"), direction_of("acc"), direction_of("speed")
    ('<=', '>=', '>=', None)
    """
    if _FALLING.search(metric):
        return "<="
    if _CLIMBING.search(metric):
        return ">="
    return None


def parse_target(spec: str, *, name: str = "--target") -> Target:
    """Read ``METRIC>=VALUE`` or ``METRIC<=VALUE``.

    A bare ``>``, ``<`` or ``=`` is refused: the direction must be stated in full, so that no
    target is ever read the wrong way round.

    >>> parse_target("eval_accuracy <= 3.3")
    Target(metric='eval_accuracy', direction='<=', value=3.3, origin='user')
    >>> parse_target("acc=0.9")
    Traceback (most recent call last):
    ...
    core.errors.InputError: --target: expected METRIC>=VALUE or METRIC<=VALUE; got 'acc=0.9'. ...
    """
    if not isinstance(spec, str):
        raise InputError(f"{name}: expected METRIC>=VALUE or METRIC<=VALUE; got {spec!r}.")
    m = _SPEC.match(spec)
    if m is None:
        raise InputError(f"{name}: expected METRIC>=VALUE or METRIC<=VALUE; got {spec!r}. "
                         "Example: val_loss<=3.28.")
    metric, op, raw = m.group("metric").strip(), m.group("op"), m.group("value")
    op = {"=>": ">=", "=<": "<="}.get(op, op)
    if op not in DIRECTIONS:
        raise InputError(f"{name}: expected METRIC>=VALUE or METRIC<=VALUE; got {spec!r}. "
                         f"Write {metric}>={raw} or {metric}<={raw}.")
    try:
        value = float(raw)
    except ValueError:
        raise InputError(f"{name}: expected a number after {op}; got {raw!r} in {spec!r}.") from None
    if not math.isfinite(value):
        raise InputError(f"{name}: expected a finite number after {op}; got {raw!r}.")
    if op == ">=" and _FALLING.search(metric):
        # a loss that must climb is a typo; (an "accuracy" that falls is not: MLPerf's LLM
        # benchmarks log their log-perplexity as eval_accuracy)
        raise InputError(f"{name}: {metric!r} is a loss, which falls; got {spec!r}. Write {metric}<={raw}.")
    if metric == ACCURACY_METRIC and op == ">=":
        return accuracy_target(value)
    return Target(metric, op, value)


def target_for(log=None, given: Target | None = None) -> Target:
    """The one decision of which target applies to a run: the user's (``given``), else the one the log
    declares (an MLLOG log's ``target_accuracy``, a speedrun log's 3.28), else ``acc>=0.92`` (origin ``default``).

    Every page, command and core step asks this function; none decides it again.

    >>> target_for().spec, target_for().origin
    ('acc>=0.92', 'default')
    >>> class Log: target = Target("eval_accuracy", "<=", 3.3, "log")
    >>> target_for(Log()).spec, target_for(Log(), accuracy_target(0.8)).spec
    ('eval_accuracy<=3.3', 'acc>=0.8')
    """
    if given is not None:
        if not isinstance(given, Target):
            raise InputError(f"target: expected a Target (acc>=0.92, val_loss<=3.28); got {given!r}.")
        return given
    declared = getattr(log, "target", None)
    if isinstance(declared, Target):
        return declared
    return DEFAULT_TARGET


def require_accuracy(target: Target, step: str) -> float:
    """The accuracy fraction of ``target``, for a step of the planner that only makes sense for a climbing
    accuracy; any other target is refused with words naming the step, never read as an accuracy.

    >>> require_accuracy(accuracy_target(0.8), "the course's epoch model")
    0.8
    >>> require_accuracy(Target("val_loss", "<=", 3.28), "the course's epoch model")
    Traceback (most recent call last):
    ...
    core.errors.InputError: target: the course's epoch model works on an accuracy (acc>=A); got val_loss<=3.28. ...
    """
    if not isinstance(target, Target):
        raise InputError(f"target: expected a Target (acc>=0.92, val_loss<=3.28); got {target!r}.")
    if not target.is_accuracy:
        raise InputError(f"target: {step} works on an accuracy (acc>=A); got {target.spec}. "
                         "Give --target acc>=A, or use a command that forecasts any metric (predict, fit).")
    return target.value


def accuracy_in_percent(values, *, direction: str = ">=") -> bool:
    """True when an accuracy's values are given in percent: it climbs and its largest value lies in (1, 100].

    A falling metric (a loss, a log-perplexity) is never a percentage, whatever its values.

    >>> accuracy_in_percent([12.0, 75.9]), accuracy_in_percent([0.2, 0.76])
    (True, False)
    >>> accuracy_in_percent([5.6, 3.3], direction="<=")
    False
    """
    if direction != ">=":
        return False
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return bool(v.size) and 1.0 < float(v.max()) <= 100.0 and float(v.min()) >= 0.0


def accuracy_value(target: Target) -> float | None:
    """The fraction of an accuracy target (``acc>=A``), None for any other target: what a ``target_acc``
    column holds, so that a loss is never written where an accuracy is read.

    >>> accuracy_value(accuracy_target(0.9)), accuracy_value(Target("val_loss", "<=", 3.28))
    (0.9, None)
    """
    return target.value if target.is_accuracy else None


def target_label(target: Target) -> str:
    """A target as a sentence writes it: the accuracy by its value alone (``0.92``), any other by its spec.

    >>> target_label(accuracy_target(0.92)), target_label(Target("val_loss", "<=", 3.28))
    ('0.92', 'val_loss<=3.28')
    """
    value = accuracy_value(target)
    return target.spec if value is None else f"{value:g}"
