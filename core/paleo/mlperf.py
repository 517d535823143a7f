"""The per-accelerator throughput of an MLPerf Training run, from its MLLOG result file.

Only what the transfer check needs (the general MLLOG reader belongs to ``core.logs``):
every ``:::MLLOG {json}`` line is read; ``global_batch_size`` and ``d_batch_size`` (the
batch on one accelerator) give the number of accelerators; ``tracked_stats`` events carry
the throughput of each epoch in samples/s over all accelerators (``value.throughput``, or
``value.imgs_sec`` in older NVIDIA-derived submissions).  The steady throughput is the
**median over the epochs after the first** (the first epoch includes start-up: cuDNN
autotuning, DALI warm-up; it runs at 35-70 % of the others in the v3.0 ResNet-50 logs).

:func:`check_transfer` is the issue's check: calibrate the roofline on the runs of one
system, predict the per-accelerator throughput of another, and compare the predicted ratio
with the measured one, beside what the datasheet peaks alone, the bandwidths alone, and
Paleo's one-PPP model would say.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from core.devices import get_device
from core.errors import InputError, LogFormatError
from core.paleo.roofline import DEFAULT_EFFICIENCIES, Efficiencies, roofline_step
from core.paleo.transfer import calibrate_transfer, predict_step
from core.paleo.transfer_records import Measurement, TransferCalibration
from core.paleo.workload import KINDS, Workload

PREFIX = ":::MLLOG "
_THROUGHPUT_KEYS = ("throughput", "imgs_sec")


@dataclass(frozen=True)
class MlperfThroughput:
    """Throughput of one MLPerf run.

    Attributes
    ----------
    source : str
        File name.
    platform : str
        ``submission_platform`` (e.g. ``"1xNVIDIA DGX H100"``).
    global_batch, local_batch : int
        Samples per step over all accelerators, and on one.
    epochs_img_s : tuple of float
        Throughput of each epoch over all accelerators, samples/s.
    """

    source: str
    platform: str
    global_batch: int
    local_batch: int
    epochs_img_s: tuple[float, ...]

    @property
    def n_accelerators(self) -> int:
        """``global_batch / local_batch``."""
        return self.global_batch // self.local_batch

    @property
    def steady_img_s(self) -> float:
        """Median throughput over the epochs after the first, all accelerators, samples/s."""
        return float(statistics.median(self.epochs_img_s[1:]))

    @property
    def per_accelerator_img_s(self) -> float:
        """Steady throughput of one accelerator, samples/s."""
        return self.steady_img_s / self.n_accelerators

    @property
    def step_time_s(self) -> float:
        """Seconds per step on one accelerator: ``local_batch / per_accelerator_img_s``."""
        return self.local_batch / self.per_accelerator_img_s


def read_mlperf_throughput(text: str | bytes, source: str) -> MlperfThroughput:
    """Read batch sizes and per-epoch throughput from an MLLOG result file.

    Raises
    ------
    LogFormatError
        If a needed key is missing or fewer than two epochs carry a throughput.

    Examples
    --------
    >>> log = "\\n".join([
    ...     ':::MLLOG {"key": "submission_platform", "value": "1xToy"}',
    ...     ':::MLLOG {"key": "global_batch_size", "value": 800}',
    ...     ':::MLLOG {"key": "d_batch_size", "value": 100}',
    ...     *[f':::MLLOG {{"key": "tracked_stats", "value": {{"throughput": {t}}}}}' for t in (100, 800, 820, 810)]])
    >>> r = read_mlperf_throughput(log, "toy.txt")
    >>> r.n_accelerators, r.steady_img_s, r.per_accelerator_img_s, r.step_time_s
    (8, 810.0, 101.25, 0.9876543209876543)
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    values: dict[str, object] = {}
    epochs: list[float] = []
    for line in text.splitlines():
        if not line.startswith(PREFIX):
            continue
        try:
            event = json.loads(line[len(PREFIX):])
        except json.JSONDecodeError:
            continue                       # interleaved output of several ranks; the others are enough
        key, value = event.get("key"), event.get("value")
        if key == "tracked_stats" and isinstance(value, dict):
            found = [value[k] for k in _THROUGHPUT_KEYS if k in value]
            if found:
                epochs.append(float(found[0]))
        elif key in ("submission_platform", "global_batch_size", "d_batch_size"):
            values[key] = value
    missing = [k for k in ("global_batch_size", "d_batch_size") if k not in values]
    if missing:
        raise LogFormatError(source, f"expected MLLOG events {', '.join(missing)}; got none. Give an MLPerf "
                                     "Training result file (result_<n>.txt).")
    if len(epochs) < 2:
        raise LogFormatError(source, f"expected tracked_stats throughput for at least 2 epochs; got {len(epochs)}. "
                                     "The steady throughput leaves out the first epoch.")
    return MlperfThroughput(source=source, platform=str(values.get("submission_platform", "")),
                            global_batch=int(values["global_batch_size"]), local_batch=int(values["d_batch_size"]),
                            epochs_img_s=tuple(epochs))


@dataclass(frozen=True)
class TransferCheck:
    """Predicted against measured per-accelerator throughput of one system, calibrated on another.

    Attributes
    ----------
    source, target : str
        GPU names (calibrated on ``source``, predicting ``target``).
    source_img_s, target_img_s : float
        Measured steady throughput of one accelerator (mean over the runs given), samples/s.
    source_batch, target_batch : int
        Batch per accelerator of those runs.
    predicted_img_s, predicted_low, predicted_high : float
        The transfer's prediction for ``target`` and its interval.
    peak_ratio, bandwidth_ratio, paleo_ratio : float
        Throughput ratio target/source that the precision's dense tensor peaks alone, the memory
        bandwidths alone, and Paleo's model with one PPP (its layer list; the free layers cost
        nothing) predict.
    calibration : TransferCalibration
    """

    source: str
    target: str
    source_img_s: float
    target_img_s: float
    source_batch: int
    target_batch: int
    predicted_img_s: float
    predicted_low: float
    predicted_high: float
    peak_ratio: float
    bandwidth_ratio: float
    paleo_ratio: float
    calibration: TransferCalibration

    @property
    def measured_ratio(self) -> float:
        """``target_img_s / source_img_s``."""
        return self.target_img_s / self.source_img_s

    def error(self, ratio: float) -> float:
        """Relative error of a predicted ratio: ``ratio / measured_ratio - 1``."""
        return ratio / self.measured_ratio - 1

    @property
    def predicted_ratio(self) -> float:
        return self.predicted_img_s / self.source_img_s


def _steady(runs: Sequence[MlperfThroughput], what: str) -> tuple[float, int]:
    if not runs:
        raise InputError(f"{what}: expected at least one MLPerf run; got none. Give its result files.")
    batches = {r.local_batch for r in runs}
    if len(batches) != 1:
        raise InputError(f"{what}: expected runs at one batch per accelerator; got {sorted(batches)}. "
                         "Give the runs of one configuration.")
    return statistics.fmean(r.per_accelerator_img_s for r in runs), batches.pop()


def check_transfer(source_runs: Sequence[MlperfThroughput], target_runs: Sequence[MlperfThroughput],
                   workload: Workload, paleo_workload: Workload, *, source: str, target: str,
                   precision: str = "fp16", prior: Efficiencies = DEFAULT_EFFICIENCIES,
                   form: str = "max") -> TransferCheck:
    """Calibrate on ``source_runs`` (GPU ``source``), predict ``target``'s per-accelerator throughput.

    Parameters
    ----------
    source_runs, target_runs : sequence of MlperfThroughput
        Runs of one configuration each (e.g. the two seeds of a system).
    workload : Workload
        The traced workload of the benchmark's model (``load_workload("torch:resnet50")``).
    paleo_workload : Workload
        Paleo's layer list of it without the free layers (``workload_from_net(net, free_layers=False)``),
        for the one-PPP comparison.
    source, target : str
        Device names of the table (:data:`core.devices.DEVICES`, keys or aliases).
    precision : str, default="fp16"
        MLPerf's ResNet-50 submissions train in FP16 (``--dtype float16``).
    prior, form
        Of the roofline (:func:`~core.paleo.transfer.calibrate_transfer`).

    Notes
    -----
    Each system's step is one accelerator's compute at its batch: the gradient all-reduce of
    ResNet-50 (51 MB in FP16) is overlapped with the backward pass in these submissions and
    takes under 3 % of a step even over PCIe, so it is not modelled here.
    """
    source_img_s, source_batch = _steady(source_runs, "source_runs")
    target_img_s, target_batch = _steady(target_runs, "target_runs")
    calibration = calibrate_transfer([Measurement(workload, source, precision, source_batch,
                                                  source_batch / source_img_s, label=f"{source} (MLPerf)")],
                                     prior=prior, form=form)
    p = predict_step(calibration, workload, target, precision=precision, batch_size=target_batch)
    a, b = get_device(source), get_device(target)
    one_ppp = Efficiencies((1.0,) * len(KINDS), (1.0,) * len(KINDS))

    def paleo_img_s(gpu: str, batch: int) -> float:
        return batch / roofline_step(paleo_workload, gpu, precision=precision, batch_size=batch,
                                     efficiencies=one_ppp, form="sum").total_s

    return TransferCheck(
        source=a.name, target=b.name, source_img_s=source_img_s, target_img_s=target_img_s,
        source_batch=source_batch, target_batch=target_batch, predicted_img_s=p.images_per_s,
        predicted_low=target_batch / p.high_s, predicted_high=target_batch / p.low_s,
        peak_ratio=b.peak_tflops(precision) / a.peak_tflops(precision),
        bandwidth_ratio=b.mem_bandwidth.value / a.mem_bandwidth.value,
        paleo_ratio=paleo_img_s(b.name, target_batch) / paleo_img_s(a.name, source_batch), calibration=calibration)
