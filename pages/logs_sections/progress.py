"""The Logs page's prediction for a target on any metric (a loss that falls, an accuracy in samples):
the forecast through the planned learning-rate schedule where one is known and its rate changes, else the
prior, extrapolation and posterior of the samples (tokens, steps) to target: ``core.prediction.forecast_run`` on
the progress route that ``core.prediction.route_for_runs`` picked for the page's runs (it picks between the
schedule and the power law).
"""

from __future__ import annotations

import math

import streamlit as st

from core.figures.progress import progress_forecast_figure
from core.figures.schedule import schedule_forecast_figure
from core.logs import RunLog
from core.prediction import PROGRESS, LossForecast, forecast_run, forecast_showcase, progress_to_target
from core.runs import amount_text, metric_column
from core.targets import Target, target_for
from pages.shared.bounded import bounded_resource
from pages.shared.common import SHARED, LoadedRuns, chart, guarded, plain, target_text

#: fractions of a run's evaluations a user may predict from
FRACTIONS = (0.1, 0.25, 0.5, 0.75)


@bounded_resource(**SHARED)
def _progress(log: RunLog, others: tuple[RunLog, ...], target: Target | None, observe: float) -> LossForecast:
    return forecast_run(log, others, target, observe=observe, route=PROGRESS).progress


def _whole_log_metric(col, log: RunLog, target, unit: str) -> None:
    """What the whole log shows beside a forecast from its first part: its first evaluation at target."""
    whole = _whole_log(log, target)
    col.metric(f"What the whole log shows, {unit}", "never reached" if whole is None else f"{whole:,.0f}",
               help="The first evaluation at target in the whole log (each epoch's, in a per-step log), for "
                    "comparison with the forecast from its first part.")


@bounded_resource(**SHARED)
def _whole_log(log: RunLog, target: Target) -> float | None:
    return progress_to_target(log, target)


@bounded_resource(**SHARED)
def _showcase(logs: tuple[RunLog, ...], target: Target | None, metric: str) -> str | None:
    log = forecast_showcase(logs, target, metric)
    return log.source if log is not None else None


def _amount(value) -> str:
    return "—" if value is None or value != value else amount_text(value)


def _interval(value, low, high) -> str | None:
    """The 80 % interval, written under its metric (an amount of tokens and its interval overflow one column)."""
    if value is None or value != value:
        return None
    hi = "never" if high is None or high == float("inf") else amount_text(high)
    lo = amount_text(low) if low is not None and low == low else "?"
    return f"80 % interval: {lo} – {hi}"


@st.fragment
@guarded("Logs: progress prediction")
def progress_section(runs: LoadedRuns, *, target: Target | None, metric: str, preferred: str | None) -> None:
    """Prior / extrapolation / posterior of the progress to target of one run, from its first evaluations."""
    st.subheader("Predict the progress to target from the first evaluations")
    by_name = {a.log.source: a for a in runs.analyses
               if metric_column(a.log, target_for(a.log, target).metric) is not None}
    if not by_name:
        st.info("No loaded run logs the target's metric.")
        return
    names = list(by_name)
    c1, c2 = st.columns([3, 1])
    default = preferred if preferred in names else _showcase(tuple(a.log for a in by_name.values()), target, metric)
    run = c1.selectbox("Run", names, index=names.index(default) if default in names else 0,
                       key="logs_progress_run")
    observe = c2.selectbox("Seen", FRACTIONS, index=FRACTIONS.index(0.25), key="logs_progress_observe",
                           format_func=lambda f: f"first {f:.0%} of the run")
    log = by_name[run].log
    others = tuple(a.log for a in runs.analyses if a.log.source != run)
    with st.spinner("Forecasting (the first time: fitting the other runs and a leave-one-run-out on them)…"):
        answer = _progress(log, others, target, float(observe))
    if answer.schedule is not None:
        _through_schedule(log, answer)
        return
    f = answer.progress
    unit = f.unit
    m1, m2, m3, m4 = st.columns(4)
    for col, est, label in ((m1, f.prior, "Prior (other runs)"), (m2, f.extrapolation, "Extrapolation"),
                            (m3, f.posterior, "Posterior (both)")):
        col.metric(f"{label}, {unit}", _amount(est.value), help=plain(est.description) or None)
        interval = _interval(est.value, est.low, est.high)
        if interval:
            col.caption(interval)
    _whole_log_metric(m4, log, f.target, unit)
    st.caption(plain(f"Target {target_text(f.target)}. {f.n_observed} evaluations seen "
                     f"({amount_text(f.observed_progress)} {unit}); method: {f.method}"
                     + (f"; prior weight {f.prior_weight:.2f}" if f.prior_weight is not None else "")
                     + (f"; {f.time_text}" if f.time_text else "")
                     + ". Intervals are 80 %; the rest of the log is drawn for comparison."))
    for flag in f.flags:
        st.caption(":material/info: " + plain(flag))
    _prior_left_out(f)
    chart(progress_forecast_figure, log, f, key="logs_progress_chart", file_stem="progress_to_target")


def _prior_left_out(f) -> None:
    """Every other run the prior did not pool, each with its reason (core.prediction: ``ProgressEstimate.left_out``)."""
    if f.prior.left_out:
        st.caption(":material/info: " + plain("Prior: left out: " + "; ".join(
            f"{src} ({why})" for src, why in f.prior.left_out)))


def _through_schedule(log: RunLog, answer: LossForecast) -> None:
    """The forecast through the planned schedule: the loss at the plan's end and the progress to target first, then
    the curve with its band over the learning rate, which parameters came from where, and the runs left out."""
    s, f = answer.schedule, answer.progress
    m1, m2, m3 = st.columns(3)
    m1.metric(f"{s.target.metric} at the schedule's end", f"{s.metric_at_end:.4g}",
              help="The forecast of the target's metric at the plan's last step, through the planned learning rates.")
    m1.caption(f"step {s.schedule.total_steps:,.0f} · 80 % band: {s.metric_at_end_low:.4g} – "
               f"{s.metric_at_end_high:.4g}")                # under the metric: in its label it was cut
    within = f.posterior.value is not None and math.isfinite(f.posterior.value)   # the answer predict prints
    if not within:
        m2.metric(f"Progress to {target_text(s.target)}, {s.unit}", "not reached",
                  help="The forecast does not reach the target by the plan's last step; a forecast past it is "
                       "never made (plan a longer schedule or a cool-down: Plan page, Schedule).")
        m2.caption("not within the plan: a forecast past its last step is never made")
    else:
        m2.metric(f"Progress to {target_text(s.target)}, {s.unit}", _amount(f.posterior.value),
                  help=plain(f.posterior.description) or None)
        interval = _interval(f.posterior.value, f.posterior.low, f.posterior.high)
        if interval:
            m2.caption(interval + (f" · step {s.run.step_at(f.posterior.value):,.0f}" if s.unit != "steps" else ""))
    _whole_log_metric(m3, log, s.target, s.unit)
    st.caption(plain(f"Route: {answer.route} ({answer.why}). Seen to step {s.observed_step:,.0f} "
                     f"({s.n_observed} evaluations); plan: {s.schedule.describe()}."
                     + (f" {f.time_text.capitalize()}." if f.time_text else "")
                     + " Bands are 80 %."))
    chart(schedule_forecast_figure, s, log, key="logs_schedule_chart", file_stem="loss_through_schedule",
          inputs=(log.fingerprint(), s.observed_step, s.target.spec, s.schedule.key()))
    st.caption(plain("Parameters: " + s.sources_text() + "."))
    for flag in s.flags:
        st.caption(":material/info: " + plain(flag))
    if s.left_out:
        st.caption(":material/info: " + plain("Left out of the other runs: " + "; ".join(
            f"{src} ({why})" for src, why in s.left_out)))
    _prior_left_out(f)
