"""A measured step time read from a training log: an MLPerf MLLOG file or a NanoGPT speedrun log.

A minimal reader of what calibration needs (the product's log readers are ``core.logs``):

* MLLOG: the median ``tracked_stats.train_step_time`` where the log has it; otherwise
  ``(run_stop − run_start − evaluation time) / steps`` with steps = samples at ``run_stop`` /
  ``global_batch_size``.  The device from ``submission_platform`` (often a placeholder: pass the
  systems JSON beside the results, whose ``accelerator_model_name`` and node counts win).
* Speedrun: the last ``step_avg`` (training time per step, evaluations excluded), the tokens per step
  from the script's ``batch_size × sequence_length`` (or ``train_seq_len`` × GPUs), the GPUs from the
  ``nvidia-smi`` table.
"""

from __future__ import annotations

import json
import re
import statistics
from dataclasses import dataclass
from pathlib import Path

from core.errors import LogFormatError
from core.transformer.devices import Accelerator, accelerator_from_text, system_from_json


@dataclass(frozen=True)
class LogStep:
    """A step time read from a log, and what the log says about the run.

    Attributes
    ----------
    step_time : float
        Seconds per optimizer step.
    how : str
        How it was read (for the provenance notes).
    global_batch, seq_len : int
        Sequences per step and tokens per sequence.
    device : Accelerator or None
    gpus : int or None
    domain : int or None
    source : str
    """

    step_time: float
    how: str
    global_batch: int
    seq_len: int
    device: Accelerator | None
    gpus: int | None
    domain: int | None
    source: str


def _events(text: str, source: str) -> list[dict]:
    out = []
    for line in text.splitlines():
        if ":::MLLOG" not in line:
            continue
        try:
            out.append(json.loads(line.split(":::MLLOG", 1)[1]))
        except json.JSONDecodeError:
            continue
    if not out:
        raise LogFormatError(source, "expected MLLOG lines (':::MLLOG {...}'); got none. Give an MLPerf result file.")
    return out


def mllog_step(text: str, source: str = "<mllog>", system: dict | None = None) -> LogStep:
    """The step time of an MLLOG run (see the module text).

    ``system``: the parsed systems JSON of the run (device, nodes × GPUs per node).
    """
    steps: list[float] = []
    evals: list[float] = []
    keys: dict = {}
    open_eval = None
    for e in _events(text, source):
        k, t = e.get("key"), e.get("time_ms")
        if k == "tracked_stats":
            value = e.get("value") or {}
            if "train_step_time" in value:
                steps.append(float(value["train_step_time"]))
        elif k == "eval_start":
            open_eval = t
        elif k == "eval_stop" and open_eval is not None:
            evals.append((t - open_eval) / 1000)
            open_eval = None
        elif k in ("run_start", "run_stop"):
            keys[k] = t
            if k == "run_stop":
                keys["samples"] = (e.get("metadata") or {}).get("samples_count")
        elif k in ("global_batch_size", "max_sequence_length", "submission_platform"):
            keys.setdefault(k, e.get("value"))
    if "global_batch_size" not in keys or "max_sequence_length" not in keys:
        missing = [k for k in ("global_batch_size", "max_sequence_length") if k not in keys]
        raise LogFormatError(source, f"expected global_batch_size and max_sequence_length events; the log has no "
                             f"{' and no '.join(missing)} (some benchmarks' logs, such as llama2_70b_lora's, do "
                             "not log the sequence length), so the transformer model cannot price its step. Plan "
                             "from the logs' own step times (speed model auto) instead.")
    gbs, seq = int(keys["global_batch_size"]), int(keys["max_sequence_length"])
    if steps:
        step, how = statistics.median(steps), f"median of {len(steps)} tracked_stats.train_step_time"
    elif "run_start" in keys and "run_stop" in keys and keys.get("samples"):
        n = keys["samples"] / gbs
        step = ((keys["run_stop"] - keys["run_start"]) / 1000 - sum(evals)) / n
        how = f"(run_stop - run_start - {len(evals)} evaluations) / {n:g} steps"
    else:
        raise LogFormatError(source, "expected tracked_stats.train_step_time, or run_start and run_stop with "
                             "samples_count; got neither. The run is incomplete.")
    device = gpus = domain = None
    if system is not None:
        info = system_from_json(system, source)
        device, gpus, domain = info.accelerator, info.gpus, info.domain
    elif keys.get("submission_platform"):
        device = accelerator_from_text(str(keys["submission_platform"]))
    return LogStep(step, how, gbs, seq, device, gpus, domain, source)


def speedrun_step(text: str, source: str = "<speedrun log>") -> LogStep:
    """The last ``step_avg`` of a NanoGPT speedrun log, its tokens per step and its GPUs (module text)."""
    avgs = re.findall(r"^step:\d+/\d+ .*?step_avg:([\d.]+)ms", text, re.M)
    if not avgs:
        raise LogFormatError(source, "expected lines 'step:N/M ... step_avg:Xms'; got none. Give a speedrun log.")
    gpus_rows = re.findall(r"^\|\s+\d+\s+(NVIDIA [^|]*?)\s{2,}", text, re.M)
    device = accelerator_from_text(gpus_rows[0]) if gpus_rows else None
    gpus = len(gpus_rows) or None
    m_b = re.search(r"batch_size\s*:\s*int\s*=\s*(\d+)(?:\s*\*\s*(\d+))?", text)
    m_s = re.search(r"sequence_length\s*:\s*int\s*=\s*(\d+)", text)
    m_t = re.search(r"train_seq_len\s*(?::\s*int)?\s*=\s*(\d+)(?:\s*\*\s*(\d+))?", text)
    if m_b and m_s:
        batch = int(m_b.group(1)) * int(m_b.group(2) or 1)
        seq = int(m_s.group(1))
    elif m_t and gpus:
        batch, seq = gpus * int(m_t.group(1)) * int(m_t.group(2) or 1) // 1024, 1024
    else:
        raise LogFormatError(source, "expected the script's batch_size and sequence_length (or train_seq_len); "
                             "got neither. Give the whole log, script included.")
    return LogStep(float(avgs[-1]) / 1000, "last step_avg (training time per step)", batch, seq, device, gpus,
                   gpus, source)


def read_log_step(path: str | Path, system_json: str | Path | None = None) -> LogStep:
    """A log file's step time: MLLOG if it has ``:::MLLOG`` lines, else a speedrun log.

    ``system_json``: the MLPerf systems description of the run (optional).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        raise LogFormatError(str(path), f"expected a readable log file; got {err.strerror}.") from None
    if ":::MLLOG" in text:
        system = None
        if system_json is not None:
            try:
                system = json.loads(Path(system_json).read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as err:
                raise LogFormatError(str(system_json), f"expected an MLPerf systems JSON; got {err}.") from None
        return mllog_step(text, str(path), system)
    return speedrun_step(text, str(path))
