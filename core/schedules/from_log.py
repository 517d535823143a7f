"""The planned schedule of a run: what the user declares, else what its log says.

In this order (the first that applies wins; :func:`resolve_planned_schedule`):

1. what the user declares: a CSV of ``step, lr`` (:func:`read_schedule_csv`; a log with an ``lr`` column will
   do), or a spec (``core.schedules.spec``); it replaces the log's own plan **after** the observed part (what
   was trained is what the log says);
2. the log's own learning-rate column (a CSV ``lr`` / ``learning_rate``, Lightning ``lr-*``, a Trainer's
   ``learning_rate``, MLLOG's per-step ``lr``), continued by the schedule the log declares where the column
   stops (:func:`log_schedule`);
3. the schedule the log declares (``RunMeta.lr_schedule``: a speedrun script's ``get_lr`` as multipliers of
   its peak, an MLLOG log's optimiser keys).

When a log is cut to backtest a forecast, the learning-rate column of the **whole** file is the plan: the
rest of a planned schedule is known, as it is to the user who planned it.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd

from core.errors import InputError, LogFormatError
from core.logs import RunLog, detect_roles
from core.schedules.planned import PlannedSchedule, schedule_from_points
from core.schedules.spec import is_schedule_spec, parse_schedule_spec
from core.tables import as_utf8, file_bytes


def _lr_points(log: RunLog) -> tuple[np.ndarray, np.ndarray]:
    """The log's logged ``(optimiser step, lr)`` pairs: its per-step figures (MLLOG) or its frame's ``lr``."""
    for table, step in ((log.steps, "step"), (log.frame, "global_step")):
        if table is None or "lr" not in table or step not in table:
            continue
        s = table[step].to_numpy(dtype=float, na_value=np.nan)
        r = table["lr"].to_numpy(dtype=float, na_value=np.nan)
        ok = np.isfinite(s) & np.isfinite(r)
        if ok.sum() >= 2:
            return s[ok], r[ok]
    return np.empty(0), np.empty(0)


def log_schedule(log: RunLog) -> PlannedSchedule | None:
    """The plan ``log`` itself gives (module docstring, 2 and 3), None when it gives none.

    Examples
    --------
    >>> from core.logs import read_log
    >>> log = read_log(b"step,lr,loss\\n100,1e-3,3.0\\n200,1e-3,2.8\\n300,5e-4,2.7\\n", "run.csv")
    >>> s = log_schedule(log)
    >>> s.total_steps, s.source
    (300.0, 'the lr column of run.csv')
    """
    declared = None
    if log.meta.lr_schedule:
        try:
            declared = parse_schedule_spec(log.meta.lr_schedule)
        except InputError:
            declared = None
    steps, lr = _lr_points(log)
    if steps.size < 2:
        if declared is None:
            return None
        return PlannedSchedule(declared.steps, declared.lr, source=f"declared by {log.source}: {declared.spec}",
                               unit=declared.unit, spec=declared.spec)
    try:
        column = schedule_from_points(steps, lr, source=f"the lr column of {log.source}")
    except InputError:                 # rates that make no plan (all zero, negative): as if the log had no column
        column = None
    if column is None:
        return None if declared is None else PlannedSchedule(
            declared.steps, declared.lr, source=f"declared by {log.source}: {declared.spec}", unit=declared.unit,
            spec=declared.spec)
    if declared is None or declared.total_steps <= column.total_steps or declared.unit != column.unit:
        return column
    return column.then(declared, at=column.total_steps,
                       source=f"the lr column of {log.source}, then its declared {declared.spec}")


def read_schedule_csv(data: bytes, name: str) -> PlannedSchedule:
    """A plan from a CSV with a step and a learning-rate column (named as logs name them: ``step``,
    ``global_step``, ``iteration``; ``lr``, ``learning_rate``, ``lr-AdamW``), linear between its rows.

    >>> read_schedule_csv(b"step,lr\\n0,0\\n100,1e-3\\n1000,1e-4\\n", "plan.csv").lr_at([50, 1000]).tolist()
    [0.0005, 0.0001]
    >>> read_schedule_csv(b"step,loss\\n1,2\\n2,1\\n", "plan.csv")
    Traceback (most recent call last):
    ...
    core.errors.LogFormatError: plan.csv: expected a step column and a learning-rate column (lr, \
learning_rate, lr-*); got step, loss.
    """
    text = as_utf8(bytes(data), name).decode("utf-8", errors="replace")
    try:
        table = pd.read_csv(io.StringIO(text), skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise LogFormatError(name, f"expected a CSV of step and lr rows; got unreadable text ({exc}).") from None
    columns = [str(c).strip() for c in table.columns]
    table.columns = columns
    roles = detect_roles(columns, source=name)
    if roles.step is None or roles.lr is None:
        raise LogFormatError(name, "expected a step column and a learning-rate column (lr, learning_rate, lr-*); "
                                   f"got {', '.join(columns)}.")
    steps = pd.to_numeric(table[roles.step], errors="coerce").to_numpy(dtype=float)
    lr = pd.to_numeric(table[roles.lr], errors="coerce").to_numpy(dtype=float)
    try:
        return schedule_from_points(steps, lr, source=f"planned schedule {name}", warmup_from_zero=False)
    except InputError as exc:
        raise LogFormatError(name, str(exc).removeprefix(f"planned schedule {name}: ")) from None


def read_schedule_file(path) -> PlannedSchedule:
    """:func:`read_schedule_csv` of the file at ``path`` (a regular file, bounded in size)."""
    name = str(path)
    return read_schedule_csv(file_bytes(path, source=name), name)


def declared_schedule(text_or_schedule) -> PlannedSchedule | None:
    """A user's declaration: a :class:`PlannedSchedule` as it is, a spec parsed, None as None."""
    if text_or_schedule is None or isinstance(text_or_schedule, PlannedSchedule):
        return text_or_schedule
    if isinstance(text_or_schedule, str) and is_schedule_spec(text_or_schedule):
        return parse_schedule_spec(text_or_schedule)
    raise InputError(f"planned schedule: expected KIND:total=N,... or a CSV of step,lr; got {text_or_schedule!r}.")


def resolve_planned_schedule(log: RunLog, declared=None, *, observed_step: float | None = None
                             ) -> PlannedSchedule | None:
    """The plan a forecast of ``log`` uses (module docstring): the log's own up to ``observed_step`` (the last step
    seen), then the user's ``declared`` plan; the log's own plan when nothing is declared; the declared plan
    alone when the log gives none."""
    declared = declared_schedule(declared)
    own = log_schedule(log)
    if declared is None:
        return own
    if own is None or observed_step is None:
        return declared
    return joined_plan(own, declared, at=observed_step, run=log.source)


def joined_plan(own: PlannedSchedule, declared: PlannedSchedule, *, at: float, run: str,
                source: str | None = None) -> PlannedSchedule:
    """``own`` (what the run trained on) to step ``at``, then ``declared`` (a plan for the rest).

    A declared plan in multipliers of the peak, on a run whose rates are absolute, is taken relative to the
    highest rate the run shows up to ``at``; absolute rates declared for a run known only in multipliers are
    refused (nothing says what its peak was)."""
    if own.unit != declared.unit:
        if declared.unit == "absolute":
            raise InputError(f"{declared.source or 'planned schedule'}: expected rates relative to the peak, as "
                             f"{own.source} gives them; got absolute rates (peak {declared.peak:.3g}).")
        peak = own.cut_at(at).peak
        declared = declared.scaled(peak, source=f"{declared.source} × the peak rate {peak:.3g} of {run}")
    return own.then(declared, at=at,
                    source=source or f"{own.source} to step {at:,.0f}, then {declared.source}")
