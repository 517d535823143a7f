"""The one call that backtests finished runs: it picks the route from their targets, as
:func:`core.prediction.run_forecast.forecast_run` does for one run.

:func:`backtest_runs` is what the ``backtest`` command calls:

* the **epoch route** (:func:`core.prediction.backtest.backtest_logs`) when every run's target is a climbing
  accuracy (``core.targets.target_for``: the one given, else the run's own, else ``acc>=0.92``), or the target
  is a fraction of each run's final accuracy (``target_rel``); with other runs for the prior, each row also holds
  the prior and the posterior;
* the **progress route** (:func:`core.prediction.progress_backtest.backtest_progress`) otherwise: each run cut at
  each fraction of its evaluations, its progress to target predicted from the others.

:class:`BacktestAnswer` holds the table, the summary lines and the runs left out with the reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pandas as pd

from core.errors import InputError
from core.logs import RunLog
from core.prediction.backtest import DEFAULT_FRACTIONS, backtest_logs, relative_target
from core.prediction.backtest_table import BACKTEST_COLUMNS
from core.prediction.combined import priors_without_each_run, summary_of
from core.prediction.forecast import DEFAULT_POSTERIOR_METHOD
from core.prediction.progress_backtest import backtest_progress, progress_backtest_summary
from core.prediction.run_forecast import EPOCHS, PROGRESS
from core.prediction.run_prior import prior_for_run
from core.prediction.schedule import Schedule
from core.prediction.tables import backtest_summary, summary_line
from core.targets import Target, target_for


def backtest_route(logs: Sequence[RunLog], target: Target | None = None, target_rel: float | None = None) -> str:
    """:data:`EPOCHS` when the runs' targets are all climbing accuracies (or ``target_rel`` defines them), else
    :data:`PROGRESS` (module docstring).

    >>> from core.logs import read_log
    >>> log = read_log(b"epoch,step,loss,acc\\n1,10,2.0,0.5\\n2,20,1.5,0.6\\n", "a.csv")
    >>> backtest_route([log]), backtest_route([log], Target("loss", "<=", 1.0)), backtest_route([log], None, 0.9)
    ('epochs', 'progress', 'epochs')
    """
    if target_rel is not None or all(target_for(log, target).is_accuracy for log in logs):
        return EPOCHS
    return PROGRESS


@dataclass(frozen=True, eq=False)
class BacktestAnswer:
    """A backtest by the route that applies (module docstring).

    Attributes
    ----------
    route : {"epochs", "progress"}
    table : pandas.DataFrame
        One row per run and observed fraction.
    lines : tuple of str
        The summary: per fraction, the error and coverage of each part.
    left_out : tuple of str
        The runs left out, each with the reason (``<file>: <problem>``).
    notes : tuple of str
        What was asked for and not applied on this route.
    """

    route: str
    table: pd.DataFrame
    lines: tuple[str, ...]
    left_out: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def shown(self, *, extra: bool = True) -> pd.DataFrame:
        """The table, or only its contract columns (``BACKTEST_COLUMNS``, the epoch route's) with ``extra=False``."""
        if extra or self.route != EPOCHS:
            return self.table
        return self.table[list(BACKTEST_COLUMNS)]


def backtest_runs(logs: Sequence[RunLog], target: Target | None = None, *, target_rel: float | None = None,
                  fractions: Iterable[float] = DEFAULT_FRACTIONS, family: str = "auto", calibration: str = "runs",
                  loss_threshold: str = "observed", correct: bool = True, schedule: Schedule | str | None = "auto",
                  prior_from: Sequence[RunLog] | None = None, fits: pd.DataFrame | None = None,
                  datasets_by_file: dict[str, str] | None = None,
                  posterior_method: str = DEFAULT_POSTERIOR_METHOD) -> BacktestAnswer:
    """Backtest ``logs`` to ``target`` (None: each run's own, ``target_for``) by the route that applies.

    ``prior_from`` (other runs; ``fits``, a calibration frame) adds the prior and the posterior to the epoch
    route's rows (``posterior_method``: how they combine; the progress route's posterior learns its weights
    from the other runs, and a line says so when another method was asked for). The other arguments are
    :func:`~core.prediction.backtest.backtest_logs`' (the epoch route's). A run whose relative target cannot be
    defined is left out, named with the reason.
    """
    fractions = list(fractions)
    if backtest_route(logs, target, target_rel) == PROGRESS:
        table = backtest_progress(logs, target, fractions=fractions)
        notes = ()
        if posterior_method != DEFAULT_POSTERIOR_METHOD:
            notes = (f"--posterior-method {posterior_method} not applied: it combines epochs to an accuracy "
                         "target; a target in progress units is scored with the progress posterior (its weights "
                         "and interval from a backtest of the other logs)",)
        return BacktestAnswer(PROGRESS, table, (progress_backtest_summary(table),), notes=notes)
    left_out = []
    if target_rel is not None:
        kept = []
        for log in logs:
            try:
                relative_target(log, target_rel)
                kept.append(log)
            except InputError as exc:
                left_out.append(str(exc))
        logs = kept
    priors = priors_without = None
    if prior_from is not None:
        priors = {lg.source: prior_for_run(lg, prior_from, target=target_for(lg, target), fits=fits,
                                           datasets_by_file=datasets_by_file) for lg in logs}
        if posterior_method != "precision":       # the other runs' cases: priors that never saw the run
            priors_without = priors_without_each_run(logs, prior_from, target=target,
                                                     datasets_by_file=datasets_by_file)
    table = backtest_logs(logs, fractions=fractions, target=target, target_rel=target_rel, family=family,
                          calibration=calibration, loss_threshold=loss_threshold, correct=correct,
                          schedule=schedule, priors=priors, posterior_method=posterior_method,
                          priors_without=priors_without)
    lines = [summary_line(backtest_summary(table), family=family)]
    if priors is not None:
        lines.append(three_way_line(summary_of(table)))
    return BacktestAnswer(EPOCHS, table, tuple(lines), left_out=tuple(left_out))


def three_way_line(summary: pd.DataFrame) -> str:
    """Per fraction: median |error| and coverage of the prior, the extrapolation and the posterior
    (``core.prediction.combined.summary_of``'s table)."""
    def part(r):
        med = "n/a" if r.n_answered == 0 else f"{r.median_abs_error_pct:.1f} %"
        cov = "" if r.n_answered == 0 else f", {100 * r.coverage:.0f} % covered"
        flagged = f", {r.n_flagged} without an answer" if r.n_flagged else ""
        return f"{r.prediction} {med}{cov}{flagged}"

    parts = []
    for f, g in summary.groupby("observed_fraction", sort=True):
        parts.append(f"f={f:g} ({int(g['n_scored'].iloc[0])} scored): " + "; ".join(part(r) for r in g.itertuples()))
    return "summary [prior, extrapolation, posterior]: " + " | ".join(parts)

