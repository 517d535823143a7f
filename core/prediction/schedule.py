"""Learning-rate schedules: declared, read from a learning-rate column, or detected from the curve.

A smooth learning-curve family cannot know that the learning rate will drop: on a step
schedule the accuracy jumps right after each drop (ImageNet ×0.1 after epochs 30 and 60), and
under a decaying rate (exponential, cosine, polynomial) a run speeds up as the rate anneals.
A :class:`Schedule` says where the rate changes, so that a prediction

* **fits within the current phase**: after a drop at epoch ``d`` (the rate changes between
  epochs ``d`` and ``d + 1``) only epochs ``> d`` are fitted, counted from ``d``; with fewer
  than ``MIN_PHASE_EPOCHS`` of them the extrapolation is refused;
* **does not cross a future drop silently**: when the extrapolated epoch lies after the next
  declared drop, the extrapolation is refused with a sentence saying why (no smooth family
  predicts a jump it has not seen; ``bench/posterior.py`` measures what the refusal costs and
  what the prior gives instead);
* under a **smooth decay** that is still going on, is flagged and its interval opened down to
  the next epoch (the run may speed up as the rate anneals).

Where a schedule comes from:

* **declared** (:func:`parse_schedule`): ``step:30,60`` (drops after epochs 30 and 60),
  ``cosine:100`` (cosine to epoch 100), ``poly:90`` or ``poly:90:2`` (polynomial decay of
  power 1 or 2 to epoch 90, as the MLPerf logs use), ``exp:100`` (exponential decay over 100
  epochs), ``none``.  ``POLLUX_SCHEDULES`` lists the six Pollux benchmark jobs' schedules.
* a **learning-rate column** (``lr``, ``learning_rate``, ``lr-SGD`` ...; read as the ``lr``
  role): :func:`schedule_from_lr` finds the drops among the observed epochs (the future is
  not in the column; a rate still decaying smoothly is said so).
* **detected from the curve** (:func:`detect_drops`): an epoch whose error ``1 − acc`` falls
  far more than the epochs before it let expect, and stays down.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from core.errors import InputError
from core.logs import RunLog
from core.runs import epoch_summary

KINDS = {
    "step": "the rate drops by a factor after the given epochs",
    "cosine": "cosine decay to the given epoch",
    "poly": "polynomial decay (power 1 = linear) to the given epoch",
    "exp": "exponential decay over the given number of epochs",
    "none": "constant rate",
}
#: the fewest epochs of a phase (after a drop) a curve is fitted on
MIN_PHASE_EPOCHS = 5
#: the learning-rate schedules of the six Pollux benchmark jobs (petuum/adaptdl benchmark/models/<job>,
#: see docs/prediction.md); epochs are AdaptDL's statistical epochs, as in the traces
POLLUX_SCHEDULES: dict[str, str] = {
    "cifar10": "exp:100",        # ExponentialLR(0.0133 ** (1/100)) per epoch: 0.08 → 0.00106 over 100 epochs
    "imagenet": "step:30,60",    # lr · 0.1 ** (epoch // 30), 90 epochs
    "yolov3": "cosine:50",       # 2 warm-up epochs, then CosineAnnealingLR over 48 epochs to 1e-6
    "deepspeech2": "exp:80",     # lr / 1.02 per epoch (anneal 1.02), 80 epochs
    "bert": "poly:2",            # linear decay to 0 over 2 epochs (t_total in progress units)
    "ncf": "step:4,7",           # MultiStepLR([4, 7, 10], gamma=0.2), 10 epochs
}
# detection from the curve: a jump is an epoch whose ln(error) falls by at least MIN_JUMP, by
# JUMP_SPREADS robust spreads more than the median change of the WINDOW epochs before it, and by
# JUMP_RATIO times that median change (steady fast progress is not a jump)
MIN_JUMP = 0.1
JUMP_SPREADS = 4.0
JUMP_RATIO = 4.0
WINDOW = 8
MIN_HISTORY = 4


@dataclass(frozen=True)
class Schedule:
    """Where the learning rate changes.

    Attributes
    ----------
    kind : str
        A key of ``KINDS``.
    drops : tuple of float
        Step schedules: the epochs after which the rate drops (it changes between ``d`` and ``d + 1``).
    end_epoch : float or None
        Smooth decays: the epoch where the decay ends.
    power : float or None
        Polynomial decay's power.
    source : str
        ``"declared"``, ``"lr column"`` or ``"detected from the curve"``.
    note : str
    """

    kind: str
    drops: tuple[float, ...] = field(default=())
    end_epoch: float | None = None
    power: float | None = None
    source: str = "declared"
    note: str = ""

    @property
    def smooth(self) -> bool:
        return self.kind in ("cosine", "poly", "exp")

    def phase_start(self, n: int) -> float:
        """The last drop ``d < n`` (0 when the observed epochs ``1..n`` are all one phase).

        >>> parse_schedule("step:30,60").phase_start(45), parse_schedule("step:30,60").phase_start(30)
        (30.0, 0.0)
        """
        before = [d for d in self.drops if d < n]
        return float(max(before)) if before else 0.0

    def next_drop(self, n: int) -> float | None:
        """The first drop at or after epoch ``n`` (the rate changes after it), or None.

        >>> parse_schedule("step:30,60").next_drop(45), parse_schedule("step:30,60").next_drop(61)
        (60.0, None)
        """
        after = [d for d in self.drops if d >= n]
        return float(min(after)) if after else None

    def decaying_after(self, n: int) -> bool:
        """A smooth decay still going on after epoch ``n``."""
        return self.smooth and self.end_epoch is not None and self.end_epoch > n

    def markers(self) -> tuple[float, ...]:
        """Epochs to draw as vertical lines: each drop, or the end of a smooth decay."""
        if self.drops:
            return self.drops
        return (float(self.end_epoch),) if self.smooth and self.end_epoch else ()

    def describe(self) -> str:
        """In words, e.g. ``"step: the rate drops after epochs 30 and 60 (declared)"``."""
        if self.kind == "step":
            ds = [f"{d:g}" for d in self.drops]
            what = ("the rate drops after epoch" + ("s " + ", ".join(ds[:-1]) + " and " + ds[-1] if len(ds) > 1
                                                    else " " + ds[0])) if ds else "no drop found"
        elif self.smooth:
            what = f"{KINDS[self.kind]} {self.end_epoch:g}" + (f" (power {self.power:g})" if self.power else "")
        else:
            what = KINDS.get(self.kind, self.kind)
        return f"{self.kind}: {what} ({self.source})" + (f"; {self.note}" if self.note else "")

    def spec(self) -> str:
        """The declared form (``parse_schedule(s.spec()) == s`` for declared schedules)."""
        if self.kind == "step":
            return "step:" + ",".join(f"{d:g}" for d in self.drops)
        if self.kind == "poly" and self.power not in (None, 1.0):
            return f"poly:{self.end_epoch:g}:{self.power:g}"
        if self.smooth:
            return f"{self.kind}:{self.end_epoch:g}"
        return "none"


def parse_schedule(spec: str) -> Schedule:
    """A declared schedule from its text (module docstring).

    >>> parse_schedule("step:30,60").drops, parse_schedule("cosine:100").end_epoch, parse_schedule("poly:90:2").power
    ((30.0, 60.0), 100.0, 2.0)
    >>> parse_schedule("linear:5")
    Traceback (most recent call last):
    ...
    core.errors.InputError: schedule: expected step:E1,E2,... | cosine:END | poly:END[:POWER] | exp:END | none; \
got 'linear:5'. Write e.g. step:30,60.
    """
    text = str(spec).strip().lower()
    bad = InputError(f"schedule: expected step:E1,E2,... | cosine:END | poly:END[:POWER] | exp:END | none; "
                     f"got {spec!r}. Write e.g. step:30,60.")
    if text in ("none", "constant", ""):
        return Schedule("none")
    m = re.fullmatch(r"(step|cosine|poly|exp):([0-9.,:\s]+)", text)
    if not m:
        raise bad
    kind, args = m.group(1), m.group(2)
    try:
        if kind == "step":
            drops = tuple(sorted(float(v) for v in args.split(",") if v.strip()))
            if not drops or any(d <= 0 for d in drops):
                raise ValueError
            return Schedule("step", drops=drops)
        parts = [float(v) for v in args.split(":")]
        if kind != "poly" and len(parts) != 1 or len(parts) > 2 or parts[0] <= 0:
            raise ValueError
        power = (parts[1] if len(parts) == 2 else 1.0) if kind == "poly" else None
        return Schedule(kind, end_epoch=parts[0], power=power)
    except ValueError:
        raise bad from None


def pollux_schedule(job: str) -> Schedule | None:
    """The schedule of a Pollux benchmark job (``POLLUX_SCHEDULES``), or None for another job."""
    spec = POLLUX_SCHEDULES.get(str(job).lower())
    return None if spec is None else parse_schedule(spec)


def known_schedule(log: RunLog) -> Schedule | None:
    """The documented schedule of ``log``'s job: the one an MLLOG log's optimiser events declare
    (``RunMeta.schedule``), or a Pollux trace's (``<job>/validation-<batch>.csv``, one of the six
    benchmark jobs); None for any other log."""
    if log.meta.schedule:
        try:
            return parse_schedule(log.meta.schedule)
        except InputError:
            return None
    if log.fmt != "metric-trace" or not log.meta.global_batch:
        return None
    return pollux_schedule(log.meta.model or "")


# --------------------------------------------------------------------------- from data
def epoch_lr(log: RunLog) -> tuple[np.ndarray, np.ndarray]:
    """Per epoch: its number and its last learning rate (empty without an ``lr`` column)."""
    frame = log.frame
    if "lr" not in frame or not frame["lr"].notna().any():
        return np.array([]), np.array([])
    rows = frame[frame["lr"].notna() & frame["epoch"].notna()]
    last = rows.groupby("epoch", sort=True)["lr"].last()
    return last.index.to_numpy(dtype=float), last.to_numpy(dtype=float)


def schedule_from_lr(log: RunLog, *, drop_ratio: float = 0.5) -> Schedule | None:
    """Drops in the observed learning rate: an epoch whose rate is at most ``drop_ratio`` of the one before.

    The column shows only the epochs logged, so future drops stay unknown; a rate that has been
    decaying smoothly is said so (``kind="exp"`` with ``end_epoch`` None: a decay whose end is unknown).
    None without an ``lr`` column.
    """
    e, lr = epoch_lr(log)
    if e.size < 2:
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = lr[1:] / lr[:-1]
    drops = tuple(float(e[i]) for i in np.flatnonzero(ratio <= drop_ratio))
    if drops:
        return Schedule("step", drops=drops, source="lr column")
    if np.all(ratio <= 1.0 + 1e-12) and np.any(ratio < 1.0 - 1e-6):
        return Schedule("exp", source="lr column", note="the rate decays smoothly; where the decay ends is unknown")
    return Schedule("none", source="lr column")


def detect_drops(epochs, acc) -> tuple[float, ...]:
    """Epochs after which the curve shows a learning-rate drop (the jump is seen at the next epoch).

    An epoch ``e`` is a jump when ``ℓ_e = ln(err_e / err_{e−1})`` (``err = 1 − acc``) is below
    ``−MIN_JUMP`` and below the median of the ``WINDOW`` changes before it by ``JUMP_SPREADS``
    robust spreads (1.4826 × their median absolute deviation, at least 0.01) and below
    ``JUMP_RATIO`` times that median when it is negative (steady progress is not a jump), after
    at least ``MIN_HISTORY`` changes, and the next epoch stays at least half that jump below
    ``err_{e−1}``.  Noisy curves hide small drops, and a lucky epoch can look like one: a
    detected schedule is said to be detected, and a declared one always wins.

    Examples
    --------
    A curve that creeps up, then jumps after epoch 10 (ImageNet-like):

    >>> e = np.arange(1, 21)
    >>> acc = np.where(e <= 10, 0.5 + 0.004 * e, 0.68 + 0.001 * e)
    >>> detect_drops(e, acc)
    (10.0,)
    >>> detect_drops(e, 0.9 - 0.4 * np.exp(-e / 5))      # smooth: nothing
    ()
    """
    e = np.asarray(epochs, dtype=float)
    err = 1.0 - np.asarray(acc, dtype=float)
    ok = np.isfinite(err) & (err > 0)
    e, err = e[ok], err[ok]
    if e.size < MIN_HISTORY + 3:
        return ()
    ell = np.diff(np.log(err))          # ell[i] is the change into epoch e[i + 1]
    drops = []
    for i in range(MIN_HISTORY, ell.size - 1):
        prev = ell[max(0, i - WINDOW):i]
        spread = max(1.4826 * float(np.median(np.abs(prev - np.median(prev)))), 0.01)
        jump, typical = ell[i], float(np.median(prev))
        if jump < -MIN_JUMP and jump < typical - JUMP_SPREADS * spread and jump < JUMP_RATIO * min(typical, 0.0):
            stays = math.log(err[i + 2] / err[i]) <= 0.5 * jump
            if stays:
                drops.append(float(e[i]))
    return tuple(drops)


def detected_schedule(log: RunLog) -> Schedule | None:
    """A step schedule from the drops :func:`detect_drops` finds in ``log``'s accuracy (None without any)."""
    table = epoch_summary(log).dropna(subset=["acc"])
    drops = detect_drops(table["epoch"].to_numpy(float), table["acc"].to_numpy(float))
    return Schedule("step", drops=drops, source="detected from the curve") if drops else None


def resolve_schedule(log: RunLog, declared: Schedule | str | None = None, *, detect: bool = True) -> Schedule | None:
    """The schedule a prediction from ``log`` (its observed epochs) uses: declared, else the one the
    log declares itself (an MLLOG log's optimiser events), else from the ``lr`` column, else detected
    from the curve (``detect``); None when nothing is known."""
    if isinstance(declared, str):
        declared = parse_schedule(declared)
    if declared is not None:
        return declared
    if log.meta.schedule:
        return known_schedule(log)
    from_lr = schedule_from_lr(log)
    if from_lr is not None and from_lr.kind != "none":
        return from_lr
    return detected_schedule(log) if detect else from_lr


def check_schedule(schedule) -> Schedule | None:
    """``schedule`` as a :class:`Schedule` (text is parsed; None stays None)."""
    if schedule is None or isinstance(schedule, Schedule):
        return schedule
    if isinstance(schedule, str):
        return parse_schedule(schedule)
    raise InputError(f"schedule: expected a Schedule or its text (step:30,60); got {type(schedule).__name__}.")
