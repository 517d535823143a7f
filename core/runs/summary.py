"""The Logs page's headline: how many loaded runs reached their target, and which got there first.

Runs are ranked only against runs that were measured against the same target and count progress in the
same unit: tokens (a language-model run), samples (a run whose batch is known), else optimiser steps or
epochs (compared in seconds when every such run logs its time, else in epochs, else in steps).  Runs of
different targets or units are never ranked against each other: each group gets its own first
(:attr:`TargetSummary.firsts`), and the headline says that they were not compared.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from core.runs.analysis import RunAnalysis
from core.targets import Target

#: how a run counts its progress (the first its crossing knows), and the measures a group of such runs is
#: ranked in, the first that every run of the group has: (TargetCrossing attribute, unit word)
_COUNTED = (("tokens", "tokens"), ("samples", "samples"))
_MEASURES = {"tokens": (("tokens", "tokens"),), "samples": (("samples", "samples"),),
             "steps": (("time_s", "s"), ("epoch", "epochs"), ("step", "steps"))}


def target_words(target: Target) -> str:
    """A target as the pages write it.

    >>> from core.targets import parse_target
    >>> target_words(parse_target("val_loss<=3.28")), target_words(parse_target("acc>=0.92"))
    ('val_loss ≤ 3.28', 'acc ≥ 0.92')
    """
    return f"{target.metric} {'≥' if target.climbs else '≤'} {target.value:g}"


@dataclass(frozen=True)
class FirstToTarget:
    """The first of ``n_reached`` runs that reached ``target`` counting in ``counted``: ``source``, at ``at``
    ``unit`` (``unit`` may be seconds or epochs for runs that count steps)."""

    target: str
    counted: str
    source: str
    at: float
    unit: str
    n_reached: int

    def text(self) -> str:
        """``"a.csv, at 24 s"``: the run and where it reached the target (its amount written whole)."""
        return f"{self.source}, at {self.amount()}"

    def amount(self) -> str:
        """``"24 s"``: whole units from 10 up, two significant digits below (``"0.52 epochs"``)."""
        return f"{self.at:,.0f} {self.unit}" if abs(self.at) >= 10 else f"{amount_text(self.at, 2)} {self.unit}"


@dataclass(frozen=True)
class TargetSummary:
    """``n_reached`` of ``n_runs`` runs met their target; ``firsts`` the first run of each group of reached
    runs that share a target and a unit (:func:`summarize_targets`); ``targets`` each target the runs were
    measured against with its number of runs, in the order of the runs."""

    n_runs: int
    n_reached: int
    firsts: tuple[FirstToTarget, ...] = ()
    targets: tuple[tuple[str, int], ...] = ()

    @property
    def first(self) -> FirstToTarget | None:
        """The first run to the target when every reached run is in one group (one target, one unit), else None:
        runs of different targets or units are never ranked against each other."""
        return self.firsts[0] if len(self.firsts) == 1 else None

    @property
    def at(self) -> float | None:
        """Where :attr:`first` reached the target, in :attr:`unit` (None without a single first)."""
        return self.first.at if self.first is not None else None

    @property
    def unit(self) -> str | None:
        return self.first.unit if self.first is not None else None

    def reached_value(self) -> str:
        """``"10 of 12"``: the headline's count of runs that reached their target."""
        return f"{self.n_reached} of {self.n_runs}"

    def first_value(self) -> str:
        """The headline metric's value: ``"24 s"``; ``"–"`` when no run reached its target; ``"not ranked"``
        when the reached runs differ in target or unit.

        >>> one = FirstToTarget("acc ≥ 0.92", "steps", "a.csv", 24.465, "s", 3)
        >>> TargetSummary(4, 3, (one,)).first_value(), TargetSummary(4, 0).first_value()
        ('24 s', '–')
        >>> TargetSummary(8, 5, (one, FirstToTarget("val_loss ≤ 3.28", "tokens", "b.txt", 7e8, "tokens", 2))
        ...              ).first_value()
        'not ranked'
        """
        if not self.firsts:
            return "–"
        if self.first is None:
            return "not ranked"
        return self.first.amount()

    def targets_text(self) -> str:
        """The target(s) the runs were measured against: one, or each with its number of runs.

        >>> TargetSummary(2, 1, targets=(("acc ≥ 0.92", 2),)).targets_text()
        'Target: acc ≥ 0.92.'
        >>> TargetSummary(5, 1, targets=(("val_loss ≤ 3.28", 4), ("acc ≥ 0.759", 1))).targets_text()
        'Targets differ: val_loss ≤ 3.28 (4 runs), acc ≥ 0.759 (1 run).'
        """
        if len(self.targets) == 1:
            return f"Target: {self.targets[0][0]}."
        return "Targets differ: " + ", ".join(f"{t} ({n} run{'s' if n != 1 else ''})" for t, n in self.targets) + "."

    def headline(self) -> str:
        """One sentence (or two, when the reached runs were not ranked together).

        >>> one = FirstToTarget("acc ≥ 0.92", "steps", "a.csv", 12.0, "epochs", 2)
        >>> TargetSummary(4, 2, (one,)).headline()
        '2 of 4 runs reached their target; first: a.csv, at 12 epochs.'
        >>> TargetSummary(3, 0).headline()
        '0 of 3 runs reached their target.'
        >>> two = FirstToTarget("val_loss ≤ 3.28", "tokens", "b.txt", 7.2e8, "tokens", 4)
        >>> print(TargetSummary(9, 6, (one, two)).headline().replace("; ", ";\\n").replace(": f", ":\\nf"))
        6 of 9 runs reached their target. Not ranked together (different targets or units):
        first of the 2 runs to acc ≥ 0.92 counting steps: a.csv, at 12 epochs;
        first of the 4 runs to val_loss ≤ 3.28 counting tokens: b.txt, at 720,000,000 tokens.
        """
        text = f"{self.n_reached} of {self.n_runs} runs reached their target"
        if not self.firsts:
            return text + "."
        if self.first is not None:
            return f"{text}; first: {self.first.text()}."
        groups = "; ".join(f"first of the {f.n_reached} run{'s' if f.n_reached != 1 else ''} to {f.target} counting "
                           f"{f.counted}: {f.text()}" for f in self.firsts)
        return f"{text}. Not ranked together (different targets or units): {groups}."


def _counted(analysis: RunAnalysis) -> str:
    c = analysis.crossing
    return next((word for attribute, word in _COUNTED if getattr(c, attribute) is not None), "steps")


def _first(group: list[RunAnalysis], target: str, counted: str) -> FirstToTarget | None:
    for attribute, unit in _MEASURES[counted]:
        values = [getattr(a.crossing, attribute) for a in group]
        if all(v is not None and math.isfinite(float(v)) for v in values):
            best = min(range(len(group)), key=lambda i: values[i])
            return FirstToTarget(target, counted, group[best].log.source, float(values[best]), unit, len(group))
    return None


def summarize_targets(analyses: Sequence[RunAnalysis]) -> TargetSummary:
    """How many of ``analyses`` reached their target, and the first of each group of reached runs that share a
    target and a unit (module text).

    >>> from core.logs import read_log
    >>> from core.runs import analyse_run
    >>> def run(name, accs, head="epoch,step,loss,acc"):
    ...     rows = "".join(f"{e},1,{1 / e:.3f},{a}\\n" for e, a in enumerate(accs, 1))
    ...     return analyse_run(read_log((head + "\\n" + rows).encode(), name))
    >>> s = summarize_targets([run("slow.csv", [0.5, 0.8, 0.93]), run("fast.csv", [0.7, 0.95]),
    ...                        run("never.csv", [0.5, 0.6])])
    >>> (s.n_runs, s.n_reached, s.first.source, s.first.at, s.first.unit, s.first_value())
    (3, 2, 'fast.csv', 2.0, 'epochs', '2 epochs')
    """
    reached = [a for a in analyses if a.crossing.reached]
    groups: dict[tuple[str, str], list[RunAnalysis]] = {}
    for a in reached:
        groups.setdefault((target_words(a.crossing.target), _counted(a)), []).append(a)
    firsts = tuple(f for (target, counted), group in groups.items() if (f := _first(group, target, counted)))
    targets: dict[str, int] = {}
    for a in analyses:
        words = target_words(a.crossing.target)
        targets[words] = targets.get(words, 0) + 1
    return TargetSummary(len(analyses), len(reached), firsts, tuple(targets.items()))


def not_loaded_text(names: Sequence[str]) -> str | None:
    """The files that are not runs, named at the answer they are not counted in (None when every file loaded).

    >>> not_loaded_text(["single_row.csv", "zero_steps.csv"])
    '2 file(s) not loaded and not counted above: single_row.csv, zero_steps.csv. Why, under the uploader below.'
    >>> not_loaded_text([]) is None
    True
    """
    if not names:
        return None
    return (f"{len(names)} file(s) not loaded and not counted above: {', '.join(names)}. "
            "Why, under the uploader below.")


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
