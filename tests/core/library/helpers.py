"""Logs to add in library tests: course-format CSVs from known curves, TensorBoard event files written by
tensorboard's own writer (raw Event protos: exact steps, wall times and values)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def course_csv(*, epochs: int = 6, steps: int = 10, b0: float = 0.01, acc_step: float = 0.06,
               seed: int | None = None) -> bytes:
    """``epoch, step, loss, acc`` with loss 1/(b0·k + 0.5) + 0.05 and epoch-end accuracy 0.6 + acc_step·epoch.

    ``seed`` adds a tiny distinct offset so that two logs differ in content.
    """
    k = np.arange(1, epochs * steps + 1)
    e, s = (k - 1) // steps + 1, (k - 1) % steps + 1
    loss = 1 / (b0 * k + 0.5) + 0.05 + (0 if seed is None else 1e-6 * seed)
    acc = np.minimum(0.6 + acc_step * e, 0.999)
    rows = "".join(f"{a}, {b}, {c:.8f}, {d:.4f}\n" for a, b, c, d in zip(e, s, loss, acc))
    return ("epoch, step, loss, acc\n" + rows).encode()


def write_events(folder: Path, rows: list[dict], *, start: float = 1000.0) -> Path:
    """One event file in ``folder``: each row ``{"step": k, tag: value, ...}`` one event of simple values."""
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    folder.mkdir(parents=True, exist_ok=True)
    writer = EventFileWriter(str(folder))
    for row in rows:
        values = [summary_pb2.Summary.Value(tag=tag, simple_value=float(v)) for tag, v in row.items() if tag != "step"]
        writer.add_event(event_pb2.Event(wall_time=start + row["step"], step=int(row["step"]),
                                         summary=summary_pb2.Summary(value=values)))
    writer.close()
    return next(folder.glob("events.out.tfevents.*"))
