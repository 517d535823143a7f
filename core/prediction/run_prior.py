"""Which prior a loaded run gets: other runs of the same job, else a calibration (see :mod:`core.prediction.prior`).

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
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import replace
from threading import Lock

import numpy as np
import pandas as pd

from core.calibrate import architectures, calibrate, normalise_fits, query_rows, usable
from core.datasets import builtin_datasets_by_file
from core.defaults import DEFAULT_LEVEL
from core.errors import InputError
from core.logs import RunLog
from core.prediction.prior import MIN_ARCHITECTURES, MIN_JOB_RUNS, Prior, prior_from_calibration, prior_from_other_runs
from core.runs import analyse_run, find_target_crossing, fits_table_of_rows
from core.targets import DEFAULT_TARGET, Target, require_accuracy
from core.validation import check_scalar

#: the calibration method of a prior from other architectures: the one the nested leave-one-
#: architecture-out on the course table chooses for every held-out architecture (docs/calibrate.md),
#: fixed so that a page does not re-run the method selection (1 s of 1.3 s per prior) for each run
PRIOR_METHOD = "arch-kernel"

#: fitted rows kept by :func:`fit_rows` (a few hundred bytes each): the calibration pool of every prior
#: is refitted from them, not from the logs, so that eight sessions' priors share the built-in runs' fits
FIT_ROW_CACHE_SIZE = 512
_FIT_ROWS: OrderedDict[tuple[str, Target], dict] = OrderedDict()
_FIT_ROWS_LOCK = Lock()


def fit_rows(logs: Sequence[RunLog], *, target: Target) -> pd.DataFrame:
    """The fits table (``core.runs.fits_table``) of ``logs`` at ``target``, each run's row fitted once
    per process: rows are kept by the log's content fingerprint (at most ``FIT_ROW_CACHE_SIZE``, least
    recently used dropped), never the log itself, so a removed upload's data is not held.

    >>> from core.logs import read_log
    >>> rows = "".join(f"{k // 10 + 1},{k},{2 / k + 0.1:.4f},0.5\\n" for k in range(1, 40))
    >>> log = read_log(f"epoch,step,loss,acc\\n{rows}".encode(), "resnet8_cpu.csv")
    >>> from core.targets import accuracy_target
    >>> table = fit_rows([log], target=accuracy_target(0.9))
    >>> table.equals(fit_rows([log], target=accuracy_target(0.9))), table["file"].tolist()
    (True, ['resnet8_cpu.csv'])
    """
    rows = []
    for log in logs:
        key = (log.fingerprint(), target)
        with _FIT_ROWS_LOCK:
            row = _FIT_ROWS.get(key)
            if row is not None:
                _FIT_ROWS.move_to_end(key)
        if row is None:
            row = analyse_run(log, target=target).row()
            with _FIT_ROWS_LOCK:
                _FIT_ROWS[key] = row
                while len(_FIT_ROWS) > FIT_ROW_CACHE_SIZE:
                    _FIT_ROWS.popitem(last=False)
        rows.append(row)
    return fits_table_of_rows(rows)


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


def _batch_scaling_prediction(log: RunLog, job: Sequence[RunLog], *, target: Target,
                              level: float) -> Prior | None:
    """The batch-scaling fit of ``job`` at ``log``'s batch, in ``log``'s epochs; None when it cannot be made."""
    from core.batch import fit_batch_scaling, measure_batch_run

    n = _samples_per_epoch(log)
    if n is None:
        return None
    runs = []
    for o in job:
        try:
            runs.append(measure_batch_run(o, target=target))
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


def job_prior(log: RunLog, job: Sequence[RunLog], *, target: Target = DEFAULT_TARGET,
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
    >>> from core.targets import accuracy_target
    >>> p = job_prior(run(1000, 300), job, target=accuracy_target(0.9))
    >>> p.source, round(p.epoch, 6)
    ('batch scaling', 299.5)
    """
    require_accuracy(target, "the prior from other batch sizes of the job")
    done = [(o, find_target_crossing(o, target)) for o in job]
    done = [(o, float(c.epoch)) for o, c in done if c.reached and c.epoch is not None]
    mean = _job_mean(done, level)
    if len(done) < MIN_JOB_RUNS + 1 or _samples_per_epoch(log) is None:
        return mean
    errors: dict[str, list[float]] = {"batch scaling": [], "other runs": []}
    for i, (o, actual) in enumerate(done):
        rest = [d for j, d in enumerate(done) if j != i]
        fitted = _batch_scaling_prediction(o, [r for r, _ in rest], target=target, level=level)
        if fitted is None:
            return mean
        errors["batch scaling"].append(abs(math.log(fitted.epoch / (actual - 0.5))))
        errors["other runs"].append(abs(math.log(_job_mean(rest, level).epoch / (actual - 0.5))))
    med = {k: float(np.median(v)) for k, v in errors.items()}
    score = (f"leave-one-run-out median error over {len(done)} runs: batch-scaling fit "
             f"{100 * math.expm1(med['batch scaling']):.1f} %, mean of the others "
             f"{100 * math.expm1(med['other runs']):.1f} %")
    fitted = _batch_scaling_prediction(log, job, target=target, level=level)
    chosen = fitted if fitted is not None and med["batch scaling"] < med["other runs"] else mean
    return replace(chosen, description=f"{chosen.description} ({score})")


def prior_source(log: RunLog, others: Sequence[RunLog], *, target: Target = DEFAULT_TARGET) -> str | None:
    """Which prior :func:`prior_for_run` would try for ``log``: ``"other runs"`` (at least two other
    batch sizes of the same job reached the target), ``"calibration"`` (at least three other
    architectures of its split with a loss curve), or None — a quick check, nothing is fitted."""
    others = [o for o in others if o.source != log.source]
    job = same_job_runs(log, others)
    if sum(find_target_crossing(o, target).reached for o in job) >= MIN_JOB_RUNS:
        return "other runs"
    archs = {o.meta.model for o in others if o.meta.model and o.meta.model != log.meta.model and o.has_loss
             and o.meta.split == log.meta.split}
    return "calibration" if log.meta.model and len(archs) >= MIN_ARCHITECTURES else None


def prior_for_run(log: RunLog, others: Sequence[RunLog], *, target: Target = DEFAULT_TARGET,
                  level: float = DEFAULT_LEVEL, datasets_by_file: dict[str, str] | None = None,
                  method: str = PRIOR_METHOD, fits: pd.DataFrame | None = None) -> Prior:
    """The prior for ``log`` from the other loaded runs (module docstring); ``Prior.none`` when none.

    ``fits`` (a calibration frame, ``core.calibrate.read_fits_table``) adds fitted runs of other
    architectures to the calibration; ``method`` is its regression method (``PRIOR_METHOD`` by
    default, ``"auto"`` to choose per run by leave-one-architecture-out, five times slower).
    ``log`` itself and every run of its own architecture (its val/train twin included, and the
    table's rows of it) are left out before anything is computed.
    """
    require_accuracy(target, "the prior from other runs' epochs")
    level = check_scalar(level, "level", float, min_val=0, max_val=1, include_boundaries="neither")
    others = [o for o in others if o.source != log.source]
    job = same_job_runs(log, others)
    if sum(find_target_crossing(o, target).reached for o in job) >= MIN_JOB_RUNS:
        return job_prior(log, job, target=target, level=level)
    datasets = {**builtin_datasets_by_file(), **(datasets_by_file or {})}   # the built-in runs are known
    return _calibration_prior(log, others, target=target, level=level,
                              datasets_by_file=datasets, method=method, extra_fits=fits)


def _calibration_prior(log, others, *, target: Target, level, datasets_by_file, method, extra_fits) -> Prior:
    model = log.meta.model
    if not model:
        return Prior.none(f"{log.source}: the model is unknown (name the file <model>_<device>.csv)")
    other_models = [o for o in others if o.meta.model and o.meta.model != model]
    pool = [o for o in other_models if o.has_loss]
    frames = []
    if pool:
        table = fit_rows(pool, target=target)
        frames.append(normalise_fits(table, source="other runs", target=target,
                                     datasets_by_file=datasets_by_file))
    if extra_fits is not None:
        recorded = pd.to_numeric(extra_fits["target_acc"], errors="coerce")
        if recorded.notna().any() and not np.allclose(recorded.dropna(), target.value):
            return Prior.none(f"the fits table was made for target {recorded.dropna().iloc[0]:g}, not {target.value:g}")
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
