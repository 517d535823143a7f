"""A tiny file of each built-in log format, made here: what ``Reader.sample`` gives (core.logs.reader).

Each sample is a five-point run of its format, the smallest file its reader reads into a curve: the contract
tests (tests/contracts/test_log_readers_contract.py) read every registered reader's sample through the registry
and check that the reader the registry picks for it is its own. A new reader writes its sample in its own
module (docs/extending.md).
"""

from __future__ import annotations

import json
import struct

#: the five points every sample holds (a falling loss, or a climbing accuracy for MLPerf's evaluations)
STEPS = (10, 20, 30, 40, 50)


def _loss(step: int) -> float:
    return round(2.0 / (1.0 + step / 20.0) + 0.1, 6)


def csv_sample() -> bytes:
    """A CSV log: ``step, loss``.

    >>> csv_sample().splitlines()[:2]
    [b'step,loss', b'10,1.433333']
    """
    return ("step,loss\n" + "".join(f"{s},{_loss(s)}\n" for s in STEPS)).encode()


def mllog_sample() -> bytes:
    """An MLPerf MLLOG result file: a run's start, five evaluations (``eval_accuracy`` at ``epoch_num``), its stop."""
    events = [("submission_benchmark", "resnet", "POINT_IN_TIME", {}),
              ("global_batch_size", 256, "POINT_IN_TIME", {}),
              ("run_start", None, "INTERVAL_START", {})]
    events += [("eval_accuracy", acc, "POINT_IN_TIME", {"epoch_num": e})
               for e, acc in enumerate((0.30, 0.50, 0.62, 0.70, 0.75), start=1)]
    events.append(("run_stop", None, "INTERVAL_END", {"status": "success"}))
    lines = [":::MLLOG " + json.dumps({"namespace": "", "time_ms": 1_700_000_000_000 + 1000 * i, "event_type": kind,
                                       "key": key, "value": value, "metadata": meta})
             for i, (key, value, kind, meta) in enumerate(events)]
    return ("\n".join(lines) + "\n").encode()


def trainer_state_sample() -> bytes:
    """A Hugging Face Trainer ``trainer_state.json``: its ``log_history`` of five logged losses."""
    history = [{"epoch": s / STEPS[-1], "step": s, "loss": _loss(s), "learning_rate": 1e-3} for s in STEPS]
    return json.dumps({"global_step": STEPS[-1], "max_steps": STEPS[-1], "log_history": history}, indent=2).encode()


def speedrun_sample() -> bytes:
    """A NanoGPT speedrun log: ``step:N/M val_loss:X train_time:Tms step_avg:Ams`` lines."""
    lines = [f"step:{s}/{STEPS[-1]} val_loss:{_loss(s) * 3} train_time:{100 * s}ms step_avg:100.00ms" for s in STEPS]
    return ("\n".join(lines) + "\n").encode()


def tfevents_sample() -> bytes:
    """A TensorBoard event file: the version record, then a ``loss`` scalar (``simple_value``) at each step, each
    record framed as TFRecord (length, its masked CRC-32C, the ``Event``, its CRC)."""
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

    def record(event) -> bytes:
        data = event.SerializeToString()
        head = struct.pack("<Q", len(data))
        return head + struct.pack("<I", masked_crc32c(head)) + data + struct.pack("<I", masked_crc32c(data))

    events = [event_pb2.Event(wall_time=1_700_000_000.0, file_version="brain.Event:2")]
    events += [event_pb2.Event(wall_time=1_700_000_000.0 + s, step=s, summary=summary_pb2.Summary(
        value=[summary_pb2.Summary.Value(tag="loss", simple_value=_loss(s))])) for s in STEPS]
    return b"".join(record(e) for e in events)
