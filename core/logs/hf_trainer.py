"""Read a Hugging Face Trainer ``trainer_state.json`` (every Trainer checkpoint writes one) into a ``RunLog``.

The file's ``log_history`` is a list of records, each at a ``step``: training records
(``loss``, ``learning_rate``, ``grad_norm``, ``epoch``, ``num_input_tokens_seen``), evaluation
records (``eval_loss``, ``eval_accuracy``, any ``eval_*`` metric) and a final summary
(``train_runtime``, ``train_loss``: skipped).  Records at the same step become one row:

==========================  ===================================================================
record field                becomes
==========================  ===================================================================
``step``                    ``global_step``
``epoch`` (a float)         ``epoch`` (1-based: the epoch in progress, ``ceil``)
``loss``                    ``loss`` (the training loss)
``learning_rate``           ``lr``
``eval_<name>``             a column ``eval_<name>``; ``eval_accuracy`` also fills ``acc``
                            (a fraction; percent is divided by 100)
``num_input_tokens_seen``   ``tokens``
==========================  ===================================================================

The top level gives ``max_steps`` and, with ``num_train_epochs``, the steps per epoch;
``train_batch_size`` is the batch of one process before gradient accumulation, so the global
batch (and samples) stay unknown unless the caller says them.  A checkpoint folder
(``checkpoint-500/trainer_state.json``) reads as the run.

A record without a ``step`` is no point of the curve: the Trainer itself always writes one, but
scripts append the metrics ``trainer.predict()`` returns (``predict_loss``, ``predict_runtime``, ...)
as they come.  Such records are skipped and the run's flags say which (:func:`stepless_note`); a
step is never guessed, so a step-less record carrying a ``loss`` or ``eval_*`` metric is skipped too,
and the note says that metric is not on the curve.  A step that is there but not a number >= 0 is
refused, and so is a file none of whose records has a step.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd

from core.errors import LogFormatError
from core.logs.naming import RunMeta
from core.logs.runlog import ColumnRoles, RunLog
from core.tables import as_utf8
from core.targets import accuracy_in_percent

_SKIP = {"step", "epoch", "total_flos", "train_runtime", "train_samples_per_second", "train_steps_per_second",
         "train_loss", "eval_runtime", "eval_samples_per_second", "eval_steps_per_second"}
_HEAD = re.compile(rb'^\s*\{')
#: how many step-less records (and their keys) a note names before "and N more"
_MAX_NAMED = 8


def is_trainer_state(data: bytes) -> bool:
    """Whether ``data`` is a JSON object with a Trainer state's keys (``log_history``, ``best_model_checkpoint``).

    >>> is_trainer_state(b'{"log_history": [], "max_steps": 10}'), is_trainer_state(b'epoch,loss\\n1,2\\n')
    (True, False)
    """
    return _HEAD.match(data[:4096]) is not None and any(
        key in data for key in (b'"log_history"', b'"best_model_checkpoint"', b'"is_world_process_zero"'))


def _num(value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return math.nan
    return float(value)


def _count(state: dict, key: str) -> int | None:
    v = state.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 1:
        return None
    return int(v) if float(v).is_integer() else None


def stepless_note(records: list[tuple[int, dict]]) -> str:
    """The run's note for ``log_history`` records without a ``step``, skipped (a step is never guessed).

    A record that carries a training loss or an ``eval_*`` metric says so: those are points of the curve
    that the file does not place.

    >>> stepless_note([(16, {"predict_loss": 0.25, "predict_runtime": 0.03})])
    'log_history[16] has no step: skipped (predict_loss, predict_runtime)'
    >>> stepless_note([(3, {"loss": 0.5}), (9, {"eval_loss": 0.7, "epoch": 1.0})])
    'log_history[3], [9] have no step: skipped (loss, eval_loss, epoch); their loss, eval_loss are not on the curve'
    """
    keys = list(dict.fromkeys(k for _, record in records for k in record))
    where = "log_history" + ", ".join(f"[{i}]" for i, _ in records[:_MAX_NAMED])
    where += f" and {len(records) - _MAX_NAMED} more" if len(records) > _MAX_NAMED else ""
    shown = ", ".join(keys[:_MAX_NAMED]) + (", ..." if len(keys) > _MAX_NAMED else "")
    note = f"{where} {'has' if len(records) == 1 else 'have'} no step: skipped ({shown})"
    lost = [k for k in keys if k == "loss" or (k.startswith("eval_") and k not in _SKIP)]
    if lost:
        note += f"; {'its' if len(records) == 1 else 'their'} {', '.join(lost[:_MAX_NAMED])} " \
                f"{'is' if len(lost) == 1 else 'are'} not on the curve"
    return note


def read_trainer_state(data: bytes, source: str, *, split: str | None = None) -> RunLog:
    """Read one ``trainer_state.json`` (see the module docstring).

    Examples
    --------
    >>> log = read_trainer_state(b'''{"max_steps": 20, "num_train_epochs": 2, "train_batch_size": 8,
    ...  "log_history": [
    ...   {"epoch": 0.5, "step": 5, "loss": 2.0, "learning_rate": 1e-4, "num_input_tokens_seen": 5120},
    ...   {"epoch": 1.0, "step": 10, "loss": 1.5, "learning_rate": 5e-5},
    ...   {"epoch": 1.0, "step": 10, "eval_loss": 1.7, "eval_accuracy": 0.61, "eval_runtime": 3.2},
    ...   {"epoch": 2.0, "step": 20, "train_runtime": 60.0, "train_loss": 1.6}]}''', "checkpoint-20/trainer_state.json")
    >>> log.frame[["global_step", "epoch", "loss", "acc", "eval_loss", "lr"]].to_numpy().tolist()
    [[5.0, 1, 2.0, nan, nan, 0.0001], [10.0, 1, 1.5, 0.61, 1.7, 5e-05]]
    >>> sorted(log.metrics.items()), log.steps_per_epoch, log.meta.max_steps
    ([('acc', 'acc'), ('eval_accuracy', 'eval_accuracy'), ('eval_loss', 'eval_loss'), ('loss', 'loss')], 10, 20)
    """
    raw = as_utf8(bytes(data), source)
    try:
        state = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise LogFormatError(source, "expected UTF-8 JSON (a trainer_state.json); got undecodable bytes.") from None
    except json.JSONDecodeError as exc:
        raise LogFormatError(source, f"expected a JSON object (a trainer_state.json); got invalid JSON ({exc.msg} at "
                             f"line {exc.lineno}, column {exc.colno}). Is the file truncated?") from None
    if not isinstance(state, dict):
        raise LogFormatError(source, f"expected a JSON object with log_history; got a JSON {type(state).__name__}.")
    history = state.get("log_history")
    if not isinstance(history, list):
        raise LogFormatError(source, "expected 'log_history' to be a list of records; got "
                             f"{type(history).__name__}. Is this a Trainer's trainer_state.json?")
    rows: dict[float, dict[str, float]] = {}
    order: list[str] = []
    stepless: list[tuple[int, dict]] = []
    for i, record in enumerate(history):
        if not isinstance(record, dict):
            raise LogFormatError(source, f"log_history[{i}]: expected a record (JSON object); got "
                                 f"{type(record).__name__}.")
        if "train_runtime" in record:
            continue   # the final summary: averages over the run, not a point of it
        if record.get("step") is None:
            stepless.append((i, record))   # predict_* results a script appended: no point of the curve
            continue
        step = _num(record.get("step"))
        if not math.isfinite(step) or step < 0:
            raise LogFormatError(source, f"log_history[{i}]: expected 'step' as a number >= 0; got "
                                 f"{record.get('step')!r}.")
        row = rows.setdefault(step, {})
        for key, value in record.items():
            if key in _SKIP and key != "epoch":
                continue
            v = _num(value)
            if math.isnan(v):
                continue
            if key not in order:
                order.append(key)
            row[key] = v
    if not rows and stepless:
        raise LogFormatError(source, f"expected records with a 'step' in log_history; none of its {len(history)} "
                             "records has one (a step is never guessed). Is this a Trainer's trainer_state.json?")
    if not rows:
        raise LogFormatError(source, "expected records in log_history; got none. The run logged nothing yet "
                             "(check logging_steps) or the file is not a Trainer state.")
    steps = np.array(sorted(rows), dtype=float)
    col = lambda key: np.array([rows[s].get(key, math.nan) for s in steps], dtype=float)  # noqa: E731
    loss = col("loss")
    evals = [k for k in order if k.startswith("eval_") and k not in _SKIP]
    if not np.isfinite(loss).any() and not evals:
        raise LogFormatError(source, "expected a loss or eval_* metric in log_history; got "
                             f"{', '.join(order) or 'nothing'}.")
    if (loss[np.isfinite(loss)] < 0).any():
        raise LogFormatError(source, "expected the training loss >= 0; got a negative value.")
    flags: list[str] = [stepless_note(stepless)] if stepless else []
    epoch = col("epoch")
    frame = pd.DataFrame({"global_step": steps,
                          "epoch": pd.array(np.where(np.isfinite(epoch), np.maximum(np.ceil(epoch - 1e-9), 1),
                                                     np.nan), dtype="Float64").astype("Int64"),
                          "loss": loss, "acc": np.nan, "time_s": np.nan, "lr": col("learning_rate")})
    metrics: dict[str, str] = {}
    for key in evals:
        frame[key] = col(key)
        metrics[key] = key
    if "eval_accuracy" in frame:
        acc = frame["eval_accuracy"].to_numpy(dtype=float)
        if accuracy_in_percent(acc):
            acc = acc / 100.0
            flags.append("accuracy given in percent; divided by 100")
        if np.nanmin(acc) >= 0 and np.nanmax(acc) <= 1:
            frame["acc"] = acc
    tokens = col("num_input_tokens_seen")
    if np.isfinite(tokens).any():
        frame["tokens"] = tokens
    if not np.isfinite(loss).any():
        flags.append("no training loss in log_history: only evaluation metrics")
    max_steps, epochs = _count(state, "max_steps"), _count(state, "num_train_epochs")
    spe = max_steps // epochs if max_steps and epochs and max_steps % epochs == 0 else None
    flags.append("global batch unknown: train_batch_size is one process's batch before gradient accumulation")
    meta = RunMeta(model=None, depth=None, gpu=None, split=split or "train", max_steps=max_steps)
    roles = ColumnRoles(epoch="epoch", step="step", loss="loss" if np.isfinite(loss).any() else None,
                        acc="eval_accuracy" if frame["acc"].notna().any() else None, lr="learning_rate")
    return RunLog(source=source, frame=frame, fmt="hf-trainer", roles=roles, meta=meta, steps_per_epoch=spe,
                  granularity="step", flags=tuple(flags), columns=tuple(order), metrics=metrics)
