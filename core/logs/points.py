"""Whether a log has enough points for a curve: a run the curve fitter cannot fit is refused by name.

The fewest points is the curve fitter's own (:data:`MIN_FIT_POINTS`: the default loss model's parameters
plus one, ``core.curves.min_fit_points``), never a second number.  A log is counted by its best-sampled
curve: the points at different steps of its loss, accuracy or any other metric it logs.

Where a run is read to be fitted (``python -m core fit`` and ``predict``, the pages' uploads and built-in
runs) the reader is given ``min_points=MIN_FIT_POINTS``: one data row, every
row at one step, or two or three points is refused with a message that names the file and what it lacks.
Runs of evaluations are the exception (:data:`EVALUATION_FORMATS`: MLPerf's MLLOG, Pollux-layout per-epoch
traces): a BERT trace of two epochs, or an MLPerf run that met its target at its second evaluation, is a
real, finished run whose measured values (progress to the target, step times, throughput) stand.  With two
or more evaluations it is loaded with :func:`few_points_flag` among its flags, never fitted
(:func:`is_forecastable` is False).  ``read_log``'s default (``min_points=1``) loads the small tables that
code and tests build as they are.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from core.curves import OPTIMUS
from core.errors import LogFormatError
from core.logs.runlog import RunLog

#: the fewest points at different steps the loss model (Optimus, the default family of every fit) is fitted to
MIN_FIT_POINTS = OPTIMUS.min_points
#: formats whose rows are evaluations of a whole run: a run of 2 to MIN_FIT_POINTS - 1 of them is loaded, flagged
EVALUATION_FORMATS = frozenset({"mllog", "metric-trace", "epoch-trace"})


def few_points_flag(n: int) -> str:
    """The flag of a loaded run with ``n`` evaluations, too few to fit.

    >>> few_points_flag(2)
    '2 evaluation(s): fewer than the 4 a curve fit needs; measured values only, not fitted or forecast'
    """
    return (f"{n} evaluation(s): fewer than the {MIN_FIT_POINTS} a curve fit needs; measured values only, not fitted "
            "or forecast")


def is_forecastable(log: RunLog) -> bool:
    """Whether ``log`` has the points a curve fit needs (:data:`MIN_FIT_POINTS` at different steps)."""
    return curve_points(log)[0] >= MIN_FIT_POINTS


def curve_points(log: RunLog) -> tuple[int, str]:
    """The number of points at different steps of the log's best-sampled curve, and that curve's column.

    >>> from core.logs.reader import read_log
    >>> curve_points(read_log(b"step,loss,acc\\n1,2.0,0.1\\n2,1.5,\\n3,1.2,\\n4,1.0,0.4\\n", "a.csv"))
    (4, 'loss')
    """
    frame = log.frame
    columns = dict.fromkeys(["loss", "acc", *log.metrics.values()])
    steps = frame["global_step"].to_numpy()
    best = (0, "loss")
    for column in columns:
        if column in frame:
            n = distinct_count(steps[frame[column].notna().to_numpy()])
            best = max(best, (n, column), key=lambda t: t[0])
    return best


def distinct_count(values: np.ndarray) -> int:
    """The number of distinct values, NaN not counted (``pandas.Series.nunique``): on sorted values (a log's
    steps, nearly always) one pass over their differences, else ``nunique``'s hashing.

    >>> distinct_count(np.array([1.0, 1.0, 2.0, 5.0])), distinct_count(np.array([3.0, 1.0, 3.0, np.nan]))
    (3, 2)
    """
    if values.size == 0:
        return 0
    if values.dtype.kind in "fiu":
        with np.errstate(invalid="ignore"):          # inf - inf: NaN, which fails the test below
            diff = np.diff(values)
        if (diff >= 0).all():         # sorted, without NaN (a NaN difference fails the test)
            return 1 + int(np.count_nonzero(diff))
    return int(pd.Series(values).nunique())


def check_points(log: RunLog, min_points: int = MIN_FIT_POINTS) -> RunLog:
    """``log`` when its best curve has ``min_points`` points at different steps (or :data:`MIN_FIT_POINTS`); a
    run of evaluations (module text) with two or more, flagged with :func:`few_points_flag`; else
    :class:`LogFormatError` naming the file and what it lacks.

    >>> from core.logs.reader import read_log
    >>> log = read_log(b"step,loss\\n1,2.0\\n2,1.0\\n", "two_points.csv")    # min_points=1: loaded as it is
    >>> is_forecastable(log)
    False
    >>> check_points(log)
    Traceback (most recent call last):
    ...
    core.errors.LogFormatError: two_points.csv: expected at least 4 points at different steps to fit a curve; got 2...
    >>> check_points(read_log(b"step,loss\\n0,2.0\\n0,1.0\\n0,0.5\\n", "zero_steps.csv"))
    Traceback (most recent call last):
    ...
    core.errors.LogFormatError: zero_steps.csv: expected at least 4 points ...; every row is at step 0...
    """
    n, column = curve_points(log)
    if n >= MIN_FIT_POINTS:
        return log
    if n >= 2 and log.fmt in EVALUATION_FORMATS:
        flag = few_points_flag(n)
        return log if flag in log.flags else replace(log, flags=(*log.flags, flag))
    if n >= min_points:
        return log
    need = f"expected at least {MIN_FIT_POINTS} points at different steps to fit a curve"
    if n == 1 and len(log.frame) == 1 and not any(f.startswith("duplicated steps") for f in log.flags):
        raise LogFormatError(log.source, f"{need}; got one data row.")
    if n == 1:
        step = float(log.frame["global_step"].iloc[0])
        where = f" (column {log.roles.step!r})" if log.roles.step else ""
        raise LogFormatError(log.source, f"{need}; every row is at step {step:g}{where}. Is it the step column? "
                             "Name another under 'Column roles'.")
    raise LogFormatError(log.source, f"{need}; got {n} ({column!r}).")
