"""The Throughput page's transfer and profile sections, and the step times they hand to the Plan page.

"I measured X s per step on device A" → the calibrated step time, images/s and cost per
epoch on devices B, C (``core.paleo.calibrate_transfer`` + ``compare_devices``); and a
measured per-layer profile beside Paleo's and the roofline's estimates
(``core.paleo.measure_profile`` + ``compare_profile``).  Section functions and their cached
wrappers only: every number comes from ``core.paleo``, every chart from
``core.figures.paleo``.  Kept apart from ``pages/throughput.py`` so that page stays a short
list of sections, and so the Plan page can read :data:`TRANSFERRED_STEPS` without importing a
page.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.datasets import TRAINING_SET_SIZES, builtin_profiles
from core.errors import InputError, LogFormatError
from core.figures.paleo import COMPARISON_METRICS, device_comparison_figure, profile_comparison_figure
from core.paleo import (
    GPUS,
    PRECISION_TEXT,
    PRECISIONS,
    TORCH_PREFIX,
    DeviceComparison,
    MeasuredProfile,
    Measurement,
    ProfileComparison,
    Workload,
    calibrate_transfer,
    compare_devices,
    compare_profile,
    list_nets,
    load_net,
    load_workload,
    measure_profile,
    parse_spec,
    profile_report,
    read_profile,
    workload_from_net,
)
from pages.shared.bounded import bounded_data, bounded_resource
from pages.shared.common import chart, guarded, plain, table_download

#: the last transfer sent to the Plan page (a ``core.paleo.DeviceComparison``); absent until sent
TRANSFERRED_STEPS = "transferred_steps"
#: per-layer profiles measured on this server in this session: {name: MeasuredProfile}
MEASURED_PROFILES = "measured_profiles"
#: the example the section opens on: MLPerf Training v3.0, ResNet-50, Dell R750xa (4 x A100 PCIe 80GB), FP16,
#: 408 images per GPU at 3,239 images/s per GPU (docs/paleo.md)
EXAMPLE = dict(device="A100_PCIE_80GB", precision="fp16", batch=408, step_s=0.126)
DEFAULT_TARGETS = ("H100_SXM", "A100_SXM4_80GB", "L40S")
METRIC_LABELS = {"images_per_s": "images/s", "step_time_s": "time per step", "cost_per_epoch": "cost per epoch"}


# ---------------------------------------------------------------- cached core calls
@bounded_resource(show_spinner="Counting the work of one training step (a torch model is traced once) …")
def _workload(key: tuple, _ref: tuple) -> Workload:
    """The workload of the page's net: ``key`` is the net's cheap reference, ``_ref`` carries an upload's bytes."""
    if _ref[0] == "upload":
        return workload_from_net(parse_spec(_ref[2], source=_ref[1]))
    return load_workload(_ref[1])


@bounded_data(show_spinner=False)
def _comparison(key: tuple, _ref: tuple, device: str, precision: str, batch: int, step_s: float,
                targets: tuple[str, ...], prices: tuple[tuple[str, float], ...], samples: int) -> DeviceComparison:
    workload = _workload(key, _ref)
    calibration = calibrate_transfer([Measurement(workload, device, precision, batch, step_s,
                                                  label=f"measured on {device}")])
    devices = tuple(dict.fromkeys((device, *targets)))
    return compare_devices(workload, calibration, devices, precision=precision, batch_size=batch,
                           samples_per_epoch=samples, prices=dict(prices))


@bounded_resource(show_spinner="Comparing the profile with the estimates …")
def _profile_comparison(key: tuple, _profile: MeasuredProfile) -> ProfileComparison:
    """``key`` (name and step times) stands for the profile: hashing the profile itself costs more."""
    return compare_profile(_profile, load_workload(_profile.net), load_net(_profile.net))


@bounded_data(show_spinner=False)
def _profile_tables(key: tuple, _profile: MeasuredProfile) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The per-kind totals and the CSV report of a profile's comparison."""
    comparison = _profile_comparison(key, _profile)
    return comparison.by_kind(), profile_report(_profile, comparison)


@st.cache_data(show_spinner=False, ttl=3600)
def _builtin_profile(name: str) -> MeasuredProfile:
    return read_profile(dict(builtin_profiles())[name].read_bytes(), name)


def _send_to_plan(comparison: DeviceComparison) -> None:
    st.session_state[TRANSFERRED_STEPS] = comparison


# ---------------------------------------------------------------- transfer
def _gpu_label(name: str) -> str:
    g = GPUS[name]
    return f"{name}: {g.label}, {g.mem_bandwidth.value:,g} GB/s"


def _transfer_inputs() -> tuple[str, str, int, float, tuple[str, ...], int]:
    c1, c2, c3, c4 = st.columns([3, 2, 2, 2])
    device = c1.selectbox("Measured on (GPU A)", list(GPUS), index=list(GPUS).index(EXAMPLE["device"]),
                          key="tp_tr_device", format_func=_gpu_label)
    precision = c2.selectbox("Precision of the run", list(PRECISIONS), index=list(PRECISIONS).index("fp16"),
                             key="tp_tr_precision", format_func=lambda p: f"{p}: {PRECISION_TEXT[p]}",
                             help="Convolutions and matrix products run at this precision's dense tensor peak; "
                                  "tensors take its bytes (FP16/BF16: 2, TF32/FP32: 4); optimizer state FP32.")
    batch = c3.number_input("Batch per device", min_value=1, max_value=100_000, value=EXAMPLE["batch"], step=1,
                            key="tp_tr_batch", help="Samples one device processes per step.")
    step_s = c4.number_input("Measured time per step (s)", min_value=1e-6, value=EXAMPLE["step_s"], format="%.4g",
                             key="tp_tr_step", help="One training step on one device: forward, backward and update "
                                                    "(communication that is not hidden is part of it).")
    t1, t2 = st.columns([3, 1])
    targets = t1.multiselect("Compare on (GPUs B, C, …)", [g for g in GPUS], default=list(DEFAULT_TARGETS),
                             key="tp_tr_targets", format_func=_gpu_label)
    samples = t2.number_input("Samples per epoch", min_value=1, value=TRAINING_SET_SIZES["imagenet"], step=1000,
                              key="tp_tr_samples", help="Default: ImageNet-1k's 1,281,167 training images.")
    return device, precision, int(batch), float(step_s), tuple(targets), int(samples)


def _prices(devices: tuple[str, ...]) -> tuple[tuple[str, float], ...]:
    with st.expander("Prices per device-hour (for the cost per epoch)", icon=":material/payments:"):
        st.caption("Type what one device-hour costs you (any currency); a device without a price has no cost.")
        cols = st.columns(4)
        prices = {d: cols[i % 4].number_input(d, min_value=0.0, value=None, format="%.2f", key=f"tp_tr_price_{d}")
                  for i, d in enumerate(devices)}
    return tuple((d, float(p)) for d, p in prices.items() if p is not None)


def _calibration_note(comparison: DeviceComparison, precision: str) -> None:
    cal = comparison.calibration
    factors = ", ".join(f"{name} x{value:.3f}" for name, value in cal.factors)
    eff = cal.efficiencies.to_dict()
    st.caption(f"Calibrated ({cal.fit} factor on the prior efficiencies: {factors}): convolutions reach "
               f"{eff['compute']['conv']:.0%} of the {precision} tensor peak, streaming ops "
               f"{eff['memory']['norm']:.0%} of the memory bandwidth. {cal.interval_note} Each device runs the "
               "whole epoch alone; data-parallel communication is not in these numbers (the Results table "
               "above has it, and `python -m core paleo --measured-step` prints it per device). FLOPs count "
               "2 per multiply-add.")
    for flag in cal.flags:
        st.warning(plain(flag), icon=":material/warning:")


@st.fragment
@guarded("Throughput: transfer")
def transfer_section(net_key: tuple, net_ref: tuple, net_label: str) -> None:
    """A measured step on device A → step time, images/s and cost per epoch on devices B, C, with intervals."""
    st.subheader("The GPU you don't have yet: a measured step, transferred")
    st.caption("Each op of one training step (every aten op of a torch model; Paleo's layers of a spec) is priced "
               "by a roofline: the slower of its FLOPs at the device's peak and its bytes at the memory bandwidth, "
               "with an efficiency per kind of op (convolution, matrix product, normalisation, element-wise, "
               "pooling). Your measurement calibrates the efficiencies; the devices below differ in their "
               "compute/bandwidth balance, so ops move between compute- and memory-bound. The section opens on "
               "MLPerf v3.0's ResNet-50 on A100 PCIe (408 images in 0.126 s): type your own.")
    device, precision, batch, step_s, targets, samples = _transfer_inputs()
    prices = _prices(tuple(dict.fromkeys((device, *targets))))
    try:
        comparison = _comparison(net_key, net_ref, device, precision, batch, step_s, targets, prices, samples)
    except InputError as exc:
        st.error(plain(str(exc)), icon=":material/error:")
        return
    for name, reason in comparison.skipped:
        st.warning(plain(f"{name} left out: {reason}"), icon=":material/warning:")
    metric = st.radio("Chart", list(COMPARISON_METRICS), format_func=METRIC_LABELS.get, horizontal=True,
                      key="tp_tr_metric")
    stem = f"transfer_{net_label.removeprefix(TORCH_PREFIX).removesuffix('.json')}_{device}_{precision}_b{batch}"
    chart(device_comparison_figure, comparison, metric=metric, key="tp_tr_chart", file_stem=stem,
          inputs=(net_key, device, precision, batch, step_s, targets, prices, samples))
    frame = comparison.to_frame()
    st.dataframe(frame, key="tp_tr_table", hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.4g") for c in frame.columns
                                if frame[c].dtype.kind == "f"})
    table_download(frame, key="tp_tr_csv", file_name=f"{stem}.csv")
    _calibration_note(comparison, precision)
    st.button("Use these step times on the Plan page", key="tp_tr_send", icon=":material/send:",
              on_click=_send_to_plan, args=(comparison,),
              help="The Plan page's θ option 'step time from a GPU transfer' then offers these devices.")
    if st.session_state.get(TRANSFERRED_STEPS) == comparison:
        st.caption(":material/check: Sent to the Plan page.")


# ---------------------------------------------------------------- profile
def _measure(model: str, batch: int, steps: int, device: str) -> None:
    try:
        with st.spinner(f"Measuring {model} (batch {batch}, {steps} steps) with torch.profiler …"):
            profile = measure_profile(model, batch_size=batch, steps=steps, device=device)
    except InputError as exc:
        st.error(plain(str(exc)), icon=":material/error:")
        return
    name = f"{model} {device} b{batch} (measured now)"
    st.session_state.setdefault(MEASURED_PROFILES, {})[name] = profile
    st.session_state["tp_profile"] = name


@st.fragment
@guarded("Throughput: profile")
def profile_section(model: str) -> None:
    """A measured per-layer profile beside Paleo's and the roofline's estimates, both calibrated on it."""
    st.subheader("Measured per-layer profile beside the estimates")
    st.caption("Each layer's forward + backward time of a training step measured with torch.profiler, beside "
               "Paleo's estimate (its PPP fitted on the measured step) and the roofline's (its efficiencies "
               "scaled by one factor on the same step): both add up to the measured layers, so what differs is "
               "where each model puts the time. Paleo prices batch norm, ReLU and residual additions at zero.")
    torch_model = model.removeprefix(TORCH_PREFIX) if model in list_nets()["models"] else None
    with st.expander("Measure on this machine", icon=":material/timer:", expanded=False):
        if torch_model is None:
            st.caption("Choose a torch model above (torch:…) to measure it; Paleo specs cannot be run.")
        else:
            m1, m2, m3, m4 = st.columns([1, 1, 1, 2])
            batch = m1.number_input("Batch", min_value=1, max_value=4096, value=32, key="tp_prof_batch")
            steps = m2.number_input("Steps", min_value=1, max_value=50, value=3, key="tp_prof_steps")
            device = m3.radio("Run on", ["cpu", "cuda"], key="tp_prof_device", horizontal=True)
            m4.button("Measure the chosen torch model", key="tp_prof_measure", icon=":material/timer:",
                      on_click=_measure, args=(torch_model, int(batch), int(steps), device),
                      help="Trains it for a few steps on random data, one thread on CPU; takes seconds to "
                           "minutes. The result stays for this session.")
    measured = st.session_state.get(MEASURED_PROFILES, {})
    options = [*measured, *(name for name, _ in builtin_profiles())]
    if st.session_state.get("tp_profile") not in options:
        st.session_state["tp_profile"] = options[0]
    name = st.selectbox("Profile", options, key="tp_profile",
                        format_func=lambda n: n if n in measured else f"{n} (shipped in data/paleo/profiles)")
    try:
        profile = measured[name] if name in measured else _builtin_profile(name)
        key = (name, profile.step_time_s, profile.profiled_step_s)
        comparison = _profile_comparison(key, profile)
    except (InputError, LogFormatError) as exc:
        st.error(plain(str(exc)), icon=":material/error:")
        return
    k1, k2, k3 = st.columns(3)
    k1.metric("Measured step (s)", f"{profile.step_time_s:.4f}",
              help=f"Median wall time of {profile.steps} steps without the profiler; {profile.threads} thread(s), "
                   f"{profile.device_label}.")
    k2.metric("Time the roofline misplaces", f"{comparison.misplaced_share['roofline']:.0%}",
              help="Σ|estimate − measured| / (2 Σ measured) over the layers: the share of the step's time put on "
                   "the wrong layers.")
    k3.metric("Time Paleo misplaces", f"{comparison.misplaced_share['paleo']:.0%}",
              help="The same for Paleo's layer list (modern mode), its PPP fitted on the step.")
    top = st.slider("Layers shown", min_value=5, max_value=40, value=15, key="tp_prof_top")
    stem = f"profile_{profile.net.removeprefix(TORCH_PREFIX)}_{profile.device}_b{profile.batch_size}"
    chart(profile_comparison_figure, comparison, top=top, key="tp_prof_chart", file_stem=stem, inputs=key)
    kinds, report = _profile_tables(key, profile)
    st.dataframe(kinds, key="tp_prof_kinds", hide_index=True)
    table_download(report, key="tp_prof_csv", file_name=f"{stem}.csv", label="Profile and estimates (CSV)")
    st.caption(f"Device as a roof: {profile.roof.source}. The measurement ran on "
               f"{profile.device_label} with torch {profile.torch_version}.")
