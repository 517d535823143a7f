"""Declared schedules: ``KIND:key=value,...`` in optimiser steps, built into a :class:`PlannedSchedule`.

Kinds (``SCHEDULE_KINDS``), each after an optional linear warm-up of ``warmup`` steps from 0 to ``peak``:

* ``constant`` — the peak to the end;
* ``cosine`` — a cosine from the peak to ``final`` at ``decay_end`` (default: the end);
* ``linear`` — a straight line from the peak to ``final`` at ``decay_end``;
* ``wsd`` — warmup-stable-decay: the peak to ``decay_start`` (or for the last ``decay`` of the steps: a
  fraction below 1, or a number of steps), then a cool-down of ``shape`` (``COOLDOWN_SHAPES``: ``linear``,
  ``exp``, ``1-sqrt``, ``cosine``) to ``final`` at ``decay_end`` (default: the end), ``final`` after it;
* ``step`` — the peak, multiplied by ``factor`` (default 0.1) at each of ``drops`` (steps, ``;``-separated).

Keys: ``total`` (the last planned step, required), ``peak`` (default 1: rates relative to the peak, unless
``peak`` is given), ``warmup`` (default 0), ``final`` (the last rate: a number, or a percentage of the peak
such as ``10%``; default 0, and 10 % of the peak for ``exp``, which cannot reach 0).

>>> s = parse_schedule_spec("wsd:total=24000,warmup=2160,peak=3e-4,final=3e-5,decay_start=20000,shape=exp")
>>> s.total_steps, round(float(s.lr_at(10000)), 6), round(float(s.lr_at(24000)), 6), s.unit
(24000.0, 0.0003, 3e-05, 'absolute')
>>> parse_schedule_spec("cosine:total=100").unit
'relative to peak'
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import numpy as np

from core.errors import InputError
from core.schedules.planned import PlannedSchedule
from core.validation import check_option

#: cool-down shapes: the fraction of the way from the peak to the final rate at progress x in [0, 1] of the
#: cool-down (``exp`` is geometric: it is handled by :func:`cooldown_rate`)
COOLDOWN_SHAPES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "linear": lambda x: x,
    "1-sqrt": lambda x: np.sqrt(x),
    "cosine": lambda x: (1 - np.cos(np.pi * x)) / 2,
    "exp": lambda x: x,          # in log space: see cooldown_rate
}
#: the keys each kind takes (besides total, peak, warmup, final)
SCHEDULE_KINDS: dict[str, tuple[str, ...]] = {
    "constant": (),
    "cosine": ("decay_end",),
    "linear": ("decay_end",),
    "wsd": ("decay_start", "decay", "decay_end", "shape"),
    "step": ("drops", "factor"),
}
_COMMON = ("total", "peak", "warmup", "final")
#: knots per curved segment (a cosine, an exponential or 1−sqrt cool-down): the rate between knots is linear
CURVE_KNOTS = 256
_FORM = "KIND:total=N[,warmup=N][,peak=LR][,final=LR|P%][,...]"


def cooldown_rate(x, peak: float, final: float, shape: str) -> np.ndarray:
    """The rate at progress ``x`` in [0, 1] of a cool-down from ``peak`` to ``final`` of ``shape``.

    >>> cooldown_rate([0, 0.25, 1], 1.0, 0.0, "1-sqrt").tolist()
    [1.0, 0.5, 0.0]
    >>> cooldown_rate([0.5], 1.0, 0.01, "exp").round(4).tolist()
    [0.1]
    """
    x = np.clip(np.asarray(x, dtype=float), 0, 1)
    check_option(shape, "cool-down shape", COOLDOWN_SHAPES)
    if shape == "exp":
        if final <= 0:
            raise InputError(f"cool-down exp: expected a final rate above 0 (an exponential never reaches 0); "
                             f"got {final:g}. Give final=, e.g. final=10%.")
        return peak * (final / peak) ** x
    return peak - (peak - final) * COOLDOWN_SHAPES[shape](x)


def build_schedule(kind: str, *, total: float, peak: float = 1.0, warmup: float = 0.0, final: float | None = None,
                   decay_start: float | None = None, decay_end: float | None = None, shape: str = "linear",
                   drops: tuple[float, ...] = (), factor: float = 0.1, unit: str | None = None,
                   source: str | None = None, spec: str | None = None) -> PlannedSchedule:
    """A :class:`PlannedSchedule` of ``kind`` (module docstring); every step count in optimiser steps.

    >>> s = build_schedule("step", total=300, peak=1.0, drops=(100, 200))
    >>> [round(float(v), 6) for v in s.lr_at([50, 150, 250])]
    [1.0, 0.1, 0.01]
    """
    check_option(kind, "schedule kind", SCHEDULE_KINDS)
    where = source or f"schedule {kind}"
    if not (total > 0 and math.isfinite(total)):
        raise InputError(f"{where}: expected total= the last planned step, > 0; got {total!r}.")
    if not (0 <= warmup < total):
        raise InputError(f"{where}: expected warmup= in [0, total); got {warmup!r} for total {total:g}.")
    if not peak > 0:
        raise InputError(f"{where}: expected peak= above 0; got {peak!r}.")
    if final is None:
        final = 0.1 * peak if shape == "exp" else 0.0
    if not 0 <= final <= peak:
        raise InputError(f"{where}: expected final= in [0, peak {peak:g}]; got {final:g}.")
    steps: list[float] = [0.0]
    rates: list[float] = [0.0 if warmup > 0 else peak]
    if warmup > 0:
        steps.append(float(warmup))
        rates.append(peak)
    end = float(decay_end) if decay_end is not None else float(total)
    if kind in ("cosine", "linear", "wsd"):
        if kind == "wsd":
            start = float(decay_start) if decay_start is not None else end - float(total) * 0.2
        else:
            start = float(warmup)
        if not (warmup <= start < end <= total):
            raise InputError(f"{where}: expected warmup <= decay start < decay end <= total; got warmup {warmup:g}, "
                             f"decay start {start:g}, decay end {end:g}, total {total:g}.")
        curve = {"cosine": "cosine", "linear": "linear", "wsd": shape}[kind]
        n = 1 if curve == "linear" else CURVE_KNOTS
        x = np.linspace(0, 1, n + 1)
        knots = start + x * (end - start)
        lr = cooldown_rate(x, peak, final, curve)
        if start > steps[-1]:
            steps.append(start)
            rates.append(peak)
        steps += knots[1:].tolist()
        rates += lr[1:].tolist()
        if end < total:
            steps.append(float(total))
            rates.append(final)
    elif kind == "step":
        rate = peak
        for d in sorted(float(v) for v in drops):
            if not (steps[-1] < d < total):
                raise InputError(f"{where}: expected drops= between the warm-up's end and total {total:g}, "
                                 f"increasing; got {d:g}.")
            if d - 1.0 > steps[-1]:
                steps.append(d - 1.0)
                rates.append(rate)
            rate *= factor
            steps.append(d)
            rates.append(rate)
        steps.append(float(total))
        rates.append(rate)
    else:
        steps.append(float(total))
        rates.append(peak)
    unit = unit or ("absolute" if peak != 1.0 else "relative to peak")
    return PlannedSchedule(tuple(steps), tuple(rates), source=source or f"declared: {spec or kind}", unit=unit,
                           spec=spec)


def parse_schedule_spec(text: str) -> PlannedSchedule:
    """A declared schedule from ``KIND:key=value,...`` (module docstring).

    >>> parse_schedule_spec("wsd:total=1000,decay=0.2,final=10%").lr_at([700, 1000]).round(3).tolist()
    [1.0, 0.1]
    >>> parse_schedule_spec("cosine:100")
    Traceback (most recent call last):
    ...
    core.errors.InputError: schedule: expected KIND:total=N[,warmup=N][,peak=LR][,final=LR|P%][,...] \
with KIND one of constant, cosine, linear, wsd, step; got 'cosine:100'. Write e.g. wsd:total=24000,warmup=2160,\
decay=0.2,shape=1-sqrt.
    """
    raw = str(text).strip()
    bad = (f"schedule: expected {_FORM} with KIND one of {', '.join(SCHEDULE_KINDS)}; got {raw!r}. "
           "Write e.g. wsd:total=24000,warmup=2160,decay=0.2,shape=1-sqrt.")
    m = re.fullmatch(r"([a-z]+)\s*:\s*(.+)", raw.lower())
    if not m or m.group(1) not in SCHEDULE_KINDS or "=" not in m.group(2):
        raise InputError(bad)
    kind = m.group(1)
    values: dict[str, str] = {}
    for part in m.group(2).split(","):
        key, eq, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not key or not value:
            raise InputError(bad)
        if key not in _COMMON + SCHEDULE_KINDS[kind]:
            raise InputError(f"schedule {kind}: expected keys among {', '.join(_COMMON + SCHEDULE_KINDS[kind])}; "
                             f"got {key!r}.")
        values[key] = value
    if "total" not in values:
        raise InputError(f"schedule {kind}: expected total= (the last planned step); got {raw!r}.")
    num = lambda k: _number(values[k], k, kind)  # noqa: E731
    total, peak = num("total"), num("peak") if "peak" in values else 1.0
    kwargs: dict = {"total": total, "peak": peak, "warmup": num("warmup") if "warmup" in values else 0.0}
    if "final" in values:
        f = values["final"]
        kwargs["final"] = _number(f[:-1], "final", kind) / 100 * peak if f.endswith("%") else num("final")
    if "decay_start" in values:
        kwargs["decay_start"] = num("decay_start")
    elif "decay" in values:
        d = num("decay")
        end = num("decay_end") if "decay_end" in values else total
        kwargs["decay_start"] = end - (d * total if d < 1 else d)
    if "decay_end" in values:
        kwargs["decay_end"] = num("decay_end")
    if "shape" in values:
        kwargs["shape"] = check_option(values["shape"], f"schedule {kind}: shape", COOLDOWN_SHAPES)
    if "drops" in values:
        kwargs["drops"] = tuple(_number(v, "drops", kind) for v in values["drops"].split(";") if v.strip())
    if "factor" in values:
        kwargs["factor"] = num("factor")
    return build_schedule(kind, unit="absolute" if "peak" in values else "relative to peak",
                          spec=raw, source=f"declared: {raw}", **kwargs)


def is_schedule_spec(text: str) -> bool:
    """Whether ``text`` has the form of a declared planned schedule (``KIND:key=value,...``)."""
    return bool(re.fullmatch(r"\s*[a-z]+\s*:.*=.*", str(text).lower()))


def _number(text: str, key: str, kind: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"schedule {kind}: expected {key}= a number; got {text!r}.") from None
    if not math.isfinite(value):
        raise InputError(f"schedule {kind}: expected {key}= a finite number; got {text!r}.")
    return value
