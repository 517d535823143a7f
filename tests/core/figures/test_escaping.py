"""No chart renders markup from a file name: every figure builder escapes its text (issue 21, part 8)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import core.figures
from core.figures.logs import accuracy_figure, loss_curve_figure
from core.figures.plan import tta_vs_workers_figure
from core.figures.style import esc, escape_text
from core.logs.reader import read_log
from core.plan.grid import best_workers, plan_grid
from core.runs.analysis import analyse_run
from core.speed.optimus import paper_speed_model
from core.targets import accuracy_target
from tests.core.runs.test_runs import synthetic_log

LINK = '<a href="x">re-authenticate</a>.csv'


def _builders():
    for info in pkgutil.iter_modules(core.figures.__path__):
        module = importlib.import_module(f"core.figures.{info.name}")
        for name, fn in inspect.getmembers(module, inspect.isfunction):
            if name.endswith("_figure") and fn.__module__ == module.__name__ and name != "empty_figure":
                yield f"{module.__name__}.{name}", fn


def test_every_figure_builder_escapes_its_text():
    builders = dict(_builders())
    assert len(builders) >= 27                                  # every chart the pages and the CLI draw
    assert [name for name, fn in builders.items() if not getattr(fn, "escapes_text", False)] == []


def _runs():
    return [analyse_run(read_log(synthetic_log(), LINK)),
            analyse_run(read_log(synthetic_log(b=(4e-3, 0.5, 0.1)), "resnet56_NVIDIA A100-PCIE-40GB.csv"))]


def test_a_link_in_a_file_name_is_text_in_the_legend():
    for fig in (loss_curve_figure(_runs()), accuracy_figure(_runs(), target=accuracy_target(0.9))):
        spec = fig.to_json()
        assert "<a " not in spec and "</a>" not in spec
        texts = [t.name or "" for t in fig.data] + [fig.layout.title.text or ""]
        assert any(esc(LINK) in text for text in texts)


def test_titles_and_subtitles_are_escaped_and_bare_urls_stay_text():
    grid = plan_grid(paper_speed_model("sync"), 1000, workers=range(1, 9))
    fig = tta_vs_workers_figure(grid, best=best_workers(grid), subtitle=f"steps of {LINK}; see https://evil.example")
    assert fig.layout.title.text == "Time to target against workers"
    assert fig.layout.title.subtitle.text == ('steps of &lt;a href="x"&gt;re-authenticate&lt;/a&gt;.csv; '
                                              "see https://evil.example")
    assert "<a" not in fig.to_json()


def test_escaping_is_idempotent():
    fig = loss_curve_figure(_runs())
    names = [t.name for t in fig.data]
    assert [t.name for t in escape_text(fig).data] == names
    assert esc(LINK) in names and not any("&amp;" in (n or "") for n in names)


def test_category_values_and_tick_texts_are_escaped_numbers_left_alone():
    import plotly.graph_objects as go

    fig = go.Figure([go.Bar(x=[LINK, "resnet20.csv"], y=[1.5, 2.0]), go.Bar(y=["<b>conv1</b>", "fc"], x=[3, 4],
                                                                           orientation="h")])
    fig.update_xaxes(tickvals=[0, 1], ticktext=["<i>a</i>", "b"])
    fig = escape_text(fig)
    assert list(fig.data[0].x) == [esc(LINK), "resnet20.csv"] and list(fig.data[0].y) == [1.5, 2.0]
    assert list(fig.data[1].y) == ["&lt;b&gt;conv1&lt;/b&gt;", "fc"] and list(fig.data[1].x) == [3, 4]
    assert list(fig.layout.xaxis.ticktext) == ["&lt;i&gt;a&lt;/i&gt;", "b"]
    assert "<a " not in fig.to_json() and "<b>" not in fig.to_json()
