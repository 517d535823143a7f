"""A calibrated transfer laid out for a user: devices side by side, and Paleo's table per device.

* :func:`compare_devices`: "I measured X s per step on device A": step time (with its
  interval), images/s and cost per epoch on each device asked, one device each (what the
  Throughput page shows, and what the Plan page can take its step time from);
* :func:`calibrate_at_workers` and :func:`transfer_scaling`: the command line's
  ``paleo --measured-step S --to-device ...``: a per-iteration time measured at some worker
  count calibrates the roofline on the measured device, and each target device gets the same
  scaling table as ``simulate`` (:class:`~core.paleo.results.PaleoScaling`), plus the interval.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from core.datasets import TRAINING_SET_SIZES
from core.defaults import SECONDS_PER_HOUR
from core.errors import InputError
from core.paleo.comm import RING, comm_time_ms
from core.paleo.devices import Network, get_network
from core.paleo.results import PaleoScaling
from core.paleo.roofline import DEFAULT_EFFICIENCIES, Efficiencies, Roof, roof_for
from core.paleo.simulate import SCALINGS, batch_split, default_schemes, with_speedups, worker_estimate
from core.paleo.transfer import calibrate_transfer, predict_step
from core.paleo.transfer_records import Measurement, StepTimePrediction, TransferCalibration
from core.paleo.workload import Workload
from core.validation import check_option, check_scalar

#: ImageNet-1k training images per epoch (what MLPerf's ResNet-50 logs as train_samples)
COMPARISON_COLUMNS = ("device", "precision", "batch_size", "step_time_s", "step_low_s", "step_high_s",
                      "images_per_s", "images_per_s_low", "images_per_s_high", "epoch_hours",
                      "price_per_device_hour", "cost_per_epoch", "cost_low", "cost_high", "compute_bound_share",
                      "measured_step_s")


@dataclass(frozen=True)
class DeviceRow:
    """One device of a comparison (one device doing the whole epoch).

    Attributes
    ----------
    prediction : StepTimePrediction
    price_per_device_hour : float or None
    epoch_hours : float
        ``samples_per_epoch / images_per_s / 3600``.
    cost_per_epoch, cost_low, cost_high : float or None
        ``epoch_hours x price`` at the estimate and at the interval's ends (None without a price).
    measured_step_s : float or None
        The measured step time when this device was calibrated on, at this batch and precision.
    """

    prediction: StepTimePrediction
    price_per_device_hour: float | None
    epoch_hours: float
    cost_per_epoch: float | None
    cost_low: float | None
    cost_high: float | None
    measured_step_s: float | None

    def to_dict(self) -> dict:
        p = self.prediction
        return dict(zip(COMPARISON_COLUMNS, (
            p.device, p.precision, p.batch_size, p.time_s, p.low_s, p.high_s, p.images_per_s,
            p.batch_size / p.high_s, p.batch_size / p.low_s, self.epoch_hours, self.price_per_device_hour,
            self.cost_per_epoch, self.cost_low, self.cost_high, p.compute_bound_share, self.measured_step_s)))


@dataclass(frozen=True)
class DeviceComparison:
    """Calibrated step times of one workload on several devices.

    Attributes
    ----------
    workload : str
    samples_per_epoch : int
    rows : tuple of DeviceRow
        In the order asked.
    skipped : tuple of (str, str)
        Devices left out and why (e.g. no BF16 unit).
    calibration : TransferCalibration or None
        How the step times were calibrated.
    """

    workload: str
    samples_per_epoch: int
    rows: tuple[DeviceRow, ...]
    skipped: tuple[tuple[str, str], ...] = ()
    calibration: TransferCalibration | None = None

    def to_frame(self) -> pd.DataFrame:
        """One row per device, columns :data:`COMPARISON_COLUMNS`."""
        return pd.DataFrame([r.to_dict() for r in self.rows], columns=list(COMPARISON_COLUMNS))

    def step_time_s(self, device: str) -> float:
        """The calibrated step time on ``device`` (one of the rows), seconds.

        Raises
        ------
        InputError
            If ``device`` is not one of the rows.
        """
        times: dict[str, float] = {}
        for r in self.rows:                     # the first row of a device, as the rows are listed
            times.setdefault(r.prediction.device, r.prediction.time_s)
        return times[check_option(device, "device", times, fix="Compare that device first")]


def compare_devices(workload: Workload, calibration: TransferCalibration, devices: Sequence[str | Roof], *,
                    precision: str, batch_size: int, samples_per_epoch: int = TRAINING_SET_SIZES["imagenet"],
                    prices: Mapping[str, float] | None = None) -> DeviceComparison:
    """Step time, images/s and cost per epoch of ``workload`` on each device, calibrated.

    Parameters
    ----------
    workload : Workload
    calibration : TransferCalibration
        From :func:`~core.paleo.transfer.calibrate_transfer`.
    devices : sequence of str or Roof
        Devices to compare, in order; one lacking ``precision`` is skipped (``skipped`` says why).
    precision : str
    batch_size : int
        Samples per step on one device.
    samples_per_epoch : int, default=1,281,167 (ImageNet-1k)
    prices : mapping of device name to price per device-hour, optional

    Examples
    --------
    >>> from core.paleo.workload import Op
    >>> w = Workload("toy", "hand", (Op("c", "convolution", "conv", "forward", 1e12, 0, 2e9, 0),), 0, "hand")
    >>> slow, fast = Roof("slow", "fp16", 100, 10, 1000, "hand"), Roof("fast", "fp16", 200, 20, 1000, "hand")
    >>> cal = calibrate_transfer([Measurement(w, slow, "fp16", 1, 0.025)])
    >>> cmp = compare_devices(w, cal, [slow, fast], precision="fp16", batch_size=1, samples_per_epoch=3600,
    ...                       prices={"fast": 2.0})
    >>> [(r.prediction.device, round(r.epoch_hours, 4), r.cost_per_epoch) for r in cmp.rows]  # 3600 steps
    [('slow', 0.025, None), ('fast', 0.0125, 0.025)]
    """
    check_scalar(batch_size, "batch_size", int, min_val=1)
    check_scalar(samples_per_epoch, "samples_per_epoch", int, min_val=1)
    prices = dict(prices or {})
    measured = {(m.device, m.precision, m.batch_size): m.measured_s for m in calibration.measurements}
    rows, skipped = [], []
    for device in devices:
        try:
            roof = roof_for(device, precision)
        except InputError as exc:
            skipped.append((getattr(device, "name", str(device)), str(exc)))
            continue
        p = predict_step(calibration, workload, roof, precision=precision, batch_size=batch_size)
        price = prices.get(roof.name)
        if price is not None:
            check_scalar(price, f"price per device-hour of {roof.name}", min_val=0)
        hours = samples_per_epoch / p.images_per_s / SECONDS_PER_HOUR
        costs = [None if price is None else samples_per_epoch / batch_size * s / SECONDS_PER_HOUR * price
                 for s in (p.time_s, p.low_s, p.high_s)]
        rows.append(DeviceRow(prediction=p, price_per_device_hour=price, epoch_hours=hours,
                              cost_per_epoch=costs[0], cost_low=costs[1], cost_high=costs[2],
                              measured_step_s=measured.get((roof.name, precision, int(batch_size)))))
    return DeviceComparison(workload=workload.name, samples_per_epoch=int(samples_per_epoch), rows=tuple(rows),
                            skipped=tuple(skipped), calibration=calibration)


# ---------------------------------------------------------------- the command line's scaling tables
def calibrate_at_workers(workload: Workload, measured_step_s: float, *, device: str, precision: str,
                         batch_size: int, workers: int, network: str | Network, ppp_comm: float = 1.0,
                         prior: Efficiencies = DEFAULT_EFFICIENCIES, form: str = "max") -> TransferCalibration:
    """Calibrate on one per-iteration time measured with ``workers`` workers of ``device``.

    The measured time is taken to include a ring all-reduce of the gradients (at the
    precision's element size) over ``network`` after the backward pass, not overlapped (none at
    one worker); the rest is the compute the roofline is calibrated on.

    Examples
    --------
    >>> from core.paleo.workload import Op
    >>> w = Workload("toy", "hand", (Op("c", "convolution", "conv", "forward", 1e12, 0, 2e9, 0),), 0, "hand")
    >>> cal = calibrate_at_workers(w, 0.025, device="A100_PCIE_80GB", precision="fp16", batch_size=1, workers=1,
    ...                            network="pcie4")
    >>> cal.measurements[0].measured_s
    0.025
    """
    check_scalar(workers, "workers", int, min_val=1)
    comm_s = comm_time_ms(RING, int(workers), workload.gradient_bytes(precision), get_network(network),
                          ppp_comm) / 1e3
    label = f"{device} at {workers} worker{'s' if workers > 1 else ''}"
    return calibrate_transfer([Measurement(workload, device, precision, int(batch_size), float(measured_step_s),
                                           fixed_s=comm_s, label=label)], prior=prior, form=form)


@dataclass(frozen=True)
class TransferScaling:
    """Paleo's scaling table of one device from a calibrated transfer, with the interval.

    Attributes
    ----------
    scaling : PaleoScaling
        Rows per worker count (times from the calibrated roofline, communication as ``simulate``).
    precision : str
    low_ms, high_ms : tuple of float
        Interval of ``time_comp_ms`` (forward + backward + update) per worker count.
    """

    scaling: PaleoScaling
    precision: str
    low_ms: tuple[float, ...]
    high_ms: tuple[float, ...]

    def to_frame(self) -> pd.DataFrame:
        """``PaleoScaling.to_frame()`` plus ``time_low``, ``time_high`` (ms, bounds of ``time_comp_ms``) and
        ``precision``."""
        frame = self.scaling.to_frame()
        frame["time_low"] = list(self.low_ms)
        frame["time_high"] = list(self.high_ms)
        frame["precision"] = self.precision
        return frame


def transfer_scaling(workload: Workload, calibration: TransferCalibration, device: str, *, precision: str,
                     network: str | Network, batch_size: int, workers: Sequence[int], scaling: str = "weak",
                     ppp_comm: float = 1.0, n_ps: Sequence[int] = (2, 4), overlap: bool = False) -> TransferScaling:
    """The scaling table of ``simulate`` for ``device``, with step times from the calibrated roofline.

    Communication is Paleo's (modern schemes) for the gradients at the precision's element
    size; the naive bound uses the precision's tensor peak.

    Examples
    --------
    >>> from core.paleo.workload import Op
    >>> w = Workload("toy", "hand", (Op("c", "convolution", "conv", "forward", 1e12, 0, 2e9, 0),), 0, "hand")
    >>> cal = calibrate_at_workers(w, 0.025, device="A100_PCIE_80GB", precision="fp16", batch_size=1, workers=1,
    ...                            network="pcie4")
    >>> t = transfer_scaling(w, cal, "A100_PCIE_80GB", precision="fp16", network="pcie4", batch_size=1, workers=(1, 2))
    >>> [round(x, 3) for x in t.scaling.total_ms("RingAllReduce")]   # no gradients: no communication
    [25.0, 25.0]
    """
    check_option(scaling, "scaling", SCALINGS, fix="Pick one")
    workers = tuple(workers)
    if not workers:
        raise InputError("workers: expected at least one worker count; got none. Give e.g. 1,2,4,8.")
    for n in workers:
        check_scalar(n, "workers", int, min_val=1)
    roof, link = roof_for(device, precision), get_network(network)
    schemes = default_schemes(paleo_compatible=False, n_ps=n_ps)
    grad_bytes = workload.gradient_bytes(precision)
    flops_per_sample = workload.flops(batch_size) / batch_size

    def estimate(n: int):
        per_worker, effective = batch_split(batch_size, n, scaling)
        p = predict_step(calibration, workload, roof, precision=precision, batch_size=per_worker)
        comm = {s: comm_time_ms(s, n, grad_bytes, link, ppp_comm) for s in schemes}
        row = worker_estimate(n, effective=effective, per_worker=per_worker, fwd_ms=p.forward_s * 1e3,
                              bwd_ms=p.backward_s * 1e3, apply_ms=p.update_s * 1e3, comm_ms=comm, overlap=overlap,
                              naive_img_s=n * roof.matrix_tflops * 1e12 / flops_per_sample)
        return row, p

    rows, preds = zip(*(estimate(n) for n in workers))
    result = PaleoScaling(
        net=workload.name, net_source=workload.source, device=roof.name, network=link.name, network_gbps=link.gbps,
        scaling=scaling, batch_size=int(batch_size), ppp_comp=1.0, ppp_comm=float(ppp_comm), paleo_compatible=False,
        pipeline=False, overlap=overlap, schemes=schemes, params_bytes=grad_bytes,
        flops_per_image=flops_per_sample, peak_gflops=roof.matrix_tflops * 1e3,
        rows=with_speedups(estimate(1)[0], rows))
    return TransferScaling(scaling=result, precision=precision, low_ms=tuple(p.low_s * 1e3 for p in preds),
                           high_ms=tuple(p.high_s * 1e3 for p in preds))
