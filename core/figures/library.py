"""Figure of the Library page: the accuracy curves of the runs chosen in the table, before loading them.

One trace per run, named by its label (``resnet20 · V100 · val``, or its name), the target's metric
(the accuracy by default) against the global step, thinned to at most ``MAX_DISPLAY_POINTS`` points; a
run without that metric draws its loss instead (its trace named ``<label> · loss``, on the second
axis).  The target is the last trace, ``target``.  No run chosen: a titled note.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from core.figures.style import TARGET_LINE, base_layout, color, empty_figure, escaped
from core.logs import RunLog
from core.runs import metric_column, thin_indices
from core.targets import Target, target_for

MAX_DISPLAY_POINTS = 600
TITLE = "Runs chosen in the library"
#: the y axis's title for a metric named otherwise in the log (the accuracy role)
Y_TITLES = {"acc": "accuracy"}


@escaped
def library_preview_figure(logs: Sequence[RunLog], *, target: Target | None = None) -> go.Figure:
    """The target's metric against global step of each run (default ``acc>=0.92``), and the target line.

    A run without the target's metric draws its loss instead (its trace named ``<label> · loss``, on a
    second axis); a run with neither is left out.

    Examples
    --------
    >>> from core.logs import read_log
    >>> log = read_log(b"step,loss,acc\\n1,2.0,0.5\\n2,1.0,0.8\\n3,0.5,0.95\\n", "resnet20_V100.csv")
    >>> fig = library_preview_figure([log])
    >>> [t.name for t in fig.data], fig.data[0].y.tolist(), list(fig.data[-1].y)
    (['resnet20 · V100', 'target'], [0.5, 0.8, 0.95], [0.92, 0.92])
    >>> [t.name for t in library_preview_figure([log], target=Target("val_loss", "<=", 0.6)).data]
    ['resnet20 · V100 · loss', 'target']
    >>> library_preview_figure([]).layout.annotations[0].text
    'Choose runs in the table to see their curves here.'
    """
    if not logs:
        return empty_figure(TITLE, "Choose runs in the table to see their curves here.")
    target = target_for(given=target)
    fig = go.Figure()
    drawn, any_loss = [], False
    for i, log in enumerate(logs):
        column = metric_column(log, target.metric)
        fallback = column is None
        column = "loss" if fallback else column
        if fallback and not log.has_loss:
            continue
        frame = log.frame[log.frame[column].notna()]
        keep = thin_indices(len(frame), MAX_DISPLAY_POINTS)
        fig.add_scatter(x=frame["global_step"].to_numpy()[keep], y=frame[column].to_numpy()[keep], mode="lines",
                        name=f"{log.label} · loss" if fallback else log.label, line=dict(color=color(i)),
                        yaxis="y2" if fallback else "y")
        drawn.append(log)
        any_loss |= fallback
    if not drawn:
        return empty_figure(TITLE, f"None of the chosen runs logs {target.metric}.")
    fig.add_scatter(x=[0, max(float(log.frame["global_step"].max()) for log in drawn)], y=[target.value] * 2,
                    mode="lines", name="target", line=TARGET_LINE)
    base_layout(fig, title=TITLE, x_title="global step", y_title=Y_TITLES.get(target.metric, target.metric))
    if any_loss:
        fig.update_layout(yaxis2=dict(title="loss", overlaying="y", side="right", showgrid=False))
    return fig
