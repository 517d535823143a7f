"""Throughput page, the results: throughput and speed-up over workers, the per-layer breakdown,
the table of every worker count.

A section module of ``pages/throughput.py``: widgets, cached calls into ``core.paleo`` and rendering only.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.errors import InputError
from core.figures.paleo import layer_breakdown_figure, paleo_speedup_figure, throughput_figure
from core.paleo import (
    TORCH_PREFIX,
    PaleoScaling,
    get_device,
    get_network,
    layer_breakdown,
    simulate,
    worker_counts,
)
from pages.shared.bounded import bounded_data
from pages.shared.common import KEPT, chart, guarded, plain, table_download
from pages.shared.render import metric
from pages.throughput_sections.inputs import Hardware, NetChoice, net_of


@bounded_data(show_spinner=False)
def _simulate(ref: tuple, device: str, network: str, batch: int, workers: tuple[int, ...],
              scaling: str, ppp_comp: float, ppp_comm: float, paleo: bool, pipeline: bool,
              overlap: bool, n_ps: tuple[int, ...]) -> PaleoScaling:
    return simulate(net_of(ref), device=device, network=network, batch_size=batch, workers=workers,
                    scaling=scaling, ppp_comp=ppp_comp, ppp_comm=ppp_comm, paleo_compatible=paleo,
                    pipeline=pipeline, overlap=overlap, n_ps=n_ps)


@bounded_data(show_spinner=False)
def _breakdown(ref: tuple, device: str, batch: int, ppp_comp: float, paleo: bool) -> pd.DataFrame:
    return layer_breakdown(net_of(ref), device=device, batch_size=batch, ppp_comp=ppp_comp,
                           paleo_compatible=paleo)


def _stem(label: str, hw: Hardware) -> str:
    """File-name stem of the downloads: net, device, network, scaling, batch."""
    net = label.removeprefix(TORCH_PREFIX).removesuffix(".json")
    return f"{net}_{hw.device}_{hw.network}_{hw.scaling}_b{hw.batch}"


def _simulated(choice: NetChoice, hw: Hardware, ppp: tuple[float, float], paleo: bool
               ) -> tuple[PaleoScaling, NetChoice]:
    """The simulation of the chosen net, or of the selectbox's built-in when an upload cannot be priced."""
    settings = (hw.device, hw.network, hw.batch, worker_counts(hw.max_workers), hw.scaling, *ppp, paleo,
                hw.pipeline, hw.overlap, hw.n_ps)
    try:
        return _simulate(choice.ref, *settings), choice
    except InputError as exc:  # e.g. a convolution the faithful mode cannot price
        upload = choice.ref[0] == "upload"
        st.error(plain(f"{choice.label}: {exc}" + (f" The page shows {choice.model} instead." if upload else "")),
                 icon=":material/error:")
        if not upload:
            st.stop()
    choice = choice.fallback()
    return _simulate(choice.ref, *settings), choice


def results_section(choice: NetChoice, hw: Hardware, ppp: tuple[float, float], paleo: bool
                    ) -> tuple[PaleoScaling, NetChoice]:
    """Net, device and network facts, the headline metrics, throughput and speed-up charts."""
    res, choice = _simulated(choice, hw, ppp, paleo)
    net, dev, link = net_of(choice.ref), get_device(hw.device), get_network(hw.network)
    st.caption(f"**{plain(choice.label)}** ({plain(net.source)}): {net.n_params:,} parameters, "
               f"{net.params_bytes:,} bytes of fp32 gradients synchronised per iteration. "
               f"**{dev.name}**: {dev.peak_gflops:,.0f} GFLOP/s "
               f"({dev.precision}), {dev.mem_bandwidth_gbs:,.0f} GB/s memory"
               + (" (used as GiB/s, as Paleo does)" if paleo else "")
               + f", {dev.clock_mhz:,.0f} MHz clock (the one-cycle floor); source: {dev.source}. "
               f"**{link.name}**: {link.gbps:,g} Gbit/s per direction, no latency term; source: {link.source}.")

    head = res.headline()
    one, last = head.smallest, head.largest
    k1, k2, k3, k4 = st.columns(4)
    k1.metric("Iteration time, 1 worker", f"{one.time_comp_ms:,.2f} ms",
              help=f"Forward {one.time_fwd_ms:,.3f} + backward {one.time_bwd_ms:,.3f} + update "
                   f"{one.time_apply_ms:,.3f} ms at batch {one.batch_per_worker}; no communication.")
    k2.metric("Images/s, 1 worker", f"{one.no_comm_throughput_img_s:,.1f}",
              help="Throughput on one worker: images per iteration ÷ iteration time, with no communication.")
    k3.metric("Naive bound, images/s", f"{one.naive_peak_img_s:,.1f}",
              help=f"One worker's naive bound: device FLOP/s ÷ FLOPs per image: {res.peak_gflops:,.0f} GFLOP/s ÷ "
                   f"{res.flops_per_image:,.4g} FLOPs (forward + backward; 2 per multiply-add) per image; no memory "
                   "traffic, no communication, PPP 1.")
    # the scheme goes under the metric: in its delta it was cut ("RingAllReduce: 18.68× spe…")
    metric(k4, f"Images/s, {last.workers} workers", f"{head.fastest_throughput_img_s:,.1f}",
           delta=f"{head.fastest_speedup:,.2f}× speed-up", delta_color="off",
           under=f"Fastest scheme: {head.fastest_scheme}",
           help="The exact scheme (every worker gets the average of all gradients) with the highest "
                "throughput at the largest worker count, and its speed-up over one worker. Butterfly mixing is "
                "left out: its single link time per iteration buys only an exchange with one partner.")

    stem = _stem(choice.label, hw)
    st.subheader(f"Throughput and speed-up over 1 … {last.workers} workers")
    log_x = st.toggle("Logarithmic worker axis", value=True, key="tp_log_x", **KEPT)
    inputs = (choice.key, hw, ppp, paleo)
    chart(throughput_figure, res, log_x=log_x, key="tp_throughput_chart", file_stem=f"throughput_{stem}",
          inputs=inputs)
    chart(paleo_speedup_figure, res, log_x=log_x, key="tp_speedup_chart", file_stem=f"speedup_{stem}",
          inputs=inputs)
    st.caption("Communication moves every fp32 gradient once per iteration by each scheme; total = compute + "
               "communication" + (", with communication hidden behind the backward pass where it fits."
                                  if hw.overlap else " (no overlap).")
               + " The naive bound scales the one-worker bound by n (dashed). ButterflyMixing costs one link time "
               "at any n because each worker exchanges with one partner per iteration: the gradients are not "
               "averaged over all workers, so it is not comparable with the exact schemes.")
    return res, choice


@st.fragment
@guarded("Throughput: breakdown")
def breakdown_section(choice: NetChoice, hw: Hardware, ppp_comp: float, paleo: bool) -> None:
    """The slowest layers (chart) and every layer (table) on one worker."""
    st.subheader(f"Per-layer breakdown (one worker, batch {hw.batch})")
    stem = _stem(choice.label, hw)
    breakdown = _breakdown(choice.ref, hw.device, hw.batch, ppp_comp, paleo)
    top = st.slider("Layers shown", min_value=5, max_value=40, value=15, key="tp_top", **KEPT)
    chart(layer_breakdown_figure, breakdown, top=top, key="tp_layers_chart", file_stem=f"layers_{stem}",
          inputs=(choice.key, hw.device, hw.batch, ppp_comp, paleo))
    st.dataframe(breakdown, key="tp_layers_table", hide_index=True, width="stretch",
                 column_config={**{c: st.column_config.NumberColumn(format="%.4g") for c in breakdown.columns
                                   if c.endswith("_ms")},
                                **{c: st.column_config.NumberColumn(format="scientific")
                                   for c in ("fwd_flops", "bwd_flops")}})
    table_download(breakdown, key="tp_layers_csv", file_name=f"layers_{stem}.csv", label="Layer table (CSV)")
    st.caption("Compute = FLOPs (2 per multiply-add, as torch's counter and NVIDIA's peaks count; ptflops, thop and "
               "fvcore print multiply-adds, half as many) ÷ (peak × PPP); memory = bytes read and written ÷ "
               "(bandwidth × PPP); each term has a one-clock-cycle floor. Free layers (ReLU, batch norm, concat, …) "
               "cost nothing. Sort by a column by clicking its header.")


def results_table(res: PaleoScaling, choice: NetChoice, hw: Hardware) -> None:
    """One row per worker count: the CLI's CSV."""
    st.subheader("Results per worker count")
    frame = res.to_frame()
    st.dataframe(frame, key="tp_results_table", hide_index=True, width="stretch")
    table_download(frame, key="tp_results_csv", file_name=f"paleo_{_stem(choice.label, hw)}.csv",
                   label="Results (CSV)")
    st.caption("The columns start with those of Paleo's validation table (python -m core paleo prints the same "
               "CSV).")
