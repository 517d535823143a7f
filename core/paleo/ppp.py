"""Calibrate the compute PPP (platform percent of peak) from one measured step time.

Paleo's PPP is "what real runs reach": one global factor dividing every arithmetic and
device-memory term.  Given the measured time of one training step on one worker (forward,
backward and update at a known batch), :func:`calibrate_ppp` finds the PPP for which the
model's ``fwd + bwd + apply`` equals it.  In the modern mode every term scales as 1/PPP, so
the answer is ``model time at PPP 1 / measured`` up to the one-cycle floors; in the
faithful mode the update step stays at PPP 1 (Paleo's quirk).  The root is found with
``scipy.optimize.brentq`` on a bracket grown around that first guess.
"""

from __future__ import annotations

from scipy.optimize import brentq

from core.errors import InputError
from core.paleo.devices import Device, get_device
from core.paleo.layers import Net
from core.paleo.results import PPPCalibration
from core.paleo.simulate import check_positive, step_time_ms

#: the largest compute PPP a calibration looks for (a step a million times faster than the peak allows)
MAX_PPP = 1e6

#: Paleo's web-demo "software" presets, ``(ppp_comp, ppp_comm)`` (PALEO_MODEL.md section 3:
#: reproduced from its ``precompute.json``); the paper fits them to published runs of each
#: framework (TensorFlow Inception, MXNet, FireCaffe)
PPP_PRESETS: dict[str, tuple[float, float]] = {
    "tensorflow": (0.62, 0.72),
    "mxnet": (0.49, 0.72),
    "caffe": (0.21, 0.56),
}


def solve_compute_ppp(step_ms, target_ms: float) -> float | None:
    """The compute PPP at which ``step_ms(ppp)`` (falling as PPP grows) takes ``target_ms``; None when no PPP up to
    a million reaches it (the step's part no PPP shortens is longer).  A bracket is grown around
    ``step_ms(1) / target_ms`` and the root found with ``scipy.optimize.brentq``.

    >>> round(solve_compute_ppp(lambda ppp: 100.0 / ppp + 10.0, 60.0), 9)      # 100/p + 10 = 60 at p = 2
    2.0
    >>> solve_compute_ppp(lambda ppp: 100.0 / ppp + 10.0, 5.0) is None
    True
    """
    guess = step_ms(1.0) / target_ms
    lo, hi = guess / 2, guess * 2
    while step_ms(lo) < target_ms:
        lo /= 4
    while step_ms(hi) > target_ms:
        hi *= 4
        if hi > MAX_PPP:
            return None
    return float(brentq(lambda x: step_ms(x) - target_ms, lo, hi, xtol=1e-14, rtol=1e-12))


def calibrate_ppp(net: Net, measured_step_ms: float, *, device: str | Device, batch_size: int,
                  paleo_compatible: bool = False, pipeline: bool = False) -> PPPCalibration:
    """Solve for the compute PPP that reproduces a measured one-worker step time.

    Parameters
    ----------
    net : Net
    measured_step_ms : float
        Measured time of one training step (forward + backward + update) on one worker, ms.
    device : str or Device
    batch_size : int
        The batch of that step.
    paleo_compatible, pipeline : bool, default=False
        The model variant to calibrate (see :func:`core.paleo.simulate`).

    Returns
    -------
    PPPCalibration
        ``flags`` says when the PPP is above 1 (faster than peak: a wrong device or batch)
        or below 0.05.

    Raises
    ------
    InputError
        If ``measured_step_ms`` is not positive, or is below what the model gives at any PPP
        (its fixed terms: the faithful update step, the one-cycle floors).

    Examples
    --------
    AlexNet on a K80 at batch 128 takes 132.646 ms at PPP 1 in the faithful mode, 1.189 ms
    of it the update (fixed at PPP 1); a measured 200 ms therefore means
    PPP = (132.646 - 1.189) / (200 - 1.189) = 0.6612.

    >>> from core.paleo import load_net
    >>> cal = calibrate_ppp(load_net("alex_v2"), 200.0, device="K80", batch_size=128,
    ...                     paleo_compatible=True)
    >>> round(cal.ppp_comp, 4), cal.flags
    (0.6612, ())
    """
    device = get_device(device)
    check_positive(measured_step_ms, "measured_step_ms")
    check_positive(batch_size, "batch_size", integer=True)

    def step(ppp: float) -> float:
        return step_time_ms(net, device=device, batch_size=batch_size, ppp_comp=ppp,
                            paleo_compatible=paleo_compatible, pipeline=pipeline)

    at_peak = step(1.0)
    ppp = solve_compute_ppp(step, measured_step_ms)
    if ppp is None:
        raise InputError(
            f"measured_step_ms: expected more than the model's fixed part "
            f"({step(MAX_PPP):.4g} ms at any PPP on {device.name}); got "
            f"{measured_step_ms!r}. Check the units (ms), the batch and the device.")
    flags = []
    if ppp > 1:
        flags.append(f"PPP {ppp:.3g} is above 1: the measured step is faster than the "
                     f"{device.name}'s peak allows; check the device, the batch and the net.")
    elif ppp < 0.05:
        flags.append(f"PPP {ppp:.3g} is below 0.05: the measured step is over 20x the model's "
                     "time at peak; check the units (ms), the device and the batch.")
    return PPPCalibration(ppp_comp=ppp, measured_step_ms=float(measured_step_ms),
                          model_step_ms_at_peak=at_peak, device=device.name,
                          batch_size=batch_size, paleo_compatible=paleo_compatible,
                          flags=tuple(flags))
