"""The built-in example data shipped in data/."""

from __future__ import annotations

from core.datasets import builtin_speed_tables
from core.plan.speed import fit_speed_model
from core.plan.speed_table import read_speed_table


def test_builtin_speed_tables_are_the_six_pollux_traces_and_fit_as_allreduce():
    tables = builtin_speed_tables()
    assert [name for name, _ in tables] == [f"{job}/scalability.csv" for job in
                                            ("bert", "cifar10", "deepspeech2", "imagenet", "ncf", "yolov3")]
    name, path = tables[1]
    model = fit_speed_model(read_speed_table(path, source=name), mode="allreduce", source=name)
    # docs/plan.md: cifar10, 329 points, MAPE 12.53 %
    assert model.n_points == 329 and round(model.mape_pct, 2) == 12.53
