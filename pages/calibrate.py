"""Calibrate: regress curve parameters over architectures and GPUs, predict a held-out model.

Section functions, called from the page block at the end; every number comes from
``core.calibrate`` (and ``core.figures.calibrate``) through the cached wrappers below.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.calibrate import (
    CALIBRATION_METHODS,
    INTERVAL_METHOD,
    RECOMMENDED_LABEL,
    THRESHOLDS,
    Calibration,
    architectures,
    calibrate,
    calibration_target,
    companion_method,
    hardware_independence,
    holdout_outside,
    method_scores_for,
    normalise_fits,
    read_fits_table,
    recommend_method,
    recommendation_rule,
    usable,
)
from core.datasets import COURSE_FITS_RUNS, course_fits_path
from core.errors import InputError, LogFormatError
from core.figures.calibrate import (
    epochs_to_target_figure,
)
from core.logs import RunLog
from core.prediction import extrapolate_unreached
from core.targets import Target
from pages.calibrate_sections.curves import curves_section
from pages.calibrate_sections.evaluation import loao_section, table_section
from pages.calibrate_sections.send import send_section
from pages.shared.bounded import bounded_data, bounded_resource
from pages.shared.common import (
    CACHE,
    FAMILY,
    KEPT,
    ROUTE,
    SHARED,
    LoadedRuns,
    chart,
    datasets_by_file,
    detail_tabs,
    frame_key,
    guarded,
    load_logs,
    load_runs,
    page_setup,
    plain,
    shared_fits,
    target_input,
)
from pages.shared.render import metric

SOURCES = {"course": f"Course table: {COURSE_FITS_RUNS} CIFAR-10 ResNet fits", "logs": "Runs loaded on the Logs page",
           "both": "Both", "upload": "An uploaded fits table"}
THRESHOLD_LABELS = {"curve": "fitted curve (default)", "measured": "measured (course)"}
#: the details below the answer, one tab at a time (the cheapest first: what a first visit computes)
DETAIL_TABS = ("Prediction table", "Curves", "Leave-one-architecture-out")


# ---------------------------------------------------------------- cached core calls
@st.cache_data(**CACHE)
def _course_fits() -> pd.DataFrame:
    return read_fits_table(course_fits_path(), source="course table")


@bounded_data(**CACHE)
def _uploaded_fits(data: bytes, name: str) -> pd.DataFrame | LogFormatError:
    try:
        return read_fits_table(data, source=name)
    except LogFormatError as exc:
        return exc


# The fits table is passed unhashed (``_fits``) beside its digest ``key`` (``frame_key``): hashing
# the table for every cached call would cost more than most of the calls.
@bounded_data(**{**CACHE, "show_spinner": "Scoring methods by leave-one-architecture-out …"})
def _scores(key: str, _fits: pd.DataFrame, split: str, holdout: str, threshold: str) -> pd.DataFrame:
    return method_scores_for(_fits, split=split, holdout=holdout, threshold=threshold)


@bounded_resource(**SHARED)
def _calibrate(key: str, _fits: pd.DataFrame, holdout: str, split: str, method: str, threshold: str) -> Calibration:
    return calibrate(_fits, holdout=holdout, split=split, method=method, threshold=threshold)


@bounded_data(**CACHE)
def _architectures(key: str, _fits: pd.DataFrame, split: str) -> list[str]:
    return architectures(usable(_fits, split=split))


@bounded_data(**CACHE)
def _hardware(key: str, _fits: pd.DataFrame, split: str):
    return hardware_independence(_fits, split=split)


@bounded_data(**CACHE)
def _outside(key: str, _fits: pd.DataFrame, holdout: str, split: str) -> tuple[str, ...]:
    return holdout_outside(_fits, holdout, split=split)


@bounded_data(**{**CACHE, "show_spinner": "Extrapolating the held-out runs' logs …"})
def _extrapolated(logs: tuple[RunLog, ...], model: str, split: str, target: Target, family: str,
                  route: str) -> pd.DataFrame:
    return extrapolate_unreached(list(logs), model=model, split=split, target=target, family=family, route=route,
                                 cache=shared_fits())


# ---------------------------------------------------------------- sections
def source_section() -> tuple[str, str, str, Target]:
    """What to learn from: ``(source, split, threshold, target)``."""
    c1, c2, c3 = st.columns([2, 1, 1])
    source = c1.radio("Fitted runs to learn from", list(SOURCES), format_func=SOURCES.get, key="cal_source", **KEPT,
                      horizontal=True)
    split = c2.radio("Split", ["train", "val"], key="cal_split", **KEPT, horizontal=True)
    threshold = c3.radio("Loss threshold L", list(THRESHOLDS), key="cal_threshold", **KEPT, horizontal=True,
                         format_func=THRESHOLD_LABELS.get,
                         help="\n\n".join(f"**{k}**: {v}" for k, v in THRESHOLDS.items()))
    target = target_input(load_logs()[0], key="cal_target_acc")
    return source, split, threshold, target


def fits_section(source: str, target: Target, runs: LoadedRuns | None) -> pd.DataFrame | None:
    """The fits table to calibrate on (None, with the reason shown, when there is none)."""
    frames = []
    if source in ("course", "both"):
        frames.append(_course_fits())
        if (warning := calibration_target(target).course_warning) is not None:
            st.warning(warning)
    if runs is not None:
        frames.append(normalise_fits(runs.table, source="Logs page", target=target,
                                     datasets_by_file=datasets_by_file()))
    if source == "upload":
        up = st.file_uploader("Fits table (course columns or `python -m core fit` output)", type=["csv"],
                              key="cal_upload")
        if up is None:
            st.info("Upload a fits table to calibrate on it.")
            return None
        fits = _uploaded_fits(up.getvalue(), up.name)
        if isinstance(fits, LogFormatError):
            st.error(plain(str(fits)), icon=":material/error:")
            return None
        frames.append(fits)
    return pd.concat(frames, ignore_index=True)


def method_section(key: str, fits: pd.DataFrame, split: str, threshold: str
                   ) -> tuple[str, str, pd.DataFrame, str] | None:
    """Held-out architecture and method: ``(holdout, method, scores, recommended)``."""
    archs = _architectures(key, fits, split)
    if len(archs) < 3:
        st.error(f"Calibration needs fitted runs of at least 3 architectures in the {split} split; "
                 f"got {len(archs)} ({', '.join(archs) or 'none'}).")
        return None
    holdout = st.selectbox("Held-out architecture (predicted from the others)", archs, key="cal_holdout", **KEPT,
                           index=archs.index("resnet50") if "resnet50" in archs else len(archs) - 1)
    scores = _scores(key, fits, split, holdout, threshold)
    outside = bool(_outside(key, fits, holdout, split))
    best = recommend_method(scores, outside=outside)
    choice = st.selectbox("Regression method", ["auto", *CALIBRATION_METHODS], key="cal_method", **KEPT,
                          format_func=lambda m: RECOMMENDED_LABEL if m == "auto" else CALIBRATION_METHODS[m].label)
    method = best if choice == "auto" else choice
    mape_of = dict(zip(scores["method"], scores["loao_mape_pct"]))
    st.markdown(f"**Recommended method: {CALIBRATION_METHODS[best].label}** — leave-one-architecture-out error "
                f"{mape_of[best]:.1f} % on the calibration runs ({plain(holdout)} removed first), against "
                f"{mape_of['course']:.1f} % for the course baseline and {mape_of['mean']:.1f} % for the mean of "
                "the other architectures. " + recommendation_rule(outside=outside))
    return holdout, method, scores, best


def prediction_section(cal: Calibration, cal_other: Calibration | None, runs: LoadedRuns | None, *,
                       target: Target, inputs: tuple) -> None:
    """The held-out architecture's epochs to target per GPU, with intervals."""
    st.subheader(f"{plain(cal.holdout)}: epochs to target")
    for col, (_, row) in zip(st.columns(len(cal.predictions)), cal.predictions.iterrows()):
        lo, hi = row["epoch_pred_low"], row["epoch_pred_high"]
        band = f"{cal.level * 100:.0f} % interval: {lo:.0f} – {hi:.0f} epochs" if pd.notna(lo) else None
        delta = (f"{row['epoch_error_pct']:+.0f} % vs actual {row['epoch_actual']:.0f}"
                 if pd.notna(row["epoch_error_pct"]) else None)
        metric(col, plain(row["gpu"]), f"{row['epoch_pred']:.0f} epochs" if pd.notna(row["epoch_pred"])
               else "unreachable", delta=delta, delta_color="off", under=band)
    holdout = plain(cal.holdout)
    where = st.info if cal.inside else st.warning
    where(plain(cal.where()), icon=":material/my_location:" if cal.inside else ":material/explore_off:")
    st.caption(f"{cal.level * 100:.0f} % interval: {INTERVAL_METHOD}; {holdout}'s nearest calibration "
               f"architecture is {cal.distance:.2f} away (typical {cal.mean_distance:.2f}), so its interval is "
               f"×{cal.difficulty:.2f} as wide as a typical one. "
               + (f"Loss threshold L = {cal.loss_threshold:.4f}, mean over {cal.threshold_runs} calibration runs "
                  f"({THRESHOLDS[cal.threshold]}); never taken from {holdout}." if cal.loss_threshold is not None
                  else "This method predicts the step at target directly (no loss threshold).")
               + "".join(f" {n}." for n in cal.notes))
    extrapolated = None
    unreached = runs is not None and cal.predictions["epoch_actual"].isna().any()
    refusal = calibration_target(target, holdout=cal.holdout).extrapolation_refusal
    if unreached and refusal is not None:
        st.caption(plain(refusal))
    elif unreached:
        family, route = st.session_state[FAMILY], st.session_state[ROUTE]
        extrapolated = _extrapolated(runs.logs, cal.holdout, cal.split, target, family, route)
        if len(extrapolated):
            st.caption(f"{holdout}'s logs end before the target on some devices: the diamonds extrapolate them "
                       f"with the curve family chosen on the Logs page ({family}, {route} route) and its backtest "
                       "interval — a reference, not a measurement.")
    runs_key = tuple(lg.fingerprint() for lg in runs.logs) if extrapolated is not None else ()
    chart(epochs_to_target_figure, [cal, cal_other], extrapolated=extrapolated, key="cal_epochs_chart",
          file_stem=f"{cal.holdout}_epochs_to_target",
          inputs=(inputs, runs_key, target.spec, st.session_state[FAMILY], st.session_state[ROUTE]))


# ---------------------------------------------------------------- page
@guarded("The Calibrate page")
def main() -> None:
    page_setup()
    st.title("Calibrate")
    st.caption("Regress the loss-curve parameters over depth, parameter count and GPU type, predict an "
               "architecture the regression never saw, and say how sure that prediction is.")
    answer = st.container()      # the held-out architecture's epochs to target first, its inputs below
    st.divider()
    source, split, threshold, target = source_section()
    said = calibration_target(target)
    if (refusal := said.refuses(source)) is not None:
        # the course table's fits are for acc >= 0.92: never mixed with, nor read as, another metric's
        answer.info(plain(refusal), icon=":material/info:")
        st.stop()
    if said.caption is not None:
        answer.caption(plain(said.caption))
    runs = load_runs(target=target) if source in ("logs", "both") else None
    fits = fits_section(source, target, runs)
    key = frame_key(fits) if fits is not None else ""
    chosen = method_section(key, fits, split, threshold) if fits is not None else None
    if chosen is None:
        st.stop()
    holdout, method, scores, best = chosen
    try:
        cal = _calibrate(key, fits, holdout, split, method, threshold)
    except InputError as exc:
        st.error(plain(str(exc)), icon=":material/error:")
        st.stop()
    other = companion_method(scores, method)
    cal_other = _calibrate(key, fits, holdout, split, other, threshold) if other else None
    inputs = (key, holdout, split, method, other, threshold)
    with answer:
        prediction_section(cal, cal_other, runs, target=target, inputs=inputs)
    if (hw := _hardware(key, fits, split)) is not None:
        st.info(plain(hw.sentence), icon=":material/memory:")
    tabs = detail_tabs(DETAIL_TABS, key="cal_details")     # only the open tab is computed
    with tabs["Prediction table"]:
        if tabs["Prediction table"].open:
            table_section(cal, cal_other)
    with tabs["Curves"]:
        if tabs["Curves"].open:
            curves_section(key, fits, cal, cal_other, runs, inputs=inputs)
    with tabs["Leave-one-architecture-out"]:
        if tabs["Leave-one-architecture-out"].open:
            loao_section(key, fits, scores, best, cal, threshold, outside=bool(_outside(key, fits, holdout, split)))
    send_section(cal)


main()
