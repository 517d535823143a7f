"""Runs from an MLflow tracking server into the library, and forecasts back to it (issue 20).

``mlflow:TRACKING_URI[#EXPERIMENT]`` names a source: every active run of the experiment (a name
or an id; every experiment when none is given) is read through MLflow's own client
(``MlflowClient``: ``search_runs`` for the list; every step of every metric through the server's
bulk route, many runs a request, with the client's own HTTP helper and credentials, or
``get_metric_history`` where the server has no such route: :mod:`core.library.mlflow_bulk`).
A run's metric histories become one row per step with a column per metric and go through the
same reader as TensorBoard runs and CSV logs (:mod:`core.logs.tfevents`: the same role
detection, so ``loss``/``train_loss`` is the loss, ``acc``/``accuracy``/``val_acc`` the
accuracy, ``epoch`` and ``lr`` carried forward; the same checks and messages).  Params and tags
give the metadata (:data:`META_KEYS`: model, device, global batch, split, data set, steps per
epoch; a sequence length becomes the tag ``seq_len:N``); what they do not say comes from the run's name, as for a file.

**Identity and incremental import.**  A run's content hash is the SHA-256 of what the run list
says about it without fetching any history: its MLflow run id, status, end time, params, tags
and the latest value, step and time of every metric.  A second ``add`` lists the runs again
(one ``search_runs`` call per 1,000 runs), and fetches the histories of the runs whose hash the
library lacks only: new runs, and runs that logged, ended or changed since.  A changed run
replaces its older version in the library (the library run tagged ``mlflow-run:<id>``, whose
other tags are carried over).  Tags and metrics this module writes back (``tta.*``, ``tta_*``,
:func:`forecast_to_mlflow`) are left out of the hash, so writing a forecast does not make a run
look changed.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import pandas as pd

from core.errors import InputError, LogFormatError
from core.library.library import AddReport, AddResult, Library, PendingRun, Progress, check_tags
from core.library.mlflow_bulk import MAX_RESULTS, OWN_METRIC_PREFIX, HistoryReader, scalars_of
from core.library.records import library_name
from core.library.sources import parameter_count_of, with_overrides
from core.logs import RunLog, log_from_scalars
from core.targets import Target, require_accuracy

#: how a source names an MLflow tracking server on the command line
PREFIX = "mlflow:"
#: the tag every run from MLflow carries, and the prefix of the tag holding its MLflow run id
MLFLOW_TAG = "mlflow"
RUN_TAG_PREFIX = "mlflow-run:"
#: tags and metrics written back by forecast_to_mlflow (not part of a run's identity)
OWN_TAG_PREFIX = "tta."
#: params or tags (names compared lower-cased) that give each field, first found wins
META_KEYS: dict[str, tuple[str, ...]] = {
    "model": ("model", "model_name", "arch", "architecture", "network"),
    "gpu": ("device", "gpu", "accelerator", "device_name", "gpu_name", "gpu_type"),
    "global_batch": ("global_batch", "global_batch_size", "batch_size", "train_batch_size", "batch"),
    "split": ("split",),
    "dataset": ("dataset", "dataset_name", "data"),
    "steps_per_epoch": ("steps_per_epoch",),
    "seq_len": ("seq_len", "sequence_length", "seq_length", "max_seq_length", "max_seq_len", "block_size",
                "context_length"),
}
#: runs asked for per search_runs call (MLflow's own maximum per page is larger)
PAGE = 1000


@dataclass(frozen=True)
class MlflowSource:
    """An MLflow tracking server and, optionally, one experiment (name or id)."""

    tracking_uri: str
    experiment: str | None = None

    @property
    def name(self) -> str:
        return PREFIX + self.tracking_uri + (f"#{self.experiment}" if self.experiment else "")


def is_mlflow_source(text: str) -> bool:
    """Whether a source given to ``library add`` names an MLflow server.

    >>> is_mlflow_source("mlflow:http://127.0.0.1:5000#mnist"), is_mlflow_source("data/logs")
    (True, False)
    """
    return str(text).startswith(PREFIX)


def parse_source(text: str) -> MlflowSource:
    """``mlflow:TRACKING_URI[#EXPERIMENT]`` as a :class:`MlflowSource`.

    >>> parse_source("mlflow:http://127.0.0.1:5000#mnist")
    MlflowSource(tracking_uri='http://127.0.0.1:5000', experiment='mnist')
    >>> parse_source("mlflow:sqlite:///runs.db")
    MlflowSource(tracking_uri='sqlite:///runs.db', experiment=None)
    """
    text = str(text)
    uri, _, experiment = text[len(PREFIX):].partition("#")
    if not is_mlflow_source(text) or not uri.strip():
        raise InputError(f"{text}: expected mlflow:TRACKING_URI[#EXPERIMENT] (e.g. "
                         "mlflow:http://127.0.0.1:5000#mnist); got no tracking URI.")
    return MlflowSource(uri.strip(), experiment.strip() or None)


def client_for(source: MlflowSource):
    """MLflow's ``MlflowClient`` for the source's tracking server (mlflow imported only here)."""
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    from mlflow import MlflowClient

    return MlflowClient(tracking_uri=source.tracking_uri)


def _unreachable(source: MlflowSource, exc: Exception) -> InputError:
    first = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
    return InputError(f"{source.name}: expected a reachable MLflow tracking server; the client said: {first}. "
                      "Start it (mlflow server ...) or check the address and experiment.")


def experiment_ids(client, source: MlflowSource) -> list[str]:
    """The ids of the source's experiment (by name, else by id), or of every active experiment."""
    if source.experiment is None:
        return [e.experiment_id for e in client.search_experiments()]
    found = client.get_experiment_by_name(source.experiment)
    if found is None and source.experiment.isdigit():
        from mlflow.exceptions import MlflowException

        try:
            found = client.get_experiment(source.experiment)
        except MlflowException:
            found = None
    if found is None:
        names = sorted(e.name for e in client.search_experiments())
        raise InputError(f"{source.name}: expected an experiment named {source.experiment!r} (or with that id); "
                         f"the server holds {', '.join(names) or 'none'}.")
    return [found.experiment_id]


def list_runs(client, ids: Sequence[str]) -> list:
    """Every active run of the experiments, oldest first (``search_runs`` page by page)."""
    runs, token = [], None
    while True:
        page = client.search_runs(list(ids), max_results=PAGE, order_by=["attributes.start_time ASC"],
                                  page_token=token)
        runs.extend(page)
        token = page.token
        if not token:
            return runs


def _latest_metrics(run) -> list[tuple[str, float, int, int]]:
    """(key, value, step, timestamp) of the latest value of every metric the run list gives."""
    objs = getattr(run.data, "_metric_objs", None)
    if objs is not None:
        return sorted((m.key, float(m.value), int(m.step), int(m.timestamp)) for m in objs
                      if not m.key.startswith(OWN_METRIC_PREFIX))
    return sorted((k, float(v), -1, -1) for k, v in run.data.metrics.items() if not k.startswith(OWN_METRIC_PREFIX))


def run_digest(run) -> str:
    """The content hash of an MLflow run from its listing alone (no history fetched); see the module docstring."""
    info = run.info
    state = {"mlflow_run_id": info.run_id, "status": info.status, "end_time": info.end_time,
             "params": sorted(run.data.params.items()),
             "tags": sorted((k, v) for k, v in run.data.tags.items() if not k.startswith(OWN_TAG_PREFIX)),
             "metrics": [[k, None if not math.isfinite(v) else v, s, t] for k, v, s, t in _latest_metrics(run)]}
    return hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()


def _lookup(run, field: str) -> str | None:
    """The first param or tag (params first) named as ``META_KEYS[field]`` says, case ignored."""
    for values in (run.data.params, run.data.tags):
        lowered = {str(k).lower(): v for k, v in values.items()}
        for key in META_KEYS[field]:
            value = lowered.get(key)
            if value is not None and str(value).strip():
                return str(value).strip()
    return None


def _positive_int(text: str | None) -> int | None:
    try:
        value = float(text) if text is not None else math.nan
    except ValueError:
        return None
    return int(value) if math.isfinite(value) and value >= 1 and value.is_integer() else None


def run_name(run) -> str:
    """The name a run has in the library: its MLflow run name (its id when it has none)."""
    return str(run.info.run_name or run.data.tags.get("mlflow.runName") or run.info.run_id)


def log_of_scalars(scalars: pd.DataFrame, source: str, *, split: str | None = None,
                   steps_per_epoch: int | None = None) -> RunLog:
    """The ``RunLog`` of a run's metric histories, read as a TensorBoard run is (``core.logs.tfevents``).

    >>> s = pd.DataFrame({"tag": ["loss"] * 4 + ["acc"] * 4, "step": [1, 2, 3, 4] * 2,
    ...                   "wall_time": [0.0, 1.0, 2.0, 3.0] * 2, "value": [2.0, 1.0, 0.7, 0.6, 0.2, 0.5, 0.7, 0.8]})
    >>> log = log_of_scalars(s, "resnet20_V100")
    >>> log.meta.model, log.frame["loss"].tolist(), log.frame["acc"].tolist(), log.fmt
    ('resnet20', [2.0, 1.0, 0.7, 0.6], [0.2, 0.5, 0.7, 0.8], 'mlflow')
    """
    return log_from_scalars(scalars, source, split=split, steps_per_epoch=steps_per_epoch, fmt="mlflow",
                            empty="expected logged metrics (loss, accuracy, ...); the run has none.")


def read_run(client, run, *, tags: Sequence[str] = (), dataset: str | None = None,
             scalars: pd.DataFrame | None = None) -> PendingRun:
    """One MLflow run, ready to write (``LogFormatError`` when it has no usable metrics); its histories are
    ``scalars`` where given (read by a :class:`HistoryReader`), else read here one metric at a time."""
    source = run_name(run)
    split = _lookup(run, "split")
    split = split.lower() if split and split.lower() in ("train", "val") else None
    log = log_of_scalars(scalars_of(client, run) if scalars is None else scalars, source, split=split,
                         steps_per_epoch=_positive_int(_lookup(run, "steps_per_epoch")))
    log = with_overrides(log, model=_lookup(run, "model"), gpu=_lookup(run, "gpu"),
                         global_batch=_positive_int(_lookup(run, "global_batch")))
    dataset = dataset or _lookup(run, "dataset")
    extra = [MLFLOW_TAG, RUN_TAG_PREFIX + run.info.run_id]
    seq_len = _positive_int(_lookup(run, "seq_len"))
    if seq_len:
        extra.append(f"seq_len:{seq_len}")
    return PendingRun(log, run_digest(run), dataset, check_tags([*extra, *tags]),
                      parameter_count_of(log.meta.model, dataset))


def _older_versions(library: Library) -> dict[str, tuple[int, tuple[str, ...]]]:
    """MLflow run id → (library run id, its tags) of the runs from MLflow in the library."""
    from core.library.filters import RunFilter

    table = library.runs(RunFilter.of(tag=MLFLOW_TAG))
    out = {}
    for run_id, cell in zip(table["run_id"], table["tags"]):
        tags = tuple(t for t in str(cell or "").split(",") if t)
        for t in tags:
            if t.startswith(RUN_TAG_PREFIX):
                out[t[len(RUN_TAG_PREFIX):]] = (int(run_id), tags)
    return out


@dataclass(frozen=True)
class MlflowAddReport:
    """What an MLflow import did: the library's report, runs listed and fetched, older versions replaced,
    bulk requests made, and ``note``: why histories were read one metric at a time (None when in bulk)."""

    report: AddReport
    n_listed: int
    n_fetched: int
    replaced: tuple[int, ...] = ()
    n_requests: int = 0
    note: str | None = None


def add_mlflow(library: Library, source: MlflowSource | str, *, tags: Sequence[str] = (),
               dataset: str | None = None, progress: Progress | None = None, client=None, bulk: bool = True,
               max_results: int = MAX_RESULTS) -> MlflowAddReport:
    """Add the runs of an MLflow experiment (or server) to the library, fetching only what changed: through
    the bulk route (``max_results`` values an answer at most) unless ``bulk=False`` or the server lacks it."""
    from mlflow.exceptions import MlflowException

    source = parse_source(source) if isinstance(source, str) else source
    tags = check_tags(tags)
    try:
        client = client or client_for(source)
        runs = list_runs(client, experiment_ids(client, source))
    except MlflowException as exc:
        raise _unreachable(source, exc) from None
    except OSError as exc:
        raise _unreachable(source, exc) from None
    known = library.known_hashes()
    older = _older_versions(library) if library.exists() else {}
    digests = [run_digest(run) for run in runs]
    wanted = [r for r, d in zip(runs, digests) if d not in known]
    reader = HistoryReader(client, bulk=bulk, max_results=max_results)
    replacing: dict[str, int] = {}        # new version's hash -> the older version's run id

    def items() -> Iterator[PendingRun | AddResult | tuple[str, str]]:
        histories = reader.scalars(wanted)           # read ahead, in order, a chunk of runs at a time
        for run, digest in zip(runs, digests):
            if digest in known:
                yield AddResult(run_name(run), known[digest], False)
                continue
            _, scalars = next(histories)
            previous = older.get(run.info.run_id)
            carried = [t for t in (previous[1] if previous else ()) if t != MLFLOW_TAG
                       and not t.startswith(RUN_TAG_PREFIX) and not t.startswith("seq_len:")]
            if isinstance(scalars, Exception):
                yield (run_name(run), str(_unreachable(source, scalars)))
                continue
            try:
                item = read_run(client, run, tags=[*tags, *carried], dataset=dataset, scalars=scalars)
            except LogFormatError as exc:
                yield (run_name(run), str(exc))
                continue
            if previous:
                replacing[item.digest] = previous[0]
            yield item

    report = library.add_runs(items(), total=len(runs), progress=progress, batched=True)
    now = library.known_hashes() if replacing else {}
    stale = [old for digest, old in replacing.items() if digest in now]      # only where the new version is in
    replaced = tuple(library.remove(stale)) if stale else ()
    return MlflowAddReport(report, len(runs), len(wanted), replaced, reader.requests, reader.note)


# --------------------------------------------------------------------------- forecasts back to MLflow
#: the step named when a target is not an accuracy (the epoch forecast is for one)
FORECAST_STEP = "forecast-to (the epoch forecast written back to MLflow)"


def forecast_values(log: RunLog, others: Sequence[RunLog], *, target: Target, level: float) -> dict:
    """The forecast of ``log`` reaching ``target`` (``core.prediction.forecast_epoch_at_target``, as
    ``python -m core predict`` makes it, with ``others`` as the prior) as plain numbers: epochs, steps,
    samples and seconds to the target with the ``level`` interval, and the method.  The epoch forecast is
    for an accuracy: another metric is refused (:func:`core.targets.require_accuracy`)."""
    from core.prediction import forecast_epoch_at_target, n_epochs, prior_for_run

    target_acc = require_accuracy(target, FORECAST_STEP)     # the value written as MLflow's target_acc metric
    prior = prior_for_run(log, list(others), target=target, level=level) if others else None
    f = forecast_epoch_at_target(log, list(others), n_epochs_seen=n_epochs(log), target=target,
                                 level=level, prior=prior)
    post = f.posterior
    epochs = {"epochs": post.epoch, "epochs_low": post.epoch_low, "epochs_high": post.epoch_high}
    spe, batch = log.steps_per_epoch, log.meta.global_batch
    out: dict = {"target_acc": float(target_acc), "level": float(level), "method": str(post.method), **epochs}
    steps = {k.replace("epochs", "steps"): (v * spe if spe and v is not None and math.isfinite(v) else None)
             for k, v in epochs.items()}
    out.update(steps)
    out.update({k.replace("steps", "samples"): (v * batch if batch and v is not None else None)
                for k, v in steps.items()})
    per_step = _seconds_per_step(log)
    out.update({k.replace("steps", "time_s"): (v * per_step if per_step and v is not None else None)
                for k, v in steps.items()})
    return out


def _seconds_per_step(log: RunLog) -> float | None:
    frame = log.frame[["global_step", "time_s"]].dropna()
    if len(frame) < 2:
        return None
    dk = float(frame["global_step"].iloc[-1] - frame["global_step"].iloc[0])
    dt = float(frame["time_s"].iloc[-1] - frame["time_s"].iloc[0])
    return dt / dk if dk > 0 and dt > 0 else None


def forecast_to_mlflow(library: Library, source: MlflowSource | str, *, run_ids: Sequence[str] = (),
                       target: Target, level: float, prior_filter: str | None = None,
                       client=None) -> pd.DataFrame:
    """Write the forecast of each MLflow run (``run_ids``, or every run of the source's experiment) back to it.

    Each run is read from MLflow as ``add`` reads it; the prior comes from the library's runs
    (``prior_filter``, every run by default) other than that run.  Written to the run: metrics
    ``tta_epochs_to_target``, ``tta_steps_to_target``, ``tta_samples_to_target``,
    ``tta_time_s_to_target`` with ``_low``/``_high`` (where known), and tags ``tta.method``,
    ``tta.target_acc``, ``tta.level``.  Returns one row per run.
    """
    from mlflow.entities import Metric, RunTag
    from mlflow.exceptions import MlflowException

    require_accuracy(target, FORECAST_STEP)
    source = parse_source(source) if isinstance(source, str) else source
    try:
        client = client or client_for(source)
        runs = ([client.get_run(r) for r in run_ids] if run_ids
                else list_runs(client, experiment_ids(client, source)))
    except MlflowException as exc:
        raise _unreachable(source, exc) from None
    table = library.runs(prior_filter) if library.exists() else None
    rows = []
    for run in runs:
        item = read_run(client, run)
        own = RUN_TAG_PREFIX + run.info.run_id
        ids = [] if table is None else [int(i) for i, t in zip(table["run_id"], table["tags"])
                                        if own not in str(t or "").split(",")]
        others = [replace(log, source=library_name(i, log.source)) for i, log in library.get_many(ids)]
        values = forecast_values(item.log, others, target=target, level=level)
        now = int(pd.Timestamp.now("UTC").timestamp() * 1000)
        metrics = []
        for what in ("epochs", "steps", "samples", "time_s"):
            for suffix in ("", "_low", "_high"):
                v = values.get(what + suffix)
                if v is not None and math.isfinite(float(v)):
                    metrics.append(Metric(f"{OWN_METRIC_PREFIX}{what}_to_target{suffix}", float(v), now, 0))
        run_tags = [RunTag(OWN_TAG_PREFIX + "method", values["method"]),
                    RunTag(OWN_TAG_PREFIX + "target_acc", f"{values['target_acc']:g}"),
                    RunTag(OWN_TAG_PREFIX + "level", f"{level:g}")]
        client.log_batch(run.info.run_id, metrics=metrics, tags=run_tags)
        rows.append({"mlflow_run_id": run.info.run_id, "run_name": run_name(run), **values})
    columns = ["mlflow_run_id", "run_name", "target_acc", "level", "method", "epochs", "epochs_low", "epochs_high",
               "steps", "steps_low", "steps_high", "samples", "samples_low", "samples_high", "time_s", "time_s_low",
               "time_s_high"]
    return pd.DataFrame(rows, columns=columns)
