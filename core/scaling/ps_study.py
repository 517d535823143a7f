"""Everything the parameter-server view shows about one job, in one result.

``ps_study(job)`` gathers the round model (``ps_rounds``), the timeline of the first and last
rounds (``ps_schedule``), the total time against the worker count (``ps_time_vs_machines``) and
the train-locally-then-send alternative (``local_then_send``, ``local_schedule``), so a caller
(the Scaling page) makes one call and names what it reads.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from core.scaling.ps_job import PSJob
from core.scaling.ps_rounds import (
    LocalTraining,
    PSRounds,
    local_then_send,
    ps_rounds,
    ps_time_vs_machines,
)
from core.scaling.ps_schedule import local_schedule, ps_schedule


@dataclass(frozen=True)
class PSStudy:
    """One parameter-server job seen every way: rounds, timelines, time against machines, local training."""

    rounds: PSRounds
    schedule: pd.DataFrame          # the first rounds and the last (``ps_schedule``)
    time_vs_machines: pd.DataFrame  # total time for each worker count (``ps_time_vs_machines``)
    local: LocalTraining            # train locally, send the model back once
    local_schedule: pd.DataFrame    # its timeline (``local_schedule``)


def ps_study(job: PSJob, *, first_rounds: int = 2) -> PSStudy:
    """The rounds of ``job``, their timeline (``first_rounds`` drawn, then the last) and the alternatives.

    Examples
    --------
    >>> s = ps_study(PSJob(1000, batch=32, epochs=2, machines=3, broadcast_s=1.0, compute_s=5.0,
    ...                    gather_s=1.0, aggregate_s=0.5))
    >>> s.rounds.total_rounds, s.rounds.total_time_s
    (22, 186.0)
    """
    return PSStudy(ps_rounds(job), ps_schedule(job, first_rounds=first_rounds), ps_time_vs_machines(job),
                   local_then_send(job), local_schedule(job))
