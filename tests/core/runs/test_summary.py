"""The Logs page's headline (issue 36, item 10): runs are ranked only against runs of the same target and the
same unit; runs of different targets or units are named apart, never ranked against each other."""

from __future__ import annotations

from functools import lru_cache

import pytest

from core.datasets import builtin_log_files
from core.logs import read_log
from core.runs import analyse_run, summarize_targets


@lru_cache(maxsize=None)
def _runs(key: str) -> tuple:
    """The built-in set ``key``, each run against the target it declares (else acc >= 0.92), as the page loads
    it when no target is chosen."""
    return tuple(analyse_run(read_log(path.read_bytes(), name)) for name, path in builtin_log_files(key))


def _csv_run(name: str, accs: list[float]):
    """One row per epoch, 10 steps each (a global batch in the name, "resnet20_V100-100.csv", counts samples)."""
    rows = "".join(f"{e},{10 * e},{1 / e:.3f},{a}\n" for e, a in enumerate(accs, 1))
    return analyse_run(read_log(("epoch,step,loss,acc\n" + rows).encode(), name))


def test_runs_of_one_target_and_unit_are_ranked_by_the_finest_shared_measure():
    s = summarize_targets(_runs("mnist1d"))
    reached = [a for a in _runs("mnist1d") if a.crossing.reached]
    assert s.n_runs == 12 and s.n_reached == len(reached) == 10
    assert len(s.firsts) == 1 and s.first.unit == "s" and s.first.counted == "steps"
    assert s.first.at == min(a.crossing.time_s for a in reached)     # 24.465 s: resnet14's train log
    assert s.first_value() == f"{s.first.at:,.0f} s" == "24 s"
    assert s.targets_text() == "Target: acc ≥ 0.92."
    assert s.headline() == f"10 of 12 runs reached their target; first: {s.first.source}, at 24 s."


def test_runs_counted_in_tokens_and_in_steps_are_never_ranked_together():
    runs = _runs("mnist1d") + _runs("speedrun")
    s = summarize_targets(runs)
    assert s.first is None and s.at is None and s.first_value() == "not ranked"
    by_counted = {f.counted: f for f in s.firsts}
    assert set(by_counted) == {"steps", "tokens"}
    tokens = [a.crossing.tokens for a in _runs("speedrun") if a.crossing.reached]
    assert by_counted["tokens"].at == min(tokens) and by_counted["tokens"].unit == "tokens"
    assert by_counted["tokens"].n_reached == len(tokens)
    assert "Not ranked together (different targets or units)" in s.headline()
    # the caption names each target with its runs, not only the one chosen
    text = s.targets_text()
    assert text.startswith("Targets differ: acc ≥ 0.92 (12 runs), val_loss ≤ 3.28 (")
    assert sum(n for _, n in s.targets) == len(runs)


def test_same_target_different_units_are_not_ranked():
    """Samples (the log's batch is known) and steps (it does not) of one accuracy target: two groups, two firsts."""
    s = summarize_targets([_csv_run("resnet20_V100-100.csv", [0.5, 0.95]),
                           _csv_run("b_steps.csv", [0.95, 0.96]), _csv_run("c_steps.csv", [0.5, 0.6, 0.97])])
    assert [(f.source, f.counted, f.unit, f.at) for f in s.firsts] == [
        ("resnet20_V100-100.csv", "samples", "samples", 2000.0), ("b_steps.csv", "steps", "epochs", 1.0)]
    assert s.first_value() == "not ranked" and s.targets_text() == "Target: acc ≥ 0.92."


def test_no_run_reached_reads_a_dash():
    s = summarize_targets([_csv_run("never.csv", [0.5, 0.6])])
    assert (s.n_reached, s.firsts, s.first_value(), s.reached_value()) == (0, (), "–", "0 of 1")
    assert s.headline() == "0 of 1 runs reached their target."


@pytest.mark.parametrize("at, text", [(24.465, "24 s"), (2_049_920.0, "2,049,920 s"), (0.5234, "0.52 s")])
def test_first_amount_is_written_whole(at, text):
    from core.runs.summary import FirstToTarget

    assert FirstToTarget("acc ≥ 0.92", "steps", "a.csv", at, "s", 1).amount() == text
