"""Logs page, its Prediction tab: the route ``core.prediction.route_for_runs`` picks for the page's target; on
the epoch route, the epoch at target predicted from a run's first epochs (prior, extrapolation, posterior:
``core.prediction.forecast_run``), how the prediction converges, and every family's backtest; on the progress
route, ``pages.logs_sections.progress``.

A section of ``pages/logs.py``, imported only when the tab is open: it is the one part of the page
that needs ``core.prediction``'s priors and backtests (scipy.stats, scikit-learn through
``core.calibrate``), so a first visit, which shows the answer and the fitted runs, does not import them.
"""

from __future__ import annotations

import streamlit as st

from core.curves import auto_families
from core.figures.prediction import prediction_band_figure, prediction_convergence_figure
from core.logs import RunLog
from core.prediction import (
    EPOCHS,
    MIN_PREDICTION_EPOCHS,
    ROUTES,
    Forecast,
    Prior,
    convergence_of_prediction,
    family_scores,
    forecast_run,
    known_schedule,
    n_epochs,
    prior_for_run,
    route_for,
    route_for_runs,
    showcase_log,
)
from core.runs import given_target
from core.targets import Target
from pages.logs_sections.progress import progress_section
from pages.shared.bounded import bounded_data, bounded_resource
from pages.shared.common import (
    CACHE,
    FAMILY,
    ROUTE,
    SHARED,
    LoadedRuns,
    chart,
    datasets_by_file,
    guarded,
    plain,
    shared_fits,
)

__all__ = ["forecast_section", "prediction_section"]

FAMILY_LABELS = {"auto": "auto (backtest choice per run)", **{f: f for f in auto_families()}}
ROUTE_LABELS = {"accuracy": "accuracy curve", "loss": "via loss threshold"}
SCHEDULE_LABELS = {"auto": "find it (lr column, else jumps in the curve)", "none": "constant (no schedule)",
                   "declared": "declared below"}


# ---------------------------------------------------------------- cached core calls
@bounded_resource(**SHARED)
def _prior(log: RunLog, others: tuple[RunLog, ...], target: Target,
           datasets: tuple[tuple[str, str], ...] = ()) -> Prior:
    return prior_for_run(log, others, target=target, datasets_by_file=dict(datasets))


def _datasets() -> tuple[tuple[str, str], ...]:
    """What the runs in play trained on (a hashable argument of the cached prior)."""
    return tuple(sorted(datasets_by_file().items()))


@bounded_data(**CACHE)
def _forecast(log: RunLog, others: tuple[RunLog, ...], n: int, target: Target, family: str, route: str,
              schedule: str | None) -> Forecast:
    return forecast_run(log, others, target, observe=n, family=family, curve_route=route, schedule=schedule,
                        prior=_prior(log, others, target, _datasets()), fit_cache=shared_fits()).epochs


@bounded_data(**CACHE)
def _convergence(log: RunLog, others: tuple[RunLog, ...], target: Target, family: str, route: str,
                 schedule: str | None):
    return convergence_of_prediction(log, target=target, family=family, route=route,
                                     prior=_prior(log, others, target, _datasets()), schedule=schedule,
                                    cache=shared_fits())


@bounded_data(**CACHE)
def _family_scores(logs: tuple[RunLog, ...], target: Target, route: str):
    return family_scores(list(logs), fractions=(0.5,), target=target, route=route, cache=shared_fits())


# ---------------------------------------------------------------- sections
def _set_shared(shared_key: str, widget_key: str) -> None:
    st.session_state[shared_key] = st.session_state[widget_key]


def forecast_section(runs: LoadedRuns, *, target: Target, preferred: str | None) -> None:
    """The forecast of a loaded run to the page's ``target`` by the route core picks for them
    (``core.prediction.route_for_runs``): the epoch route's section, else the progress route's."""
    if route_for_runs([a.log for a in runs.analyses], target) == EPOCHS:
        prediction_section(runs, target=target, preferred=preferred)
    else:
        progress_section(runs, target=given_target(target), metric=target.metric, preferred=preferred)


@st.fragment
@guarded("Logs: prediction")
def prediction_section(runs: LoadedRuns, *, target: Target, preferred: str | None) -> None:
    """Family choice, "predict from the first N epochs", and how the prediction converges."""
    st.subheader("Predict the epoch at target from the first epochs")
    by_name = {a.log.source: a for a in runs.analyses if route_for(a.log, target)[0] == EPOCHS}
    if not by_name:
        st.info(f"No loaded run has an accuracy column and at least {MIN_PREDICTION_EPOCHS} epochs.")
        return
    logs = tuple(a.log for a in by_name.values())
    names = list(by_name)
    c1, c2, c3 = st.columns([2, 1, 2])
    default = preferred if preferred in names else showcase_log(logs, target).source
    run = c1.selectbox("Run", names, index=names.index(default), key="logs_pred_run")
    log = by_name[run].log
    routes = [r for r in ROUTES if r == "accuracy" or log.has_loss]
    shared_route = st.session_state[ROUTE]
    route = c2.radio("Route", routes, key="logs_pred_route", horizontal=True, format_func=ROUTE_LABELS.get,
                     index=routes.index(shared_route) if shared_route in routes else 0,
                     on_change=_set_shared, args=(ROUTE, "logs_pred_route"))
    options = list(FAMILY_LABELS)
    shared_family = st.session_state[FAMILY]
    family = c3.selectbox("Curve family", options, key="logs_pred_family", format_func=FAMILY_LABELS.get,
                          index=options.index(shared_family) if shared_family in options else 0,
                          on_change=_set_shared, args=(FAMILY, "logs_pred_family"),
                          help="'auto' picks, per run, the family with the smallest error in a backtest inside "
                               "the observed epochs. The backtest of every family over the loaded runs is below.")
    schedule = schedule_choice(run, log)
    total = n_epochs(log)
    n = st.slider("Predict from the first N epochs", min_value=1, max_value=total - 1, value=max(1, total // 2),
                  key=f"logs_pred_n_{run}")
    forecast = _forecast(log, logs, int(n), target, family, route, schedule)
    crossing = by_name[run].crossing
    three_answers(forecast, crossing)
    chart(prediction_band_figure, log, forecast.prediction, actual_epoch=crossing.epoch if crossing.reached else None,
          prior=forecast.prior, posterior=forecast.posterior, schedule=forecast.schedule,
          key="logs_pred_chart", file_stem="prediction_from_first_epochs")
    chart(prediction_convergence_figure, _convergence(log, logs, target, family, route, schedule),
          key="logs_pred_convergence_chart", file_stem="prediction_convergence")
    family_scores_section(logs, target=target, route=route)


def schedule_choice(run: str, log: RunLog) -> str | None:
    """The learning-rate schedule of the run: "auto", None (constant) or the declared text."""
    known = known_schedule(log)
    c1, c2 = st.columns([2, 2])
    options = list(SCHEDULE_LABELS)
    how = c1.selectbox("Learning-rate schedule", options, key=f"logs_pred_schedule_{run}",
                       index=options.index("declared" if known is not None else "auto"),
                       format_func=SCHEDULE_LABELS.get,
                       help="A smooth curve cannot see a learning-rate drop coming: the fit uses the epochs after "
                            "the last drop only, and a target beyond the next drop is not extrapolated.")
    if how == "declared":
        text = c2.text_input("Schedule", value=known.spec() if known is not None else "step:30,60",
                             key=f"logs_pred_schedule_spec_{run}",
                             help="step:30,60 (drops after epochs 30 and 60) · cosine:100 · poly:90 or poly:90:2 · "
                                  "exp:100 · none. The Pollux jobs' schedules are filled in.")
        return text or None
    return None if how == "none" else "auto"


def three_answers(forecast: Forecast, crossing) -> None:
    """Prior, extrapolation and posterior side by side, and where each comes from."""
    p, prior, post = forecast.prediction, forecast.prior, forecast.posterior
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Prior (other runs)", _epochs_text(prior.epoch if prior.available else None, *prior.interval()),
              help=plain(prior.description))
    m2.metric("Extrapolation (first N epochs)",
              _epochs_text(p.epoch, p.epoch_low, p.epoch_high) if p.status == "predicted" else p.status,
              help=plain(p.reason) if p.reason else None)
    m3.metric("Posterior (both)", _epochs_text(post.epoch, post.epoch_low, post.epoch_high),
              help=plain(post.description))
    m4.metric("What the whole log shows", f"epoch {crossing.epoch}" if crossing.reached else "never reached")
    st.caption(plain(f"Prior: {prior.description}. Extrapolation: {p.family} ({p.route} route), {p.interval_method}; "
                     f"{forecast.interval_source}. Posterior: {post.description}. Intervals are {p.level:.0%}; "
                     "each sees only the first N epochs of this run (the prior none of it); the rest of the log is "
                     "drawn for comparison."
                     + (f" Schedule: {forecast.schedule.describe()}." if forecast.schedule else "")))
    for flag in dict.fromkeys((*p.flags, *post.flags)):
        st.caption(":material/info: " + plain(flag))


def _epochs_text(epoch, low, high) -> str:
    if epoch is None or epoch != epoch:
        return "—"
    hi = "never" if high is None or high == float("inf") else f"{high:.0f}"
    lo = f"{low:.0f}" if low is not None and low == low else "?"
    return f"{epoch:.0f} ({lo} – {hi})"


def family_scores_section(logs: tuple[RunLog, ...], *, target: Target, route: str) -> None:
    """Every family's backtest error over the loaded runs, computed on request (it refits every run)."""
    with st.expander("Which family predicts these runs best? (backtest of every family)",
                     icon=":material/leaderboard:"):
        st.caption("Each loaded run is cut at half its epochs and predicted by each family; the table gives the "
                   "median error against what the run really did and how often the interval covered it.")
        if st.toggle("Run the backtest", key="logs_family_scores_on",
                     help="Refits every family on every loaded run: a few seconds for the built-in runs."):
            scores = _family_scores(logs, target, route)
            st.dataframe(scores, key="logs_family_scores", hide_index=True,
                         column_config={"median_abs_error_pct": st.column_config.NumberColumn(format="%.1f"),
                                        "coverage": st.column_config.NumberColumn(format="%.2f")})
