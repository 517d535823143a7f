"""The built-in example data shipped in ``data/`` (the product never reads outside the repo)."""

from __future__ import annotations

import functools
import hashlib
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

from core.curves import FitResult
from core.logs import RunLog
from core.runs import RunFit, fit_metric, fit_run
from core.targets import target_for
from core.validation import check_option

#: the repository's data folder
DATA_DIR = Path(__file__).resolve().parent.parent / "data"

#: training-set sizes (samples per epoch) of the standard datasets the built-in data and examples use: the one
#: table of them (CIFAR-10: Krizhevsky 2009, 50,000 training images; ImageNet: ILSVRC-2012, 1,281,167)
TRAINING_SET_SIZES: dict[str, int] = {
    "cifar10": 50_000,
    "imagenet": 1_281_167,
}

#: the shared schedule curves shown among the built-in data (all nine schedules of both sizes lie in
#: ``data/llm/lr_schedule_loss_curves``; the pages show five of each size)
LR_SCHEDULE_BUILTIN = ("constant_24000", "cosine_24000", "wsd_20000_24000", "wsdld_20000_24000", "wsdcon_9")
#: built-in log sets: key -> (label, glob patterns relative to DATA_DIR)
BUILTIN_LOG_SETS: dict[str, tuple[str, tuple[str, ...]]] = {
    "mnist1d": ("MNIST-1D ResNets, per-step train + val logs (CPU)", ("logs/*.csv",)),
    "pollux": ("Pollux CIFAR-10 / ImageNet validation accuracy per epoch",
               ("pollux_traces/cifar10/validation-*.csv", "pollux_traces/imagenet/validation-*.csv")),
    "mnist1d_batch": ("MNIST-1D ResNet-14 at seven global batches, linear LR rule (CPU, MLLOG)",
                      ("batch_logs/*.txt",)),
    "mlperf": ("MLPerf Training v3.0 ResNet-50, 13 systems (MLLOG)", ("mlperf_v3.0_resnet50/*/*/result_*.txt",)),
    "mlperf_llama8b": ("MLPerf Training v5.1 Llama 3.1 8B to log-perplexity 3.3: GB200 at 8, 72 and 512 GPUs, "
                       "B200 (MLLOG)", ("llm/mlperf_v5.1/llama31_8b/*/result_*.txt",)),
    "speedrun": ("NanoGPT speedrun (GPT-2 small on 8 H100 to val_loss 3.28), 2 records x 2 runs",
                 ("llm/nanogpt_speedrun/track_1_short/*/*.txt",)),
    "lr_schedules": ("Language-model loss under learning-rate schedules: 25M and 100M models, constant, cosine, "
                     "WSD (exponential and linear cool-down), two-stage (Luo et al. 2025)",
                     tuple(f"llm/lr_schedule_loss_curves/csv_*/{name}.csv" for name in LR_SCHEDULE_BUILTIN)),
}
#: sets whose files are named ``<folder>/<file>`` (the file names alone repeat, or say nothing)
_FOLDER_NAMED = ("pollux", "mlperf", "mlperf_llama8b", "speedrun", "lr_schedules")


#: what each built-in set trained on (picks parameter counts in ``core.calibrate``)
BUILTIN_DATASETS: dict[str, str] = {"mnist1d": "mnist1d", "pollux": "other", "mnist1d_batch": "mnist1d",
                                    "mlperf": "other", "mlperf_llama8b": "c4", "speedrun": "fineweb",
                                    "lr_schedules": "other"}


@dataclass(frozen=True)
class BatchRunSet:
    """Runs of one job at several global batches, for the batch-size view (``core.batch``).

    ``set_key`` is a key of :data:`BUILTIN_LOG_SETS`, ``prefix`` picks its files (a Pollux
    job), ``target_acc`` is the accuracy the job is usually taken to, and
    ``samples_per_epoch`` the training-set size when the logs do not say it; ``speed_table``
    the job's measured speeds relative to ``data/``, when there are some.
    """

    label: str
    set_key: str
    prefix: str
    target_acc: float
    samples_per_epoch: int | None
    speed_table: str | None = None

    def speed_table_path(self, *, data_dir: Path = DATA_DIR) -> Path | None:
        """The job's measured speeds (a Pollux ``scalability.csv``), when the set has one."""
        return None if self.speed_table is None else data_dir / self.speed_table


#: the built-in batch-scaling examples: MNIST-1D (made here), Pollux, MLPerf
BATCH_RUN_SETS: dict[str, BatchRunSet] = {
    "mnist1d_batch": BatchRunSet("MNIST-1D ResNet-14, 7 global batches (CPU, made here)", "mnist1d_batch", "",
                                 0.92, None),
    "pollux_cifar10": BatchRunSet("Pollux CIFAR-10 ResNet-18, 6 global batches", "pollux", "cifar10/", 0.93,
                                  TRAINING_SET_SIZES["cifar10"], "pollux_traces/cifar10/scalability.csv"),
    "pollux_imagenet": BatchRunSet("Pollux ImageNet ResNet-50, 7 global batches", "pollux", "imagenet/", 0.74,
                                   TRAINING_SET_SIZES["imagenet"], "pollux_traces/imagenet/scalability.csv"),
    "mlperf": BatchRunSet("MLPerf v3.0 ResNet-50 on ImageNet, 13 systems", "mlperf", "", 0.759, None),
}


def batch_run_files(key: str, *, data_dir: Path = DATA_DIR) -> list[tuple[str, Path]]:
    """``(source name, path)`` of the runs of a :data:`BATCH_RUN_SETS` entry.

    >>> [name for name, _ in batch_run_files("pollux_cifar10")][:3]
    ['cifar10/validation-128.csv', 'cifar10/validation-256.csv', 'cifar10/validation-512.csv']
    >>> batch_run_files("pollux")
    Traceback (most recent call last):
    ...
    core.errors.InputError: batch run set: expected one of ...; got 'pollux'.
    """
    entry = BATCH_RUN_SETS[check_option(key, "batch run set", BATCH_RUN_SETS)]
    return [(n, p) for n, p in builtin_log_files(entry.set_key, data_dir=data_dir) if n.startswith(entry.prefix)]


def builtin_datasets_by_file(*, data_dir: Path = DATA_DIR) -> dict[str, str]:
    """Source name of every built-in log → the data set it trained on."""
    return {name: BUILTIN_DATASETS[key] for key in BUILTIN_LOG_SETS
            for name, _ in builtin_log_files(key, data_dir=data_dir)}


def builtin_dataset_of(path: str | Path, *, data_dir: Path = DATA_DIR) -> str | None:
    """The data set a built-in log trained on when the file at ``path`` holds exactly its bytes (the
    file itself under any path, or a copy), else None: what a command line that reads
    ``data/logs/resnet20_....csv`` knows without ``--dataset``, as the pages know it by name.

    >>> builtin_dataset_of(DATA_DIR / "logs" / "resnet20_Intel Xeon Processor.csv")
    'mnist1d'
    >>> builtin_dataset_of("no/such/file.csv") is None
    True
    """
    try:
        path = Path(path)
        size = path.stat().st_size
    except (OSError, ValueError):
        return None
    candidates = _builtin_digests(data_dir).get(size)
    if not candidates or not path.is_file():
        return None
    return candidates.get(hashlib.sha256(path.read_bytes()).hexdigest())


@functools.lru_cache(maxsize=4)
def _builtin_digests(data_dir: Path) -> dict[int, dict[str, str]]:
    """``{size: {sha256: data set}}`` of every built-in log (read once per process)."""
    out: dict[int, dict[str, str]] = {}
    for key in BUILTIN_LOG_SETS:
        for _, p in builtin_log_files(key, data_dir=data_dir):
            data = p.read_bytes()
            out.setdefault(len(data), {})[hashlib.sha256(data).hexdigest()] = BUILTIN_DATASETS[key]
    return out


def builtin_log_files(set_key: str, *, data_dir: Path = DATA_DIR) -> list[tuple[str, Path]]:
    """``(source name, path)`` of the logs in a built-in set, in a stable order.

    Pollux traces are named ``<job>/validation-<batch>.csv`` so that the job is the model;
    MLPerf logs ``<system>/result_<n>.txt``; speedrun logs ``<record>/<uuid>.txt``.  Read a file
    with ``core.logs.read_log_file(path, source=name)`` so that an MLPerf log finds its system
    description (``llm/mlperf_v5.1/systems/``).

    >>> [name for name, _ in builtin_log_files("mlperf_llama8b")][:2]
    ['Dell__1xXE9680Lx8B200-SXM-180GB/result_0.txt', 'NVIDIA__tyche_ngpu512_ngc25.09_nemo/result_0.txt']
    >>> len(builtin_log_files("speedrun"))
    4
    """
    check_option(set_key, "built-in log set", BUILTIN_LOG_SETS)
    files: list[tuple[str, Path]] = []
    for pattern in BUILTIN_LOG_SETS[set_key][1]:
        paths = sorted(data_dir.glob(pattern), key=lambda p: (_natural_key(p), p.parent.as_posix()))
        for p in paths:
            name = f"{p.parent.name}/{p.name}" if set_key in _FOLDER_NAMED else p.name
            files.append((name, p))
    return files


def _natural_key(path: Path) -> tuple:
    import re

    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", path.name))


def builtin_speed_tables(*, data_dir: Path = DATA_DIR) -> list[tuple[str, Path]]:
    """``(name, path)`` of the built-in measured-speed tables: Pollux's all-reduce step times.

    The name is ``<job>/scalability.csv`` (Pollux, OSDI 2021; see data/README.md).

    >>> [name for name, _ in builtin_speed_tables()][:2]
    ['bert/scalability.csv', 'cifar10/scalability.csv']
    """
    paths = sorted((data_dir / "pollux_traces").glob("*/scalability.csv"))
    return [(f"{p.parent.name}/{p.name}", p) for p in paths]


#: fits in the course's table (``course_fits_path``): 6 ResNet depths × 3 GPUs × 2 splits; pinned by a test that
#: reads the table
COURSE_FITS_RUNS = 36


def course_fits_path(*, data_dir: Path = DATA_DIR) -> Path:
    """The course's table of ``COURSE_FITS_RUNS`` fitted CIFAR-10 ResNet runs."""
    return data_dir / "cifar10_resnet_optimus_fits.csv"


def course_method_scores_path(*, data_dir: Path = DATA_DIR) -> Path:
    """Every calibration method's leave-one-architecture-out score on the course table, for each held-out
    architecture, split and threshold (made by ``data/make_course_method_scores.py``)."""
    return data_dir / "course_method_scores.csv"


def builtin_profiles(*, data_dir: Path = DATA_DIR) -> list[tuple[str, Path]]:
    """``(name, path)`` of the measured per-layer profiles shipped in ``data/paleo/profiles``.

    >>> [name for name, _ in builtin_profiles()]
    ['resnet20_cpu_b32.csv']
    """
    return [(p.name, p) for p in sorted((data_dir / "paleo" / "profiles").glob("*.csv"))]


# ---------------------------------------------------------------- fits made with the data
#: the built-in logs' fits, made when the data was produced (``data/make_builtin_fits.py``)
BUILTIN_FITS_FILE = "builtin_fits.json"
#: the family the stored fits are made with (the pages' default)
BUILTIN_FIT_FAMILY = "optimus"


def builtin_fit_entry(name: str, log: RunLog) -> dict:
    """One stored fit: the log's name and fingerprint, the metric its default target fits, and the
    :class:`~core.runs.RunFit` of :func:`core.runs.fit_run` as plain JSON values (what the make script
    writes and the test recomputes)."""
    metric = fit_metric(log, target_for(log))
    fitted = fit_run(log, family=BUILTIN_FIT_FAMILY, metric=metric)
    fit = None if fitted.fit is None else {**asdict(fitted.fit), "flags": list(fitted.fit.flags)}
    return {"file": name, "fingerprint": log.fingerprint(), "family": BUILTIN_FIT_FAMILY, "metric": metric,
            "fit": fit, "problem": fitted.problem}


def _run_fit(entry: dict) -> RunFit:
    f = entry["fit"]
    if f is None:
        return RunFit(None, entry["problem"])
    fit = FitResult(**{**f, "cov": tuple(tuple(row) for row in f["cov"]), "flags": tuple(f["flags"])})
    return RunFit(fit, entry["problem"])


@functools.lru_cache(maxsize=2)
def stored_builtin_fits(data_dir: Path = DATA_DIR) -> dict[tuple[str, str, str], RunFit]:
    """``{(log fingerprint, family, metric): RunFit}`` of every built-in log, read once per process from
    :data:`BUILTIN_FITS_FILE` (empty when the file is missing)."""
    path = data_dir / BUILTIN_FITS_FILE
    if not path.is_file():
        return {}
    entries = json.loads(path.read_text(encoding="utf-8"))["fits"]
    return {(e["fingerprint"], e["family"], e["metric"]): _run_fit(e) for e in entries}


def is_builtin_log(log: RunLog, *, data_dir: Path = DATA_DIR) -> bool:
    """Whether ``log`` is a built-in log as read when its fit was stored (same content and metadata: a
    user's edit of it, or an upload of other content under its name, is not)."""
    return log.fingerprint() in _stored_fingerprints(data_dir)


@functools.lru_cache(maxsize=2)
def _stored_fingerprints(data_dir: Path) -> frozenset[str]:
    return frozenset(key[0] for key in stored_builtin_fits(data_dir))


def fitted_run(log: RunLog, *, family: str = "optimus", metric: str = "loss", data_dir: Path = DATA_DIR) -> RunFit:
    """:func:`core.runs.fit_run`, taken from the fits stored with the built-in data when ``log`` is the very
    log one was made from (its fingerprint: content and metadata) with this family and metric; any other
    log, or a built-in one read differently, is fitted here.

    >>> from core.logs import read_log_file
    >>> name, path = builtin_log_files("mnist1d")[0]
    >>> log = read_log_file(path, source=name)
    >>> fitted_run(log, metric="loss") == fit_run(log, metric="loss")
    True
    """
    stored = stored_builtin_fits(data_dir).get((log.fingerprint(), family, metric))
    return stored if stored is not None else fit_run(log, family=family, metric=metric)


def same_fit(a: RunFit, b: RunFit, *, rel: float = 1e-9) -> bool:
    """Whether two fits agree: the same problem, flags and counts, and every number within ``rel`` (NaN
    equals NaN; a stored fit and a fresh one differ at most in the last digits on another machine's BLAS)."""
    if (a.fit is None) != (b.fit is None) or a.problem != b.problem:
        return False
    if a.fit is None:
        return True
    x, y = asdict(a.fit), asdict(b.fit)
    numbers = lambda d: [*d["params"].values(), *d["stderr"].values(),  # noqa: E731
                         *(v for row in d["cov"] for v in row), d["rss"], d["redchi"], d["r2"], d["k_min"], d["k_max"]]
    exact = ("family", "n_points", "n_fitted", "converged", "errorbars", "flags")
    return (all(x[k] == y[k] for k in exact) and list(x["params"]) == list(y["params"])
            and all(_close(u, v, rel) for u, v in zip(numbers(x), numbers(y), strict=True)))


def _close(u: float, v: float, rel: float) -> bool:
    if math.isnan(u) or math.isnan(v):
        return math.isnan(u) and math.isnan(v)
    return u == v or math.isclose(u, v, rel_tol=rel, abs_tol=1e-300)
