"""Throughput: Paleo's analytical estimate of iteration time, throughput and speed-up over workers.

Every number comes from the ``core.paleo`` facade (``simulate``, ``layer_breakdown``,
``calibrate_ppp``, ``settings_for_mode``, ``PaleoScaling.headline``) through the small cached
wrappers of its sections (``pages/throughput_sections``: the inputs, the results); every chart
from ``core.figures.paleo``.  The transfer to other GPUs and the measured per-layer profile are
the sections of ``pages/shared/transfer.py``.  The answer (throughput and speed-up) is drawn
first, the inputs below it; docs/paleo.md has the model.
"""

from __future__ import annotations

import streamlit as st

from pages.shared.common import guarded, page_setup
from pages.shared.transfer import profile_section, transfer_section
from pages.throughput_sections.inputs import (
    calibration_expander,
    hardware_section,
    mode_section,
    model_section,
    ppp_section,
)
from pages.throughput_sections.results import breakdown_section, results_section, results_table
from pages.throughput_sections.transformer import transformer_section


# ---------------------------------------------------------------- page
@guarded("The Throughput page")
def main() -> None:
    page_setup()
    st.title("Throughput")
    st.caption("Paleo (Qi, Sparks, Talwalkar, ICLR 2017): per-layer FLOPs and memory traffic on a device, "
               "plus the gradient synchronisation over a network, give the time of one training "
               "iteration, the throughput and the speed-up of data-parallel training over workers.")
    answer = st.container()      # throughput and speed-up first, filled once the inputs below are read
    st.divider()
    paleo_mode = mode_section()
    net_choice = model_section()
    hardware = hardware_section(paleo_mode)
    ppp_values = ppp_section()
    calibration_expander(net_choice, hardware, paleo_mode)
    with answer:
        result, net_choice = results_section(net_choice, hardware, ppp_values, paleo_mode)
    breakdown_section(net_choice, hardware, ppp_values[0], paleo_mode)
    results_table(result, net_choice, hardware)
    transfer_section(net_choice.key, net_choice.ref, net_choice.label)
    profile_section(net_choice.model)
    st.divider()
    transformer_section()


main()
