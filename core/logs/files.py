"""Read several uploaded or built-in log files at once: each one's ``RunLog``, its gradient statistics, its error.

The one home of "files → runs" for views that take a set of runs (the batch-size view, the
``batch-scaling`` command): every file is read on its own, so a bad one is reported and the
others go on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from core.errors import LogFormatError
from core.logs.noise import GradientNoise, read_gradient_noise
from core.logs.reader import RunLog, read_log


@dataclass(frozen=True)
class LogFiles:
    """The readable logs (in the order given), the gradient statistics of those that have some
    (by source), and ``(source, message)`` for every file refused."""

    logs: tuple[RunLog, ...]
    noise: dict[str, GradientNoise] = field(default_factory=dict)
    errors: tuple[tuple[str, str], ...] = ()


def read_log_files(files: Sequence[tuple[str, bytes]], *, validation: bool = True) -> LogFiles:
    """Read ``(source, bytes)`` pairs; a file that cannot be read is named in ``errors``.

    ``validation=True`` (the default: the batch studies that read sets of runs measure a target on the
    validation metric) reads a Lightning ``metrics.csv`` (training and validation rows in one file) as its
    validation split where it has a validation accuracy (``val_acc``), as the course's ``_val`` file, a Pollux
    trace and an MLLOG ``eval_accuracy`` give it; ``False`` reads every file as :func:`read_log` does.

    >>> out = read_log_files([("a.csv", b"epoch,step,loss,acc\\n1,1,2.0,0.5\\n"), ("b.csv", b"")])
    >>> [log.source for log in out.logs], out.errors[0][0]
    (['a.csv'], 'b.csv')
    >>> lightning = b"epoch,step,train_loss,val_acc,val_loss\\n0,9,2.0,,\\n0,19,1.5,0.6,1.4\\n1,39,1.0,0.8,0.9\\n"
    >>> read_log_files([("m.csv", lightning)]).logs[0].roles.acc
    'val_acc'
    """
    logs, noise, errors = [], {}, []
    for source, data in files:
        try:
            log = read_log(data, source)
            if validation and log.fmt == "lightning" and log.meta.split != "val":
                val = read_log(data, source, split="val")
                if val.roles.acc is not None and val.roles.acc != log.roles.acc:
                    log = val
            stats = read_gradient_noise(data, source)
        except LogFormatError as exc:
            errors.append((source, str(exc)))
            continue
        logs.append(log)
        if stats is not None:
            noise[source] = stats
    return LogFiles(tuple(logs), noise, tuple(errors))
