"""A target is a metric, a direction and a value: parsing, both directions on hand values, the percent rule,
and a metric and its negation (direction flipped) giving the same crossing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import InputError
from core.logs.reader import read_log
from core.runs import find_target_crossing
from core.targets import (
    DEFAULT_TARGET,
    Target,
    accuracy_in_percent,
    accuracy_target,
    direction_of,
    parse_target,
    require_accuracy,
    target_for,
)


@pytest.mark.parametrize(("spec", "expected"), [
    ("acc>=0.92", ("acc", ">=", 0.92)),
    ("val_loss<=3.28", ("val_loss", "<=", 3.28)),
    ("eval_accuracy<=3.3", ("eval_accuracy", "<=", 3.3)),     # MLPerf LLM: log-perplexity named "accuracy"
    (" eval_loss <= 0.925 ", ("eval_loss", "<=", 0.925)),
    ("bleu=>25", ("bleu", ">=", 25.0)),
])
def test_parse_reads_metric_direction_and_value(spec, expected):
    t = parse_target(spec)
    assert (t.metric, t.direction, t.value) == expected


@pytest.mark.parametrize(("spec", "message"), [
    ("acc>0.92", "expected METRIC>=VALUE or METRIC<=VALUE"),      # a bare > is refused: say >= or <=
    ("loss=3", "expected METRIC>=VALUE or METRIC<=VALUE"),
    ("val_loss>=3.28", "is a loss, which falls"),                  # a loss that climbs is a typo
    ("acc>=92", "Did you mean 0.92"),                              # an accuracy is a fraction
    ("val_loss<=abc", "expected a number after <="),
    ("<=3", "expected METRIC>=VALUE"),
    ("loss<=nan", "finite"),
])
def test_parse_refuses_with_words(spec, message):
    with pytest.raises(InputError, match=message):
        parse_target(spec)


def test_direction_both_ways_on_hand_values():
    values = [5.6, 4.1, 3.31, 3.3, 3.2]
    assert Target("eval_accuracy", "<=", 3.3).first_met(values) == 3     # 3.3 <= 3.3
    assert Target("acc", ">=", 0.5).first_met([0.1, 0.49, 0.5, 0.7]) == 2
    assert Target("acc", ">=", 0.9).first_met([0.1, 0.49]) is None
    # the same numbers read the other way round meet at another place, never silently the same one
    assert Target("x", ">=", 3.3).first_met(values) == 0


def test_target_for_prefers_the_user_then_the_log_then_the_default():
    class Declaring:
        target = Target("val_loss", "<=", 3.28, "log")

    class Silent:
        target = None

    assert target_for(Declaring(), accuracy_target(0.8)) == accuracy_target(0.8)
    assert target_for(Declaring()) is Declaring.target
    assert target_for(Silent()) == DEFAULT_TARGET and target_for(Silent()).origin == "default"
    assert target_for(None) == DEFAULT_TARGET
    with pytest.raises(InputError, match="expected a Target"):
        target_for(Silent(), 0.8)                       # a bare float never stands for a target


def test_require_accuracy_names_the_step_that_refuses():
    assert require_accuracy(accuracy_target(0.75), "batch scaling") == 0.75
    with pytest.raises(InputError, match="batch scaling works on an accuracy"):
        require_accuracy(Target("val_loss", "<=", 3.28), "batch scaling")


def test_the_percent_rule_only_rescales_climbing_accuracies_in_percent():
    assert accuracy_in_percent([10.0, 75.9])
    assert not accuracy_in_percent([0.1, 0.759])
    # a log-perplexity 5.6 -> 3.3 falls: never a percentage, whatever its values
    assert not accuracy_in_percent([5.6, 3.3], direction="<=")
    assert not accuracy_in_percent([0.93, 0.925], direction="<=")


def test_names_imply_directions():
    assert direction_of("val_loss") == "<=" and direction_of("perplexity") == "<="
    assert direction_of("top1") == ">=" and direction_of("eval_accuracy") == ">="
    assert direction_of("throughput") is None


def test_a_loss_target_on_a_log_is_met_where_the_loss_falls_to_it():
    log = read_log(b"step,loss\n1,5.6\n2,4.0\n3,3.35\n4,3.28\n5,3.1\n", "llm.csv")
    c = find_target_crossing(log, parse_target("loss<=3.28"))
    assert (c.reached, c.step, c.value) == (True, 4.0, 3.28)
    assert not find_target_crossing(log, parse_target("loss<=3.0")).reached
    # the same log has no accuracy: an accuracy target says so instead of reading the loss as one
    c = find_target_crossing(log, accuracy_target(0.92))
    assert not c.reached and c.note == "no accuracy column"


def test_an_accuracy_only_path_refuses_a_loss_target_with_words():
    log = read_log(b"step,loss\n1,5.6\n2,4.0\n", "llm.csv")
    c = find_target_crossing(log, parse_target("loss<=3.28"))
    with pytest.raises(InputError, match="the course's epoch model works on an accuracy"):
        require_accuracy(c.target, "the course's epoch model")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=40),
       st.floats(-1e6, 1e6, allow_nan=False), st.sampled_from([">=", "<="]))
def test_a_metric_and_its_negation_with_the_direction_flipped_give_the_same_crossing(values, value, direction):
    target = Target("m", direction, value)
    flipped = target.flipped()
    assert flipped.direction != direction and flipped.value == -value
    assert target.first_met(values) == flipped.first_met(-np.asarray(values))
    np.testing.assert_array_equal(target.met(values), flipped.met(-np.asarray(values)))
