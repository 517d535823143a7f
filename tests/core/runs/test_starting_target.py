"""The target widget starts from the loaded runs (core.runs.starting_target) and shows the user's choice while
they log its metric (core.runs.widget_target); the page passes on only what the user chose (given_target)."""

from core.datasets import builtin_log_files
from core.logs import read_log, read_log_file
from core.runs import metric_direction, starting_target, target_metrics
from core.targets import Target


def _builtin(key):
    return [read_log_file(path, source=name) for name, path in builtin_log_files(key)]


def test_no_declared_target_gives_accuracy_092():
    plain = read_log(b"step,loss,acc\n1,2.0,0.5\n2,1.0,0.7\n", "a.csv")
    t = starting_target([plain])
    assert (t.metric, t.direction, t.value, t.origin) == ("acc", ">=", 0.92, "default")


def test_mlperf_llama_logs_declare_log_perplexity_33():
    t = starting_target(_builtin("mlperf_llama8b"))
    assert (t.metric, t.direction, t.value, t.origin) == ("eval_accuracy", "<=", 3.3, "log")


def test_speedrun_logs_declare_val_loss_328_and_the_majority_wins():
    speed = _builtin("speedrun")
    llama = _builtin("mlperf_llama8b")[:1]
    assert starting_target(speed) == Target("val_loss", "<=", 3.28)
    # 4 speedrun logs against 1 Llama log: the speedrun target; the other way round, the Llama one
    assert starting_target([*llama, *speed]) == Target("val_loss", "<=", 3.28)
    assert starting_target([*speed[:1], *_builtin("mlperf_llama8b")[:2]]) == Target("eval_accuracy", "<=", 3.3)
    # one each: the first loaded
    assert starting_target([*llama, *speed[:1]]) == Target("eval_accuracy", "<=", 3.3)


def test_metrics_and_directions_of_loaded_runs():
    logs = [read_log(b"step,loss,acc\n1,2.0,0.5\n", "a.csv"), *_builtin("speedrun")[:1]]
    assert target_metrics(logs) == ["acc", "loss", "val_loss"]
    llama = _builtin("mlperf_llama8b")[:1]
    # the Llama log says its eval_accuracy falls (a log-perplexity), whatever the name suggests
    assert metric_direction(llama, "eval_accuracy") == "<="
    assert metric_direction([], "eval_accuracy") == ">="
    assert metric_direction(logs, "val_loss") == "<="


def test_suggested_target_per_metric():
    from core.runs import suggested_target

    speed = _builtin("speedrun")
    assert suggested_target(speed, "val_loss") == Target("val_loss", "<=", 3.28)
    assert suggested_target(speed, "acc").spec == "acc>=0.92"
    # two runs whose lowest losses are 1.0 and 2.0: the median 1.5, a target one of them reaches
    logs = [read_log(b"step,loss,acc\n1,2.0,0.5\n2,1.0,0.7\n", "a.csv"),
            read_log(b"step,loss,acc\n1,3.0,0.5\n2,2.0,0.7\n", "b.csv")]
    t = suggested_target(logs, "loss")
    assert (t.metric, t.direction, t.value) == ("loss", "<=", 1.5)


def test_the_widget_shows_the_users_choice_while_the_runs_log_its_metric():
    from core.runs import widget_target

    speed = _builtin("speedrun")
    chosen = Target("val_loss", "<=", 3.5)
    assert widget_target(chosen, speed) is chosen
    assert widget_target(Target("acc", ">=", 0.8), speed).spec == "acc>=0.8"       # the accuracy is always offered
    # a metric none of them logs: the widget starts again from what they declare
    assert widget_target(Target("eval_accuracy", "<=", 3.3), speed) == Target("val_loss", "<=", 3.28)
    assert widget_target(None, speed).origin == "log"


def test_what_the_page_passes_on_is_the_users_target_and_target_for_decides_the_rest():
    from core.runs import given_target, starting_target
    from core.targets import target_for

    speed = _builtin("speedrun")
    shown = starting_target(speed)                      # declared by the logs: each run keeps its own
    assert given_target(shown) is None and target_for(speed[0], given_target(shown)) == Target("val_loss", "<=", 3.28)
    assert given_target(starting_target([])) is None     # acc>=0.92 by default: target_for gives it again
    lm = [read_log(b"step,loss\n1,2.0\n2,1.5\n", "a.csv"), read_log(b"step,loss\n1,3.0\n2,2.5\n", "b.csv")]
    suggested = starting_target(lm)                     # a loss half of them reach, for runs of a loss alone
    assert given_target(suggested) == Target("loss", "<=", 2.0) and target_for(lm[0], given_target(suggested)).spec \
        == "loss<=2"
    user = Target("acc", ">=", 0.8)
    assert given_target(user) is user
