"""What a transfer calibration takes and gives: a measured step (Measurement), its fitted counterpart,
the calibration (TransferCalibration), and a step time predicted with it (StepTimePrediction).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.paleo.roofline import (
    Efficiencies,
    Roof,
)
from core.paleo.workload import Workload


@dataclass(frozen=True)
class Measurement:
    """One measured step time: which workload, on which device, in which precision, at which batch.

    Attributes
    ----------
    workload : Workload
    device : str or Roof
        A training GPU or device name, or a measured roof (a CPU).
    precision : str
    batch_size : int
        Samples per step on one device.
    step_time_s : float
        Measured seconds per step.
    fixed_s : float, default=0.0
        Part of ``step_time_s`` outside the roofline (communication not hidden); subtracted.
    label : str, default=""
    """

    workload: Workload
    device: str | Roof
    precision: str
    batch_size: int
    step_time_s: float
    fixed_s: float = 0.0
    label: str = ""

    @property
    def compute_s(self) -> float:
        """The part the roofline models: ``step_time_s - fixed_s``."""
        return self.step_time_s - self.fixed_s


@dataclass(frozen=True)
class FittedMeasurement:
    """A measurement beside the calibrated model's time for it."""

    label: str
    device: str
    precision: str
    batch_size: int
    measured_s: float
    modelled_s: float
    compute_bound_share: float

    @property
    def error_pct(self) -> float:
        """``(modelled / measured - 1) · 100``."""
        return (self.modelled_s / self.measured_s - 1) * 100


@dataclass(frozen=True)
class TransferCalibration:
    """Efficiencies per kind of op fitted to measured step times (see the module docstring).

    Attributes
    ----------
    efficiencies : Efficiencies
        The fitted efficiencies.
    prior : Efficiencies
    fit : str
        The grouping used: ``"common"``, ``"compute-memory"`` or ``"per-kind"``.
    form : str
        ``"max"`` (roofline) or ``"sum"``.
    factors : tuple of (str, float)
        Each fitted factor on the prior.
    measurements : tuple of FittedMeasurement
    dof : int
        Measurements minus fitted factors.
    rms_log_residual : float
        RMS of ``log(modelled / measured)`` over the dof (``nan`` when ``dof == 0``).
    band : float
        Residual band factor (>= 1): the interval is widened by ``/ band`` and ``· band``.
    alternatives : tuple of Efficiencies
        The other calibrations whose predictions make the interval.
    interval_note : str
        How the interval was made, in words.
    flags : tuple of str
        Warnings a page can show as they are.
    """

    efficiencies: Efficiencies
    prior: Efficiencies
    fit: str
    form: str
    factors: tuple[tuple[str, float], ...]
    measurements: tuple[FittedMeasurement, ...]
    dof: int
    rms_log_residual: float
    band: float
    alternatives: tuple[Efficiencies, ...] = ()
    interval_note: str = ""
    flags: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict:
        """Plain Python types (JSON)."""
        return {"efficiencies": self.efficiencies.to_dict(), "prior": self.prior.to_dict(), "fit": self.fit,
                "form": self.form, "factors": dict(self.factors), "dof": self.dof,
                "rms_log_residual": self.rms_log_residual, "band": self.band,
                "measurements": [{"label": m.label, "device": m.device, "precision": m.precision,
                                  "batch_size": m.batch_size, "measured_s": m.measured_s, "modelled_s": m.modelled_s}
                                 for m in self.measurements],
                "interval_note": self.interval_note, "flags": list(self.flags)}


@dataclass(frozen=True)
class StepTimePrediction:
    """The calibrated step time of a workload on one device, with its interval.

    Attributes
    ----------
    device, precision : str
    batch_size : int
    time_s, low_s, high_s : float
        Seconds per step: the calibrated estimate and the interval (module docstring).
    forward_s, backward_s, update_s : float
        The estimate's phases.
    compute_bound_share : float
        Share of the estimate's time in compute-bound ops.
    """

    device: str
    precision: str
    batch_size: int
    time_s: float
    low_s: float
    high_s: float
    forward_s: float
    backward_s: float
    update_s: float
    compute_bound_share: float

    @property
    def images_per_s(self) -> float:
        """Samples per second on this one device: ``batch / time``."""
        return self.batch_size / self.time_s
