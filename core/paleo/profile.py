"""A measured per-layer profile beside Paleo's and the roofline's per-layer estimates.

:func:`core.paleo.torch_profile.measure_profile` times a torch model's layers with
``torch.profiler`` (this module does not import torch); :func:`compare_profile` puts each
layer's measured time (forward + backward) beside two estimates, both scaled so that their
step equals the measured one, so that what differs is *where* each model puts the time:

* **Paleo** (modern mode, the torch bridge's layer list: convolutions, linear layers, pools,
  dropout; batch norm, ReLU and residual additions cost nothing), its PPP calibrated on the
  measured step (:func:`~core.paleo.ppp.calibrate_ppp`);
* **roofline** (:mod:`core.paleo.roofline`: every aten op, efficiencies per kind), its
  efficiencies calibrated with one common factor (:func:`~core.paleo.transfer.calibrate_transfer`).

Both run on the measured device described as a roof (:class:`~core.paleo.roofline.Roof`):
its peak is the rate of a large matrix product and its bandwidth the rate of a large copy,
both measured in the same run.  ``misplaced_share`` of an estimate is
``Σ|estimate - measured| / (2 Σ measured)`` over the layers: the share of the step's time it
puts on the wrong layers (0 = every layer right, 1 = none).
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import pandas as pd

from core.errors import LogFormatError
from core.paleo.devices import Device
from core.paleo.layers import Net
from core.paleo.ppp import calibrate_ppp
from core.paleo.roofline import Roof, roofline_layers
from core.paleo.simulate import layer_breakdown, step_time_ms
from core.paleo.transfer import calibrate_transfer
from core.paleo.transfer_records import Measurement, TransferCalibration
from core.paleo.workload import UPDATE_LAYER, Workload

UNATTRIBUTED = "(not attributed)"
#: the metadata columns of a saved profile, then the per-layer ones
META_COLUMNS = ("net", "batch_size", "device", "device_label", "threads", "steps", "step_time_ms",
                "profiled_step_ms", "gemm_gflops", "copy_gbs", "torch_version")
LAYER_COLUMNS = ("layer", "measured_fwd_ms", "measured_bwd_ms")
COMPARISON_COLUMNS = ("layer", "kind", "measured_fwd_ms", "measured_bwd_ms", "measured_ms", "roofline_ms", "paleo_ms")


@dataclass(frozen=True)
class LayerTime:
    """Measured time of one layer per step (seconds): its forward ops and its backward nodes."""

    layer: str
    forward_s: float
    backward_s: float


@dataclass(frozen=True)
class MeasuredProfile:
    """Per-layer times of a training step measured with ``torch.profiler``.

    Attributes
    ----------
    net : str
        ``torch:<model>``.
    batch_size : int
    device : str
        ``"cpu"`` or ``"cuda"``.
    device_label : str
        The processor or GPU name.
    threads : int
        Torch's intra-op threads during the measurement.
    steps : int
        Profiled steps; layer times are averaged over the faster half of them.
    step_time_s : float
        Median wall time of one step without the profiler.
    profiled_step_s : float
        Mean wall time of the faster half of the profiled steps (the layer times plus what no
        layer owns, and the profiler's own overhead).
    roof : Roof
        The device measured as a roof: a large FP32 matrix product's rate and a large copy's bandwidth.
    layers : tuple of LayerTime
        In execution order; the optimizer's step is the layer ``"optimizer step"``.
    torch_version : str
    """

    net: str
    batch_size: int
    device: str
    device_label: str
    threads: int
    steps: int
    step_time_s: float
    profiled_step_s: float
    roof: Roof
    layers: tuple[LayerTime, ...]
    torch_version: str

    @property
    def attributed_s(self) -> float:
        """Sum of the layers' times (forward, backward and the optimizer step), seconds."""
        return sum(t.forward_s + t.backward_s for t in self.layers)

    def as_device(self) -> Device:
        """The measured roof as a Paleo :class:`~core.paleo.devices.Device` (one-cycle floor at 1 GHz)."""
        return Device(self.roof.name, 1000.0, self.roof.matrix_tflops * 1e3, self.roof.mem_bandwidth_gbs,
                      is_gpu=self.device == "cuda", precision="fp32", source=self.roof.source)

    def to_frame(self) -> pd.DataFrame:
        """The saved form: :data:`META_COLUMNS` (repeated) and :data:`LAYER_COLUMNS`, one row per layer."""
        meta = (self.net, self.batch_size, self.device, self.device_label, self.threads, self.steps,
                self.step_time_s * 1e3, self.profiled_step_s * 1e3, self.roof.matrix_tflops * 1e3,
                self.roof.mem_bandwidth_gbs, self.torch_version)
        return pd.DataFrame([(*meta, t.layer, t.forward_s * 1e3, t.backward_s * 1e3) for t in self.layers],
                            columns=[*META_COLUMNS, *LAYER_COLUMNS])


def measured_roof(device_label: str, gemm_gflops: float, copy_gbs: float, *, threads: int) -> Roof:
    """The roof of a measured device (FP32): matrix and vector peak = the measured GEMM rate."""
    return Roof(f"{device_label} ({threads} thread{'s' if threads != 1 else ''})", "fp32", gemm_gflops / 1e3,
                gemm_gflops / 1e3, copy_gbs,
                f"measured here: {gemm_gflops:,.1f} GFLOP/s (FP32 matrix product), {copy_gbs:,.1f} GB/s (copy)")


def read_profile(data: bytes | str, source: str) -> MeasuredProfile:
    """A profile saved by ``python -m core profile`` (or :meth:`MeasuredProfile.to_frame`).

    Raises
    ------
    LogFormatError
        If columns are missing or the metadata differ between rows.
    """
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    try:
        frame = pd.read_csv(io.StringIO(text))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise LogFormatError(source, f"expected a CSV profile; got unreadable text ({exc}).") from None
    missing = [c for c in (*META_COLUMNS, *LAYER_COLUMNS) if c not in frame.columns]
    if missing:
        raise LogFormatError(source, f"expected the columns of python -m core profile; got none of "
                                     f"{', '.join(missing)}. Save the profile with that command.")
    meta = frame[list(META_COLUMNS)].drop_duplicates()
    if len(meta) != 1:
        raise LogFormatError(source, f"expected one run's metadata on every row; got {len(meta)} different ones. "
                                     "Save one profile per file.")
    m = meta.iloc[0]
    roof = measured_roof(str(m["device_label"]), float(m["gemm_gflops"]), float(m["copy_gbs"]),
                         threads=int(m["threads"]))
    layers = tuple(LayerTime(str(r.layer), float(r.measured_fwd_ms) / 1e3, float(r.measured_bwd_ms) / 1e3)
                   for r in frame.itertuples() if r.layer != UNATTRIBUTED)
    return MeasuredProfile(net=str(m["net"]), batch_size=int(m["batch_size"]), device=str(m["device"]),
                           device_label=str(m["device_label"]), threads=int(m["threads"]), steps=int(m["steps"]),
                           step_time_s=float(m["step_time_ms"]) / 1e3,
                           profiled_step_s=float(m["profiled_step_ms"]) / 1e3, roof=roof, layers=layers,
                           torch_version=str(m["torch_version"]))


@dataclass(frozen=True)
class ProfileRow:
    """One layer: measured and estimated forward + backward time per step, ms (estimates None where a model
    has no such layer)."""

    layer: str
    kind: str
    measured_fwd_ms: float
    measured_bwd_ms: float
    roofline_ms: float | None
    paleo_ms: float | None

    @property
    def measured_ms(self) -> float:
        return self.measured_fwd_ms + self.measured_bwd_ms


@dataclass(frozen=True)
class ProfileComparison:
    """Measured per-layer times beside the calibrated roofline and Paleo (module docstring).

    Attributes
    ----------
    net, device_label : str
    batch_size : int
    rows : tuple of ProfileRow
        The layers in execution order, the optimizer step, then :data:`UNATTRIBUTED` (measured
        step time no layer owns: Python, hooks, the profiler; no estimate).
    calibration : TransferCalibration
        The roofline's common factor on the measured device.
    ppp_comp : float
        Paleo's PPP fitted on the same time.
    misplaced_share : dict of str to float
        ``{"roofline": ..., "paleo": ...}``, see the module docstring.
    """

    net: str
    device_label: str
    batch_size: int
    rows: tuple[ProfileRow, ...]
    calibration: TransferCalibration
    ppp_comp: float
    misplaced_share: dict[str, float]

    def to_frame(self) -> pd.DataFrame:
        """Columns :data:`COMPARISON_COLUMNS`, one row per layer."""
        return pd.DataFrame([(r.layer, r.kind, r.measured_fwd_ms, r.measured_bwd_ms, r.measured_ms, r.roofline_ms,
                              r.paleo_ms) for r in self.rows], columns=list(COMPARISON_COLUMNS))

    def by_kind(self) -> pd.DataFrame:
        """Measured and estimated ms summed per kind of layer (the unattributed time left out)."""
        frame = self.to_frame()
        frame = frame[frame["layer"] != UNATTRIBUTED]
        return frame.groupby("kind", sort=False)[["measured_ms", "roofline_ms", "paleo_ms"]].sum().reset_index()


def _paleo_layers(net: Net, device: Device, batch_size: int, measured_ms: float) -> tuple[dict[str, float], float]:
    """Paleo's per-layer forward + backward ms (repeat calls ``name#k`` summed into ``name``) and its PPP."""
    ppp = calibrate_ppp(net, measured_ms, device=device, batch_size=batch_size).ppp_comp
    breakdown = layer_breakdown(net, device=device, batch_size=batch_size, ppp_comp=ppp)
    per_layer: dict[str, float] = {}
    for layer, ms in zip(breakdown["layer"], breakdown["total_ms"]):
        base = layer.split("#")[0]
        per_layer[base] = per_layer.get(base, 0.0) + float(ms)
    step_ms = step_time_ms(net, device=device, batch_size=batch_size, ppp_comp=ppp)
    per_layer[UPDATE_LAYER] = step_ms - float(breakdown["total_ms"].sum())
    return per_layer, ppp


def compare_profile(profile: MeasuredProfile, workload: Workload, net: Net) -> ProfileComparison:
    """Each measured layer beside the roofline's and Paleo's estimates, both calibrated on the measured step.

    Parameters
    ----------
    profile : MeasuredProfile
    workload : Workload
        The traced workload of the same model (:func:`core.paleo.torch_work.workload_from_model`).
    net : Net
        Paleo's layer list of the same model (:func:`core.paleo.load_net`).

    Returns
    -------
    ProfileComparison
        Both estimates sum to the measured layers' total (forward, backward, optimizer step).
    """
    attributed_ms = profile.attributed_s * 1e3
    calibration = calibrate_transfer([Measurement(workload, profile.roof, "fp32", profile.batch_size,
                                                  profile.attributed_s, label=f"{profile.net} on {profile.roof.name}")],
                                     fit="common")
    roof = roofline_layers(workload, profile.roof, precision="fp32", batch_size=profile.batch_size,
                           efficiencies=calibration.efficiencies).set_index("layer")
    paleo, ppp = _paleo_layers(net, profile.as_device(), profile.batch_size, attributed_ms)
    rows = []
    for t in profile.layers:
        estimated = float(roof.loc[t.layer, "total_ms"]) if t.layer in roof.index else 0.0
        if t.forward_s == t.backward_s == 0 and estimated == 0 and not paleo.get(t.layer):
            continue                                     # a container that runs nothing itself
        kind = str(roof.loc[t.layer, "kind"]) if t.layer in roof.index else "elementwise"
        rows.append(ProfileRow(t.layer, kind, t.forward_s * 1e3, t.backward_s * 1e3, estimated,
                               paleo.get(t.layer, 0.0)))
    # layers the model ran that the profile did not see (no time measured)
    seen = {t.layer for t in profile.layers}
    rows += [ProfileRow(layer, str(roof.loc[layer, "kind"]), 0.0, 0.0, float(roof.loc[layer, "total_ms"]),
                        paleo.get(layer, 0.0)) for layer in roof.index if layer not in seen]
    shown = {r.layer for r in rows}
    rows += [ProfileRow(layer, "other", 0.0, 0.0, 0.0, ms) for layer, ms in paleo.items() if ms and layer not in shown]
    measured_total = sum(r.measured_ms for r in rows)
    misplaced = {name: sum(abs((getattr(r, f"{name}_ms") or 0.0) - r.measured_ms) for r in rows) / (2 * measured_total)
                 for name in ("roofline", "paleo")}
    unattributed = max(0.0, (profile.profiled_step_s - profile.attributed_s) * 1e3)
    rows.append(ProfileRow(UNATTRIBUTED, "other", unattributed, 0.0, None, None))
    return ProfileComparison(net=profile.net, device_label=profile.roof.name, batch_size=profile.batch_size,
                             rows=tuple(rows), calibration=calibration, ppp_comp=ppp, misplaced_share=misplaced)


def profile_report(profile: MeasuredProfile, comparison: ProfileComparison) -> pd.DataFrame:
    """What ``python -m core profile`` prints: the run's :data:`META_COLUMNS` on every row, then the comparison
    (:data:`COMPARISON_COLUMNS`); :func:`read_profile` reads it back."""
    meta = profile.to_frame()[list(META_COLUMNS)].iloc[0]
    frame = comparison.to_frame()
    for i, column in enumerate(META_COLUMNS):
        frame.insert(i, column, meta[column])
    return frame
