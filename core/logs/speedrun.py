"""Read NanoGPT speedrun logs (``KellerJordan/modded-nanogpt``'s ``records/``) into a ``RunLog``.

A speedrun log holds the training script itself, the ``nvidia-smi`` table of the machine, then
one line per step::

    step:125/1385 val_loss:4.3930 train_time:14290ms step_avg:124.26ms
    step:126/1385 train_loss:4.4012 train_time:14311ms step_avg:123.37ms
    step:127/1385 train_time:14435ms step_avg:123.40ms

becoming one row per step: ``global_step`` = N, ``time_s`` = ``train_time`` / 1000 (training
wall time, evaluations excluded), ``loss`` = ``val_loss`` at the evaluation steps (NaN
elsewhere), ``train_loss`` where logged, and ``tokens`` = N × the tokens per step the script
declares (its batch size × sequence length, in the forms the records have used; a flag says
when it cannot be read).  ``RunLog.target`` is ``val_loss<=3.28`` (track 1, GPT-2 small), or
``val_loss<=2.92`` for track 2 (GPT-2 medium: a ``track_2`` folder, or a 1024-wide model in
the script).  The device and the GPU count come from the ``nvidia-smi`` table.

Every refusal is a :class:`core.errors.LogFormatError` naming the file.
"""

from __future__ import annotations

import math
import re
from pathlib import PurePath

import numpy as np
import pandas as pd

from core.errors import LogFormatError
from core.logs.naming import RunMeta
from core.logs.runlog import ColumnRoles, RunLog
from core.tables import as_utf8
from core.targets import Target

#: the speedrun's targets: track 1 (GPT-2 small) and track 2 (GPT-2 medium)
TRACK_1_TARGET = 3.28
TRACK_2_TARGET = 2.92
#: the metric name the logs use for the evaluation
VAL_METRIC = "val_loss"

_STEP_LINE = re.compile(rb"(?m)^step:\d+/\d+ [^\n]*train_time:")
_LINE = re.compile(r"^step:(?P<n>\d+)/(?P<m>\d+)(?P<rest>(?: [a-z_]+:\S+)*)\s*$")
_FIELD = re.compile(r"([a-z_]+):(\S+)")
_GPU_ROW = re.compile(r"^\|\s+(\d+)\s+(\S.*?)\s+(?:On|Off)\s+\|\s+[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:", re.MULTILINE)
_EXPR = r"(\d+(?:\s*\*\s*\d+)*)"
_ASSIGN = r"^[ \t]*{name}[ \t]*(?::[ \t]*int)?[ \t]*=[ \t]*" + _EXPR


def is_speedrun(data: bytes) -> bool:
    """Whether ``data`` looks like a speedrun log: ``step:N/M ... train_time:`` lines, or the
    script and ``nvidia-smi`` table of one cut before its first step.

    >>> is_speedrun(b"step:1/10 train_time:5ms step_avg:5.00ms\\n"), is_speedrun(b"step,loss\\n1,2\\n")
    (True, False)
    """
    # both answers need ``train_time`` somewhere, and a step line starts the data or follows a newline: those
    # byte searches come first (about 1 ms on a 4 MB file), so a large CSV log never pays the regular
    # expression's scan of every line (35 ms)
    if b"train_time" not in data:
        return False
    step_line = data.startswith(b"step:") or b"\nstep:" in data
    return ((step_line and _STEP_LINE.search(data) is not None)
            or (b"NVIDIA-SMI" in data and b"val_loss" in data))


def _product(expr: str) -> int:
    return math.prod(int(x) for x in re.split(r"\s*\*\s*", expr.strip()))


def _assigned(script: str, name: str, comment: str | None = None) -> int | None:
    pattern = _ASSIGN.format(name=name) + (r"[ \t]*#[^\n]*" + comment if comment else "")
    m = re.search(pattern, script, re.MULTILINE)
    return _product(m.group(1)) if m else None


def declared_lr_schedule(script: str, total_steps: int | None, num_iterations: int | None, warmup: int | None,
                         decay: float | None) -> str | None:
    """The script's ``get_lr`` as a planned-schedule spec (``core.schedules``), in multipliers of the peak rate.

    Every record's ``get_lr`` is a warmup-stable-decay: an optional linear warm-up of ``warmup_iters``, the
    peak, then a linear cool-down over the last ``warmdown_iters`` / ``cooldown_iters`` /
    ``cooldown_frac × num_iterations`` steps to ``num_iterations``, down to 0 or, where the script blends
    ``(1 - w) * 0.1``, to 10 % of the peak; the steps after ``num_iterations`` (``iteration_extension``) stay at
    the final rate. None when the script does not say its cool-down.

    >>> declared_lr_schedule("def get_lr(step):\\n    w = 1\\n    return w * 1.0 + (1 - w) * 0.1\\n", 1670, 1630,
    ...                      None, 815.0)
    'wsd:total=1670,decay_start=815,decay_end=1630,final=10%,shape=linear'
    """
    if not total_steps or not num_iterations or not decay or decay <= 0 or decay > num_iterations:
        return None
    body = re.search(r"(?ms)^def get_lr\b.*?(?=^\S)", script + "\nEND")
    blend = re.search(r"\(\s*1\s*-\s*w\s*\)\s*\*\s*([0-9.]+)", body.group(0)) if body else None
    final = f"{float(blend.group(1)) * 100:g}%" if blend else "0"
    start = num_iterations - decay
    head = f"wsd:total={max(total_steps, num_iterations)}" + (f",warmup={warmup}" if warmup else "")
    if warmup and start <= warmup:
        return None
    return f"{head},decay_start={start:g},decay_end={num_iterations},final={final},shape=linear"


def tokens_per_step(script: str, n_gpus: int | None) -> tuple[int | None, int | None, int | None]:
    """``(tokens per step, sequences per step, tokens per sequence)`` as the script declares them.

    The records have declared the batch as sequences × length (2024), as tokens (2025:
    ``batch_size = 8*64*1024 # batch size in tokens``, ``train_batch_size: int = 2048 * 24 * 8``)
    and as one sequence per GPU (``world_size * args.seq_len``).

    >>> tokens_per_step("    batch_size : int = 8*64 # batch size, in sequences\\n"
    ...                 "    sequence_length : int = 1024 # sequence length, in tokens\\n", 8)
    (524288, 512, 1024)
    >>> tokens_per_step("    seq_len = 48*1024 # FlexAttention sequence length\\n"
    ...                 "train_loader = gen(args.train_files, world_size * args.seq_len, rank)\\n", 8)
    (393216, None, None)
    >>> tokens_per_step("print('hello')", 8)
    (None, None, None)
    """
    sequences = _assigned(script, "batch_size", r"in sequences")
    length = _assigned(script, "sequence_length")
    if sequences and length:
        return sequences * length, sequences, length
    tokens = _assigned(script, "batch_size", r"in tokens") or _assigned(script, "train_batch_size")
    if tokens:
        return tokens, None, None
    if re.search(r"world_size\s*\*\s*(?:args\.)?(?:train_)?seq_len|(?:train_)?seq_len\s*\*\s*world_size", script):
        per_gpu = _assigned(script, "train_seq_len") or _assigned(script, "seq_len")
        if per_gpu and n_gpus:
            return per_gpu * n_gpus, None, None
    return None, None, None


def _gpus(text: str) -> tuple[str | None, int | None]:
    rows = {int(m.group(1)): m.group(2).strip() for m in _GPU_ROW.finditer(text)}
    if not rows:
        return None, None
    return rows[min(rows)], len(rows)


def _medium(script: str, path: str | None, source: str) -> bool:
    where = " ".join(p for p in (path, source) if p)
    if re.search(r"track_?2", where, re.IGNORECASE):
        return True
    if re.search(r"track_?1", where, re.IGNORECASE):
        return False
    # the model in the script: GPT-2 medium is 1024 wide (24 layers), small is 768 wide
    return re.search(r"\b(?:n_embd|model_dim)\s*=\s*1024\b", script) is not None


def _number(text: str, unit: str = "") -> float:
    text = text[:-len(unit)] if unit and text.endswith(unit) else text
    try:
        return float(text)
    except ValueError:
        return math.nan


def read_speedrun(data: bytes, source: str, *, path: str | None = None) -> RunLog:
    """Read one NanoGPT speedrun log (see the module docstring).

    Parameters
    ----------
    data : bytes
        The log's content.
    source : str
        The file name, first in every message.
    path : str, optional
        The file's path on disk: its folders name the record and the track.

    Examples
    --------
    >>> log = read_speedrun(b'''    batch_size : int = 8*64 # batch size, in sequences, across all devices
    ...     sequence_length : int = 1024 # sequence length, in tokens
    ... step:0/4 val_loss:10.8 train_time:0ms step_avg:nanms
    ... step:1/4 train_loss:10.7 train_time:100ms step_avg:nanms
    ... step:2/4 train_loss:6.1 train_time:200ms step_avg:100.00ms
    ... step:2/4 val_loss:5.9 train_time:210ms step_avg:105.00ms
    ... step:3/4 train_loss:4.0 train_time:300ms step_avg:100.00ms
    ... step:4/4 val_loss:3.2 train_time:400ms step_avg:100.00ms
    ... ''', "run.txt")
    >>> log.frame[["global_step", "loss", "train_loss", "time_s"]].to_numpy().tolist()[1:3]
    [[1.0, nan, 10.7, 0.1], [2.0, 5.9, 6.1, 0.21]]
    >>> log.frame["tokens"].tolist()[-1], log.target.spec, log.metrics["val_loss"]
    (2097152.0, 'val_loss<=3.28', 'loss')
    """
    text = as_utf8(bytes(data), source).decode("utf-8", errors="replace")
    first = re.search(r"(?m)^step:\d+/\d+ ", text)
    if first is None:
        raise LogFormatError(source, "expected NanoGPT speedrun lines such as 'step:125/1385 val_loss:4.39 "
                             "train_time:14290ms step_avg:124.26ms'; got none. Is the run's output cut before "
                             "its first step?")
    script = text[:first.start()]
    rows: dict[int, dict[str, float]] = {}
    bad = 0
    total = None
    for lineno, line in enumerate(text[first.start():].splitlines(), start=text[:first.start()].count("\n") + 1):
        if not line.startswith("step:"):
            continue
        m = _LINE.match(line)
        if m is None:
            bad += 1
            if bad == 1:
                first_bad = lineno
            continue
        n, total = int(m.group("n")), int(m.group("m"))
        fields = dict(_FIELD.findall(m.group("rest")))
        row = rows.setdefault(n, {})
        if VAL_METRIC in fields:
            row["val_loss"] = _number(fields[VAL_METRIC])
            row["val_time"] = _number(fields.get("train_time", ""), "ms")
        if "train_loss" in fields:
            row["train_loss"] = _number(fields["train_loss"])
        if "train_time" in fields:
            row.setdefault("time", _number(fields["train_time"], "ms"))
        if "step_avg" in fields:
            row["step_avg"] = _number(fields["step_avg"], "ms")
    if not rows:
        raise LogFormatError(source, "expected step:N/M lines with fields such as train_time:Tms; got none readable.")
    flags: list[str] = []
    if bad:
        if bad > 0.5 * (bad + len(rows)):
            raise LogFormatError(source, f"expected step:N/M lines of 'name:value' fields; {bad} of "
                                 f"{bad + len(rows)} are not (first: line {first_bad}). Is the log damaged?")
        flags.append(f"skipped {bad} damaged step line(s) (first: line {first_bad})")
    steps = np.array(sorted(rows), dtype=float)
    get = lambda key: np.array([rows[int(k)].get(key, math.nan) for k in steps], dtype=float)  # noqa: E731
    val, val_time, train, time_ms = get("val_loss"), get("val_time"), get("train_loss"), get("time")
    if not np.isfinite(val).any():
        raise LogFormatError(source, "expected val_loss at some step (the evaluation curve); got none. "
                             "Is the log cut before its first evaluation?")
    if (val[np.isfinite(val)] < 0).any():
        raise LogFormatError(source, "expected val_loss >= 0; got a negative value. Is the log damaged?")
    time_ms = np.where(np.isfinite(val_time), val_time, time_ms)
    device, n_gpus = _gpus(script)
    if n_gpus is None:
        flags.append("no nvidia-smi table: device and GPU count unknown")
    per_step, sequences, length = tokens_per_step(script, n_gpus)
    frame = pd.DataFrame({"global_step": steps, "epoch": pd.array([pd.NA] * len(steps), dtype="Int64"),
                          "loss": val, "acc": np.nan, "time_s": time_ms / 1000.0, "lr": np.nan})
    metrics = {VAL_METRIC: "loss"}
    if np.isfinite(train).any():
        frame["train_loss"] = train
        metrics["train_loss"] = "train_loss"
    if sequences:
        frame["samples"] = steps * sequences
    if per_step:
        frame["tokens"] = steps * per_step
    else:
        flags.append("tokens per step not read from the script (its batch size is not in a known form): "
                     "no tokens column")
    flags.append("speedrun log: no epochs; progress in steps, tokens and train_time")
    record = PurePath(path).parent.name if path else (PurePath(source).parent.name or None)
    medium = _medium(script, path, source)
    total_steps = int(total) if total else None
    num_iterations = _assigned(script, "num_iterations") or total_steps
    warmdown = _assigned(script, "warmdown_iters") or _assigned(script, "cooldown_iters")
    cooldown = re.search(r"^[ \t]*cooldown_frac[ \t]*(?::[ \t]*\w+)?[ \t]*=[ \t]*\(?\s*([0-9.]+)", script, re.MULTILINE)
    decay = float(warmdown) if warmdown else (float(cooldown.group(1)) * num_iterations
                                              if cooldown and num_iterations else None)
    warmup = _assigned(script, "warmup_iters")
    step_avg = get("step_avg")
    step_avg = step_avg[np.isfinite(step_avg)]
    finite_time = frame["time_s"].dropna()
    meta = RunMeta(model=record or ("nanogpt-medium" if medium else "nanogpt-small"), depth=None, gpu=device,
                   split="val", global_batch=sequences, system="modded-nanogpt speedrun",
                   n_nodes=1 if n_gpus else None, n_devices=n_gpus, seq_len=length,
                   run_time_s=float(finite_time.iloc[-1]) if len(finite_time) else None, accelerator=device,
                   max_steps=total_steps, warmup_steps=float(warmup) if warmup else None, decay_steps=decay,
                   step_time_s=float(step_avg[-1]) / 1000.0 if step_avg.size else None,
                   lr_schedule=declared_lr_schedule(script, total_steps, num_iterations, warmup, decay))
    target = Target(VAL_METRIC, "<=", TRACK_2_TARGET if medium else TRACK_1_TARGET, "log")
    roles = ColumnRoles(step="step", loss=VAL_METRIC, time="train_time")
    return RunLog(source=source, frame=frame, fmt="speedrun", roles=roles, meta=meta, steps_per_epoch=None,
                  granularity="step", flags=tuple(flags), columns=("step", VAL_METRIC, "train_loss", "train_time",
                                                                   "step_avg"),
                  metrics=metrics, target=target)
