"""Plan page, the cluster: workers, global batch and how it follows the workers, parameter servers,
prices, and Paleo's analytical estimate beside the speed model.

A section of ``pages/plan.py``: widgets, cached calls into ``core`` and rendering only.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.errors import PlannerError
from core.logs import parse_run_name
from core.paleo import DEVICES, NETWORKS, PPP_PRESETS, list_nets, load_net
from core.plan import (
    SCALING_RULES,
    ScalingRule,
    StepsEstimate,
    paleo_calibration_point,
    paleo_device_for,
    paleo_net_for,
    paleo_time_to_target,
)
from core.speed import PAPER_GLOBAL_BATCH, StepCalibration, calibrate_paleo_step
from pages.plan_sections.speed import SPEED_IN_USE
from pages.shared.bounded import bounded_data, bounded_resource
from pages.shared.common import (
    CACHE,
    KEPT,
    datasets_by_file,
    keep_valid_choice,
    plain,
)

#: the worker slider's largest value
MAX_WORKERS = 256
RULE_LABELS = {"fixed": "fixed global batch M", "per-worker": "fixed per-worker batch m (M = w·m)",
               "best": "best M per w (largest goodput)"}


def cluster_section() -> tuple[int, int]:
    """The largest worker count and the global batch."""
    st.markdown("#### Cluster and prices")
    max_workers = st.slider("Largest number of workers", min_value=2, max_value=MAX_WORKERS, value=32,
                            key="plan_max_workers", **KEPT)
    global_batch = st.number_input("Global batch M (samples per step)", min_value=1, value=PAPER_GLOBAL_BATCH,
                                   step=1, key="plan_batch", **KEPT)
    return int(max_workers), int(global_batch)


def rule_section(global_batch: int, *, fitted: bool) -> tuple[ScalingRule | None, float | None]:
    """How the global batch follows the workers, and the noise scale a typed-in rule needs (None: no plan)."""
    rule = st.radio("Global batch as workers are added", list(RULE_LABELS), format_func=RULE_LABELS.get,
                    key="plan_scaling_rule", **KEPT,
                    help="\n\n".join(f"**{RULE_LABELS[k]}**: {v}" for k, v in SCALING_RULES.items()))
    try:
        if rule == "fixed":
            return ScalingRule("fixed", global_batch=global_batch), None
        if rule == "per-worker":
            m = st.number_input("Per-worker batch m", min_value=1, value=32, step=1, key="plan_per_worker_batch",
                                **KEPT)
            chosen = ScalingRule("per-worker", per_worker_batch=m)
        else:
            c1, c2 = st.columns(2)
            low = c1.number_input("Smallest M", min_value=1, value=32, step=32, key="plan_batch_min", **KEPT)
            high = c2.number_input("Largest M", min_value=1, value=8192, step=1024, key="plan_batch_max", **KEPT)
            chosen = ScalingRule("best", batch_min=low, batch_max=high)
    except PlannerError as err:
        st.error(plain(str(err)), icon=":material/error:")
        return None, None
    if fitted:
        return chosen, None
    b_noise = st.number_input("Noise scale B_noise (samples)", min_value=1.0, value=2000.0, step=100.0,
                              format="%.0f", key="plan_b_noise", **KEPT,
                              help="Where a larger batch starts to cost samples: E(B) = E_min·(1 + B/B_noise). "
                                   "Measure it on the Scaling page (Batch size tab) or with python -m core "
                                   "batch-scaling, or take the steps from a batch-scaling fit.")
    st.caption(f"The steps to target are taken as measured at M = {global_batch:,} and scaled to each batch by "
               "S(M) = E_min·(1 + M/B_noise)/M.")
    return chosen, float(b_noise)


def prices_section(allreduce: bool) -> tuple[tuple[int, ...], float, float]:
    """Parameter-server counts and prices."""
    ps = st.multiselect("Parameter servers to compare", options=list(range(1, 9)), default=[2, 4],
                        key="plan_ps", **KEPT, disabled=allreduce,
                        help="Not used for all-reduce training (no parameter servers)." if allreduce else None)
    c1, c2 = st.columns(2)
    price_worker = c1.number_input("Price per worker-hour", min_value=0.0, value=2.5, step=0.1,
                                   format="%.2f", key="plan_price_worker", **KEPT)
    price_ps = c2.number_input("Price per PS-hour", min_value=0.0, value=0.5, step=0.1, format="%.2f",
                               key="plan_price_ps", **KEPT, disabled=allreduce)
    return tuple(sorted(ps)), float(price_worker), float(price_ps)


@bounded_resource(show_spinner=False)
def _paleo_net(ref: str):
    return load_net(ref)


@bounded_data(**{**CACHE, "show_spinner": "Paleo estimate …"})
def _paleo_curves(ref: str, steps: float, max_workers: int, ps: tuple[int, ...], batch: int, device: str,
                  network: str, ppp_comp: float, ppp_comm: float,
                  calibrate_to: tuple[float, int, int] | None) -> pd.DataFrame:
    return paleo_time_to_target(_paleo_net(ref), steps, workers=range(1, max_workers + 1), ps=ps,
                                global_batch=batch, device=device, network=network, ppp_comp=ppp_comp,
                                ppp_comm=ppp_comm, calibrate_to=calibrate_to)


@bounded_data(**CACHE)
def _paleo_calibration(ref: str, point: tuple[float, int, int], batch: int, device: str, network: str,
                       ppp_comm: float) -> StepCalibration:
    step_s, p, w = point
    return calibrate_paleo_step(_paleo_net(ref), step_s, p=p, w=w, global_batch=batch, device=device,
                                network=network, ppp_comm=ppp_comm)


def paleo_section(*, steps: StepsEstimate, ps: tuple[int, ...], max_workers: int, global_batch: int,
                  seconds: bool, fixed_batch: bool = True) -> pd.DataFrame | None:
    """Paleo's estimated time to target for the same p and w (dashed curves), or None."""
    with st.expander("Paleo estimate beside Optimus", expanded=seconds, icon=":material/speed:"):
        if not fixed_batch:
            st.caption(":material/info: Paleo's estimate here keeps the global batch and the steps fixed; it is "
                       "drawn under the fixed-M rule only.")
            return None
        if not seconds:
            st.caption(":material/info: Paleo estimates seconds; the Optimus times are in paper units. "
                       "Turn on *Calibrate to seconds* to compare them.")
            return None
        on = st.toggle("Draw Paleo's analytical estimate (steps × Paleo's per-iteration time)", value=True,
                       key="plan_paleo_on", **KEPT)
        if not on:
            return None
        nets = [*list_nets(loadable_only=True)["specs"], *list_nets()["models"]]
        run = st.session_state.get("plan_run")
        default = paleo_net_for(parse_run_name(run).model if run else None,
                                datasets_by_file().get(run, "cifar10"))
        keep_valid_choice("plan_paleo_net", nets, default)
        c1, c2, c3 = st.columns(3)
        ref = c1.selectbox("Network", nets, index=nets.index(default) if default in nets else 0,
                           key="plan_paleo_net", **KEPT)
        devices = list(DEVICES)
        # Paleo's curve on the hardware the run's step time was measured on, as far as Paleo knows it
        device_default, device_why = paleo_device_for(parse_run_name(run).gpu if run else None)
        device = c2.selectbox("Device", devices, index=devices.index(device_default), key="plan_paleo_device",
                              help=f"Suggested for the page's run: {device_why}.", **KEPT)
        networks = list(NETWORKS)
        network = c3.selectbox("Interconnect", networks, index=networks.index("ethernet"), key="plan_paleo_network",
                               **KEPT)
        model, measured = st.session_state.get(SPEED_IN_USE, (None, None))
        calibrated = model is not None and st.toggle(
            "Calibrate Paleo on the measured step (off: Paleo's uncalibrated roofline at the PPP typed below)",
            value=True, key="plan_paleo_calibrated", **KEPT,
            help="On: Paleo's compute PPP is fitted so that its step takes the measured step the speed model is "
                 "calibrated to; the two curves meet there and differ only in how they scale with w. Off: "
                 "Paleo's peak-based estimate at the PPP typed in, often far from a real step.")
        c4, c5 = st.columns(2)
        ppp_comp = c4.number_input("PPP compute", min_value=0.01, max_value=1.0, value=PPP_PRESETS["tensorflow"][0],
                                   step=0.01, key="plan_paleo_ppp_comp", **KEPT, disabled=calibrated,
                                   help="Fitted to the measured step while Paleo is calibrated." if calibrated
                                   else None)
        ppp_comm = c5.number_input("PPP communication", min_value=0.01, max_value=1.0,
                                   value=PPP_PRESETS["tensorflow"][1], step=0.01, key="plan_paleo_ppp_comm", **KEPT)
        point = paleo_calibration_point(model, measured, p=ps[0] if ps else 0) if calibrated else None
        st.caption(f"Paleo (Qi et al., ICLR 2017, modern mode): synchronous data parallelism at M = {global_batch} "
                   "split over the workers, Paleo's parameter-server scheme with p servers (ring all-reduce "
                   "without servers), no overlap. "
                   + ("Calibrated on the measured step the speed model uses." if calibrated else
                      "Uncalibrated: PPP defaults are Paleo's TensorFlow values; Paleo has no per-step latency "
                      "term, so small networks come out optimistic."))
        try:   # computed once for the slider's whole range, cut to the workers shown
            if point is not None:
                try:
                    calibration = _paleo_calibration(ref, point, global_batch, device, network, float(ppp_comm))
                except PlannerError as err:     # no PPP reaches the step: say why, draw the roofline as it is
                    st.info(plain(f"Paleo drawn uncalibrated, at compute PPP {float(ppp_comp):g}: {err}"),
                            icon=":material/info:")
                    point = None
                else:
                    st.caption(f":material/tune: {calibration.text}.")
                    for flag in calibration.flags:
                        st.caption(f":material/info: {plain(flag)}")
            curves = _paleo_curves(ref, float(steps.steps), MAX_WORKERS, ps, global_batch, device, network,
                                   float(ppp_comp), float(ppp_comm), point)
            return curves[curves["w"] <= max_workers]
        except PlannerError as err:
            st.error(plain(str(err)) + (" Turn calibration off to draw Paleo's uncalibrated estimate."
                                        if point is not None else ""), icon=":material/error:")
            return None
