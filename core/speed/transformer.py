"""The transformer step-time model (:mod:`core.transformer`) as a speed family beside Optimus and Pollux.

Where Optimus and Pollux fit a handful of free parameters to a table of measured speeds, this
family *derives* the step time from the model's shape, the device's datasheet and a data × tensor ×
pipeline × context split (docs/transformer.md), and uses the measurements only to **calibrate** the
achieved fractions of peak (one measured step fixes the compute factor, two or more with different
communication shares the communication factor too: :func:`core.transformer.calibrate`).  The
registry's protocol maps onto it so:

* **fit on a speed table**: each row (``w`` GPUs, global batch ``M`` in sequences, steps per second)
  is one :class:`core.transformer.Measurement`; the table names the model (``config``: a built-in
  name such as ``llama31_8b`` or a local ``config.json``), the ``device`` and the ``seq_len`` in
  columns of their own (one value each), and optionally a ``parallel`` split (``tp=..,pp=..``; dp from
  each ``w``) and the ``precision`` (``bf16``/``fp8``).  Without those columns the family refuses the
  table, and ``auto`` does not try it (``SpeedFamily.in_auto`` is False: a speed table alone does not
  describe a transformer).
* **scale to a measured step** (``scaled``): every predicted step time times a factor.
* **leave-one-out**: recalibrate without each row and predict it.
* **steps per second at ``w``**: :func:`core.transformer.predict` at ``w`` GPUs for the global batch
  (the given split with dp from ``w``, else the fastest that fits in memory); a GPU count where no
  split fits (or ``M`` is not a multiple of the data-parallel ranks) has no speed (NaN), and
  :meth:`TransformerSpeedModel.prediction` says why.

``p`` (parameter servers) is ignored: the collectives are all-reduce-like (mode ``allreduce``).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from core.errors import InputError, PlannerError
from core.speed.family import FittedSpeed, SpeedFamily
from core.speed.table import normalise_speed_table, table_context
from core.transformer import (
    TENSOR_PRECISIONS,
    Accelerator,
    Calibration,
    Efficiency,
    Measurement,
    Prediction,
    Strategy,
    TransformerConfig,
    calibrate,
    get_accelerator,
    load_config,
    parse_strategy,
    predict,
    with_dp,
)
from core.validation import check_option

FORMULA = ("t(w, M) = compute / calibrated fractions of peak + exposed collectives + pipeline bubble "
           "(core.transformer, strategy searched or given)")
FORMULA_LATEX = (r"t(w, M) = \sum_{\mathrm{ops}} \frac{\mathrm{work}}{\eta\,\mathrm{peak}} + "
                 r"t_{\mathrm{comm,exposed}} + t_{\mathrm{bubble}},\quad f = 1/t")
#: the columns a speed table needs for this family (beside w, the batch and the speed)
CONTEXT_COLUMNS = ("config", "device", "seq_len")


@functools.lru_cache(maxsize=4096)
def _predict(config: TransformerConfig, device: Accelerator, seq_len: int, calibration: Calibration | None,
             strategy: Strategy | None, domain: int | None, precision: str, w: int, m: int) -> Prediction | str:
    try:
        s = with_dp(strategy, w) if strategy is not None else None
        return predict(config, device, w, global_batch=m, seq_len=seq_len, calibration=calibration, strategy=s,
                       domain=domain, prior=Efficiency(precision=precision))
    except PlannerError as err:
        return str(err)


@dataclass(frozen=True, kw_only=True)
class TransformerSpeedModel(FittedSpeed):
    """A transformer's step time on ``w`` × ``device``, calibrated on measured steps (module text).

    Parameters
    ----------
    config : core.transformer.TransformerConfig
    device : core.transformer.Accelerator
    seq_len : int
        Tokens per sequence; the global batch ``M`` counts sequences.
    calibration : core.transformer.Calibration or None
        None: the prior fractions of peak (uncalibrated, ±50 %).
    strategy : core.transformer.Strategy or None
        Tensor/pipeline/context split kept for every ``w`` (dp from ``w``); None: searched.
    domain : int or None
        GPUs per scale-up domain (None: the device's).
    precision : {"bf16", "fp8"}
    factor : float, default=1
        Every step time multiplied by it (``scaled``).
    """

    config: TransformerConfig
    device: Accelerator
    seq_len: int
    calibration: Calibration | None = None
    strategy: Strategy | None = None
    domain: int | None = None
    precision: str = "bf16"
    factor: float = 1.0

    family = "transformer"
    mode = "allreduce"
    time_unit = "s"
    formula = FORMULA
    formula_latex = FORMULA_LATEX

    def prediction(self, w: int, global_batch: float) -> Prediction:
        """The :class:`core.transformer.Prediction` at ``w`` GPUs (unscaled), or the ``InputError`` saying why none."""
        out = _predict(self.config, self.device, int(self.seq_len), self.calibration, self.strategy, self.domain,
                       self.precision, int(w), int(round(float(global_batch))))
        if isinstance(out, str):
            raise InputError(out)
        return out

    def steps_per_s_at(self, p, w, global_batch):
        """Steps per second at ``w`` GPUs and global batch ``M`` sequences (NaN where no strategy fits)."""
        w_arr = np.asarray(w, dtype=float)
        if not np.all(np.isfinite(w_arr)) or np.any(w_arr < 1):
            raise InputError(f"TransformerSpeedModel.steps_per_s: expected w >= 1 GPUs; got {w!r}. Count GPUs from 1.")
        shape = np.broadcast_shapes(np.shape(p), w_arr.shape, np.shape(global_batch))
        w_b = np.broadcast_to(w_arr, shape).ravel()
        m_b = np.broadcast_to(np.asarray(global_batch, dtype=float), shape).ravel()
        out = np.empty(w_b.size)
        for i, (wi, mi) in enumerate(zip(w_b, m_b)):
            pred = _predict(self.config, self.device, int(self.seq_len), self.calibration, self.strategy,
                            self.domain, self.precision, int(wi), int(round(mi)))
            out[i] = math.nan if isinstance(pred, str) else 1.0 / (pred.time * self.factor)
        out = out.reshape(shape)
        return float(out) if out.ndim == 0 else out

    def steps_per_s(self, p, w):
        """Steps per second at the model's ``global_batch``."""
        return self.steps_per_s_at(p, w, self._batch())

    def samples_per_s(self, p, w):
        out = self._batch() * np.asarray(self.steps_per_s(p, w))
        return float(out) if out.ndim == 0 else out

    def scaled(self, factor: float) -> TransformerSpeedModel:
        return dataclasses.replace(self, factor=self.factor * float(factor))

    def _batch(self) -> float:
        if self.global_batch is None:
            raise InputError("TransformerSpeedModel: expected a global batch M; got None. "
                             "Call model.with_global_batch(M) first.")
        return self.global_batch

    @property
    def theta_names(self) -> tuple[str, ...]:
        return tuple(self.named_params)

    @property
    def theta(self) -> tuple[float, ...]:
        return tuple(self.named_params.values())

    @property
    def named_params(self) -> dict[str, float]:
        eff = self.calibration.efficiency if self.calibration else Efficiency(precision=self.precision)
        return {"matmul_fraction": eff.matmul, "attention_fraction": eff.attention, "memory_fraction": eff.memory,
                "comm_fraction": eff.comm, "time_factor": self.factor}

    @property
    def notes(self) -> tuple[str, ...]:
        """Where the numbers come from (the calibration's notes, or that it is uncalibrated)."""
        if self.calibration is None:
            return ("uncalibrated: the prior fractions of peak (assumed), interval ±50 %",)
        return (*self.calibration.notes, f"interval: {self.calibration.spread_source}")

    def to_dict(self) -> dict[str, Any]:
        return {"family": self.family, "mode": self.mode, "formula": self.formula, **self.named_params,
                "model": self.config.name, "device": self.device.name, "seq_len": self.seq_len,
                "strategy": self.strategy.text() if self.strategy else "searched", "precision": self.precision,
                "global_batch": self.global_batch, "time_unit": "s", "source": self.source,
                "mape_pct": self.mape_pct, "loo_mape_pct": self.loo_mape_pct, "n_points": self.n_points,
                "time_band": list(self.time_band) if self.time_band else None, "level": self.level,
                "flags": list(self.flags)}

    def report(self) -> str:
        batch = "not set" if self.global_batch is None else f"{self.global_batch:g} sequences"
        lines = ["[[Model]]", "    family: transformer (core.transformer: FLOPs, datasheets, parallelism, calibrated)",
                 "    mode: allreduce", f"    {self.formula}", f"    model: {self.config.name}",
                 f"    device: {self.device.name}", f"    sequence length: {self.seq_len}",
                 f"    global batch M: {batch}",
                 f"    strategy: {self.strategy.text() + ' (dp from w)' if self.strategy else 'searched per w'}",
                 f"    precision: {self.precision}", "    time unit: s", f"    source: {self.source or 'given'}",
                 "[[Parameters]]"]
        lines += [f"    {k} = {v:.6g}" for k, v in self.named_params.items()]
        lines += ["[[Notes]]"] + [f"    {n}" for n in self.notes]
        return "\n".join(lines + self.report_tail())


def _band(calibration: Calibration | None) -> tuple[float, float]:
    spread = calibration.spread if calibration else 0.5
    return (max(1.0 - spread, 1e-3), 1.0 + spread)


def transformer_speed_model(config: TransformerConfig, device: Accelerator, *, seq_len: int,
                            global_batch: float | None = None, measurements: tuple[Measurement, ...] = (),
                            strategy: Strategy | None = None, domain: int | None = None, precision: str = "bf16",
                            source: str = "") -> TransformerSpeedModel:
    """The model calibrated on ``measurements`` (none: the priors), planning at ``global_batch`` sequences.

    ``time_band`` is the calibration's interval (leave-one-out over the measurements, ±15 % with one,
    ±50 % uncalibrated), so plans carry it.

    Examples
    --------
    Calibrated on one step, the model reproduces it at the measured configuration:

    >>> from core.transformer import get_accelerator, load_config
    >>> cfg, h100 = load_config("llama31_8b"), get_accelerator("H100")
    >>> m = transformer_speed_model(cfg, h100, seq_len=8192, global_batch=32,
    ...                             measurements=(Measurement(4.0, h100, 8, 32, 8192),))
    >>> round(m.step_time_s(0, 8), 6), m.time_band
    (4.0, (0.85, 1.15))
    """
    check_option(precision, "precision", TENSOR_PRECISIONS)
    calibration = calibrate(config, list(measurements), prior=Efficiency(precision=precision)) if measurements \
        else None
    flags = () if measurements else ("uncalibrated: the prior fractions of peak (assumed); interval ±50 %",)
    src = source or (calibration.efficiency.source if calibration else "prior fractions of peak (assumed)")
    return TransformerSpeedModel(config=config, device=device, seq_len=int(seq_len), calibration=calibration,
                                 strategy=strategy, domain=domain, precision=precision, global_batch=global_batch,
                                 source=src, flags=flags, time_band=_band(calibration),
                                 n_points=len(measurements) or None)


def _context(table: pd.DataFrame, source: str) -> dict[str, Any]:
    values = table_context(table, CONTEXT_COLUMNS, ("parallel", "precision"), source=source,
                           what="the transformer speed model (the model, the device, tokens per sequence)",
                           fix="Add them, or use python -m core transformer.")
    try:
        seq_len = int(float(values["seq_len"]))
    except ValueError:
        raise InputError(f"{source}: expected seq_len a whole number; got {values['seq_len']!r}.") from None
    return {"config": load_config(values["config"]), "device": get_accelerator(values["device"]), "seq_len": seq_len,
            "strategy": parse_strategy(values["parallel"]) if values.get("parallel") else None,
            "precision": values.get("precision", "bf16").lower()}


def _measurements(table: pd.DataFrame, ctx: dict, tab: pd.DataFrame, domain: int | None,
                  source: str) -> list[Measurement]:
    if tab["global_batch"].isna().any():
        raise InputError(f"{source}: expected the global batch (sequences) of every row for the transformer speed "
                         "model; got none. Add a global_batch column or pass --batch M.")
    s = ctx["strategy"]
    return [Measurement(1.0 / float(r.steps_per_s), ctx["device"], int(r.w), int(round(r.global_batch)),
                        ctx["seq_len"], with_dp(s, int(r.w)) if s is not None else None, domain,
                        source=f"measured: {source} row {i + 1}") for i, r in enumerate(tab.itertuples())]


def fit_transformer_speed(table: pd.DataFrame, *, mode: str = "allreduce", global_batch: float | None = None,
                          gpus_per_node: int | None = None, source: str = "table") -> TransformerSpeedModel:
    """Calibrate the transformer model on a speed table that names its model, device and sequence length."""
    if mode != "allreduce":
        raise InputError(f"{source}: the transformer speed model has no parameter servers; the table is fitted in "
                         f"mode {mode!r}.")
    ctx = _context(table, source)
    tab = normalise_speed_table(table, global_batch=global_batch, source=source)
    ms = _measurements(table, ctx, tab, gpus_per_node, source)
    batches = sorted(set(tab["global_batch"]))
    plan_batch = global_batch if global_batch is not None else (batches[0] if len(batches) == 1 else None)
    model = transformer_speed_model(ctx["config"], ctx["device"], seq_len=ctx["seq_len"], global_batch=plan_batch,
                                    measurements=tuple(ms), strategy=ctx["strategy"], domain=gpus_per_node,
                                    precision=ctx["precision"])
    pred = model.steps_per_s_at(0, tab["w"].to_numpy(dtype=float), tab["global_batch"].to_numpy(dtype=float))
    meas = tab["steps_per_s"].to_numpy(dtype=float)
    mape = float(np.mean(np.abs(pred - meas) / meas) * 100)
    return dataclasses.replace(model, mape_pct=mape, n_points=len(ms),
                               source=f"transformer model calibrated on {source} ({len(ms)} points)")


def transformer_loo(table: pd.DataFrame, model: TransformerSpeedModel, *, mode: str = "allreduce",
                    global_batch: float | None = None, gpus_per_node: int | None = None,
                    source: str = "table") -> np.ndarray | None:
    """Each row's speed predicted by a calibration on the others (None with a single row)."""
    tab = normalise_speed_table(table, global_batch=global_batch, source=source)
    if len(tab) < 2:
        return None
    ms = _measurements(table, _context(table, source), tab, gpus_per_node, source)
    out = np.empty(len(ms))
    for i, m in enumerate(ms):
        rest = tuple(x for j, x in enumerate(ms) if j != i)
        refit = transformer_speed_model(model.config, model.device, seq_len=model.seq_len, measurements=rest,
                                        strategy=model.strategy, domain=model.domain, precision=model.precision)
        out[i] = refit.steps_per_s_at(0, m.gpus, m.global_batch)
    return out


#: the transformer speed family, as registered (:mod:`core.speed.registry`)
TRANSFORMER_SPEED = SpeedFamily(
    name="transformer", label="Transformer (FLOPs and datasheets)",
    description="core.transformer: a language model's work per step on a device's datasheet peaks, data × tensor "
                "× pipeline parallelism, calibrated on measured steps (the table names config, device, seq_len)",
    formulas={"allreduce": FORMULA}, formulas_latex={"allreduce": FORMULA_LATEX}, fit=fit_transformer_speed,
    loo=transformer_loo, in_auto=False, context=CONTEXT_COLUMNS)
