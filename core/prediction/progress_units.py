"""Progress is one quantity in several units: steps, epochs, samples, tokens and training seconds.

A run knows, where its log says them, its **global batch** (samples a step), its **tokens a step** (the
batch times the sequence length, or counted), its **steps per epoch** and its **seconds a step** (from its
logged training times). :class:`ProgressUnits` holds those factors for one run and converts a progress value
between any two units it has the factors for; where a factor is unknown it says which one, and never guesses.

Every factor is "per optimiser step", so a conversion is ``value / per_step(from) × per_step(to)``. A course
``_val`` log's steps number validation batches (never training steps): it counts epochs and converts nothing.

:func:`pooled_value` puts another run's progress into this run's unit for a prior: through the most
comparable unit both runs know (tokens, else samples: the data seen, whatever the batch or the sequence
length; else epochs; else steps, when neither knows its data a step), with each run's **own** factors: the
other run's into the shared unit, this run's out of it. A run that knows its data a step is never pooled with
one that does not (their steps are not the same amount of training); the reason names the missing factor.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.errors import InputError
from core.logs import RunLog

#: every unit progress can be counted in
UNITS: tuple[str, ...] = ("steps", "epochs", "samples", "tokens", "time_s")
#: the units a prior pools in, the most comparable across runs first: the data seen, then epochs, then steps
POOLING_UNITS: tuple[str, ...] = ("tokens", "samples", "epochs", "steps")
#: the units that count the data seen (a run that knows one is not pooled in steps with a run that knows none)
DATA_UNITS: tuple[str, ...] = ("tokens", "samples")
#: largest relative spread of a counted column's ratio to the step still read as one factor (a batch ramp is not)
CONSTANT_RATIO_RTOL = 0.01
#: the factor each unit needs, in words
FACTOR_NAMES: dict[str, str] = {"steps": "training step count", "epochs": "steps per epoch",
                                "samples": "global batch (samples per step)", "tokens": "tokens per step",
                                "time_s": "seconds per step (logged times)"}


@dataclass(frozen=True)
class ProgressUnits:
    """One run's factors between its progress units (module docstring); None where the run does not say it.

    >>> u = ProgressUnits("a.txt", "samples", samples_per_step=512, tokens_per_step=512 * 1024, seconds_per_step=0.25)
    >>> u.convert(5120, "samples", "tokens"), u.convert(5120, "samples", "steps"), u.convert(5120, "samples", "time_s")
    (5242880.0, 10.0, 2.5)
    >>> u.missing("epochs")
    'its steps per epoch is unknown'
    """

    source: str
    unit: str
    samples_per_step: float | None = None
    tokens_per_step: float | None = None
    steps_per_epoch: float | None = None
    seconds_per_step: float | None = None
    #: False for a course ``_val`` log, whose steps number validation batches
    steps_known: bool = True
    #: why a factor is unknown, where there is more to say than "unknown" ((unit, reason) pairs)
    notes: tuple[tuple[str, str], ...] = ()

    def __post_init__(self):
        if self.unit not in UNITS:
            raise InputError(f"{self.source}: expected a progress unit among {', '.join(UNITS)}; got {self.unit!r}.")

    @property
    def tokens_per_sample(self) -> float | None:
        """The sequence length, where both the tokens and the samples a step are known."""
        if self.tokens_per_step and self.samples_per_step:
            return self.tokens_per_step / self.samples_per_step
        return None

    def per_step(self, unit: str) -> float | None:
        """How much of ``unit`` one optimiser step is (1 for steps); None when the run does not say."""
        if not self.steps_known:
            return None
        factors = {"steps": 1.0, "samples": self.samples_per_step, "tokens": self.tokens_per_step,
                   "epochs": 1.0 / self.steps_per_epoch if self.steps_per_epoch else None,
                   "time_s": self.seconds_per_step}
        if unit not in factors:
            raise InputError(f"{self.source}: expected a progress unit among {', '.join(UNITS)}; got {unit!r}.")
        value = factors[unit]
        return float(value) if value else None

    def knows(self, unit: str) -> bool:
        """Whether a value can be said in ``unit`` (its own unit always can)."""
        return unit == self.unit or (self.per_step(self.unit) is not None and self.per_step(unit) is not None)

    def missing(self, unit: str) -> str:
        """Why ``unit`` cannot be reached from the run's own unit, in words ("its tokens per step is unknown")."""
        if not self.steps_known:
            return "its steps count validation batches, not training steps"
        for u in (unit, self.unit):
            if self.per_step(u) is None:
                return dict(self.notes).get(u, f"its {FACTOR_NAMES[u]} is unknown")
        return ""

    def factor(self, from_unit: str, to_unit: str) -> float:
        """The number that turns a value in ``from_unit`` into ``to_unit`` (1.0 for the same unit); InputError
        naming the unknown factor otherwise."""
        if from_unit == to_unit:
            return 1.0
        a, b = self.per_step(from_unit), self.per_step(to_unit)
        if a is None or b is None:
            unknown = to_unit if a is not None else from_unit
            raise InputError(f"{self.source}: cannot convert {from_unit} to {to_unit}: {self.missing(unknown)}.")
        return b / a

    def convert(self, value: float, from_unit: str, to_unit: str) -> float:
        """``value`` in ``from_unit`` said in ``to_unit`` (module docstring)."""
        return float(value) * self.factor(from_unit, to_unit)

    def in_all_units(self, value: float, unit: str | None = None) -> dict[str, float]:
        """``value`` (in ``unit``, default the run's own) in every unit the run can say it in.

        >>> ProgressUnits("b.csv", "steps", steps_per_epoch=100).in_all_units(250)
        {'steps': 250.0, 'epochs': 2.5}
        """
        unit = self.unit if unit is None else unit
        return {u: self.convert(value, unit, u) for u in UNITS
                if u == unit or (self.per_step(unit) is not None and self.per_step(u) is not None)}


# --------------------------------------------------------------------------- reading a run's factors
def _ratio(frame, column: str, step: np.ndarray) -> tuple[float | None, str | None]:
    """The constant ratio of a counted column to the step (None, why: absent, or it varies over the run)."""
    if column not in frame.columns:
        return None, None
    values = frame[column].to_numpy(dtype=float)
    ok = np.isfinite(values) & np.isfinite(step) & (step > 0) & (values > 0)
    if not ok.any():
        return None, None
    r = values[ok] / step[ok]
    middle = float(np.median(r))
    if float(r.max() - r.min()) > CONSTANT_RATIO_RTOL * middle:
        return None, (f"its {column} per step vary over the log ({r.min():,.4g} to {r.max():,.4g}): no single "
                      f"{FACTOR_NAMES[column]}")
    return middle, None


def _seconds_per_step(frame, step: np.ndarray) -> float | None:
    """The slope of the logged training time against the step (None without two timed steps)."""
    if "time_s" not in frame.columns:
        return None
    t = frame["time_s"].to_numpy(dtype=float)
    ok = np.isfinite(t) & np.isfinite(step)
    if ok.sum() < 2 or np.ptp(step[ok]) <= 0:
        return None
    slope = float(np.polyfit(step[ok], t[ok], 1)[0])
    return slope if slope > 0 else None


def progress_units(log: RunLog, unit: str) -> ProgressUnits:
    """The factors ``log`` knows between its units (module docstring); ``unit`` is the one it counts in
    (:func:`core.prediction.progress_measure.progress_unit`).

    A factor comes from the run's metadata (``meta.global_batch``, ``meta.seq_len``, ``steps_per_epoch``), else
    from a counted column (``samples``, ``tokens``) when its ratio to the step is constant over the log; seconds
    a step from the logged ``time_s`` (its slope against the step), else ``meta.step_time_s``.

    >>> from dataclasses import replace
    >>> from core.logs import read_log
    >>> log = read_log(b"step,loss,time_s\\n1,3,10\\n2,2.5,12\\n", "a.csv")     # 2 s a step
    >>> u = progress_units(replace(log, frame=log.frame.assign(tokens=[2048.0, 4096.0])), "tokens")
    >>> u.tokens_per_step, round(u.seconds_per_step, 9), u.missing("samples")
    (2048.0, 2.0, 'its global batch (samples per step) is unknown')
    """
    meta = log.meta
    frame = log.frame
    if log.counts_validation_batches:
        return ProgressUnits(log.source, unit, steps_known=False)
    step = frame["global_step"].to_numpy(dtype=float)
    notes = []
    samples = float(meta.global_batch) if meta.global_batch else None
    if samples is None:
        samples, why = _ratio(frame, "samples", step)
        notes += [("samples", why)] if why else []
    tokens, why = _ratio(frame, "tokens", step)
    notes += [("tokens", why)] if why else []
    seq_len = getattr(meta, "seq_len", None)
    if tokens is None and samples and seq_len:
        tokens = samples * float(seq_len)
    seconds = _seconds_per_step(frame, step) or getattr(meta, "step_time_s", None)
    return ProgressUnits(log.source, unit, samples_per_step=samples, tokens_per_step=tokens,
                         steps_per_epoch=float(log.steps_per_epoch) if log.steps_per_epoch else None,
                         seconds_per_step=seconds, notes=tuple(notes))


# --------------------------------------------------------------------------- another run's progress in this run's unit
def shared_unit(other: ProgressUnits, mine: ProgressUnits) -> tuple[str | None, str]:
    """The unit ``other``'s progress is pooled in with ``mine`` (module docstring), or (None, why not).

    >>> mine = ProgressUnits("new.txt", "samples", samples_per_step=512, tokens_per_step=524288)
    >>> shared_unit(ProgressUnits("old.txt", "tokens", tokens_per_step=393216), mine)
    ('tokens', '')
    >>> shared_unit(ProgressUnits("soap.txt", "steps"), mine)
    (None, 'counts steps and its tokens per step is unknown')
    """
    both = [u for u in POOLING_UNITS if other.knows(u) and mine.knows(u)]
    data_mine = [u for u in DATA_UNITS if mine.knows(u)]
    data_other = [u for u in DATA_UNITS if other.knows(u)]
    if both and (both[0] in DATA_UNITS or not (data_mine or data_other)):
        return both[0], ""
    if data_mine and not data_other:
        return None, f"counts {other.unit} and {other.missing(data_mine[0])}"
    if data_other and not data_mine:
        return None, f"counts {other.unit}; this run's {mine.missing(data_other[0]).removeprefix('its ')}"
    if data_mine:                                      # each knows a different data unit and not the other's
        return None, f"counts {other.unit} and {other.missing(data_mine[0])}"
    if not other.knows(mine.unit):
        return None, f"counts {other.unit} and {other.missing(mine.unit)}"
    return None, f"counts {other.unit}; this run's {mine.missing(other.unit).removeprefix('its ')}"


def pooled_value(value: float, other: ProgressUnits, mine: ProgressUnits) -> tuple[float | None, str]:
    """``value`` (``other``'s progress, in its unit) in ``mine``'s unit through the unit both share, with each run's
    own factors; ``(None, why)`` when there is none.

    A run counted in tokens (393,216 a step) pooled into a run counted in samples (512 of 1,024 tokens a step):
    1,000 steps of the first are 393,216,000 tokens, which are 384,000 samples of the second.

    >>> mine = ProgressUnits("new.txt", "samples", samples_per_step=512, tokens_per_step=524288)
    >>> pooled_value(393_216_000, ProgressUnits("old.txt", "tokens", tokens_per_step=393216), mine)
    (384000.0, 'tokens')
    """
    unit, why = shared_unit(other, mine)
    if unit is None:
        return None, why
    # the ratio of the two runs' factors first: exactly 1.0 when they are the same (no rounding of a value that
    # needs no conversion)
    return float(value) * (other.factor(other.unit, unit) / mine.factor(mine.unit, unit)), unit


def left_out_summary(left_out: Sequence[tuple[str, str, str]]) -> str:
    """``left_out`` ((source, kind, reason) triples) counted by kind, with the first reason of each.

    >>> left_out_summary([("a.txt", "unit", "counts steps and its tokens per step is unknown"),
    ...                   ("b.txt", "target", "did not reach val_loss<=3.28"), ("c.txt", "target", "did not reach")])
    '1 cannot be converted (a.txt: counts steps and its tokens per step is unknown); 2 did not reach the target'
    """
    words = {"unit": "cannot be converted", "target": "did not reach the target", "metric": "do not log the metric",
             "rates": "trained on other rates", "plan": "have no known learning-rate plan"}
    parts = []
    for kind in dict.fromkeys(k for _, k, _ in left_out):
        rows = [(s, r) for s, k, r in left_out if k == kind]
        text = f"{len(rows)} {words.get(kind, kind)}"
        if kind != "target":
            text += f" ({rows[0][0]}: {rows[0][1]}" + (", ..." if len(rows) > 1 else "") + ")"
        parts.append(text)
    return "; ".join(parts)
