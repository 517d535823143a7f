"""The Logs page's headline: how many loaded runs reached their target, and which got there first.

Runs are compared in the finest unit every reached run counts (tokens, then samples, then seconds,
then epochs), so a run is never ranked by a number another run does not have.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from core.runs.analysis import RunAnalysis

#: the units runs are compared in, finest first: (TargetCrossing attribute, unit word)
_UNITS = (("tokens", "tokens"), ("samples", "samples"), ("time_s", "s"), ("epoch", "epochs"))


@dataclass(frozen=True)
class TargetSummary:
    """``n_reached`` of ``n_runs`` runs met their target; ``first`` the one that got there first, ``at`` its
    progress then in ``unit`` (None when no run reached its target, or the reached runs share no unit)."""

    n_runs: int
    n_reached: int
    first: str | None = None
    at: float | None = None
    unit: str | None = None

    def headline(self) -> str:
        """One sentence.

        >>> TargetSummary(4, 2, "a.csv", 12.0, "epochs").headline()
        '2 of 4 runs reached their target; first: a.csv, at 12 epochs.'
        >>> TargetSummary(3, 0).headline()
        '0 of 3 runs reached their target.'
        """
        text = f"{self.n_reached} of {self.n_runs} runs reached their target"
        if self.first is None:
            return text + "."
        return f"{text}; first: {self.first}, at {self.at:,.0f} {self.unit}."


def summarize_targets(analyses: Sequence[RunAnalysis]) -> TargetSummary:
    """How many of ``analyses`` reached their target and which was first (module text).

    >>> from core.logs import read_log
    >>> from core.runs import analyse_run
    >>> def run(name, accs):
    ...     rows = "".join(f"{e},1,{1 / e:.3f},{a}\\n" for e, a in enumerate(accs, 1))
    ...     return analyse_run(read_log(("epoch,step,loss,acc\\n" + rows).encode(), name))
    >>> s = summarize_targets([run("slow.csv", [0.5, 0.8, 0.93]), run("fast.csv", [0.7, 0.95]),
    ...                        run("never.csv", [0.5, 0.6])])
    >>> (s.n_runs, s.n_reached, s.first, s.at, s.unit)
    (3, 2, 'fast.csv', 2.0, 'epochs')
    """
    reached = [a for a in analyses if a.crossing.reached]
    for attribute, unit in _UNITS:
        values = [getattr(a.crossing, attribute) for a in reached]
        if values and all(v is not None for v in values):
            best = min(range(len(reached)), key=lambda i: values[i])
            return TargetSummary(len(analyses), len(reached), reached[best].log.source, float(values[best]), unit)
    return TargetSummary(len(analyses), len(reached))


def amount_text(value: float, digits: int = 4) -> str:
    """``value`` rounded to ``digits`` significant digits, written as the headline writes amounts: thousands
    separated, never in exponent notation (an estimate of 634,388,480 tokens is "634,400,000", not
    "6.344e+08"), no trailing zeros; "∞" for an infinite value.

    >>> amount_text(634_388_480), amount_text(12.345), amount_text(0.0012345), amount_text(7), amount_text(float("inf"))
    ('634,400,000', '12.35', '0.001234', '7', '∞')
    """
    if math.isinf(value):
        return "∞"
    if value == 0 or math.isnan(value):
        return f"{value:g}"
    decimals = digits - 1 - math.floor(math.log10(abs(value)))
    text = f"{round(value, decimals):,.{max(decimals, 0)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text
