"""Throughput page, the inputs: mode, network, hardware, Paleo's PPP and their calibration from a
measured step time.

A section module of ``pages/throughput.py``: widgets, cached calls into ``core.paleo`` and rendering only.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from core.errors import InputError
from core.paleo import (
    DEFAULT_DEVICES,
    DEFAULT_NETWORK,
    PPP_PRESETS,
    TORCH_PREFIX,
    Net,
    PPPCalibration,
    calibrate_ppp,
    devices_for,
    list_nets,
    load_net,
    networks_for,
    parse_spec,
    settings_for_mode,
    worker_counts,
)
from pages.shared.bounded import bounded_data
from pages.shared.common import KEPT, content_digest, plain

DEFAULT_NET = "resnet50"
MAX_WORKER_OPTIONS = worker_counts(1024)
PS_OPTIONS = (1, 2, 4, 8, 16, 32)
CUSTOM = "custom"
PPP_MIN, PPP_MAX = 0.001, 10.0
PRESET_LABELS = {CUSTOM: "Custom (type below)", "tensorflow": "TensorFlow", "mxnet": "MXNet",
                 "caffe": "Caffe"}
CALIBRATION = "tp_calibration"                     # last PPP fit (or its error), page state
MODE_NOTE = "tp_mode_note"                         # what a mode switch changed, shown once
MODE_TEXT = {
    True: "**Paleo-compatible mode** reproduces the original program (TalwalkarLab/paleo, commit "
          "984bbf5, GEMM-only convolutions) number for number, quirks included: device memory in "
          "GiB/s, the update step always at PPP 1, convolution backward priced on padded dummy "
          "layers, Paleo's four communication schemes, no overlap. Only Paleo's devices and "
          "networks are offered.",
    False: "**Modern mode** keeps Paleo's per-layer model (compute + memory per layer, one PPP "
           "for the device, no network latency, fp32 gradients) with decimal units, a backward "
           "count equal to torch's FLOP counter, the update scaled by PPP, current GPUs and "
           "networks, ring all-reduce, parameter servers and optional overlap of communication "
           "with the backward pass.",
}


@dataclass(frozen=True)
class NetChoice:
    """The net to simulate: a hashable reference, ``("builtin", name)`` or ``("upload", file name, bytes)``,
    its label, and the built-in chosen in the selectbox (what the page falls back to)."""

    ref: tuple
    label: str
    model: str

    def fallback(self) -> NetChoice:
        return NetChoice(("builtin", self.model), self.model, self.model)

    @property
    def key(self) -> tuple:
        """The reference without an upload's bytes (their digest instead): a cheap cache key."""
        return self.ref if self.ref[0] == "builtin" else (*self.ref[:2], content_digest(self.ref[2]))


@dataclass(frozen=True)
class Hardware:
    """The hardware and scaling widgets' values."""

    device: str
    network: str
    batch: int
    scaling: str
    max_workers: int
    n_ps: tuple[int, ...]
    pipeline: bool
    overlap: bool


@bounded_data(show_spinner="Reading the network (a torch model is traced once) …")
def net_of(ref: tuple) -> Net:
    if ref[0] == "upload":
        return parse_spec(ref[2], source=ref[1])
    return load_net(ref[1])


@st.cache_data(show_spinner=False)
def _loadable_nets() -> dict[str, tuple[str, ...]]:
    return list_nets(loadable_only=True)


@bounded_data(show_spinner=False)
def _calibrated(ref: tuple, measured_ms: float, device: str, batch: int, paleo: bool,
                pipeline: bool) -> PPPCalibration:
    return calibrate_ppp(net_of(ref), measured_ms, device=device, batch_size=batch,
                         paleo_compatible=paleo, pipeline=pipeline)


def _mode_changed() -> None:
    """Keep the device, network and overlap valid for the mode just chosen."""
    now = {"tp_device": st.session_state.get("tp_device", DEFAULT_DEVICES[False]),
           "tp_network": st.session_state.get("tp_network", DEFAULT_NETWORK),
           "tp_overlap": bool(st.session_state.get("tp_overlap"))}
    fitted = settings_for_mode(paleo_compatible=st.session_state["tp_paleo"], device=now["tp_device"],
                               network=now["tp_network"], overlap=now["tp_overlap"])
    for key, value in zip(now, (fitted.device, fitted.network, fitted.overlap)):
        if value != now[key]:
            st.session_state[key] = value
    st.session_state[MODE_NOTE] = fitted.note


def _preset_chosen() -> None:
    preset = st.session_state["tp_preset"]
    if preset != CUSTOM:
        st.session_state["tp_ppp_comp"], st.session_state["tp_ppp_comm"] = PPP_PRESETS[preset]


def _ppp_edited() -> None:
    st.session_state["tp_preset"] = CUSTOM


def _fit_ppp(ref: tuple, label: str, device: str, batch: int, paleo: bool, pipeline: bool) -> None:
    """Fit the compute PPP to the measured step time and put it in the PPP input."""
    measured = st.session_state.get("tp_step_ms")
    if not measured:
        st.session_state[CALIBRATION] = {"error": "Measured step time: expected a time in ms > 0; got none. "
                                                  "Type the measured time first."}
        return
    try:
        cal = _calibrated(ref, measured, device, batch, paleo, pipeline)
    except InputError as exc:
        st.session_state[CALIBRATION] = {"error": str(exc)}
        return
    applied = PPP_MIN <= cal.ppp_comp <= PPP_MAX      # the PPP input's own bounds
    st.session_state[CALIBRATION] = {"result": cal, "net": label, "pipeline": pipeline,
                                     "applied": applied}
    if applied:
        st.session_state["tp_ppp_comp"] = cal.ppp_comp
        st.session_state["tp_preset"] = CUSTOM


def mode_section() -> bool:
    """The Paleo-compatible toggle and what the chosen mode assumes."""
    paleo = st.toggle("Paleo-compatible mode (the original program, number for number)", key="tp_paleo", **KEPT,
                      on_change=_mode_changed)
    st.caption(MODE_TEXT[paleo] + " See docs/paleo.md for every difference.")
    if note := st.session_state.pop(MODE_NOTE, None):
        st.info(note, icon=":material/info:")
    return paleo


def model_section() -> NetChoice:
    """A built-in spec or torch model, or an uploaded spec while it is readable."""
    nets = _loadable_nets()
    m1, m2 = st.columns([1, 1])
    model = m1.selectbox(
        "Model", [*nets["specs"], *nets["models"]], index=nets["specs"].index(DEFAULT_NET), key="tp_model", **KEPT,
        format_func=lambda n: (f"{n.removeprefix(TORCH_PREFIX)} (torch, core.models)" if n.startswith(TORCH_PREFIX)
                               else f"{n} (Paleo spec)"),
        help="Paleo's JSON specs shipped in data/paleo/nets (the model-parallel alex_v2_<k>gpu specs are left "
             "out: only data parallelism is simulated), or the course's torch models, traced once on the meta "
             "device.")
    upload = m2.file_uploader("Or upload a Paleo JSON spec", type=["json"], key="tp_upload",
                              help="Paleo's format (data/paleo/nets/README.md). While a readable spec is "
                                   "uploaded it replaces the model chosen on the left.")
    choice = NetChoice(("builtin", model), model, model)
    if upload is not None:
        uploaded = NetChoice(("upload", upload.name, upload.getvalue()), upload.name, model)
        try:
            net_of(uploaded.ref)
            choice = uploaded
        except InputError as exc:
            st.error(plain(f"{exc} The page shows {model} instead."), icon=":material/error:")
    try:
        net_of(choice.ref)
    except InputError as exc:  # a built-in that cannot be read: nothing sensible to show
        st.error(plain(str(exc)), icon=":material/error:")
        st.stop()
    return choice


def hardware_section(paleo: bool) -> Hardware:
    """Device, network, batch, scaling, worker counts, parameter servers, pipelining, overlap."""
    devices = devices_for(paleo_compatible=paleo)
    networks = networks_for(paleo_compatible=paleo)
    # keys the callbacks may set get their defaults here, not as widget arguments (Streamlit warns otherwise)
    st.session_state.setdefault("tp_device", DEFAULT_DEVICES[paleo])
    st.session_state.setdefault("tp_network", DEFAULT_NETWORK)
    st.session_state.setdefault("tp_overlap", False)
    h1, h2, h3, h4 = st.columns([3, 3, 2, 2])
    device = h1.selectbox("Device", list(devices), key="tp_device", **KEPT,
                          format_func=lambda d: f"{d}: {devices[d].peak_gflops:,.0f} GFLOP/s, "
                                                f"{devices[d].mem_bandwidth_gbs:,.0f} GB/s")
    network = h2.selectbox("Network", list(networks), key="tp_network", **KEPT,
                           format_func=lambda n: f"{n}: {networks[n].gbps:,g} Gbit/s")
    batch = h3.number_input("Batch size B", min_value=1, max_value=1_000_000, value=128, step=1, key="tp_batch",
                            **KEPT,
                            help="Weak scaling: images per worker. Strong scaling: images per iteration over "
                                 "all workers (each gets ceil(B / n)).")
    scaling = h4.radio("Scaling", ["weak", "strong"], key="tp_scaling", **KEPT, horizontal=True,
                       help="Weak: every worker keeps B, an iteration grows with n. Strong: the global batch B "
                            "is split over the workers.")

    s1, s2, s3, s4 = st.columns([3, 3, 2, 2])
    max_workers = s1.select_slider("Workers: 1, 2, 4, … up to", MAX_WORKER_OPTIONS, value=32,
                                   key="tp_max_workers", **KEPT)
    n_ps = s2.multiselect("Parameter servers p (modern mode)", PS_OPTIONS, default=[2, 4], key="tp_n_ps", **KEPT,
                          disabled=paleo, help="One ParameterServer_p<p> scheme per count, next to Optimus's "
                                               "p = 2 and p = 4 curves.")
    pipeline = s3.toggle("Pipelining", key="tp_pipeline", **KEPT,
                         help="Each layer costs max(compute, memory) instead of their sum (Paleo's "
                              "--use_pipeline).")
    overlap = s4.toggle("Overlap", key="tp_overlap", **KEPT, disabled=paleo,
                        help="Overlap communication with the backward pass (modern mode only): iteration = "
                             "forward + max(backward, communication) + update, as bucketed all-reduce does.")
    return Hardware(device=device, network=network, batch=int(batch), scaling=scaling,
                    max_workers=int(max_workers), n_ps=tuple(sorted(n_ps)), pipeline=pipeline,
                    overlap=overlap and not paleo)


def ppp_section() -> tuple[float, float]:
    """Software preset and the two PPPs (compute, communication)."""
    p1, p2, p3 = st.columns([2, 2, 2])
    st.session_state.setdefault("tp_ppp_comp", 1.0)
    st.session_state.setdefault("tp_ppp_comm", 1.0)
    p1.selectbox("Software preset (Paleo's PPP)", list(PRESET_LABELS), key="tp_preset", **KEPT,
                 on_change=_preset_chosen,
                 format_func=lambda p: PRESET_LABELS[p] if p == CUSTOM else
                 f"{PRESET_LABELS[p]}: {PPP_PRESETS[p][0]} / {PPP_PRESETS[p][1]}",
                 help="Platform percent of peak that Paleo's web demo uses for each framework (compute / "
                      "network).")
    ppp_comp = p2.number_input("PPP compute", min_value=PPP_MIN, max_value=PPP_MAX, step=0.01, format="%.4f",
                               key="tp_ppp_comp", **KEPT, on_change=_ppp_edited,
                               help="Fraction of the device's peak FLOP/s and memory bandwidth reached (1 = peak).")
    ppp_comm = p3.number_input("PPP communication", min_value=PPP_MIN, max_value=PPP_MAX, step=0.01,
                               format="%.4f", key="tp_ppp_comm", **KEPT, on_change=_ppp_edited,
                               help="Fraction of the network's bandwidth reached (1 = line rate).")
    return float(ppp_comp), float(ppp_comm)


def calibration_expander(choice: NetChoice, hw: Hardware, paleo: bool) -> None:
    """Fit PPP compute to a measured step time; show the last fit or its error."""
    with st.expander("Calibrate PPP compute from a measured step time", icon=":material/tune:",
                     expanded=CALIBRATION in st.session_state):
        c1, c2 = st.columns([1, 2])
        c1.number_input(f"Measured step time at batch {hw.batch} (ms)", min_value=0.0, value=None, step=1.0,
                        format="%.3f", key="tp_step_ms", **KEPT, placeholder="e.g. 250",
                        help="One training step (forward + backward + update) on one worker, in ms.")
        c1.button("Fit PPP and use it", key="tp_fit_ppp", icon=":material/tune:", on_click=_fit_ppp,
                  args=(choice.ref, choice.label, hw.device, hw.batch, paleo, hw.pipeline))
        fit = st.session_state.get(CALIBRATION)
        with c2:
            if fit is None:
                st.caption("Solves for the PPP at which the model's one-worker step time (forward + backward + "
                           "update) equals your measurement, for the model, device, batch and mode chosen above.")
            elif "error" in fit:
                st.error(plain(fit["error"]), icon=":material/error:")
            else:
                _show_fit(fit, choice, hw, paleo)


def _show_fit(fit: dict, choice: NetChoice, hw: Hardware, paleo: bool) -> None:
    cal = fit["result"]
    st.success(f"Fitted PPP compute **{cal.ppp_comp:.4f}**: {cal.measured_step_ms:,.3f} ms measured "
               f"against {cal.model_step_ms_at_peak:,.3f} ms at peak, {plain(fit['net'])} on {cal.device}, "
               f"batch {cal.batch_size}, {'Paleo-compatible' if cal.paleo_compatible else 'modern'} mode"
               + (", pipelining." if fit["pipeline"] else "."), icon=":material/check:")
    if not fit["applied"]:
        st.error(f"PPP {cal.ppp_comp:.4g} is outside [{PPP_MIN}, {PPP_MAX}] and was not applied.")
    for flag in cal.flags:
        st.warning(plain(flag), icon=":material/warning:")
    now = (fit["net"], cal.device, cal.batch_size, cal.paleo_compatible, fit["pipeline"])
    if now != (choice.label, hw.device, hw.batch, paleo, hw.pipeline):
        st.caption("The settings above changed since this fit; fit again to calibrate them.")
