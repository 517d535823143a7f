"""Calibrate page, hand-over: send the calibration's prediction for one GPU to the Plan page (a
StepsEstimate in the session). A section module of ``pages/calibrate.py``: widgets and rendering only.
"""

from __future__ import annotations

import streamlit as st

from core.calibrate import Calibration
from core.errors import InputError
from core.plan import steps_from_calibration
from pages.shared.common import CALIBRATED_STEPS, KEPT, guarded, plain


@st.fragment
@guarded("Calibrate: send")
def send_section(cal: Calibration) -> None:
    """Hand a prediction to the Plan page, on request (a ``StepsEstimate`` in the session)."""
    with st.expander("Send a prediction to the Plan page", icon=":material/send:"):
        gpus = [str(g) for g in cal.predictions["gpu"]]
        gpu = st.selectbox("GPU", gpus, key="cal_send_gpu", **KEPT)
        if st.button("Use on the Plan page", key="cal_send", icon=":material/send:"):
            try:
                st.session_state[CALIBRATED_STEPS] = steps_from_calibration(cal, gpu)
            except InputError as exc:
                st.error(plain(str(exc)), icon=":material/error:")
        sent = st.session_state.get(CALIBRATED_STEPS)
        if sent is not None:
            st.caption(f"The Plan page can use {sent.steps:,.0f} steps for {plain(sent.label)} "
                       "(Steps to target from: the Calibrate page's prediction).")
