"""The Library page's preview figure draws the target's metric, whatever the target (issue 34: no accuracy route)."""

from __future__ import annotations

from dataclasses import replace

from core.figures.library import library_preview_figure
from core.logs import read_log
from core.targets import Target, accuracy_target

ACC = read_log(b"step,loss,acc\n1,2.0,0.5\n2,1.0,0.8\n3,0.5,0.95\n", "resnet20_V100.csv")
_LM = read_log(b"step,loss\n1,4.0\n2,3.5\n4,3.0\n", "gpt_H100.csv")
# a log with a val_loss metric besides its loss, as the readers of MLLOG and speedrun logs name theirs
VAL = replace(_LM, frame=_LM.frame.assign(val_loss=[4.5, 3.9, 3.2]), metrics={"loss": "loss", "val_loss": "val_loss"})


def test_an_accuracy_target_draws_the_accuracy_and_a_run_without_it_its_loss_on_the_second_axis():
    fig = library_preview_figure([ACC, VAL], target=accuracy_target(0.9))
    assert [t.name for t in fig.data] == ["resnet20 · V100", "gpt · H100 · loss", "target"]
    assert fig.data[0].y.tolist() == [0.5, 0.8, 0.95] and fig.data[0].yaxis == "y"
    assert fig.data[1].y.tolist() == [4.0, 3.5, 3.0] and fig.data[1].yaxis == "y2"
    assert list(fig.data[2].x) == [0, 4.0] and list(fig.data[2].y) == [0.9, 0.9]
    assert fig.layout.yaxis.title.text == "accuracy" and fig.layout.yaxis2.title.text == "loss"


def test_a_loss_target_draws_that_metric_and_its_line_the_same_way():
    fig = library_preview_figure([VAL, ACC], target=Target("val_loss", "<=", 3.28))
    assert [t.name for t in fig.data] == ["gpt · H100", "resnet20 · V100 · loss", "target"]
    assert fig.data[0].y.tolist() == [4.5, 3.9, 3.2] and list(fig.data[2].y) == [3.28, 3.28]
    assert fig.layout.yaxis.title.text == "val_loss"


def test_no_target_is_the_default_and_runs_with_nothing_to_draw_say_so():
    assert list(library_preview_figure([ACC]).data[-1].y) == [0.92, 0.92]
    bare = read_log(b"progress,iteration,metric\n1,1,0.5\n2,2,0.6\n", "t/validation-8.csv")   # no val_loss, no loss
    fig = library_preview_figure([bare], target=Target("val_loss", "<=", 3.28))
    assert fig.layout.annotations[0].text == "None of the chosen runs logs val_loss."
