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


def read_log_files(files: Sequence[tuple[str, bytes]]) -> LogFiles:
    """Read ``(source, bytes)`` pairs; a file that cannot be read is named in ``errors``.

    >>> out = read_log_files([("a.csv", b"epoch,step,loss,acc\\n1,1,2.0,0.5\\n"), ("b.csv", b"")])
    >>> [log.source for log in out.logs], out.errors[0][0]
    (['a.csv'], 'b.csv')
    """
    logs, noise, errors = [], {}, []
    for source, data in files:
        try:
            log = read_log(data, source)
            stats = read_gradient_noise(data, source)
        except LogFormatError as exc:
            errors.append((source, str(exc)))
            continue
        logs.append(log)
        if stats is not None:
            noise[source] = stats
    return LogFiles(tuple(logs), noise, tuple(errors))
