"""Figure of the Library page: the accuracy curves of the runs chosen in the table, before loading them.

One trace per run, named by its label (``resnet20 · V100 · val``, or its name), accuracy
against the global step, thinned to at most ``MAX_DISPLAY_POINTS`` points; a run without an
accuracy column draws its loss instead (its trace named ``<label> · loss``, on the second
axis).  The target is the last trace, ``target``.  No run chosen: a titled note.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from core.figures.style import TARGET_LINE, base_layout, color, empty_figure, escaped
from core.logs import RunLog
from core.runs import metric_column, thin_indices
from core.targets import Target

MAX_DISPLAY_POINTS = 600
TITLE = "Runs chosen in the library"


@escaped
def library_preview_figure(logs: Sequence[RunLog], *, target_acc: float | None = None,
                           target: Target | None = None) -> go.Figure:
    """Accuracy (or loss) against global step of each run, and the target line.

    With a ``target`` on another metric than the accuracy (``val_loss<=3.28``), that metric of each run
    that logs it, and its target line.

    Examples
    --------
    >>> from core.logs import read_log
    >>> log = read_log(b"step,loss,acc\\n1,2.0,0.5\\n2,1.0,0.8\\n3,0.5,0.95\\n", "resnet20_V100.csv")
    >>> fig = library_preview_figure([log], target_acc=0.92)
    >>> [t.name for t in fig.data], fig.data[0].y.tolist()
    (['resnet20 · V100', 'target'], [0.5, 0.8, 0.95])
    >>> library_preview_figure([], target_acc=0.92).layout.annotations[0].text
    'Choose runs in the table to see their curves here.'
    """
    if not logs:
        return empty_figure(TITLE, "Choose runs in the table to see their curves here.")
    if target is not None and not target.is_accuracy:
        return _metric_preview(logs, target)
    if target is not None:
        target_acc = target.value
    fig = go.Figure()
    any_loss = False
    for i, log in enumerate(logs):
        column = "acc" if log.has_acc else "loss"
        frame = log.frame[log.frame[column].notna()]
        keep = thin_indices(len(frame), MAX_DISPLAY_POINTS)
        x = frame["global_step"].to_numpy()[keep]
        y = frame[column].to_numpy()[keep]
        name = log.label if column == "acc" else f"{log.label} · loss"
        any_loss |= column == "loss"
        fig.add_scatter(x=x, y=y, mode="lines", name=name, line=dict(color=color(i)),
                        yaxis="y" if column == "acc" else "y2")
    fig.add_scatter(x=[0, max(float(log.frame["global_step"].max()) for log in logs)], y=[target_acc] * 2,
                    mode="lines", name="target", line=TARGET_LINE)
    base_layout(fig, title=TITLE, x_title="global step", y_title="accuracy")
    if any_loss:
        fig.update_layout(yaxis2=dict(title="loss", overlaying="y", side="right", showgrid=False))
    return fig


def _metric_preview(logs: Sequence[RunLog], target: Target) -> go.Figure:
    """The target's metric against global step of each run that logs it, and the target line."""
    fig = go.Figure()
    drawn = []
    for i, log in enumerate(logs):
        column = metric_column(log, target.metric)
        if column is None:
            continue
        frame = log.frame[log.frame[column].notna()]
        keep = thin_indices(len(frame), MAX_DISPLAY_POINTS)
        fig.add_scatter(x=frame["global_step"].to_numpy()[keep], y=frame[column].to_numpy()[keep], mode="lines",
                        name=log.label, line=dict(color=color(i)))
        drawn.append(log)
    if not drawn:
        return empty_figure(TITLE, f"None of the chosen runs logs {target.metric}.")
    fig.add_scatter(x=[0, max(float(log.frame["global_step"].max()) for log in drawn)], y=[target.value] * 2,
                    mode="lines", name="target", line=TARGET_LINE)
    return base_layout(fig, title=TITLE, x_title="global step", y_title=target.metric)
