"""The target widget shared by the pages: a metric, its direction and a value (``val_loss ≤ 3.28``).

Part of ``pages/shared`` (re-exported by ``pages.shared.common``).  One ``Target`` lives in the
session under ``TARGET``: None until the user picks one; until then the widget starts from the loaded
runs (``core.runs.widget_target``, ``core.runs.starting_target``: the target they declare, else
``acc ≥ 0.92``), and what a page passes on is ``core.runs.given_target`` of it.  Each page draws
its own widgets (widget state is page-scoped); they start from the shared target and write every
change back, so a change on one page holds on all.
"""

from __future__ import annotations

import streamlit as st

from core.errors import InputError
from core.logs import RunLog
from core.runs import metric_direction, slider_range, suggested_target, target_metrics, widget_target
from core.targets import Target
from pages.shared.state import TARGET, init_state


def target_text(target: Target) -> str:
    """``val_loss ≤ 3.28``: a target as the pages write it."""
    return f"{target.metric} {'≥' if target.climbs else '≤'} {target.value:g}"


def offered_metrics(logs) -> list[str]:
    """The metrics the widget offers: the accuracy always (the default target, and the course table's),
    then those the loaded runs log."""
    return list(dict.fromkeys(["acc", *target_metrics(logs)]))


def target_input(logs: list[RunLog] | tuple[RunLog, ...], *, key: str) -> Target:
    """The target widget: the metric (among those the loaded runs log), its direction, the value.

    The accuracy keeps its slider (``key``); another metric gets a number field
    (``{key}_{metric}``).  Returns the target in use.
    """
    logs = list(logs)
    init_state()
    target = widget_target(st.session_state.get(TARGET), logs)
    metrics = offered_metrics(logs)
    if target.metric not in metrics:
        metrics.insert(0, target.metric)
    metric_key = f"{key}_metric"
    if st.session_state.get(metric_key) not in metrics or st.session_state[metric_key] != target.metric:
        st.session_state[metric_key] = target.metric

    # the callback keeps small targets, never the logs (a widget's callback outlives its session's state)
    suggestions = {m: t for m in metrics if m != target.metric and (t := _suggestion(logs, m)) is not None}

    def _metric_changed() -> None:
        chosen = suggestions.get(st.session_state[metric_key])
        if chosen is not None:
            st.session_state[TARGET] = chosen.with_origin("user")

    c1, c2 = st.columns([1, 2])
    c1.selectbox("Target metric", metrics, key=metric_key, on_change=_metric_changed,
                 help="The metric the run must reach; the default is the target the loaded runs declare "
                      "(MLPerf, speedrun logs), else acc ≥ 0.92.")
    direction = metric_direction(logs, target.metric) if target.metric != "acc" else ">="
    sign = "≥" if direction == ">=" else "≤"
    label = f"Target: {target.metric} {sign}"
    bounds = slider_range(target)
    if bounds is not None:
        def _sync() -> None:
            st.session_state[TARGET] = Target(target.metric, target.direction, float(st.session_state[key]))

        st.session_state[key] = min(max(target.value, bounds[0]), bounds[1])
        value = c2.slider(label, min_value=bounds[0], max_value=bounds[1], step=0.01, key=key, on_change=_sync,
                          format="%.2f", help="The run counts as converged when its accuracy reaches this.")
        return Target(target.metric, target.direction, float(value), target.origin)
    value_key = f"{key}_{target.metric}"

    def _sync_value() -> None:
        st.session_state[TARGET] = Target(target.metric, direction, float(st.session_state[value_key]))

    st.session_state[value_key] = float(target.value)
    value = c2.number_input(label, key=value_key, on_change=_sync_value, format="%.4g",
                            help=f"The run counts as converged when {target.metric} is {sign} this"
                                 + (" (the value the loaded runs declare)." if target.origin == "log" else "."))
    return Target(target.metric, direction, float(value), target.origin)


def _suggestion(logs: list[RunLog], metric: str) -> Target | None:
    try:
        return suggested_target(logs, metric)
    except InputError:                      # no run logs a value of it
        return None
