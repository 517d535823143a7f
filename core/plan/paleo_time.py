"""Paleo's analytical estimate of time to target, beside Optimus's fitted speed model.

Paleo (core.paleo) predicts the time of one training iteration from FLOPs, memory traffic
and the network; multiplying by the steps to target gives a second, independent estimate of
the time to target for the same worker and parameter-server counts as the Plan page's
Optimus curves.  Assumptions: synchronous data-parallel training at global batch ``M``
(strong scaling: each of ``w`` workers takes ``ceil(M/w)`` samples), one optimiser step per
iteration, Paleo's parameter-server scheme with ``p`` servers (or ring all-reduce when there
are none), no compute/communication overlap unless asked for.

**Calibrated on the measured step** (``calibrate_to``, :func:`calibrate_paleo_step`): the compute PPP
(Paleo's "platform percent of peak", :mod:`core.paleo.ppp`) is solved so that Paleo's whole step at the
measured ``(p, w)``, compute and communication, takes the measured seconds, the step the Optimus model
is calibrated to (:func:`core.speed.scale_to_step_time`).  The two curves then meet at the measurement
and differ only in how they scale with ``w``.  Uncalibrated, Paleo's time is its roofline at the PPP
given, often far from a real step (a small network on a CPU: microseconds at peak).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from core.defaults import SECONDS_PER_HOUR
from core.errors import InputError
from core.paleo import DEVICES, Net, simulate
from core.speed import calibrate_paleo_step

COLUMNS = ("p", "w", "time_s", "time_h", "step_ms", "ppp_comp", "label")


def paleo_time_to_target(net: Net, steps_to_target: float, *, workers: Sequence[int], ps: Sequence[int],
                         global_batch: int, device: str = "V100", network: str = "ethernet",
                         ppp_comp: float = 1.0, ppp_comm: float = 1.0, overlap: bool = False,
                         calibrate_to: tuple[float, int, int] | None = None) -> pd.DataFrame:
    """Time to target from Paleo's per-iteration time, per parameter-server count and worker count.

    Parameters
    ----------
    net : Net
        The network (``core.paleo.load_net``).
    steps_to_target : float
        Optimiser steps to the target (one per iteration).
    workers : sequence of int
        Worker counts ``w``.
    ps : sequence of int
        Parameter-server counts ``p``; an empty sequence (or ``[0]``) means all-reduce
        (Paleo's ring all-reduce, rows with ``p = 0``).
    global_batch : int
        ``M``, split over the workers.
    device, network, ppp_comp, ppp_comm, overlap
        As in :func:`core.paleo.simulate` (modern mode).
    calibrate_to : (float, int, int) or None, default=None
        ``(step_s, p, w)``: a measured step of ``step_s`` seconds at ``p`` servers (0: all-reduce) and ``w``
        workers, the step the Optimus model is calibrated to; ``ppp_comp`` is then solved
        (:func:`calibrate_paleo_step`) so that Paleo's step there takes as long, and the given one is unused.

    Returns
    -------
    DataFrame
        Columns ``p, w, time_s, time_h, step_ms, ppp_comp, label`` (one ``label`` per curve, e.g.
        ``"Paleo p = 2 (V100, ethernet)"`` or ``"Paleo ring all-reduce (V100, ethernet)"``, with
        ``"; calibrated"`` inside the brackets when calibrated): ``time_s = steps_to_target × step_ms / 1000``.

    Examples
    --------
    Calibrated on 1.5 s per step at p = 2, w = 4, Paleo's curve passes through the measurement:

    >>> from core.paleo import load_net
    >>> t = paleo_time_to_target(load_net("alex_v2"), 1000, workers=[1, 4, 8], ps=[2], global_batch=128,
    ...                          device="K80", calibrate_to=(1.5, 2, 4))
    >>> t.loc[t["w"] == 4, "time_s"].round(6).tolist(), t["label"].iloc[0]
    ([1500.0], 'Paleo p = 2 (K80, ethernet; calibrated)')
    """
    if not np.isfinite(steps_to_target) or steps_to_target <= 0:
        raise InputError(f"steps_to_target must be a positive number; got {steps_to_target!r}.")
    workers = sorted({int(w) for w in workers})
    if not workers or workers[0] < 1:
        raise InputError(f"workers must be integers >= 1; got {workers!r}.")
    servers = sorted({int(p) for p in ps if int(p) > 0})
    calibrated = calibrate_to is not None
    if calibrated:
        step_s, at_p, at_w = calibrate_to
        ppp_comp = calibrate_paleo_step(net, step_s, p=at_p, w=at_w, global_batch=global_batch, device=device,
                                        network=network, ppp_comm=ppp_comm, overlap=overlap).ppp_comp
    result = simulate(net, device=device, network=network, batch_size=int(global_batch), workers=tuple(workers),
                      scaling="strong", ppp_comp=ppp_comp, ppp_comm=ppp_comm, overlap=overlap,
                      n_ps=tuple(servers) or (2,))
    where = f"({device}, {network}{'; calibrated' if calibrated else ''})"
    rows = []
    schemes = [(p, f"ParameterServer_p{p}") for p in servers] or [(0, "RingAllReduce")]
    for p, scheme in schemes:
        label = f"Paleo p = {p} {where}" if p else f"Paleo ring all-reduce {where}"
        for w, ms in zip(result.workers, result.total_ms(scheme)):
            seconds = steps_to_target * ms / 1000.0
            rows.append({"p": p, "w": int(w), "time_s": seconds, "time_h": seconds / SECONDS_PER_HOUR, "step_ms": ms,
                         "ppp_comp": float(ppp_comp), "label": label})
    return pd.DataFrame(rows, columns=list(COLUMNS))


def paleo_calibration_point(model, measured: tuple[float, int, int] | None = None, *,
                            p: int = 0) -> tuple[float, int, int]:
    """``(step_s, p, w)``: the step Paleo is calibrated on beside a speed model (``calibrate_to`` of
    :func:`paleo_time_to_target`).

    The measured step the model was calibrated to (``measured``, the page's *step time at p, w*) where there is
    one; else the model's own step at ``p`` servers and one worker (a model fitted on a table of measured
    speeds, or θ typed in seconds).

    >>> from core.speed.optimus import paper_speed_model
    >>> from core.speed.family import scale_to_step_time
    >>> model = scale_to_step_time(paper_speed_model("sync"), 0.906, 2, 4)
    >>> paleo_calibration_point(model, (0.906, 2, 4))
    (0.906, 2, 4)
    >>> step, p, w = paleo_calibration_point(model, p=2)
    >>> round(step, 4), p, w                     # the model's step at p = 2, w = 1
    (2.7168, 2, 1)
    """
    if measured is not None:
        step_s, at_p, at_w = measured
        return float(step_s), int(at_p), int(at_w)
    return float(model.step_time_s(int(p), 1)), int(p), 1


def paleo_net_for(model: str | None, dataset: str = "cifar10", *, fallback: str = "torch:resnet50_cifar") -> str:
    """The Paleo net reference (``torch:<registry name>``) of a run's model, or ``fallback``.

    >>> paleo_net_for("resnet20", "mnist1d"), paleo_net_for("resnet50"), paleo_net_for(None)
    ('torch:resnet20_1d', 'torch:resnet50_cifar', 'torch:resnet50_cifar')
    """
    if not model:
        return fallback
    from core.models import registry_name

    name = registry_name(model, dataset)
    return f"torch:{name}" if name else fallback


#: words in a run's device name that say it ran on a processor, not an accelerator
_CPU_WORDS = ("cpu", "processor", "xeon", "epyc", "core i", "i7", "i9", "ryzen", "threadripper")
#: ... unless it names an accelerator (AMD's and Intel's GPUs carry the same vendor names as their CPUs)
_ACCELERATOR_WORDS = ("gpu", "instinct", "radeon", "gaudi", "tpu", "mi2", "mi3", "data center")


def paleo_device_for(device: str | None, *, fallback: str = "V100") -> tuple[str, str]:
    """``(Paleo device, how it was chosen)`` for a run's device name, so that Paleo's curve is drawn for the
    hardware the run's measured step time came from: the Paleo device it names (``A100`` in ``NVIDIA A100
    80GB``), Paleo's one processor (``CPU_I7``) for a CPU, else ``fallback``.

    >>> paleo_device_for("Intel Xeon Processor")[0]
    'CPU_I7'
    >>> paleo_device_for("Tesla V100-SXM2-16GB")[0], paleo_device_for("H100 80GB HBM3")[0], paleo_device_for(None)[0]
    ('V100', 'H100', 'V100')
    """

    text = " ".join(str(device or "").replace("-", " ").replace("_", " ").split()).lower()
    if not text:
        return fallback, f"no device named by the run: {fallback}"
    squeezed = text.replace(" ", "")
    named = [d for d in DEVICES if d.lower().replace("_", "") in squeezed and not d.endswith("_TF32")]
    if named:
        best = max(named, key=len)
        return best, f"the run's device, {device}"
    if any(w in text for w in _CPU_WORDS) and not any(w in text for w in _ACCELERATOR_WORDS):
        return "CPU_I7", f"a CPU: Paleo's one processor, CPU_I7, stands in for {device}"
    return fallback, f"{device} is not among Paleo's devices: {fallback}"
