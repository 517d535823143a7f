"""What a team decides from a plan table (core.plan.decisions): values checked by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.errors import InputError
from core.plan import plan_decisions, plan_from_logs
from core.plan.decisions import cheapest_for_deadline, efficiency_knee, time_at_count
from core.plan.from_logs import PLAN_COLUMNS

HOUR = 3600.0


def _table(w, hours, *, band: float = 0.1, price: float = 1.0) -> pd.DataFrame:
    w = np.asarray(w, dtype=int)
    t = np.asarray(hours, dtype=float) * HOUR
    return pd.DataFrame({"w": w, "time_s": t, "time_low": t * (1 - band), "time_high": t * (1 + band),
                         "cost": t / HOUR * w * price})


def _hundred_over_w_plus_one(counts) -> pd.DataFrame:
    w = np.asarray(counts, dtype=float)
    return _table(counts, 100 / w + 1)


# ---------------------------------------------------------------- the knee
def test_knee_of_100_over_w_plus_1_is_256_by_hand():
    # doubling from w saves 1 - (50/w + 1)/(100/w + 1) = 50/(100 + w): below 20 % once w > 150
    knee = efficiency_knee(_hundred_over_w_plus_one([2 ** k for k in range(11)]))
    assert knee.w == 256
    assert knee.time_s == pytest.approx((100 / 256 + 1) * HOUR)
    assert knee.cost == pytest.approx((100 / 256 + 1) * 256)
    assert "14 %" in knee.text and "from 128 it saved 22 %" in knee.text


@pytest.mark.parametrize(("min_saving", "knee"), [(0.3, 128), (0.4, 32), (0.1, 512)])
def test_knee_moves_with_the_share(min_saving, knee):
    # 50/(100 + w) < s  <=>  w > 50/s - 100 (66.7, 25, 400): the first power of two above it
    expected = min(2 ** k for k in range(11) if 50 / (100 + 2 ** k) < min_saving)
    assert expected == knee
    assert efficiency_knee(_hundred_over_w_plus_one([2 ** k for k in range(11)]), min_saving=min_saving).w == knee


def test_knee_interpolates_the_double_log_linearly():
    # planned 10, 15, 40 only: T(20) read between 15 and 40 in ln T against ln w. For T = 100/w + 1:
    # ln T(20) = ln T(15) + ln(20/15)/ln(40/15) * (ln T(40) - ln T(15)), by hand
    # ln 7.667 + 0.2933 * ln(3.5/7.667) = 1.807, T(20) = 6.09 (100/20 + 1 = 6 exactly) -> saving 1 - 6.09/11 = 44.6 %
    table = _hundred_over_w_plus_one([10, 15, 40])
    t15, t40 = 100 / 15 + 1, 100 / 40 + 1
    t20 = np.exp(np.log(t15) + np.log(20 / 15) / np.log(40 / 15) * (np.log(t40) - np.log(t15)))
    saving = 1 - t20 / 11
    assert saving == pytest.approx(0.446, abs=1e-3)
    assert efficiency_knee(table, min_saving=saving + 1e-6).w == 10
    assert efficiency_knee(table, min_saving=saving - 1e-6).w != 10


def test_knee_beyond_the_range_is_not_the_end_of_the_range():
    knee = efficiency_knee(_table([8, 16, 32, 64, 128], [64 / w for w in (8, 16, 32, 64, 128)]))  # halves each time
    assert knee.w is None and not knee.found
    assert "beyond the planned range" in knee.text and "128 GPUs" in knee.text


def test_no_knee_without_a_count_and_its_double():
    knee = efficiency_knee(_table([8, 12], [2.0, 1.5]))
    assert knee.w is None and "holds no count and its double" in knee.text


# ---------------------------------------------------------------- the chosen count
def test_time_at_a_planned_count_and_at_the_nearest():
    table = _table([8, 16, 32], [2.0, 1.1, 0.65])
    at = time_at_count(table, 16)
    assert (at.w, at.time_s, at.time_low, at.time_high, at.cost) == pytest.approx(
        (16, 1.1 * HOUR, 0.99 * HOUR, 1.21 * HOUR, 17.6))
    assert at.text == "At 16 GPUs: 1.1 h (0.99 to 1.21 h), cost 17.6."
    nearest = time_at_count(table, 20)       # 20/16 = 1.25 < 32/20 = 1.6
    assert nearest.w == 16 and "nearest to 20" in nearest.text
    assert time_at_count(table, 1000).w == 32


# ---------------------------------------------------------------- the deadline
def test_cheapest_count_meeting_a_deadline_by_time_and_by_upper_end():
    table = _table([8, 16, 32], [2.0, 1.1, 0.65])      # costs 16, 17.6, 20.8
    assert cheapest_for_deadline(table, 2.0).w == 8
    assert cheapest_for_deadline(table, 2.0, use_high=True).w == 16     # 8 GPUs may take 2.2 h
    assert cheapest_for_deadline(table, 1.0).w == 32
    none = cheapest_for_deadline(table, 0.5)
    assert none.w is None and none.text.startswith("No planned count finishes within 0.5 h")


def test_deadline_without_prices_ranks_by_gpu_hours():
    table = _table([8, 16, 32], [2.0, 0.9, 0.65]).assign(cost=np.nan)   # GPU-hours 16, 14.4, 20.8
    assert cheapest_for_deadline(table, 3.0).w == 16


def test_plan_decisions_bundles_the_three():
    table = _hundred_over_w_plus_one([2 ** k for k in range(11)])
    d = plan_decisions(table, w=100, deadline_h=3.0)
    assert d.chosen.w == 128 and d.knee.w == 256
    assert d.deadline.w == 64            # 100/w + 1 <= 3 needs w >= 50; cost (100/w + 1)·w = 100 + w grows with w
    assert plan_decisions(table, w=1).deadline is None


# ---------------------------------------------------------------- refusals
def test_missing_columns_and_bad_values_are_refused():
    with pytest.raises(InputError, match="missing time_low, time_high, cost"):
        efficiency_knee(pd.DataFrame({"w": [1], "time_s": [1.0]}))
    with pytest.raises(InputError, match="min_saving"):
        efficiency_knee(_table([1, 2], [2.0, 1.0]), min_saving=1.5)
    with pytest.raises(InputError, match="deadline_h"):
        cheapest_for_deadline(_table([1, 2], [2.0, 1.0]), 0)


def test_reads_the_table_of_plan_from_logs():
    from core.datasets import builtin_log_files
    from core.logs import read_log_file

    logs = [read_log_file(p, source=n) for n, p in builtin_log_files("mlperf_llama8b")]
    table = plan_from_logs(logs, [8, 16, 32, 64, 128, 256, 512], global_batch=64.0).table
    assert set(("w", "time_s", "time_low", "time_high", "cost")) <= set(PLAN_COLUMNS)
    d = plan_decisions(table, w=72, deadline_h=1.0)
    assert d.chosen.w == 64 and d.chosen.time_s == pytest.approx(float(table.set_index("w").loc[64, "time_s"]))
    assert d.knee.text and d.deadline.text
