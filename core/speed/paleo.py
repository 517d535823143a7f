"""Paleo's roofline as a speed family: a network's step from FLOPs, bytes and the network, calibrated by PPP.

Paleo (Qi et al., ICLR 2017; :mod:`core.paleo`) prices one synchronous iteration of a network on ``w`` workers
(strong scaling at global batch ``M``: ``ceil(M/w)`` samples each) and ``p`` parameter servers (ring
all-reduce with none) from each layer's FLOPs and memory traffic against a device's peaks, plus the gradient
exchange over the network.  Its compute runs at a "platform percent of peak" (PPP): this family fits that one
number to a table of measured steps (least squares on ``ln t``; with one row, exactly), so the roofline meets
the measurement and keeps Paleo's own shape across ``(p, w)``.

A speed table alone does not describe a network, so the table names it: columns ``net`` (a built-in Paleo
spec, ``torch:<model>`` or a course model name, :func:`core.paleo.load_net`), ``device`` (the one device
table's name) and optionally ``network`` (default ``ethernet``); ``auto`` leaves the family out
(``SpeedFamily.in_auto = False``), as it does the transformer model.

:func:`paleo_step_ms` is Paleo's step at one ``(p, w)``; :func:`calibrate_paleo_step` solves the compute PPP at
which it takes one measured step exactly (the Plan page's Paleo curve beside Optimus,
:func:`core.plan.paleo_time_to_target`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy.optimize import minimize_scalar

from core.errors import InputError
from core.paleo import MAX_PPP, Net, load_net, simulate, solve_compute_ppp
from core.speed.family import FittedSpeed, SpeedFamily
from core.speed.table import normalise_speed_table, table_context

FORMULAS = {
    "sync": "t = Paleo(net, device, network; PPP)(p, w, M): compute at PPP × peak + parameter-server exchange",
    "allreduce": "t = Paleo(net, device, network; PPP)(w, M): compute at PPP × peak + ring all-reduce",
}
FORMULAS_LATEX = {
    "sync": r"t = t_{\mathrm{comp}}(M/w)/\mathrm{PPP} + t_{\mathrm{PS}}(p, w)",
    "allreduce": r"t = t_{\mathrm{comp}}(M/w)/\mathrm{PPP} + t_{\mathrm{ring}}(w)",
}
#: the columns a speed table needs for this family (beside w, the batch and the speed)
CONTEXT_COLUMNS = ("net", "device")


@dataclass(frozen=True)
class StepCalibration:
    """Paleo's compute PPP fitted to one measured step (:func:`calibrate_paleo_step`).

    Attributes
    ----------
    ppp_comp : float
        The compute PPP at which Paleo's step at ``(p, w)`` takes ``step_s``.
    step_s : float
        The measured step, seconds.
    p, w : int
        Where it was measured (``p = 0``: all-reduce).
    flags : tuple of str
        Caveats (a PPP above 1: faster than the device's peak; below 0.01).
    """

    ppp_comp: float
    step_s: float
    p: int
    w: int
    flags: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """One line for a page: what was fitted to what."""
        at = f"w = {self.w}" + (f", p = {self.p}" if self.p else "")
        return f"compute PPP {self.ppp_comp:.4g} makes Paleo's step at {at} take the measured {self.step_s:.4g} s"


def _scheme(p: int) -> str:
    return f"ParameterServer_p{p}" if p else "RingAllReduce"


def paleo_step_ms(net: Net, *, p: int, w: int, global_batch: int, device: str, network: str, ppp_comp: float,
                   ppp_comm: float, overlap: bool) -> float:
    result = simulate(net, device=device, network=network, batch_size=int(global_batch), workers=(int(w),),
                      scaling="strong", ppp_comp=ppp_comp, ppp_comm=ppp_comm, overlap=overlap,
                      n_ps=(int(p),) if p else (2,))
    return float(result.total_ms(_scheme(p))[0])


def calibrate_paleo_step(net: Net, step_s: float, *, p: int, w: int, global_batch: int, device: str = "V100",
                         network: str = "ethernet", ppp_comm: float = 1.0, overlap: bool = False) -> StepCalibration:
    """The compute PPP at which Paleo's step with ``w`` workers and ``p`` servers takes ``step_s`` seconds.

    Paleo's step (strong scaling at global batch ``M``, its parameter-server scheme with ``p`` servers or
    ring all-reduce for ``p = 0``) falls as the compute PPP grows; the root is found with
    ``scipy.optimize.brentq`` on a bracket grown around ``PPP 1 × (step at PPP 1) / step_s``.

    Raises
    ------
    InputError
        If ``step_s`` is not positive, or is below the step's part no PPP shortens (its communication at
        ``ppp_comm``, the one-cycle floors).

    Examples
    --------
    >>> from core.paleo import load_net
    >>> net = load_net("alex_v2")
    >>> cal = calibrate_paleo_step(net, 1.5, p=2, w=4, global_batch=128, device="K80")
    >>> ms = paleo_step_ms(net, p=2, w=4, global_batch=128, device="K80", network="ethernet",
    ...                     ppp_comp=cal.ppp_comp, ppp_comm=1.0, overlap=False)
    >>> round(ms, 6)
    1500.0

    Its communication alone (0.64 s over ethernet) is longer than a 0.5 s step: no PPP makes it.

    >>> calibrate_paleo_step(net, 0.5, p=2, w=4, global_batch=128, device="K80")
    Traceback (most recent call last):
    ...
    core.errors.InputError: calibrate_paleo_step: expected a measured step above ... (0.6439 s at w = 4, p = 2 ...
    """
    if not np.isfinite(step_s) or step_s <= 0:
        raise InputError(f"calibrate_paleo_step: step_s must be a positive number of seconds; got {step_s!r}.")
    p, w = int(p), int(w)
    target_ms = float(step_s) * 1000.0

    def step(ppp: float) -> float:
        return paleo_step_ms(net, p=p, w=w, global_batch=global_batch, device=device, network=network,
                              ppp_comp=ppp, ppp_comm=ppp_comm, overlap=overlap)

    ppp = solve_compute_ppp(step, target_ms)
    if ppp is None:
        raise InputError(
            f"calibrate_paleo_step: expected a measured step above the part of Paleo's step no compute PPP "
            f"shortens ({step(MAX_PPP) / 1000:.4g} s at w = {w}{f', p = {p}' if p else ''} on {device}, "
            f"{network}: its communication); got {step_s:.4g} s. Check the step's units (seconds), the "
            "interconnect and the batch.")
    flags = []
    if ppp > 1:
        flags.append(f"compute PPP {ppp:.3g} is above 1: the measured step is faster than {device}'s peak allows; "
                     "check the device, the batch and the network.")
    elif ppp < 0.01:
        flags.append(f"compute PPP {ppp:.3g} is below 0.01: the measured step is over 100 times Paleo's step at "
                     f"{device}'s peak; check the device, the batch and the network (a small network's per-step "
                     "overheads are not in Paleo).")
    return StepCalibration(ppp_comp=ppp, step_s=float(step_s), p=p, w=w, flags=tuple(flags))




@dataclass(frozen=True, kw_only=True)
class PaleoSpeedModel(FittedSpeed):
    """Paleo's step of ``net`` on ``device`` over ``network`` at compute PPP ``ppp_comp``, times ``factor``."""

    net: Net
    device: str
    network: str = "ethernet"
    ppp_comp: float = 1.0
    ppp_comm: float = 1.0
    mode: str = "allreduce"
    factor: float = 1.0

    family: ClassVar[str] = "paleo"
    time_unit: ClassVar[str] = "s"

    @property
    def formula(self) -> str:
        return FORMULAS[self.mode]

    def step_s(self, p: int, w: int, global_batch: float) -> float:
        """Seconds per step at ``(p, w)`` and global batch ``M`` (``p = 0``: ring all-reduce)."""
        ms = paleo_step_ms(self.net, p=int(p) if self.mode == "sync" else 0, w=int(w),
                            global_batch=int(round(float(global_batch))), device=self.device, network=self.network,
                            ppp_comp=self.ppp_comp, ppp_comm=self.ppp_comm, overlap=False)
        return self.factor * ms / 1000.0

    def steps_per_s_at(self, p, w, global_batch):
        w_arr = np.asarray(w, dtype=float)
        if not np.all(np.isfinite(w_arr)) or np.any(w_arr < 1):
            raise InputError(f"PaleoSpeedModel.steps_per_s: expected w >= 1 workers; got {w!r}.")
        shape = np.broadcast_shapes(np.shape(p), w_arr.shape, np.shape(global_batch))
        p_b = np.broadcast_to(np.asarray(p, dtype=float), shape).ravel()
        w_b = np.broadcast_to(w_arr, shape).ravel()
        m_b = np.broadcast_to(np.asarray(global_batch, dtype=float), shape).ravel()
        out = np.array([1.0 / self.step_s(pi, wi, mi) for pi, wi, mi in zip(p_b, w_b, m_b)]).reshape(shape)
        return float(out) if out.ndim == 0 else out

    def steps_per_s(self, p, w):
        if self.global_batch is None:
            raise InputError("PaleoSpeedModel: expected a global batch M; got None. Call "
                             "model.with_global_batch(M) first.")
        return self.steps_per_s_at(p, w, self.global_batch)

    def samples_per_s(self, p, w):
        out = float(self.global_batch or 0.0) * np.asarray(self.steps_per_s(p, w))
        return float(out) if out.ndim == 0 else out

    def scaled(self, factor: float) -> PaleoSpeedModel:
        return dataclasses.replace(self, factor=self.factor * float(factor))

    @property
    def named_params(self) -> dict[str, float]:
        return {"ppp_comp": float(self.ppp_comp), "ppp_comm": float(self.ppp_comm), "time_factor": float(self.factor)}

    @property
    def theta(self) -> tuple[float, ...]:
        return tuple(self.named_params.values())

    def to_dict(self) -> dict[str, Any]:
        return {"family": self.family, "mode": self.mode, "formula": self.formula, **self.named_params,
                "net": self.net.name, "device": self.device, "network": self.network,
                "global_batch": self.global_batch, "time_unit": "s", "source": self.source,
                "mape_pct": self.mape_pct, "loo_mape_pct": self.loo_mape_pct, "n_points": self.n_points,
                "flags": list(self.flags)}

    def report(self) -> str:
        lines = ["[[Model]]", f"    family: paleo ({self.formula})", f"    net: {self.net.name}",
                 f"    device: {self.device}, network: {self.network}", f"    mode: {self.mode}", "[[Parameters]]"]
        lines += [f"    {k} = {v:.6g}" for k, v in self.named_params.items()]
        return "\n".join(lines + self.report_tail())


def fit_paleo_speed(table: pd.DataFrame, *, mode: str = "allreduce", global_batch: float | None = None,
                    gpus_per_node: int | None = None, source: str = "table") -> PaleoSpeedModel:
    """Paleo's compute PPP fitted to a speed table that names its network and device (module text).

    >>> tab = pd.DataFrame({"w": [1, 4], "p": [0, 0], "global_batch": 128, "step_time_s": [2.0, 0.8],
    ...                     "net": "alex_v2", "device": "K80"})
    >>> m = fit_paleo_speed(tab)
    >>> m.family, 0 < m.ppp_comp < 1, round(m.mape_pct, 1) < 50
    ('paleo', True, True)
    """
    if mode not in FORMULAS:
        raise InputError(f"{source}: Paleo's speed model fits modes {', '.join(FORMULAS)}; got {mode!r}.")
    ctx = table_context(table, CONTEXT_COLUMNS, ("network",), source=source,
                        what="Paleo's speed model (the network and the device)",
                        fix="Add them, or use python -m core paleo.")
    net = load_net(ctx["net"])
    tab = normalise_speed_table(table, global_batch=global_batch, source=source)
    if tab["global_batch"].isna().any():
        raise InputError(f"{source}: expected the global batch of every row for Paleo's speed model; got none. Add "
                         "a global_batch column or pass --batch M.")
    measured = 1.0 / tab["steps_per_s"].to_numpy(dtype=float)
    base = PaleoSpeedModel(net=net, device=ctx["device"], network=ctx.get("network", "ethernet"), mode=mode,
                           global_batch=global_batch, source=f"Paleo PPP fitted on {source}", n_points=len(tab))
    rows = list(zip(tab["p"].astype(int), tab["w"].astype(int), tab["global_batch"].astype(float)))
    if len(rows) == 1:
        (p, w, m), = rows
        cal = calibrate_paleo_step(net, float(measured[0]), p=p if mode == "sync" else 0, w=w,
                                   global_batch=int(round(m)), device=base.device, network=base.network)
        model = dataclasses.replace(base, ppp_comp=cal.ppp_comp, flags=cal.flags)
    else:
        def loss(log_ppp: float) -> float:
            trial = dataclasses.replace(base, ppp_comp=math.exp(log_ppp))
            pred = np.array([trial.step_s(p, w, m) for p, w, m in rows])
            return float(np.sum(np.log(pred / measured) ** 2))

        best = minimize_scalar(loss, bounds=(math.log(1e-6), math.log(1e3)), method="bounded",
                               options={"xatol": 1e-6})
        model = dataclasses.replace(base, ppp_comp=float(math.exp(best.x)))
    pred = np.array([model.step_s(p, w, m) for p, w, m in rows])
    return dataclasses.replace(model, mape_pct=float(100 * np.mean(np.abs(pred / measured - 1))))


def paleo_loo(table: pd.DataFrame, model: PaleoSpeedModel, *, mode: str = "allreduce",
              global_batch: float | None = None, gpus_per_node: int | None = None,
              source: str = "table") -> np.ndarray | None:
    """Each row's speed predicted by a PPP fitted without it (None with fewer than three rows)."""
    tab = normalise_speed_table(table, global_batch=global_batch, source=source)
    if len(tab) < 3:
        return None
    out = np.empty(len(tab))
    for i in range(len(tab)):
        refit = fit_paleo_speed(table.drop(table.index[i]), mode=mode, global_batch=global_batch, source=source)
        row = tab.iloc[i]
        out[i] = 1.0 / refit.step_s(int(row["p"]), int(row["w"]), float(row["global_batch"]))
    return out


PALEO_SPEED = SpeedFamily("paleo", "Paleo (roofline, PPP)",
                          "Paleo (Qi et al., ICLR 2017): FLOPs and bytes per layer against the device's peaks plus "
                          "the gradient exchange; compute PPP fitted to the measured steps",
                          FORMULAS, FORMULAS_LATEX, fit_paleo_speed, paleo_loo, in_auto=False,
                          context=CONTEXT_COLUMNS)
