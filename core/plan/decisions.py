"""What a team decides from a plan table: the time at a chosen GPU count, the efficiency knee, and the
cheapest count that meets a deadline.

A plan table has one row per planned count: columns ``w`` (GPUs), ``time_s`` (seconds to target),
``time_low``/``time_high`` (its interval, seconds) and ``cost`` (:func:`core.plan.plan_from_logs`'s
``table``, :data:`core.plan.PLAN_COLUMNS`).  Where a count has several rows (one per parameter-server
count of :func:`core.plan.plan_grid`), the fastest is used.  Each answer is a :class:`Decision` with a
one-line ``text`` a page shows as it is.

* :func:`time_at_count`: the row at the count chosen, or at the nearest planned count (in ratio), saying so.
* :func:`efficiency_knee`: the smallest planned ``w`` from which doubling the GPUs saves less than
  ``min_saving`` of the time, ``1 − T(2w)/T(w)``.  ``T(2w)`` is read from the table, or interpolated
  linearly in ``ln T`` against ``ln w`` between the two planned counts around ``2w`` (exact for a power
  law ``T ∝ w^−a``); only counts whose double lies within the planned range are judged.  When every
  doubling saves at least the share, the knee lies beyond the range: ``w`` is None and the text says so
  (the end of the range is not a knee).
* :func:`cheapest_for_deadline`: among the counts whose time (or, with ``use_high``, the upper end of
  its interval) is within the deadline, the one of least cost (GPU-hours where there is no cost;
  ties: fewer GPUs); None with the reason when none is.
* :func:`plan_decisions`: the three together, a :class:`PlanDecisions`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.defaults import SECONDS_PER_HOUR
from core.errors import InputError
from core.validation import check_scalar

#: columns a plan table needs
DECISION_COLUMNS: tuple[str, ...] = ("w", "time_s", "time_low", "time_high", "cost")
#: the default share of the time a doubling must save to be worth it
MIN_SAVING = 0.2


@dataclass(frozen=True)
class Decision:
    """One answer read from a plan table.

    Attributes
    ----------
    w : int or None
        The GPU count the answer names; None when there is none (no count meets the deadline, the knee
        lies beyond the range).
    time_s, time_low, time_high, cost : float or None
        That count's time to target, its interval (seconds) and cost; None with ``w``.
    text : str
        One line saying the answer and how it was read, shown as it is.
    """

    w: int | None
    time_s: float | None
    time_low: float | None
    time_high: float | None
    cost: float | None
    text: str

    @property
    def found(self) -> bool:
        """Whether the answer names a count."""
        return self.w is not None


@dataclass(frozen=True)
class PlanDecisions:
    """The three answers of :func:`plan_decisions`: ``chosen`` (time at the count asked for), ``knee``
    (the efficiency knee) and ``deadline`` (the cheapest count meeting the deadline; None without one)."""

    chosen: Decision
    knee: Decision
    deadline: Decision | None


def _hours(seconds: float) -> str:
    return f"{seconds / SECONDS_PER_HOUR:.3g} h"


def _number(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3g}"


def _gpus(w: int) -> str:
    return f"{w:,} GPU" + ("" if w == 1 else "s")


def _table(table: pd.DataFrame) -> pd.DataFrame:
    """One row per planned count (the fastest), ascending in ``w``; InputError when columns or rows lack."""
    if not isinstance(table, pd.DataFrame):
        raise InputError(f"plan table: expected a DataFrame with columns {', '.join(DECISION_COLUMNS)}; got "
                         f"{type(table).__name__}.")
    missing = [c for c in DECISION_COLUMNS if c not in table.columns]
    if missing:
        raise InputError(f"plan table: expected columns {', '.join(DECISION_COLUMNS)}; missing "
                         f"{', '.join(missing)}. Give the table of core.plan.plan_from_logs.")
    rows = table[list(DECISION_COLUMNS)].astype(float)
    rows = rows[np.isfinite(rows["time_s"]) & (rows["time_s"] > 0) & (rows["w"] >= 1)]
    if rows.empty:
        raise InputError("plan table: expected at least one row with w >= 1 and a positive time_s; got none.")
    rows = rows.sort_values(["w", "time_s"]).drop_duplicates("w").reset_index(drop=True)
    rows["w"] = rows["w"].astype(int)
    return rows


def _decision(row: pd.Series, text: str) -> Decision:
    def value(name: str) -> float | None:
        x = float(row[name])
        return x if math.isfinite(x) else None

    return Decision(int(row["w"]), value("time_s"), value("time_low"), value("time_high"), value("cost"), text)


def _summary(row: pd.Series) -> str:
    """``"2 h (1.8 to 2.3 h), cost 250"``: a row's time, its interval and cost."""
    text = _hours(row["time_s"])
    if math.isfinite(row["time_low"]) and math.isfinite(row["time_high"]):
        text += f" ({_hours(row['time_low']).removesuffix(' h')} to {_hours(row['time_high'])})"
    if math.isfinite(row["cost"]):
        text += f", cost {_number(row['cost'])}"
    return text


def time_at_count(table: pd.DataFrame, w: int) -> Decision:
    """The time, interval and cost at ``w`` GPUs, or at the nearest planned count (nearest in ratio, ties:
    fewer GPUs), saying so.

    Examples
    --------
    >>> t = pd.DataFrame({"w": [8, 16, 32], "time_s": [7200.0, 3960.0, 2340.0], "time_low": [6480.0, 3600.0, 2160.0],
    ...                   "time_high": [7920.0, 4320.0, 2520.0], "cost": [16.0, 17.6, 20.8]})
    >>> time_at_count(t, 16).text
    'At 16 GPUs: 1.1 h (1 to 1.2 h), cost 17.6.'
    >>> d = time_at_count(t, 20)
    >>> d.w, d.text
    (16, 'At 16 GPUs (the planned count nearest to 20): 1.1 h (1 to 1.2 h), cost 17.6.')
    """
    w = check_scalar(w, "time_at_count: w", int, min_val=1, fix="Give a GPU count")
    rows = _table(table)
    distance = np.abs(np.log(rows["w"].to_numpy(dtype=float) / w))
    row = rows.iloc[int(np.argmin(distance))]          # argmin takes the first: fewer GPUs on a tie
    at = f"At {_gpus(int(row['w']))}" + ("" if int(row["w"]) == w else f" (the planned count nearest to {w:,})")
    return _decision(row, f"{at}: {_summary(row)}.")


def _time_at(rows: pd.DataFrame, w: float) -> float:
    """``T(w)`` from the table, interpolated linearly in ln T against ln w between planned counts."""
    return float(np.exp(np.interp(np.log(w), np.log(rows["w"].to_numpy(dtype=float)),
                                  np.log(rows["time_s"].to_numpy(dtype=float)))))


def efficiency_knee(table: pd.DataFrame, *, min_saving: float = MIN_SAVING) -> Decision:
    """The smallest planned count from which doubling the GPUs saves less than ``min_saving`` of the time.

    Parameters
    ----------
    table : DataFrame
        A plan table (module docstring).
    min_saving : float, default=0.2
        The share of the time a doubling must save, in (0, 1).

    Returns
    -------
    Decision
        The knee's row; ``w`` None when no planned count has its double within the range (fewer than two
        counts, or the largest below twice the smallest) or when every doubling saves at least the share
        (the knee lies beyond the range).

    Examples
    --------
    T = 100/w + 1 hours: doubling from w saves (50/w)/(100/w + 1) = 50/(100 + w), which falls below
    20 % past w = 150: from 128 GPUs doubling saves 50/228 = 21.9 %, from 256 it saves 50/356 = 14.0 %.

    >>> w = np.array([2 ** k for k in range(11)])
    >>> t = pd.DataFrame({"w": w, "time_s": (100 / w + 1) * 3600, "time_low": np.nan, "time_high": np.nan,
    ...                   "cost": np.nan})
    >>> knee = efficiency_knee(t)
    >>> knee.w, knee.text
    (256, 'From 256 GPUs doubling saves less than 20 % of the time (to 512: 14 %; from 128 it saved 22 %).')

    A power law T = 1000/w halves at every doubling; 2·10 = 20 is not planned and is read between 15
    and 40 (exact for a power law): 50, a saving of 50 %.

    >>> t = pd.DataFrame({"w": [10, 15, 40], "time_s": [100.0, 1000 / 15, 25.0], "time_low": np.nan,
    ...                   "time_high": np.nan, "cost": np.nan})
    >>> knee = efficiency_knee(t)
    >>> print(knee.w, round(_time_at(_table(t), 20), 9))
    None 50.0
    >>> print(knee.text)
    Doubling saves at least 20 % from every count up to 30 GPUs: the knee lies beyond the planned range (10 to 40 GPUs).
    """
    min_saving = check_scalar(min_saving, "efficiency_knee: min_saving", float, min_val=0, max_val=1,
                              include_boundaries="neither", fix="Give a share such as 0.2 for 20 %")
    rows = _table(table)
    counts = rows["w"].to_numpy(dtype=int)
    share = f"{min_saving * 100:.3g} %"
    judged = [i for i, w in enumerate(counts) if 2 * w <= counts[-1]]
    nothing = dict(w=None, time_s=None, time_low=None, time_high=None, cost=None)
    if not judged:
        return Decision(**nothing, text=f"No knee: the planned range ({_gpus(int(counts[0]))} to "
                                        f"{_gpus(int(counts[-1]))}) holds no count and its double.")
    before = ""
    for i in judged:
        t, t2 = float(rows["time_s"].iloc[i]), _time_at(rows, 2 * counts[i])
        saving = 1.0 - t2 / t
        if saving < min_saving:
            return _decision(rows.iloc[i], f"From {_gpus(int(counts[i]))} doubling saves less than {share} of the "
                                           f"time (to {2 * counts[i]:,}: {saving * 100:.0f} %{before}).")
        before = f"; from {counts[i]:,} it saved {saving * 100:.0f} %"
    return Decision(**nothing, text=f"Doubling saves at least {share} from every count up to "
                                    f"{_gpus(int(2 * counts[judged[-1]]))}: the knee lies beyond the planned "
                                    f"range ({counts[0]:,} to {_gpus(int(counts[-1]))}).")


def cheapest_for_deadline(table: pd.DataFrame, deadline_h: float, *, use_high: bool = False) -> Decision:
    """The cheapest planned count whose time to target is within ``deadline_h`` hours.

    Parameters
    ----------
    table : DataFrame
        A plan table (module docstring).
    deadline_h : float
        The deadline, hours, > 0.
    use_high : bool, default=False
        Judge each count by the upper end of its interval (``time_high``; its time where it has none), so
        that the deadline is met even when the plan errs on the slow side.

    Returns
    -------
    Decision
        The least cost among the counts meeting the deadline (GPU-hours, ``w × time``, where a count has no
        cost; ties: fewer GPUs); ``w`` None, with the fastest count's time in ``text``, when none meets it.

    Examples
    --------
    >>> t = pd.DataFrame({"w": [8, 16, 32], "time_s": [7200.0, 3960.0, 2340.0], "time_low": [6480.0, 3600.0, 2160.0],
    ...                   "time_high": [7920.0, 4320.0, 2520.0], "cost": [16.0, 17.6, 20.8]})
    >>> cheapest_for_deadline(t, 2.0).text
    'Cheapest within 2 h: 8 GPUs, 2 h (1.8 to 2.2 h), cost 16.'
    >>> cheapest_for_deadline(t, 2.0, use_high=True).w       # 8 GPUs may take 2.2 h
    16
    >>> cheapest_for_deadline(t, 0.5).text
    'No planned count finishes within 0.5 h: the fastest, 32 GPUs, takes 0.65 h (0.6 to 0.7 h), cost 20.8.'
    """
    deadline_h = check_scalar(deadline_h, "cheapest_for_deadline: deadline_h", float, min_val=0,
                              include_boundaries="neither", fix="Give the deadline in hours")
    rows = _table(table)
    judged = rows["time_high"].where(np.isfinite(rows["time_high"]), rows["time_s"]) if use_high else rows["time_s"]
    by = "the upper end of its interval" if use_high else "its time"
    meets = rows[judged <= deadline_h * SECONDS_PER_HOUR]
    if meets.empty:
        fastest = rows.loc[judged.idxmin()]
        return Decision(None, None, None, None, None,
                        f"No planned count finishes within {deadline_h:g} h"
                        + (" by the upper end of its interval" if use_high else "")
                        + f": the fastest, {_gpus(int(fastest['w']))}, takes {_summary(fastest)}.")
    price = meets["cost"].where(np.isfinite(meets["cost"]), meets["w"] * meets["time_s"] / SECONDS_PER_HOUR)
    row = meets.loc[price.sort_values(kind="stable").index[0]]
    how = f" ({by})" if use_high else ""
    return _decision(row, f"Cheapest within {deadline_h:g} h{how}: {_gpus(int(row['w']))}, {_summary(row)}.")


def plan_decisions(table: pd.DataFrame, *, w: int, deadline_h: float | None = None,
                   min_saving: float = MIN_SAVING, use_high: bool = False) -> PlanDecisions:
    """The time at ``w`` GPUs, the efficiency knee and (with ``deadline_h``) the cheapest count meeting it.

    Examples
    --------
    >>> t = pd.DataFrame({"w": [8, 16, 32], "time_s": [7200.0, 3960.0, 2340.0], "time_low": [6480.0, 3600.0, 2160.0],
    ...                   "time_high": [7920.0, 4320.0, 2520.0], "cost": [16.0, 17.6, 20.8]})
    >>> d = plan_decisions(t, w=32, deadline_h=1.5)
    >>> d.chosen.w, d.knee.w, d.deadline.w     # 8 -> 16 saves 45 %, 16 -> 32 saves 41 %
    (32, None, 16)
    """
    return PlanDecisions(chosen=time_at_count(table, w), knee=efficiency_knee(table, min_saving=min_saving),
                         deadline=None if deadline_h is None else cheapest_for_deadline(table, deadline_h,
                                                                                        use_high=use_high))


def knee_value(knee: Decision, table: pd.DataFrame) -> str:
    """The knee as a headline's value: ``"256 GPUs"``, or ``"> 2,048 GPUs"`` when it lies beyond the counts planned.

    >>> t = pd.DataFrame({"w": [1, 2, 4], "time_s": [100.0, 50.0, 25.0], "time_low": [90.0, 45.0, 22.0],
    ...                   "time_high": [110.0, 55.0, 28.0], "cost": [1.0, 1.0, 1.0]})
    >>> knee_value(efficiency_knee(t), t)
    '> 4 GPUs'
    """
    return f"{knee.w:,} GPUs" if knee.found else f"> {int(table['w'].max()):,} GPUs"
