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

:func:`prior_for_run` picks one for a loaded run: other runs of the same job (same model and
split, a known global batch) when at least two reached the target, otherwise a calibration over
the other loaded architectures.  For the same job there are two candidates, and the one with the
smaller leave-one-run-out error over the job's runs is taken (:func:`job_prior`): the batch-scaling
fit ``E(B) = E_min·(1 + B/B_noise)`` of the other runs evaluated at this run's batch (logs in real
epochs: ``epochs = samples / samples per epoch``), or the log-mean of their epochs (always used for
the Pollux traces, whose AdaptDL "statistical epochs" already divide out the batch's efficiency).
Neither ever reads the run's accuracy or loss (nor its own train/val twin): only its name, batch and
samples per epoch.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from statistics import NormalDist

import numpy as np
import pandas as pd
from scipy import stats

from core.calibrate import Calibration, architectures, calibrate, normalise_fits, query_rows, usable
from core.datasets import builtin_datasets_by_file
from core.defaults import DEFAULT_LEVEL, DEFAULT_TARGET_ACC
from core.errors import InputError
from core.logs import RunLog
from core.runs import analyse_run, find_target_crossing, fits_table
from core.validation import check_scalar

#: fewest other runs of the same job a per-job prior is made from
MIN_JOB_RUNS = 2
#: the fewest other architectures a calibration prior needs (``core.calibrate``'s LOAO needs 3)
MIN_ARCHITECTURES = 3
#: the calibration method of a prior from other architectures: the one the nested leave-one-
#: architecture-out on the course table chooses for every held-out architecture (docs/calibrate.md),
#: fixed so that a page does not re-run the method selection (1 s of 1.3 s per prior) for each run
PRIOR_METHOD = "arch-kernel"
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


# --------------------------------------------------------------------------- for a loaded run
def same_job_runs(log: RunLog, others: Sequence[RunLog]) -> list[RunLog]:
    """The other runs of ``log``'s job: same model and split, a known global batch (other runs at the
    same batch count: another system or seed of the same job), ``log`` itself left out."""
    m = log.meta
    if not m.model or not m.global_batch:
        return []
    return [o for o in others if o.source != log.source and o.meta.model == m.model and o.meta.split == m.split
            and o.meta.global_batch]


def _samples_per_epoch(log: RunLog) -> float | None:
    """Samples in one of the log's epochs, when its epochs are real passes over the data (None otherwise:
    a Pollux trace counts statistical epochs)."""
    if log.fmt == "metric-trace":
        return None
    if log.meta.samples_per_epoch:
        return float(log.meta.samples_per_epoch)
    if log.steps_per_epoch and log.meta.global_batch:
        return float(log.steps_per_epoch) * float(log.meta.global_batch)
    return None


def _batch_scaling_prediction(log: RunLog, job: Sequence[RunLog], *, target_acc: float,
                              level: float) -> Prior | None:
    """The batch-scaling fit of ``job`` at ``log``'s batch, in ``log``'s epochs; None when it cannot be made."""
    from core.batch import fit_batch_scaling, measure_batch_run

    n = _samples_per_epoch(log)
    if n is None:
        return None
    runs = []
    for o in job:
        try:
            runs.append(measure_batch_run(o, target_acc=target_acc))
        except InputError:
            continue
    try:
        model = fit_batch_scaling(runs, level=level)
    except InputError:
        return None
    batch = float(log.meta.global_batch)
    # the runs' samples are counted to the end of the epoch where each passed: the continuous epoch
    # at target lies half an epoch before, as for the log-mean (``c.epoch - 0.5``)
    epoch = float(model.samples(batch)) / n - 0.5
    if not (math.isfinite(epoch) and epoch > 0):
        return None
    band = model.samples_interval(batch)
    desc = (f"batch-scaling fit E(B) = E_min·(1 + B/B_noise) of {len(model.used)} other runs of the job "
            f"(E_min {model.e_min:,.0f} samples, B_noise {model.b_noise:,.0f}) at this run's batch {batch:,.0f}")
    if band is None:
        return Prior(epoch, math.inf, "batch scaling", desc, level,
                     ("two runs: the fit has no interval, the prior does not weigh in",), len(model.used))
    low, high = float(band[0]) / n - 0.5, float(band[1]) / n - 0.5
    return Prior.from_interval(epoch, low if low > 0 else None, high, level=level,
                               source="batch scaling", description=desc, n_runs=len(model.used))


def _job_mean(done: Sequence[tuple[RunLog, float]], level: float) -> Prior:
    return prior_from_other_runs([e - 0.5 for _, e in done], level=level,
                                 labels=[f"batch {o.meta.global_batch}" for o, _ in done])


def job_prior(log: RunLog, job: Sequence[RunLog], *, target_acc: float = DEFAULT_TARGET_ACC,
              level: float = DEFAULT_LEVEL) -> Prior:
    """The prior from other runs of the same job: the batch-scaling fit or the mean, by leave-one-run-out.

    Each run of ``job`` that reached the target is predicted from the others by both candidates
    (the batch-scaling fit at its batch; the log-mean of the others' epochs); the candidate with the
    smaller median ``|ln(predicted/actual)|`` is used for ``log``, and the description says both
    errors.  The fit needs runs at two batches besides the one left out, and real epochs.

    Examples
    --------
    Runs needing ``E(B) = 1e5·(1 + B/500)`` samples at 1,000 samples per epoch (epochs 110, 120,
    150, 200 at batches 50, 100, 250, 500): a run at batch 1,000 is predicted to pass during epoch
    1e5·3/1000 = 300 by the fit (continuous epoch 299.5), where the log-mean of the others says 141:

    >>> from core.logs import read_log
    >>> def run(b, e):
    ...     rows = "".join(f"{k},{k * 1000 // b},{1 / k:.4f},0.{50 + 45 * (k >= e)}\\n" for k in range(1, e + 3))
    ...     return read_log(f"epoch,step,loss,acc\\n{rows}".encode(), f"resnet20_x-{b}.csv")
    >>> job = [run(50, 110), run(100, 120), run(250, 150), run(500, 200)]
    >>> p = job_prior(run(1000, 300), job, target_acc=0.9)
    >>> p.source, round(p.epoch, 6)
    ('batch scaling', 299.5)
    """
    done = [(o, find_target_crossing(o, target_acc)) for o in job]
    done = [(o, float(c.epoch)) for o, c in done if c.reached and c.epoch is not None]
    mean = _job_mean(done, level)
    if len(done) < MIN_JOB_RUNS + 1 or _samples_per_epoch(log) is None:
        return mean
    errors: dict[str, list[float]] = {"batch scaling": [], "other runs": []}
    for i, (o, actual) in enumerate(done):
        rest = [d for j, d in enumerate(done) if j != i]
        fitted = _batch_scaling_prediction(o, [r for r, _ in rest], target_acc=target_acc, level=level)
        if fitted is None:
            return mean
        errors["batch scaling"].append(abs(math.log(fitted.epoch / (actual - 0.5))))
        errors["other runs"].append(abs(math.log(_job_mean(rest, level).epoch / (actual - 0.5))))
    med = {k: float(np.median(v)) for k, v in errors.items()}
    score = (f"leave-one-run-out median error over {len(done)} runs: batch-scaling fit "
             f"{100 * math.expm1(med['batch scaling']):.1f} %, mean of the others "
             f"{100 * math.expm1(med['other runs']):.1f} %")
    fitted = _batch_scaling_prediction(log, job, target_acc=target_acc, level=level)
    chosen = fitted if fitted is not None and med["batch scaling"] < med["other runs"] else mean
    return replace(chosen, description=f"{chosen.description} ({score})")


def prior_source(log: RunLog, others: Sequence[RunLog], *, target_acc: float = DEFAULT_TARGET_ACC) -> str | None:
    """Which prior :func:`prior_for_run` would try for ``log``: ``"other runs"`` (at least two other
    batch sizes of the same job reached the target), ``"calibration"`` (at least three other
    architectures of its split with a loss curve), or None — a quick check, nothing is fitted."""
    others = [o for o in others if o.source != log.source]
    job = same_job_runs(log, others)
    if sum(find_target_crossing(o, target_acc).reached for o in job) >= MIN_JOB_RUNS:
        return "other runs"
    archs = {o.meta.model for o in others if o.meta.model and o.meta.model != log.meta.model and o.has_loss
             and o.meta.split == log.meta.split}
    return "calibration" if log.meta.model and len(archs) >= MIN_ARCHITECTURES else None


def prior_for_run(log: RunLog, others: Sequence[RunLog], *, target_acc: float = DEFAULT_TARGET_ACC,
                  level: float = DEFAULT_LEVEL, datasets_by_file: dict[str, str] | None = None,
                  method: str = PRIOR_METHOD, fits: pd.DataFrame | None = None) -> Prior:
    """The prior for ``log`` from the other loaded runs (module docstring); ``Prior.none`` when none.

    ``fits`` (a calibration frame, ``core.calibrate.read_fits_table``) adds fitted runs of other
    architectures to the calibration; ``method`` is its regression method (``PRIOR_METHOD`` by
    default, ``"auto"`` to choose per run by leave-one-architecture-out, five times slower).
    ``log`` itself and every run of its own architecture (its val/train twin included, and the
    table's rows of it) are left out before anything is computed.
    """
    level = check_scalar(level, "level", float, min_val=0, max_val=1, include_boundaries="neither")
    others = [o for o in others if o.source != log.source]
    job = same_job_runs(log, others)
    if sum(find_target_crossing(o, target_acc).reached for o in job) >= MIN_JOB_RUNS:
        return job_prior(log, job, target_acc=target_acc, level=level)
    datasets = {**builtin_datasets_by_file(), **(datasets_by_file or {})}   # the built-in runs are known
    return _calibration_prior(log, others, target_acc=target_acc, level=level,
                              datasets_by_file=datasets, method=method, extra_fits=fits)


def _calibration_prior(log, others, *, target_acc, level, datasets_by_file, method, extra_fits) -> Prior:
    model = log.meta.model
    if not model:
        return Prior.none(f"{log.source}: the model is unknown (name the file <model>_<device>.csv)")
    other_models = [o for o in others if o.meta.model and o.meta.model != model]
    pool = [o for o in other_models if o.has_loss]
    frames = []
    if pool:
        table = fits_table([analyse_run(o, target_acc=target_acc) for o in pool])
        frames.append(normalise_fits(table, source="other runs", target_acc=target_acc,
                                     datasets_by_file=datasets_by_file))
    if extra_fits is not None:
        recorded = pd.to_numeric(extra_fits["target_acc"], errors="coerce")
        if recorded.notna().any() and not np.allclose(recorded.dropna(), target_acc):
            return Prior.none(f"the fits table was made for target {recorded.dropna().iloc[0]:g}, not {target_acc:g}")
        frames.append(extra_fits[extra_fits["model"] != model])
    if not frames:
        if other_models:
            n_arch = len({o.meta.model for o in other_models})
            return Prior.none(f"the calibration needs a loss column, and none of the {len(other_models)} logs of "
                              f"the {n_arch} other architecture{'s' if n_arch != 1 else ''} loaded has one "
                              "(accuracy only)")
        return Prior.none("no other architecture loaded to calibrate on")
    fits = pd.concat(frames, ignore_index=True)
    split = log.meta.split
    if len(architectures(usable(fits, split=split))) < MIN_ARCHITECTURES:
        return Prior.none(f"fewer than {MIN_ARCHITECTURES} other architectures in the {split} split to calibrate on")
    query = query_rows(model, gpus=(log.meta.gpu or "unknown",), dataset=datasets_by_file.get(log.source, "other"),
                       steps_per_epoch=float(log.steps_per_epoch or math.nan), split=split)
    try:
        cal = calibrate(fits, holdout=model, split=split, method=method, level=level, query=query)
    except InputError as exc:
        return Prior.none(f"calibration: {exc}")
    return prior_from_calibration(cal)
