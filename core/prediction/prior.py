"""What is known about a run's epoch at target before its own epochs say anything: the prior.

A :class:`Prior` is a log-normal belief about the (continuous) epoch at which the run passes its
target: a median and the standard deviation of its logarithm, with where it comes from and
flags a page can show.  Three constructors:

* :func:`prior_from_calibration`: the prediction of a ``core.calibrate.Calibration`` for the
  run's architecture (other architectures; its interval widens with the distance from the
  calibration set, and the flags say when the architecture lies outside it);
* :func:`prior_from_other_runs`: epochs to target of other runs of the **same job** (other
  batch sizes), as measured (a per-job fallback: their log-mean and spread, optionally rescaled
  by samples per epoch) or as *precomputed predictions with intervals* — the hook for the
  batch-scaling model ``core.batch`` (issue 11), which predicts epochs (or samples) to
  target at this run's batch;
* :meth:`Prior.from_interval`: any point with a ``level`` interval.

Which prior a loaded run gets (:func:`~core.prediction.run_prior.prior_for_run`) is decided in
:mod:`core.prediction.run_prior`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from statistics import NormalDist

import numpy as np
from scipy import stats

from core.calibrate import Calibration
from core.defaults import DEFAULT_LEVEL
from core.errors import InputError
from core.validation import check_scalar

#: fewest other runs of the same job a per-job prior is made from
MIN_JOB_RUNS = 2
#: the fewest other architectures a calibration prior needs (``core.calibrate``'s LOAO needs 3)
MIN_ARCHITECTURES = 3
SOURCES = {
    "calibration": "other architectures (core.calibrate)",
    "other runs": "other runs of the same job (the log-mean of their epochs to target)",
    "batch scaling": "the batch-scaling model of the same job (predicted at this batch)",
    "given": "given by the caller",
    "none": "no prior",
}


def z_of(level: float) -> float:
    """The standard normal quantile of a central ``level`` interval: ``Φ⁻¹((1 + level)/2)``.

    >>> round(z_of(0.8), 4), round(z_of(0.95), 4)
    (1.2816, 1.96)
    """
    return NormalDist().inv_cdf((1.0 + level) / 2.0)


@dataclass(frozen=True)
class Prior:
    """A log-normal belief about the epoch at target: ``ln(epoch) ~ N(ln median, log_sd²)``.

    Attributes
    ----------
    epoch : float
        Median continuous epoch at target (NaN: no prior).
    log_sd : float
        Standard deviation of ``ln(epoch)`` (``inf``: no spread known, the prior says nothing).
    source : str
        A key of ``SOURCES``.
    description : str
        One clause a page shows as it is ("arch-kernel on 5 architectures ...").
    level : float
        Coverage of ``low``/``high``.
    flags : tuple of str
        Caveats ("outside the calibration set: ...").
    n_runs : int
        Runs it was learned from.
    """

    epoch: float
    log_sd: float
    source: str
    description: str
    level: float = DEFAULT_LEVEL
    flags: tuple[str, ...] = field(default=())
    n_runs: int = 0

    @classmethod
    def none(cls, reason: str) -> "Prior":
        """No prior, and why."""
        return cls(math.nan, math.inf, "none", reason, flags=(reason,))

    @classmethod
    def from_interval(cls, epoch: float, low: float | None, high: float | None, *, level: float = DEFAULT_LEVEL,
                      source: str = "given", description: str = "", flags: tuple[str, ...] = (),
                      n_runs: int = 0) -> "Prior":
        """A prior from a median and a ``level`` interval: ``log_sd = ln(high/low) / (2·z)``.

        The interval's width is kept; the log-normal centres it on the median.

        >>> p = Prior.from_interval(20.0, 10.0, 40.0, level=0.8)
        >>> round(p.log_sd, 4), [round(v, 2) for v in p.interval()]    # ln 4 / (2·1.2816) = 0.5409
        (0.5409, [10.0, 40.0])
        >>> Prior.from_interval(20.0, None, None).log_sd
        inf
        """
        epoch = check_scalar(epoch, "prior epoch", float, min_val=0, include_boundaries="neither")
        ok = low is not None and high is not None and 0 < low <= high and math.isfinite(high)
        sd = math.log(high / low) / (2.0 * z_of(level)) if ok else math.inf
        return cls(float(epoch), float(sd), source, description, level, tuple(flags), n_runs)

    @property
    def available(self) -> bool:
        """There is a median (the spread may still be unknown)."""
        return math.isfinite(self.epoch) and self.epoch > 0

    @property
    def informative(self) -> bool:
        """There is a median and a finite spread: the prior can weigh in a posterior."""
        return self.available and math.isfinite(self.log_sd)

    def interval(self, level: float | None = None) -> tuple[float, float]:
        """``epoch·exp(∓z·log_sd)`` at ``level`` (this prior's own by default)."""
        z = z_of(self.level if level is None else level)
        if not self.available:
            return (math.nan, math.nan)
        if not math.isfinite(self.log_sd):
            return (0.0, math.inf)
        return (self.epoch * math.exp(-z * self.log_sd), self.epoch * math.exp(z * self.log_sd))

    @property
    def low(self) -> float:
        return self.interval()[0]

    @property
    def high(self) -> float:
        return self.interval()[1]

    def to_dict(self) -> dict:
        out = asdict(self)
        out["flags"] = list(self.flags)
        out["low"], out["high"] = self.interval()
        return out


def prior_from_calibration(calibration: Calibration, *, gpu: str | None = None) -> Prior:
    """The prior a :class:`core.calibrate.Calibration` gives for one GPU (the first one by default).

    The median is the predicted step at target over steps per epoch (continuous epochs); the
    spread comes from the calibration's interval (distance-weighted conformal, symmetric in
    log); flags say where the architecture lies outside the calibration set.
    """
    rows = calibration.predictions
    if gpu is not None:
        rows = rows[rows["gpu"] == gpu]
    if rows.empty:
        return Prior.none(f"calibration: no prediction for GPU {gpu!r}")
    row = rows.iloc[0]
    spe, step = float(row["steps_per_epoch"]), float(row["step_pred"])
    if not (math.isfinite(step) and step > 0 and math.isfinite(spe) and spe > 0):
        return Prior.none(f"calibration ({calibration.method}): the predicted curve never reaches the target"
                          if not math.isfinite(step) else "calibration: steps per epoch unknown")
    low, high = float(row["step_pred_low"]) / spe, float(row["step_pred_high"]) / spe
    flags = []
    if not calibration.inside:
        flags.append("outside the calibration set: " + "; ".join(calibration.outside))
    flags += [n for n in calibration.notes]
    desc = (f"{calibration.method} on {len(calibration.architectures)} other architectures "
            f"({', '.join(calibration.architectures)}), {calibration.split} split")
    low_ok = low if math.isfinite(low) else None
    high_ok = high if math.isfinite(high) else None
    return Prior.from_interval(step / spe, low_ok, high_ok, level=calibration.level, source="calibration",
                               description=desc, flags=tuple(flags), n_runs=int(len(calibration.residuals)))


def prior_from_other_runs(epochs: Sequence[float], *, lows: Sequence[float] | None = None,
                          highs: Sequence[float] | None = None, level: float = DEFAULT_LEVEL,
                          samples_per_epoch: Sequence[float] | None = None,
                          target_samples_per_epoch: float | None = None, labels: Sequence[str] = (),
                          source: str = "other runs") -> Prior:
    """A prior from the epochs to target of other runs of the same job (at other batch sizes).

    Two uses:

    * **measured** (``lows``/``highs`` not given): the per-job fallback.  With ``n >= 2`` epochs
      ``e_i`` (each rescaled to this run's epochs by ``samples_per_epoch[i] /
      target_samples_per_epoch`` when given), the median is ``exp(mean ln e_i)`` and the
      ``level`` interval the Student-t prediction interval ``mean ± t_{n−1}·s·√(1 + 1/n)`` of
      ``ln e``, stored as the log-normal spread with the same interval.
    * **predicted** (one epoch with ``lows``/``highs``): a model's prediction for this run (the
      batch-scaling fit of ``core.batch``, issue 11): that point and interval as they are
      (``source="batch scaling"``).

    Examples
    --------
    Other runs at 60 and 80 epochs: median sqrt(60·80) = 69.3; s = ln(80/60)/√2 = 0.2034,
    t₁(0.9) = 3.078, half-width 3.078·0.2034·√1.5 = 0.767 in ln epochs:

    >>> p = prior_from_other_runs([60, 80])
    >>> round(p.epoch, 1), [round(v, 1) for v in p.interval()]
    (69.3, [32.2, 149.2])
    >>> p = prior_from_other_runs([64.0], lows=[58.0], highs=[71.0], source="batch scaling")
    >>> [round(v, 1) for v in p.interval()]     # the width ln(71/58) kept, centred on 64 in log
    [57.8, 70.8]
    """
    e = np.asarray(epochs, dtype=float)
    if samples_per_epoch is not None and target_samples_per_epoch is not None:
        e = e * np.asarray(samples_per_epoch, dtype=float) / float(target_samples_per_epoch)
    if lows is not None or highs is not None:
        if lows is None or highs is None or len(e) != 1 or len(lows) != 1 or len(highs) != 1:
            raise InputError("prior_from_other_runs: expected one predicted epoch with one low and one high; got "
                             f"{len(e)} epochs. Pass the prediction for this run's batch.")
        return Prior.from_interval(float(e[0]), float(lows[0]), float(highs[0]), level=level, source=source,
                                   description=f"predicted for this run by {SOURCES.get(source, source)}", n_runs=1)
    e = e[np.isfinite(e) & (e > 0)]
    names = _say_once(labels) if labels else f"{e.size} runs"
    if e.size == 0:
        return Prior.none("no other run of the same job reached the target")
    if e.size < MIN_JOB_RUNS:
        return Prior(float(e[0]), math.inf, source, f"epochs to target of {names}", level,
                     (f"only {e.size} other run of the same job: no spread, the prior does not weigh in",), 1)
    x = np.log(e)
    s = float(x.std(ddof=1))
    half = float(stats.t.ppf((1.0 + level) / 2.0, e.size - 1)) * s * math.sqrt(1.0 + 1.0 / e.size)
    return Prior(float(math.exp(x.mean())), half / z_of(level), source,
                 f"epochs to target of {e.size} other runs of the same job ({names})", level, (), int(e.size))


def _say_once(labels: Sequence[str]) -> str:
    """Labels named once each, in first-seen order, with a count where one repeats.

    >>> _say_once(["batch 16", "batch 32", "batch 16", "batch 16"])
    'batch 16 (×3), batch 32'
    """
    counts: dict[str, int] = {}
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
    return ", ".join(k if c == 1 else f"{k} (×{c})" for k, c in counts.items())
