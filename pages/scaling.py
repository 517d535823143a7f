"""Scaling: parameter-server rounds, sync vs async updates, measured scaling, batch size (issue 6).

Every number on this page comes from the ``core.scaling`` facade (its modules ``ps_rounds``,
``sync_async``, ``table``, ``measured`` and ``batch_size``) through the small cached wrappers of its sections;
every chart from ``core.figures.scaling``. The page only reads widgets, calls those wrappers and
renders; see docs/scaling.md for the formulas.
"""

from __future__ import annotations

import streamlit as st

from pages.scaling_sections.batch import batch_scaling_section, batch_section
from pages.scaling_sections.measured import measured_section
from pages.scaling_sections.ps import ps_section
from pages.scaling_sections.sync import sync_section
from pages.shared.common import guarded, page_setup


# ---------------------------------------------------------------- page
@guarded("The Scaling page")
def main() -> None:
    page_setup()
    st.title("Scaling")
    st.caption("Size a parameter-server job on paper, see what asynchronous updates do, and read "
               "speed-up, efficiency, the communication share and the bandwidth used off measured "
               "times (your own or the Pollux traces). Formulas: docs/scaling.md.")
    tab_ps, tab_sync, tab_measured, tab_batch = st.tabs(
        ["Parameter-server rounds", "Sync vs async", "Measured scaling", "Batch size"])
    with tab_ps:
        ps_section()
    with tab_sync:
        sync_section()
    with tab_measured:
        measured_section()
    with tab_batch:
        batch_scaling_section()
        st.markdown("#### The linear learning-rate rule")
        batch_section()


main()
