"""Throughput page, the language-model section: a transformer's step time per GPU count (``core.transformer``).

A section module of ``pages/throughput.py``: widgets, cached calls into ``core.transformer`` and rendering
only.  The model is a built-in config or an uploaded ``config.json`` (read by ``load_config`` from a
temporary file: nothing is downloaded); the device, sequence length, global batch, GPU counts, the
strategy (given, dp from each count, or searched) and an optional measured step that calibrates the
fractions of peak.  Shown per GPU count: the step split into compute, exposed communication and bubble,
the memory per GPU against the device's usable memory, utilisation, tokens/s, intervals, and the notes
that name each number's source.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st

from core.errors import PlannerError
from core.figures.transformer import memory_figure, step_split_figure
from core.transformer import (
    ACCELERATORS,
    BUILTIN,
    Efficiency,
    Measurement,
    calibrate,
    get_accelerator,
    load_config,
    parse_strategy,
    step_table,
    with_dp,
)
from pages.shared.bounded import bounded_data
from pages.shared.common import KEPT, chart, plain, table_download

UPLOAD = "upload a config.json"
DEFAULT_MODEL = "llama31_8b"
DEFAULT_DEVICE = "H100_SXM"


def _config(model: str, upload: bytes | None):
    if model != UPLOAD:
        return load_config(model)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "config.json"
        path.write_bytes(upload or b"")
        return load_config(str(path))


@bounded_data(show_spinner=False)
def _table(model: str, upload: bytes | None, device: str, seq_len: int, global_batch: int, gpus: tuple[int, ...],
           parallel: str, precision: str,
           measured: tuple | None) -> tuple[pd.DataFrame, tuple[str, ...], tuple[str, ...]]:
    """Rows per GPU count that has a strategy, the notes, and one sentence per count that has none."""
    cfg = _config(model, upload)
    acc = get_accelerator(device)
    strategy = parse_strategy(parallel) if parallel.strip() else None
    prior = Efficiency(precision=precision)
    calibration = None
    if measured is not None:
        seconds, on_device, on_gpus = measured
        m = Measurement(seconds, get_accelerator(on_device), on_gpus, global_batch, seq_len,
                        with_dp(strategy, on_gpus) if strategy else None,
                        source=f"measured, typed on the page ({seconds:g} s at {on_gpus}×{on_device})")
        calibration = calibrate(cfg, [m], prior=prior)
    rows, notes, problems = [], (), []
    for g in gpus:
        try:
            r, n = step_table(cfg, acc, [g], global_batch=global_batch, seq_len=seq_len, strategy=strategy,
                              calibration=calibration, prior=prior)
        except PlannerError as err:
            problems.append(f"{g} GPUs: {err}")
            continue
        rows += r
        notes = tuple(dict.fromkeys(notes + n))
    return pd.DataFrame(rows), notes, tuple(problems)


def _gpu_counts(text: str) -> tuple[int, ...] | None:
    try:
        values = tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        return None
    return values if values and min(values) >= 1 else None


def transformer_section() -> None:
    """The whole section: inputs, then the charts, the table and the notes."""
    st.header("Language model: transformer step time")
    st.caption("core.transformer (docs/transformer.md): the model's FLOPs and bytes per step on the device's "
               "datasheet peaks, data × tensor × pipeline × context parallelism with its collectives, bubble and "
               "memory; one measured step calibrates the fractions of peak.")
    c1, c2, c3 = st.columns(3)
    model = c1.selectbox("Language model", [*BUILTIN, UPLOAD], index=list(BUILTIN).index(DEFAULT_MODEL), key="tf_model",
                         **KEPT)
    upload = None
    if model == UPLOAD:
        file = c1.file_uploader("config.json (Hugging Face)", type=["json"], key="tf_config_upload")
        if file is None:
            st.info("Upload a Hugging Face config.json, or pick a built-in model.")
            return
        upload = file.getvalue()
    device = c2.selectbox("GPU type", list(ACCELERATORS), index=list(ACCELERATORS).index(DEFAULT_DEVICE),
                          key="tf_device", **KEPT)
    precision = c3.radio("Tensor peak", ["bf16", "fp8"], horizontal=True, key="tf_precision", **KEPT)
    d1, d2, d3 = st.columns(3)
    seq_len = int(d1.number_input("Sequence length (tokens)", 1, 1_000_000, 8192, key="tf_seq_len", **KEPT))
    global_batch = int(d2.number_input("Global batch (sequences)", 1, 1_000_000, 32, key="tf_global_batch", **KEPT))
    gpus_text = d3.text_input("GPU counts", "8,16,32,64", key="tf_gpus", **KEPT)
    parallel = st.text_input("Strategy (tp=..,pp=..,cp=..; dp from each count; blank = the fastest that fits)", "",
                             key="tf_parallel", **KEPT)
    measured = None
    with st.expander("Calibrate on a measured step (optional)"):
        m1, m2, m3 = st.columns(3)
        seconds = m1.number_input("Seconds per step (0 = none)", 0.0, 1e6, 0.0, key="tf_measured_s", **KEPT)
        on_device = m2.selectbox("Measured on", list(ACCELERATORS), index=list(ACCELERATORS).index(DEFAULT_DEVICE),
                                 key="tf_measured_device", **KEPT)
        on_gpus = int(m3.number_input("GPUs", 1, 1_000_000, 8, key="tf_measured_gpus", **KEPT))
        if seconds > 0:
            measured = (float(seconds), on_device, on_gpus)
    gpus = _gpu_counts(gpus_text)
    if gpus is None:
        st.error(f"GPU counts: expected whole numbers >= 1 separated by commas; got {plain(gpus_text)}. "
                 "Write e.g. 8,16,32.")
        return
    try:
        rows, notes, problems = _table(model, upload, device, seq_len, global_batch, gpus, parallel, precision,
                                       measured)
    except PlannerError as err:
        st.error(plain(str(err)))
        return
    for problem in problems:
        st.warning(plain(problem))
    if rows.empty:
        return
    inputs = (model, hash(upload), device, seq_len, global_batch, gpus, parallel, precision, measured)
    left, right = st.columns(2)
    with left:
        chart(step_split_figure, rows, key="tf_split_chart", file_stem="transformer_step_split", inputs=inputs)
    with right:
        chart(memory_figure, rows, key="tf_memory_chart", file_stem="transformer_memory", inputs=inputs)
    first = rows.iloc[0]
    k1, k2, k3 = st.columns(3)
    k1.metric(f"Step, {int(first['gpus'])} GPUs", f"{first['step_s']:.4g} s",
              help=f"interval {first['step_low_s']:.4g} to {first['step_high_s']:.4g} s")
    k2.metric(f"Tokens/s, {int(first['gpus'])} GPUs", f"{first['tokens_per_s']:,.0f}")
    k3.metric(f"Utilisation (MFU), {int(first['gpus'])} GPUs", f"{first['mfu']:.1%}")
    st.caption("Memory per GPU against the device's usable memory (90 % of its HBM): the strategy search keeps only "
               "splits under that line; a larger model or batch needs more tensor or pipeline ranks.")
    st.dataframe(rows, hide_index=True, key="tf_table")
    table_download(rows, key="tf_table_csv", file_name="transformer_steps.csv")
    with st.expander("Where each number comes from", expanded=False):
        for note in notes:
            st.markdown(f"- {plain(note)}")
